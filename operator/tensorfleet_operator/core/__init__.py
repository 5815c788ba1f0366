"""The operator's pure core: a TFJob and its observed pods in, a plan out.

No I/O at all (no network, files, environment or clock: the caller passes
``now``), and no kopf, aiohttp or prometheus import, so the operator's shell
(``handlers``, ``controller``, ``apply``, ``kubeclient``, ``metrics``) and the
local mode (which feeds pod-like dicts from its own fake kubelet) decide
exactly the same things. Flow: ``spec.parse_job`` (defaults, validation) ->
``observe.observe_pod`` (what each pod says, by the "finished" rule) ->
``plan.reconcile`` (uses ``children`` for manifests and TF_CONFIG, ``entries``
for the per-index status, ``conditions`` for Kubeflow's condition merge).
``api`` holds every name and default; ``crd`` renders the CRD from it.
"""
from .api import ReplicaType, RestartPolicy
from .children import ChildOptions, PodManifests, desired_pod, desired_service, tf_config
from .observe import PodView, container_finished, observe_pod
from .plan import Event, Plan, reconcile
from .spec import InvalidSpec, JobSpec, parse_job

__all__ = ['ChildOptions', 'Event', 'InvalidSpec', 'JobSpec', 'Plan', 'PodManifests', 'PodView', 'ReplicaType',
           'RestartPolicy', 'container_finished', 'desired_pod', 'desired_service', 'observe_pod', 'parse_job',
           'reconcile', 'tf_config']
