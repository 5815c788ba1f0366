"""The one door from local mode into the operator's pure core.

Local mode (``tensorfleet run/render/validate``) must decide exactly what the
operator decides, so it calls the operator's own pure functions, never a copy.
Everything it uses is re-exported here and nowhere else is the core imported:
when the core modules move (``tensorfleet_operator.core``), only this file
changes. Nothing here imports the operator's shell (kopf, aiohttp, the kube
client, handlers, metrics).
"""
from __future__ import annotations

from ..api import (  # noqa: F401  (re-exports)
    CONTAINER_NAME, DEFAULT_GROUP, ENV_CUDA_VISIBLE_DEVICES, ENV_METRICS_PORT, ENV_RPC_TOKEN, ENV_TF_CONFIG,
    GPU_RESOURCE, JOB_NAME_LABEL, KIND, KUBEFLOW_GROUP, KUBEFLOW_LABEL_PREFIX, REPLICA_INDEX, REPLICA_TYPE,
    RPC_TOKEN_KEY, VERSION,
    ConditionType, ReplicaType, RestartPolicy, TerminalReason,
)
from ..children import (  # noqa: F401
    ChildOptions, child_name, desired_children, desired_pod, desired_service, rpc_token_secret, secret_name,
)
from ..conditions import is_finished, is_true, timestamp  # noqa: F401
from ..crd import open_api_schema  # noqa: F401
from ..plan import Plan, reconcile  # noqa: F401
from ..spec import InvalidSpec, JobSpec, parse_job  # noqa: F401

# Groups whose TFJobs the core understands (ours and Kubeflow's drop-in one).
API_VERSIONS = (f'{DEFAULT_GROUP}/{VERSION}', f'{KUBEFLOW_GROUP}/{VERSION}')
