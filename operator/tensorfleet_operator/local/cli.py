"""The ``tensorfleet`` command line: run, render, validate, status, logs.

Entry point of local mode (console script ``tensorfleet``). It parses the
arguments and hands over to ``manifest.py`` (render, validate), ``runner.py``
(run) or ``rundir.py`` (status, logs). Bad input anywhere ends as one line on
stderr and exit code 2, never a traceback.
"""
from __future__ import annotations

import argparse
import sys

from .manifest import UsageError, render, validate_files

EXIT_USAGE = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='tensorfleet',
        description='Run a TFJob manifest on this machine with the operator\'s own semantics, no cluster.')
    sub = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')

    run = sub.add_parser('run', help='run a TFJob as local processes')
    run.add_argument('manifest', metavar='JOB.yaml')
    run.add_argument('--python', default=None,
                     help='interpreter used where a container runs `python` (default: this one)')
    run.add_argument('--gpus', default=None, metavar='IDS',
                     help='GPU ids to share out, comma separated ("" for none; default: $TENSORFLEET_GPUS, '
                          '$CUDA_VISIBLE_DEVICES, else nvidia-smi)')
    run.add_argument('--run-dir', default=None,
                     help='where logs and status go (default ./tensorfleet-runs/<job>-<timestamp>)')
    run.add_argument('--no-tui', action='store_true', help='plain line output even on a terminal')
    run.add_argument('--namespace', default=None, help='namespace the job pretends to be in (default: default)')
    run.add_argument('--grace-period', type=float, default=10.0, metavar='SECONDS',
                     help='SIGTERM to SIGKILL when stopping a replica, unless its pod sets '
                          'terminationGracePeriodSeconds (default 10)')
    run.add_argument('--clean-pod-grace', type=float, default=None, metavar='SECONDS',
                     help="cleanPodPolicy Running stops a succeeded job's still-running replicas this long after it "
                          "succeeded, as the operator's --clean-pod-grace (default 10; 0: at once, as Kubeflow)")
    run.add_argument('--restart-backoff', type=float, default=1.0, metavar='SECONDS',
                     help='first delay of an in-place restart (doubles each time, at most 30 s; default 1)')
    run.add_argument('--workdir', default=None, metavar='DIR',
                     help='where replicas run whose workingDir is a path in the image, not on this machine '
                          '(default: the current directory)')
    run.add_argument('--base-port', type=int, default=None, metavar='PORT',
                     help='give replicas consecutive ports from PORT (default: any free ports)')

    rend = sub.add_parser('render', help='print the Secret, services and pods the operator would create')
    rend.add_argument('manifest', metavar='JOB.yaml')
    rend.add_argument('--namespace', default=None)
    rend.add_argument('--token', default=None, help='RPC token to put in the Secret (default: a random one)')
    rend.add_argument('--uid', default=None,
                      help="the TFJob's uid, for ownerReferences (default: none, so kubectl apply takes the objects)")

    val = sub.add_parser('validate', help='check manifests against the CRD schema and the operator\'s rules')
    val.add_argument('manifests', nargs='+', metavar='JOB.yaml')

    status = sub.add_parser('status', help='the state of a running or finished local job')
    status.add_argument('run_dir', nargs='?', default=None, metavar='RUN_DIR',
                        help='default: the latest run under ./tensorfleet-runs')

    logs = sub.add_parser('logs', help='the output of one replica of a local job')
    logs.add_argument('replica', metavar='REPLICA', help='worker-0, ps-0, chief-0... (or the pod name)')
    logs.add_argument('-f', '--follow', action='store_true', help='keep printing until the run ends')
    logs.add_argument('--run-dir', default=None, help='default: the latest run under ./tensorfleet-runs')
    return parser


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == 'render':
        sys.stdout.write(render(args.manifest, args.namespace, args.token, args.uid))
        return 0
    if args.command == 'validate':
        lines, code = validate_files(args.manifests)
        for line, good in lines:
            print(line, file=sys.stdout if good else sys.stderr)
        return code
    if args.command == 'run':
        from .runner import run_command
        return run_command(args)
    from . import rundir
    if args.command == 'status':
        return rundir.status_command(args.run_dir)
    return rundir.logs_command(args.replica, args.run_dir, args.follow)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _dispatch(args)
    except UsageError as err:
        print(f'tensorfleet: {err}', file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:       # `tensorfleet render x | head`
        sys.stderr.close()
        return 0
