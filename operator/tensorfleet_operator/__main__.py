"""``python -m tensorfleet_operator`` / ``tensorfleet-operator``: run the operator.

Parses the CLI into an ``OperatorConfig`` and runs ``handlers.run_operator``
(kopf embedded) in a fresh event loop. ``--print-crd`` prints the CRD instead,
``--version`` the version. Before kopf starts, two checks fail fast with one
line and exit status 1: credentials (an in-cluster service account or a
kubeconfig) and the metrics and health ports (free to bind).
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
from urllib.parse import urlsplit

from . import __version__
from .config import CLUSTER_DOMAIN_ENV, GROUP_ENV, PROGRESS_ENV, api_group, trainer_progress
from .core import api

SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token'


class StartupError(Exception):
    """A reason the operator cannot start, said in one line."""


def check_credentials(kubeconfig: str | None) -> None:
    """kopf's logins look for an in-cluster service account, then ``$KUBECONFIG``, then
    ``~/.kube/config``; without any of them it retries for seconds and dies with tracebacks."""
    if os.path.exists(SERVICE_ACCOUNT_TOKEN):
        return
    if kubeconfig:
        missing = [p for p in kubeconfig.split(os.pathsep) if p and not os.path.exists(os.path.expanduser(p))]
        if missing:
            raise StartupError(f'kubeconfig {missing[0]} does not exist (from --kubeconfig or KUBECONFIG)')
        return
    if os.path.exists(os.path.expanduser('~/.kube/config')):
        return
    raise StartupError('no Kubernetes credentials: not in a pod with a service account and no kubeconfig '
                       '(KUBECONFIG is unset and ~/.kube/config does not exist); pass --kubeconfig PATH, '
                       'set KUBECONFIG=PATH, or run in-cluster with a service account')


def check_port_free(address: str, port: int, flag: str) -> None:
    """Fail fast if ``port`` cannot be bound (kopf would retry every 60 s without naming it)."""
    family = socket.AF_INET6 if ':' in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as the real servers do
        try:
            sock.bind((address, port))
        except OSError as e:
            raise StartupError(f'port {port} on {address} ({flag}) cannot be bound: {e.strerror}; '
                               f'choose another with {flag} (0 or empty disables it)') from None


def check_ports(args: argparse.Namespace) -> None:
    if args.metrics_port:
        check_port_free(args.metrics_address, args.metrics_port, '--metrics-port')
    if args.liveness:
        url = urlsplit(args.liveness)
        if url.port is None:
            raise StartupError(f'--liveness {args.liveness}: needs a port, e.g. http://0.0.0.0:8081/healthz')
        check_port_free(url.hostname or '0.0.0.0', url.port, '--liveness')


def trainer_progress_setting(args: argparse.Namespace) -> bool:
    """--trainer-progress / --no-trainer-progress, else $TENSORFLEET_TRAINER_PROGRESS, else on."""
    if args.trainer_progress_interval <= 0:
        raise StartupError(f'--trainer-progress-interval {args.trainer_progress_interval}: must be > 0')
    if args.trainer_progress is not None:
        return bool(args.trainer_progress)
    try:
        return trainer_progress()
    except ValueError as e:
        raise StartupError(str(e)) from None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog='tensorfleet-operator',
                                description='Reconcile TFJobs into ps/worker/chief/evaluator pods.')
    scope = p.add_mutually_exclusive_group()
    scope.add_argument('-n', '--namespace', action='append', default=[],
                       help='watch this namespace (repeatable); default: all namespaces')
    scope.add_argument('-A', '--all-namespaces', action='store_true', help='watch all namespaces (default)')
    p.add_argument('--standalone', action='store_true', default=True,
                   help='run without peering (default)')
    p.add_argument('--peering', metavar='NAME',
                   help='opt-in hot standby: join kopf peering NAME (needs the peering CRDs)')
    p.add_argument('--priority', type=int, default=None,
                   help='peering priority (default: random, so replicas never tie)')
    p.add_argument('--liveness', default='http://0.0.0.0:8081/healthz', metavar='URL',
                   help='liveness endpoint (empty to disable)')
    p.add_argument('--metrics-port', type=int, default=8080, help='Prometheus port (0 to disable)')
    p.add_argument('--metrics-address', default='0.0.0.0')
    p.add_argument('--gang-scheduler', choices=list(api.GANG_SCHEDULERS), default=None,
                   help='create PodGroups and schedule pods as a gang')
    p.add_argument('--api-group', default=None,
                   help=f'API group to serve (default ${GROUP_ENV} or {api.DEFAULT_GROUP})')
    p.add_argument('--cluster-domain', default=None,
                   help=f'suffix after .svc in TF_CONFIG addresses (default ${CLUSTER_DOMAIN_ENV})')
    p.add_argument('--trainer-metrics-port', type=int, default=api.DEFAULT_TRAINER_METRICS_PORT,
                   help='port injected as TENSORFLEET_METRICS_PORT into the tensorflow container')
    p.add_argument('--trainer-progress', action=argparse.BooleanOptionalAction, default=None,
                   help='read each running job\'s chief metrics (pod IP, --trainer-metrics-port) for '
                        f'status.progress and the Step/Loss columns (default ${PROGRESS_ENV}, else on)')
    p.add_argument('--trainer-progress-interval', type=float, default=15.0, metavar='SECONDS',
                   help='how often the chief metrics are read (default 15)')
    p.add_argument('--max-in-flight', type=int, default=32, help='API requests in flight at once')
    p.add_argument('--kubeconfig', default=None, metavar='PATH',
                   help='kubeconfig to use (default $KUBECONFIG, then ~/.kube/config; in a pod: its service account)')
    p.add_argument('--print-crd', action='store_true', help='print the CRD YAML and exit')
    p.add_argument('--version', action='version', version=f'%(prog)s {__version__}')
    p.add_argument('-v', '--verbose', action='store_true')
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.api_group:
        os.environ[GROUP_ENV] = args.api_group
    if args.print_crd:
        from .core.crd import crd_yaml
        sys.stdout.write(crd_yaml(api_group()))
        return 0
    if args.kubeconfig:
        os.environ['KUBECONFIG'] = args.kubeconfig      # what kopf's kubeconfig login reads
    try:
        check_credentials(os.environ.get('KUBECONFIG'))
        check_ports(args)
        progress = trainer_progress_setting(args)
    except StartupError as e:
        print(f'tensorfleet-operator: {e}', file=sys.stderr)
        return 1
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format='%(asctime)s %(levelname)s %(name)s: %(message)s')
    if not args.verbose:   # kopf logs every event-handler run at INFO: one line per pod event
        logging.getLogger('kopf.objects').setLevel(logging.WARNING)
    import random

    from .config import OperatorConfig
    from .handlers import run_operator
    priority = args.priority if args.priority is not None else (random.randint(1, 2**31 - 1)
                                                                if args.peering else 0)
    kwargs = {}
    if args.cluster_domain is not None:
        kwargs['cluster_domain'] = args.cluster_domain
    config = OperatorConfig(
        api_group=api_group(),
        namespaces=tuple(args.namespace),
        standalone=not args.peering,
        peering_name=args.peering,
        priority=priority,
        liveness_endpoint=args.liveness or None,
        metrics_port=args.metrics_port or None,
        metrics_address=args.metrics_address,
        gang_scheduler=args.gang_scheduler,
        trainer_metrics_port=args.trainer_metrics_port,
        max_in_flight=args.max_in_flight,
        trainer_progress=progress,
        progress_interval_seconds=args.trainer_progress_interval,
        **kwargs,
    )

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run_operator(config, stop_flag=stop)

    asyncio.run(run())
    return 0


if __name__ == '__main__':
    sys.exit(main())
