"""``python -m tensorfleet_operator`` / ``tensorfleet-operator``: run the operator.

Parses the CLI into an ``OperatorConfig`` and runs ``handlers.run_operator``
(kopf embedded) in a fresh event loop. ``--print-crd`` prints the CRD instead,
``--version`` the version. Before kopf starts, these fail with one line and exit
status 1: no API connection to configure (``cluster_login.choose_login``:
``--kubeconfig``/``$KUBECONFIG``, else the in-cluster config, else
``~/.kube/config``), a metrics or health port that cannot be bound, and an API
that does not answer within ``--api-timeout`` (the line names the endpoint,
where it came from, and the cause).
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
from typing import Any
from urllib.parse import urlsplit

from . import __version__
from .cluster_login import ApiLogin, LoginProblem, choose_login
from .config import CLUSTER_DOMAIN_ENV, GROUP_ENV, PROGRESS_ENV, SERVICE_ACCOUNT_DIR_ENV, api_group, \
    service_account_dir, trainer_progress
from .core import api


class StartupError(Exception):
    """A reason the operator cannot start, said in one line."""


def api_login(kubeconfig: str | None) -> ApiLogin:
    """The connection to use (``--kubeconfig``, else the environment), or a one-line StartupError."""
    try:
        return choose_login(kubeconfig or os.environ.get('KUBECONFIG'), os.environ, service_account_dir(),
                            os.path.expanduser('~/.kube/config'))
    except LoginProblem as e:
        raise StartupError(str(e)) from None


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
                   help='liveness endpoint; readiness is /readyz on the same port (empty disables both)')
    p.add_argument('--api-timeout', type=float, default=120.0, metavar='SECONDS',
                   help='at start, exit 1 when the API has not answered within this (0: wait for ever)')
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
    p.add_argument('--clean-pod-grace', type=float, default=api.DEFAULT_CLEAN_POD_GRACE_SECONDS, metavar='SECONDS',
                   help='a succeeded job\'s running pods are deleted (cleanPodPolicy: Running) this long after it '
                        'succeeded, so a ps that ends by itself is kept (default %(default)g; 0: at once, as Kubeflow)')
    p.add_argument('--trainer-progress', action=argparse.BooleanOptionalAction, default=None,
                   help='read each running job\'s chief metrics (pod IP, --trainer-metrics-port) for '
                        f'status.progress and the Step/Loss columns (default ${PROGRESS_ENV}, else on)')
    p.add_argument('--trainer-progress-interval', type=float, default=15.0, metavar='SECONDS',
                   help='how often the chief metrics are read (default 15)')
    p.add_argument('--max-in-flight', type=int, default=32, help='API requests in flight at once')
    p.add_argument('--kubeconfig', default=None, metavar='PATH',
                   help='kubeconfig to use (default $KUBECONFIG; else in a pod its service account through '
                        f'KUBERNETES_SERVICE_HOST/PORT and ${SERVICE_ACCOUNT_DIR_ENV} or the kubelet\'s mount; '
                        'else ~/.kube/config)')
    p.add_argument('--print-crd', action='store_true', help='print the CRD YAML and exit')
    p.add_argument('--version', action='version', version=f'%(prog)s {__version__}')
    p.add_argument('-v', '--verbose', action='store_true')
    args = p.parse_args(argv)
    if args.clean_pod_grace < 0:
        p.error(f'--clean-pod-grace {args.clean_pod_grace:g}: must be >= 0')
    return args


def build_config(args: argparse.Namespace, progress: bool) -> Any:
    """The OperatorConfig the parsed CLI asks for."""
    import random

    from .config import OperatorConfig
    priority = args.priority if args.priority is not None else (random.randint(1, 2**31 - 1)
                                                                if args.peering else 0)
    kwargs = {}
    if args.cluster_domain is not None:
        kwargs['cluster_domain'] = args.cluster_domain
    return OperatorConfig(
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
        clean_pod_grace_seconds=args.clean_pod_grace,
        max_in_flight=args.max_in_flight,
        trainer_progress=progress,
        progress_interval_seconds=args.trainer_progress_interval,
        api_timeout_seconds=args.api_timeout,
        **kwargs,
    )


def preflight(args: argparse.Namespace) -> tuple[ApiLogin, bool]:
    """The checks before kopf: the API connection to use, free ports, settings. StartupError."""
    if args.kubeconfig:
        os.environ['KUBECONFIG'] = args.kubeconfig      # what kopf's kubeconfig login reads
    login = api_login(args.kubeconfig)
    check_ports(args)
    progress = trainer_progress_setting(args)
    if args.api_timeout < 0:
        raise StartupError(f'--api-timeout {args.api_timeout}: must be >= 0 (0 waits for ever)')
    return login, progress


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.api_group:
        os.environ[GROUP_ENV] = args.api_group
    if args.print_crd:
        from .core.crd import crd_yaml
        sys.stdout.write(crd_yaml(api_group()))
        return 0
    try:
        login, progress = preflight(args)
    except StartupError as e:
        print(f'tensorfleet-operator: {e}', file=sys.stderr)
        return 1
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format='%(asctime)s %(levelname)s %(name)s: %(message)s')
    if not args.verbose:   # kopf logs every event-handler run at INFO: one line per pod event
        logging.getLogger('kopf.objects').setLevel(logging.WARNING)
    import kopf

    from .api_health import ApiUnreachable
    from .handlers import run_operator
    config = build_config(args, progress)
    logging.getLogger('tensorfleet_operator').info('API connection: %s', login.origin)

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run_operator(config, api_login=login, stop_flag=stop)

    try:
        asyncio.run(run())
    except (ApiUnreachable, kopf.LoginError) as e:
        print(f'tensorfleet-operator: {e}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
