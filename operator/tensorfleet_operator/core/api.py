"""The TFJob API: one source of truth for names, enums, label keys and defaults.

The first module of the pure core (``tensorfleet_operator.core``): everything
else in the operator (the CRD generator in ``crd.py``, the reconcile core in
``spec.py``/``children.py``/``observe.py``/``plan.py``, and the shell) takes its
constants from here. Constants only: which group is served is decided at the
edge (``tensorfleet_operator.config``; ``kubeflow.org`` makes the operator a
drop-in replacement for Kubeflow's training-operator).
"""
from __future__ import annotations

from enum import Enum

DEFAULT_GROUP = 'tensorfleet.io'
KUBEFLOW_GROUP = 'kubeflow.org'     # the drop-in group (used by the local mode to accept both)
VERSION = 'v1'
KIND = 'TFJob'
PLURAL = 'tfjobs'
SINGULAR = 'tfjob'
SHORT_NAMES = ['tfj']


class ReplicaType(str, Enum):
    """Replica types, spelled as keys of ``spec.tfReplicaSpecs``."""
    CHIEF = 'Chief'
    MASTER = 'Master'   # legacy alias of Chief; keeps its own name in pods and TF_CONFIG
    PS = 'PS'
    WORKER = 'Worker'
    EVALUATOR = 'Evaluator'

    @property
    def lower(self) -> str:  # type: ignore[override]   # a property on purpose: rtype.lower is a name
        """The spelling used in child names, labels and TF_CONFIG (``ps``, ``worker``...)."""
        return self.value.lower()

    @property
    def is_chief(self) -> bool:
        return self in (ReplicaType.CHIEF, ReplicaType.MASTER)


# Order in which replica types are created and listed (ps first: workers block on it).
REPLICA_ORDER = [ReplicaType.PS, ReplicaType.CHIEF, ReplicaType.MASTER,
                 ReplicaType.WORKER, ReplicaType.EVALUATOR]


class RestartPolicy(str, Enum):
    ALWAYS = 'Always'
    ON_FAILURE = 'OnFailure'
    NEVER = 'Never'
    EXIT_CODE = 'ExitCode'   # pod restartPolicy Never; 1-127 permanent, 128+ retryable


class CleanPodPolicy(str, Enum):
    ALL = 'All'
    RUNNING = 'Running'   # Running and Pending pods are deleted when the job finishes
    NONE = 'None'


class SuccessPolicy(str, Enum):
    DEFAULT = ''               # chief(s) succeeded, else worker 0 succeeded
    ALL_WORKERS = 'AllWorkers'


class ConditionType(str, Enum):
    CREATED = 'Created'
    RUNNING = 'Running'
    RESTARTING = 'Restarting'
    SUCCEEDED = 'Succeeded'
    FAILED = 'Failed'
    SUSPENDED = 'Suspended'


class TerminalReason(str, Enum):
    """``status.reason``: the one reason a job ended (also the Failed condition's reason)."""
    SUCCEEDED = 'Succeeded'
    REPLICA_FAILED = 'ReplicaFailed'             # a pod failed under restartPolicy Never
    PERMANENT_EXIT_CODE = 'PermanentExitCode'    # ExitCode policy, exit code 1-127
    BACKOFF_LIMIT_EXCEEDED = 'BackoffLimitExceeded'
    DEADLINE_EXCEEDED = 'DeadlineExceeded'
    INVALID_SPEC = 'InvalidSpec'


# Kubeflow's condition reasons (``TFJob`` + verb), kept for drop-in compatibility.
REASON_CREATED = 'TFJobCreated'
REASON_RUNNING = 'TFJobRunning'
REASON_RESTARTING = 'TFJobRestarting'
REASON_SUCCEEDED = 'TFJobSucceeded'
REASON_SUSPENDED = 'TFJobSuspended'
REASON_RESUMED = 'TFJobResumed'

# Container, port and defaults (Kubeflow's values).
CONTAINER_NAME = 'tensorflow'
PORT_NAME = 'tfjob-port'
DEFAULT_PORT = 2222
DEFAULT_REPLICAS = 1
DEFAULT_RESTART_POLICY = RestartPolicy.NEVER
# Kubeflow defaults to None since #1754, which lets never-ending ps pods hold nodes.
DEFAULT_CLEAN_POD_POLICY = CleanPodPolicy.RUNNING
DEFAULT_CLEAN_POD_GRACE_SECONDS = 10.0   # see core/job_end.py
EXIT_CODE_RETRYABLE_MIN = 128   # ExitCode policy: codes >= 128 (signals) are retried

# Labels: Kubeflow's keys plus the same keys under our own prefix.
KUBEFLOW_LABEL_PREFIX = 'training.kubeflow.org/'
OWN_LABEL_PREFIX = 'tensorfleet.io/'
LABEL_PREFIXES = (KUBEFLOW_LABEL_PREFIX, OWN_LABEL_PREFIX)
JOB_NAME = 'job-name'
REPLICA_TYPE = 'replica-type'
REPLICA_INDEX = 'replica-index'
OPERATOR_NAME = 'operator-name'
JOB_ROLE = 'job-role'
JOB_ROLE_MASTER = 'master'
OPERATOR_NAME_VALUE = 'tfjob-controller'   # Kubeflow's value: selectors keep working
JOB_NAME_LABEL = KUBEFLOW_LABEL_PREFIX + JOB_NAME   # the selector the operator lists children by

# What the operator injects for the tensorfleet trainer.
ENV_TF_CONFIG = 'TF_CONFIG'
ENV_CUDA_VISIBLE_DEVICES = 'CUDA_VISIBLE_DEVICES'
ENV_METRICS_PORT = 'TENSORFLEET_METRICS_PORT'
# The trainer's last progress, as its container's termination message (JSON {"progress": {...}}, the keys of
# status.progress): Kubernetes' file, or this one where local mode's kubelet sets it
ENV_TERMINATION_MESSAGE_PATH = 'TENSORFLEET_TERMINATION_MESSAGE_PATH'
ENV_RPC_TOKEN = 'TENSORFLEET_RPC_TOKEN'
METRICS_PORT_NAME = 'tf-metrics'
DEFAULT_TRAINER_METRICS_PORT = 9100
RPC_TOKEN_SECRET_SUFFIX = '-rpc-token'
RPC_TOKEN_KEY = 'token'
GPU_RESOURCE = 'nvidia.com/gpu'

# Gang scheduling.
GANG_VOLCANO = 'volcano'
GANG_SCHEDULER_PLUGINS = 'scheduler-plugins'
GANG_SCHEDULERS = (GANG_VOLCANO, GANG_SCHEDULER_PLUGINS)
SCHEDULER_NAMES = {GANG_VOLCANO: 'volcano', GANG_SCHEDULER_PLUGINS: 'scheduler-plugins-scheduler'}
VOLCANO_GROUP_ANNOTATION = 'scheduling.k8s.io/group-name'
VOLCANO_TASK_ANNOTATION = 'volcano.sh/task-spec'
SCHEDULER_PLUGINS_GROUP_LABEL = 'scheduling.x-k8s.io/pod-group'
PODGROUP_API = {
    GANG_VOLCANO: ('scheduling.volcano.sh', 'v1beta1', 'podgroups'),
    GANG_SCHEDULER_PLUGINS: ('scheduling.x-k8s.io', 'v1alpha1', 'podgroups'),
}

# Max length of a child name: Services are DNS-1035 labels.
MAX_CHILD_NAME = 63
# Annotation bytes the operator may add to a pod (Volcano's two, with a 63-character job name): the
# template's own annotations must leave room for them under the API server's 256 KiB.
OPERATOR_ANNOTATION_BYTES = len(VOLCANO_GROUP_ANNOTATION) + MAX_CHILD_NAME + len(VOLCANO_TASK_ANNOTATION) + \
    len('evaluator')

# Bounds that keep one job from taking the operator (or the API server) down. Every pod's TF_CONFIG
# lists every task, so pod size grows with the job and the job's bytes with its square.
MAX_REPLICAS_PER_JOB = 1000          # all replica types together (the CRD says it per type too)
MAX_TF_CONFIG_BYTES = 128 * 1024     # per pod; the API server refuses objects over ~1.5 MiB (etcd)
POD_CREATE_BATCH = 64                # pod manifests built and sent at a time
