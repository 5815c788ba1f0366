"""Where the operator's API connection comes from, chosen as client-go and controller-runtime do.

``__main__.py`` calls :func:`choose_login` before anything starts, in controller-runtime's order:
``--kubeconfig``, else ``$KUBECONFIG``, else the in-cluster config, else ``~/.kube/config``. The
in-cluster config is client-go's ``rest.InClusterConfig``: the server is
``https://`` + ``KUBERNETES_SERVICE_HOST``:``KUBERNETES_SERVICE_PORT`` (the variables the kubelet
injects; an IPv6 address is bracketed, as Go's ``net.JoinHostPort`` does), the bearer token and CA
are the service account's files (``token``, ``ca.crt``, ``namespace`` in
``/var/run/secrets/kubernetes.io/serviceaccount``, or ``$TENSORFLEET_SERVICE_ACCOUNT_DIR``: tests,
or a token mounted elsewhere with ``automountServiceAccountToken: false``). A CA file that is
missing is logged and the system's trust store used, as client-go does. The token file is read
again as the kubelet rotates it (``kubeclient.py`` every :data:`TOKEN_REFRESH_SECONDS` and after a
401, as client-go's cached file token source; kopf's connection through ``handlers.py``).
``handlers.py`` turns an :class:`ApiLogin` into kopf's login; nothing here talks to the API.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

logger = logging.getLogger('tensorfleet_operator')

HOST_ENV, PORT_ENV = 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'
TOKEN_REFRESH_SECONDS = 60.0       # client-go re-reads a token file once a minute


class LoginProblem(Exception):
    """No usable API connection can be configured; the message says what to do."""


def join_host_port(host: str, port: str) -> str:
    """``host:port``, an IPv6 literal in brackets (Go's net.JoinHostPort)."""
    host = host.strip()
    if host.startswith('[') and host.endswith(']'):
        host = host[1:-1]
    return f'[{host}]:{port}' if ':' in host else f'{host}:{port}'


@dataclass(frozen=True)
class InCluster:
    host: str
    port: str
    service_account_dir: str

    @property
    def server(self) -> str:
        return 'https://' + join_host_port(self.host, self.port)

    @property
    def token_path(self) -> str:
        return os.path.join(self.service_account_dir, 'token')

    @property
    def ca_path(self) -> str | None:
        path = os.path.join(self.service_account_dir, 'ca.crt')
        if os.path.exists(path):
            return path
        logger.error('expected the root CA in %s (it does not exist); trusting the system\'s CAs instead', path)
        return None

    def namespace(self) -> str | None:
        try:
            with open(os.path.join(self.service_account_dir, 'namespace'), encoding='utf-8') as f:
                return f.read().strip() or None
        except OSError:
            return None

    def read_token(self) -> str:
        with open(self.token_path, encoding='utf-8') as f:
            return f.read().strip()


@dataclass(frozen=True)
class ApiLogin:
    """One of: a kubeconfig (``kubeconfig``: its path, None for kopf's default ``~/.kube/config``)
    or the in-cluster config. ``origin`` says where it came from, for messages."""
    origin: str
    in_cluster: InCluster | None = None
    kubeconfig: str | None = None


def choose_login(kubeconfig: str | None, env: Mapping[str, str], service_account_dir: str,
                 home_config: str) -> ApiLogin:
    """``kubeconfig``: ``--kubeconfig`` or ``$KUBECONFIG`` (already merged by the caller; the flag
    wins); ``home_config``: ``~/.kube/config`` expanded. Raises :class:`LoginProblem`."""
    if kubeconfig:
        missing = [p for p in kubeconfig.split(os.pathsep) if p and not os.path.exists(os.path.expanduser(p))]
        if missing:
            raise LoginProblem(f'kubeconfig {missing[0]} does not exist (from --kubeconfig or KUBECONFIG)')
        return ApiLogin(origin=f'kubeconfig {kubeconfig}', kubeconfig=kubeconfig)
    host, port = env.get(HOST_ENV, '').strip(), env.get(PORT_ENV, '').strip()
    problem = None
    if host and port:
        cluster = InCluster(host, port, service_account_dir)
        if os.path.exists(cluster.token_path):
            return ApiLogin(origin=f'{HOST_ENV}/{PORT_ENV} and the service account in {service_account_dir}',
                            in_cluster=cluster)
        problem = (f'{HOST_ENV}/{PORT_ENV} give {cluster.server}, but the service-account token '
                   f'{cluster.token_path} does not exist (automountServiceAccountToken: false? mount a token '
                   'there, or set TENSORFLEET_SERVICE_ACCOUNT_DIR to the directory holding token and ca.crt)')
    elif host or port:
        problem = f'{HOST_ENV if host else PORT_ENV} is set but {PORT_ENV if host else HOST_ENV} is not'
    if os.path.exists(home_config):
        if problem:
            logger.warning('not using the in-cluster config: %s; using %s', problem, home_config)
        return ApiLogin(origin=f'kubeconfig {home_config}')
    if problem:
        raise LoginProblem(f'{problem}; and no kubeconfig (KUBECONFIG is unset, {home_config} does not exist)')
    raise LoginProblem(f'no Kubernetes credentials: not in a pod ({HOST_ENV}/{PORT_ENV} are unset) and no '
                       f'kubeconfig (KUBECONFIG is unset and {home_config} does not exist); pass --kubeconfig '
                       'PATH, set KUBECONFIG=PATH, or run in-cluster with a service account')
