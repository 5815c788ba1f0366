"""Operator-wide settings, built by ``__main__.py`` from the CLI and environment.

The edge between the environment and the pure core: the only place that reads
environment variables (``$TENSORFLEET_API_GROUP``, ``$CUSTOM_CLUSTER_DOMAIN``,
``$TENSORFLEET_TRAINER_PROGRESS``, ``$TENSORFLEET_SERVICE_ACCOUNT_DIR``).
The shell reads :class:`OperatorConfig`; the core gets the part that shapes
children via :meth:`OperatorConfig.child_options`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .core import api
from .core.children import ChildOptions

GROUP_ENV = 'TENSORFLEET_API_GROUP'
CLUSTER_DOMAIN_ENV = 'CUSTOM_CLUSTER_DOMAIN'
PROGRESS_ENV = 'TENSORFLEET_TRAINER_PROGRESS'
SERVICE_ACCOUNT_DIR_ENV = 'TENSORFLEET_SERVICE_ACCOUNT_DIR'
DEFAULT_SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount'
_TRUE, _FALSE = ('1', 'true', 'yes', 'on'), ('0', 'false', 'no', 'off')


def api_group() -> str:
    """The API group served: ``$TENSORFLEET_API_GROUP`` or ``tensorfleet.io`` (read when called,
    not at import, so that ``--api-group`` can set it first)."""
    return os.environ.get(GROUP_ENV, '').strip() or api.DEFAULT_GROUP


def cluster_domain() -> str:
    """``$CUSTOM_CLUSTER_DOMAIN`` (Kubeflow's): the suffix after ``.svc`` in TF_CONFIG addresses."""
    return os.environ.get(CLUSTER_DOMAIN_ENV, '')


def trainer_progress() -> bool:
    """``$TENSORFLEET_TRAINER_PROGRESS`` (the chart's ``trainerMetrics.progress``): read running jobs'
    chief metrics for ``status.progress``; on unless it says false/0/no/off."""
    raw = os.environ.get(PROGRESS_ENV, '').strip().lower()
    if raw in _TRUE or not raw:
        return True
    if raw in _FALSE:
        return False
    raise ValueError(f'{PROGRESS_ENV}={raw!r}: expected true or false')


def service_account_dir() -> str:
    """Where the in-cluster token, ``ca.crt`` and ``namespace`` are: ``$TENSORFLEET_SERVICE_ACCOUNT_DIR``,
    else the kubelet's mount point (client-go's fixed path)."""
    return os.environ.get(SERVICE_ACCOUNT_DIR_ENV, '').strip() or DEFAULT_SERVICE_ACCOUNT_DIR


@dataclass(frozen=True)
class OperatorConfig:
    api_group: str = field(default_factory=api_group)
    namespaces: tuple[str, ...] = ()        # empty: all namespaces
    standalone: bool = True                 # no peering unless asked for
    peering_name: str | None = None         # opt-in hot standby (kopf peering)
    priority: int = 0
    liveness_endpoint: str | None = None    # e.g. http://0.0.0.0:8081/healthz
    metrics_port: int | None = None         # Prometheus endpoint of the operator itself
    metrics_address: str = '0.0.0.0'
    gang_scheduler: str | None = None       # volcano | scheduler-plugins
    cluster_domain: str = field(default_factory=cluster_domain)
    trainer_metrics_port: int = api.DEFAULT_TRAINER_METRICS_PORT
    clean_pod_grace_seconds: float = api.DEFAULT_CLEAN_POD_GRACE_SECONDS   # core/job_end.py
    max_in_flight: int = 32                 # API requests in flight at once
    trainer_progress: bool = field(default_factory=trainer_progress)   # status.progress from chief metrics
    progress_interval_seconds: float = 15.0  # how often running jobs' chief metrics are read
    progress_timeout_seconds: float = 2.0    # per scrape: connect and read
    progress_concurrency: int = 16           # scrapes in flight at once
    debounce_seconds: float = 0.05          # coalesce bursts of pod events per job
    error_backoff_seconds: tuple[float, ...] = (1, 2, 5, 10, 30, 60, 120, 300)
    token_refresh_seconds: float = 60.0      # a token file is read again this often (client-go's minute)
    api_timeout_seconds: float = 120.0       # start-up: give up when the API cannot be reached (0: never)
    api_check_seconds: float = 10.0          # readiness: how often the API connection is checked
    api_request_timeout_seconds: float = 10.0   # one check's request
    liveness_timeout_seconds: float = 3.0    # liveness: the event loop must answer within this

    @property
    def clusterwide(self) -> bool:
        return not self.namespaces

    def child_options(self) -> ChildOptions:
        return ChildOptions(api_group=self.api_group, cluster_domain=self.cluster_domain,
                            gang_scheduler=self.gang_scheduler, metrics_port=self.trainer_metrics_port,
                            clean_pod_grace_seconds=self.clean_pod_grace_seconds)
