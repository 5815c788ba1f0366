"""The kopf layer: the only module that imports kopf.

It registers, on a fresh ``kopf.OperatorRegistry``: the start-up settings
(server-side label selectors for the children, the metrics endpoint), kopf's
login (whose credentials go to the controller's REST client), event handlers
for TFJobs (trigger, or forget on DELETED) and for pods and services with the
job-name label (trigger their job), a liveness probe, and with ``--peering``
the ``peering_holder`` daemon that tells the controller when kopf has paused
the operator. Everything else happens in ``controller.py`` and ``apply.py``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import kopf

from .config import OperatorConfig
from .controller import Controller
from .core import api

LoginFn = Callable[..., Any]


def default_login(**kwargs: Any) -> Any:
    """In-cluster service account first, then kubeconfig (kopf's own piggy-back-free logins)."""
    return kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)


def build_registry(controller: Controller, login: LoginFn | None = None,
                   configure: Callable[[kopf.OperatorSettings], None] | None = None) -> kopf.OperatorRegistry:
    """Register the handlers for ``controller.config`` on a fresh registry."""
    registry = kopf.OperatorRegistry()
    _register_lifecycle(registry, controller, login or default_login, configure)
    _register_watches(registry, controller)
    if controller.config.peering_name:
        _register_peering(registry, controller, controller.config.peering_name)
    return registry


def _register_lifecycle(registry: kopf.OperatorRegistry, controller: Controller, login_fn: LoginFn,
                        configure: Callable[[kopf.OperatorSettings], None] | None) -> None:
    """Start-up settings and metrics endpoint, login, cleanup and the liveness probe."""
    config = controller.config

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

    @kopf.on.login(registry=registry)
    async def login_handler(**kwargs: Any) -> Any:
        info = login_fn(**kwargs)
        if info is not None:
            await controller.connect(info, relogin=lambda: login_fn(**kwargs))
        return info

    @kopf.on.cleanup(registry=registry)
    async def cleanup(**_: Any) -> None:
        await controller.close()

    @kopf.on.probe(id='jobs', registry=registry)
    async def probe_jobs(**_: Any) -> int:
        return controller.known_jobs


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
                       login: LoginFn | None = None,
                       configure: Callable[[kopf.OperatorSettings], None] | None = None,
                       stop_flag: Any = None, ready_flag: Any = None, identity: str | None = None) -> None:
    """Run the operator in the current event loop until ``stop_flag`` is set (an asyncio or
    threading Event). ``identity`` is kopf's peer id (default: kopf's, from POD_ID or the host)."""
    controller = controller or Controller(config)
    registry = build_registry(controller, login=login, configure=configure)
    await kopf.operator(
        registry=registry,
        clusterwide=config.clusterwide,
        namespaces=list(config.namespaces),
        standalone=config.standalone and not config.peering_name,
        peering_name=config.peering_name,
        priority=config.priority,
        liveness_endpoint=config.liveness_endpoint,
        stop_flag=stop_flag,
        ready_flag=ready_flag,
        identity=identity,  # type: ignore[arg-type]   # kopf's Identity is a NewType of str
    )


__all__ = ['build_registry', 'default_login', 'run_operator']
