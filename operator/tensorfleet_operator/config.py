"""Operator-wide settings, built by ``__main__.py`` from the CLI and environment.

Pure data (no I/O, no kopf): ``handlers.py`` reads it to register handlers and
``children.py`` gets the part that shapes children via :meth:`child_options`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from . import api
from .children import ChildOptions


@dataclass(frozen=True)
class OperatorConfig:
    api_group: str = field(default_factory=api.api_group)
    namespaces: tuple[str, ...] = ()        # empty: all namespaces
    standalone: bool = True                 # no peering unless asked for
    peering_name: str | None = None         # opt-in hot standby (kopf peering)
    priority: int = 0
    liveness_endpoint: str | None = None    # e.g. http://0.0.0.0:8081/healthz
    metrics_port: int | None = None         # Prometheus endpoint of the operator itself
    metrics_address: str = '0.0.0.0'
    gang_scheduler: str | None = None       # volcano | scheduler-plugins
    cluster_domain: str = field(default_factory=lambda: os.environ.get(api.CLUSTER_DOMAIN_ENV, ''))
    trainer_metrics_port: int = api.DEFAULT_TRAINER_METRICS_PORT
    max_in_flight: int = 32                 # API requests in flight at once
    debounce_seconds: float = 0.05          # coalesce bursts of pod events per job
    error_backoff_seconds: tuple[float, ...] = (1, 2, 5, 10, 30, 60, 120, 300)

    @property
    def clusterwide(self) -> bool:
        return not self.namespaces

    def child_options(self) -> ChildOptions:
        return ChildOptions(api_group=self.api_group, cluster_domain=self.cluster_domain,
                            gang_scheduler=self.gang_scheduler, metrics_port=self.trainer_metrics_port)
