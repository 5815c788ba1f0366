"""The one door from local mode into the operator's pure core.

Local mode (``tensorfleet run/render/validate``) must decide exactly what the
operator decides, so it calls the operator's own pure functions, never a copy.
Everything it uses is re-exported here and nowhere else is the core imported, so
a move of the core changes only this file. Nothing here imports the operator's
shell (kopf, aiohttp, the kube client, handlers, metrics).

The core is ``tensorfleet_operator.core`` (api, spec, children, conditions, plan,
crd); nothing else of the operator is imported.
"""
from __future__ import annotations

from typing import Any

from ..core import api
from ..core import children as _children
from ..core import conditions as _conditions
from ..core import crd as _crd
from ..core import plan as _plan
from ..core import progress as _progress
from ..core import spec as _spec
from ..core.plan import Plan as Plan          # (re-exported types, for annotations)
from ..core.spec import JobSpec as JobSpec

# Names and constants (api).
CONTAINER_NAME: str = api.CONTAINER_NAME
DEFAULT_GROUP: str = api.DEFAULT_GROUP
KUBEFLOW_GROUP: str = api.KUBEFLOW_GROUP
VERSION: str = api.VERSION
KIND: str = api.KIND
ENV_CUDA_VISIBLE_DEVICES: str = api.ENV_CUDA_VISIBLE_DEVICES
ENV_METRICS_PORT: str = api.ENV_METRICS_PORT
ENV_RPC_TOKEN: str = api.ENV_RPC_TOKEN
ENV_TF_CONFIG: str = api.ENV_TF_CONFIG
ENV_TERMINATION_MESSAGE_PATH: str = api.ENV_TERMINATION_MESSAGE_PATH
GPU_RESOURCE: str = api.GPU_RESOURCE
JOB_NAME_LABEL: str = api.JOB_NAME_LABEL
KUBEFLOW_LABEL_PREFIX: str = api.KUBEFLOW_LABEL_PREFIX
REPLICA_INDEX: str = api.REPLICA_INDEX
REPLICA_TYPE: str = api.REPLICA_TYPE
RPC_TOKEN_KEY: str = api.RPC_TOKEN_KEY
ConditionType: Any = api.ConditionType
ReplicaType: Any = api.ReplicaType
RestartPolicy: Any = api.RestartPolicy
TerminalReason: Any = api.TerminalReason

# Spec parsing (spec), children (children), conditions, the reconcile (plan), the CRD schema (crd).
InvalidSpec: Any = _spec.InvalidSpec
parse_job: Any = _spec.parse_job
ChildOptions: Any = _children.ChildOptions
child_name: Any = _children.child_name
desired_pod: Any = _children.desired_pod
desired_service: Any = _children.desired_service
rpc_token_secret: Any = _children.rpc_token_secret
secret_name: Any = _children.secret_name
is_finished: Any = _conditions.is_finished
is_true: Any = _conditions.is_true
timestamp: Any = _conditions.timestamp
reconcile: Any = _plan.reconcile
final_progress: Any = _progress.final_progress
progress_fields: Any = _progress.progress_fields
MAX_TERMINATION_MESSAGE_BYTES: int = _progress.MAX_MESSAGE_BYTES
open_api_schema: Any = _crd.open_api_schema

# Groups whose TFJobs the core understands (ours and Kubeflow's drop-in one).
API_VERSIONS = (f'{DEFAULT_GROUP}/{VERSION}', f'{KUBEFLOW_GROUP}/{VERSION}')


def replica_indexes(job: Any) -> list[tuple[Any, int]]:
    """Every (replica type, index) of the job, in the order the operator creates them (ps first)."""
    return [(rtype, i) for rtype, rspec in job.replicas.items() for i in range(rspec.replicas)]
