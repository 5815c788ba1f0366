"""The kopf layer: the only module that imports kopf.

It registers, on a fresh ``kopf.OperatorRegistry``: the start-up settings
(server-side label selectors for the children, the metrics endpoint, the API
checks behind readiness), kopf's login (whose credentials go to the
controller's REST client), event handlers for TFJobs (trigger, or forget on
DELETED) and for pods and services with the job-name label (trigger their
job), and with ``--peering`` the ``peering_holder`` daemon that tells the
controller when kopf has paused the operator. :func:`login_for` turns the
connection chosen by ``cluster_login.py`` into kopf's login; with the
in-cluster config a task follows the rotating token file and has kopf log in
again when it changes. :func:`run_operator` serves the probes (``health.py``)
and waits for the API (``api_health.py``) before kopf starts. Everything else
happens in ``controller.py`` and ``apply.py``.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import kopf

from .cluster_login import ApiLogin
from .config import OperatorConfig
from .controller import Controller
from .core import api
from .health import HealthServer

LoginFn = Callable[..., Any]
logger = logging.getLogger('tensorfleet_operator')


def login_for(api_login: ApiLogin) -> tuple[LoginFn, str | None]:
    """kopf's login for the chosen connection, and the token file it reads (in-cluster only)."""
    cluster = api_login.in_cluster
    if cluster is None:
        return kopf.login_with_kubeconfig, None     # reads $KUBECONFIG, else ~/.kube/config

    def login_in_cluster(**_: Any) -> kopf.ConnectionInfo:
        return kopf.ConnectionInfo(server=cluster.server, ca_path=cluster.ca_path, token=cluster.read_token() or None,
                                   default_namespace=cluster.namespace())
    return login_in_cluster, cluster.token_path


def _new_vault() -> Any:
    """kopf's credentials vault, made here so that the token follower can reach it; kopf exports
    the class only as the type of ``kopf.operator(vault=)``. None if this kopf has no such class:
    kopf's connections then take a rotated token when the old one is refused (401)."""
    try:
        from kopf._cogs.structs.credentials import Vault
    except ImportError:      # pragma: no cover   (kopf moved it)
        return None
    return Vault() if callable(getattr(Vault, 'invalidate', None)) else None


async def follow_token_file(vault: Any, token_path: str, interval: float) -> None:
    """Every ``interval`` s: when the token file holds another token than the one kopf uses, have kopf
    log in again (its watch streams then reconnect once with the new token: once per rotation)."""
    while True:
        await asyncio.sleep(interval)
        try:
            with open(token_path, encoding='utf-8') as f:
                token = f.read().strip()
        except OSError as e:
            logger.warning('cannot read the service-account token: %s', e)
            continue
        async for key, info in vault:        # the credentials kopf uses now
            if token and info.token != token:
                logger.info('the service-account token changed: logging in again')
                await vault.invalidate(key, info)
            break


def build_registry(controller: Controller, login: LoginFn, configure: Callable[[kopf.OperatorSettings], None] | None
                   = None, token_path: str | None = None, vault: Any = None) -> kopf.OperatorRegistry:
    """Register the handlers for ``controller.config`` on a fresh registry."""
    registry = kopf.OperatorRegistry()
    _register_lifecycle(registry, controller, login, configure, token_path, vault)
    _register_watches(registry, controller)
    if controller.config.peering_name:
        _register_peering(registry, controller, controller.config.peering_name)
    return registry


def _register_lifecycle(registry: kopf.OperatorRegistry, controller: Controller, login_fn: LoginFn,
                        configure: Callable[[kopf.OperatorSettings], None] | None, token_path: str | None,
                        vault: Any) -> None:
    """Start-up settings, metrics endpoint and API checks, login (and the token file), cleanup."""
    config = controller.config
    follower: list[asyncio.Task[None]] = []

    @kopf.on.startup(registry=registry)
    async def startup(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.scanning.disabled = True
        settings.posting.enabled = True
        settings.watching.server_timeout = 300
        settings.watching.client_timeout = 330
        settings.watching.label_selectors['pods'] = api.JOB_NAME_LABEL
        settings.watching.label_selectors['services'] = api.JOB_NAME_LABEL
        if configure is not None:
            configure(settings)
        if config.metrics_port:
            controller.metrics.serve(config.metrics_port, config.metrics_address)
        controller.start_progress()
        controller.api_health.start(lambda: (controller.client, controller.server))
        if token_path and vault is not None:
            follower.append(asyncio.get_running_loop().create_task(
                follow_token_file(vault, token_path, config.token_refresh_seconds), name='token-file'))

    @kopf.on.login(registry=registry)
    async def login_handler(**kwargs: Any) -> Any:
        info = login_fn(**kwargs)
        if info is not None:
            await controller.connect(info, relogin=lambda: login_fn(**kwargs), token_path=token_path)
        return info

    @kopf.on.cleanup(registry=registry)
    async def cleanup(**_: Any) -> None:
        for task in follower:
            task.cancel()
        await asyncio.gather(*follower, return_exceptions=True)
        await controller.close()


def _register_watches(registry: kopf.OperatorRegistry, controller: Controller) -> None:
    """TFJob events trigger (or, DELETED, forget) the job; pod/service events trigger their job."""
    @kopf.on.event(controller.config.api_group, api.VERSION, api.PLURAL, registry=registry)
    async def tfjob_event(*, event: Any, name: str, namespace: str | None, body: Any, **_: Any) -> None:
        if event.get('type') == 'DELETED':
            controller.forget(namespace or 'default', name)
        elif controller.own_progress_write(namespace or 'default', name,
                                           (body.get('metadata') or {}).get('resourceVersion')):
            return       # the progress poller's own status write: nothing else changed
        else:
            controller.trigger(namespace or 'default', name)

    async def child_event(*, labels: Any, namespace: str | None, **_: Any) -> None:
        job = labels.get(api.JOB_NAME_LABEL)
        if job:
            controller.trigger(namespace or 'default', job)

    for plural in ('pods', 'services'):
        kopf.on.event('', 'v1', plural, labels={api.JOB_NAME_LABEL: kopf.PRESENT},
                      registry=registry, id=f'{plural}_event')(child_event)


def _register_peering(registry: kopf.OperatorRegistry, controller: Controller, peering_name: str) -> None:
    """kopf runs this daemon only while the operator is not paused by peering (its daemon_killer
    stops every daemon on pause; the re-listing after resume respawns it). The controller works
    only while one runs. kopf puts its finalizer on the peering object."""
    @kopf.daemon(PEERING_GROUP, PEERING_VERSION, peering_plural(controller.config), id='peering_holder',
                 when=lambda name, **_: name == peering_name, cancellation_timeout=5, registry=registry)
    async def peering_holder(stopped: Any, **_: Any) -> None:
        controller.hold()
        try:
            await stopped.wait()
        finally:
            controller.release()


PEERING_GROUP, PEERING_VERSION = 'kopf.dev', 'v1'


def peering_plural(config: OperatorConfig) -> str:
    """kopf's peering resource: cluster-wide operators use ClusterKopfPeering, others KopfPeering."""
    return 'clusterkopfpeerings' if config.clusterwide else 'kopfpeerings'


async def run_operator(config: OperatorConfig, *, controller: Controller | None = None,
                       login: LoginFn | None = None, api_login: ApiLogin | None = None,
                       configure: Callable[[kopf.OperatorSettings], None] | None = None,
                       stop_flag: Any = None, ready_flag: Any = None, identity: str | None = None) -> None:
    """Run the operator in the current event loop until ``stop_flag`` is set (an asyncio or
    threading Event). The connection: ``api_login`` (``cluster_login.choose_login``), or a kopf
    ``login`` function. Serves the probes, waits until the API answers (raises
    ``api_health.ApiUnreachable`` after ``config.api_timeout_seconds``), then runs kopf.
    ``identity`` is kopf's peer id (default: kopf's, from POD_ID or the host)."""
    controller = controller or Controller(config)
    token_path = None
    if api_login is not None:
        login, token_path = login_for(api_login)
        controller.api_health.origin = api_login.origin
    if login is None:
        raise ValueError('run_operator needs login= or api_login=')
    health = None
    if config.liveness_endpoint:
        health = HealthServer(config.liveness_endpoint, asyncio.get_running_loop(), controller.alive,
                              controller.api_health.state, config.liveness_timeout_seconds)
        health.start()
    vault = _new_vault()
    registry = build_registry(controller, login, configure=configure, token_path=token_path, vault=vault)
    try:
        info = login(settings=kopf.OperatorSettings(), logger=logger)
        if info is None:
            raise kopf.LoginError('the login found no credentials')
        await controller.connect(info, token_path=token_path)
        assert controller.client is not None
        stopping = getattr(stop_flag, 'is_set', None) or getattr(stop_flag, 'done', None) or (lambda: False)
        if not await controller.api_health.wait_until_reachable(controller.client, controller.server, stopping):
            return
        await kopf.operator(
            registry=registry,
            clusterwide=config.clusterwide,
            namespaces=list(config.namespaces),
            standalone=config.standalone and not config.peering_name,
            peering_name=config.peering_name,
            priority=config.priority,
            stop_flag=stop_flag,
            ready_flag=ready_flag,
            vault=vault,
            identity=identity,  # type: ignore[arg-type]   # kopf's Identity is a NewType of str
        )
    finally:
        if controller.client is not None and not controller.api_health.kopf_started:
            with contextlib.suppress(Exception):
                await controller.client.close()
        if health is not None:
            health.close()


__all__ = ['build_registry', 'follow_token_file', 'login_for', 'run_operator']
