"""The TFJob CustomResourceDefinition, generated from ``api.py``.

``deploy/crds/tfjobs.tensorfleet.io.yaml`` is the output of
``python -m tensorfleet_operator --print-crd``; a test keeps the two equal.
``build_crd('kubeflow.org')`` gives the drop-in variant for Kubeflow's group.

The schema enforces what a structural CRD can (types, enums, minimums,
required fields), so ``kubectl apply`` names the bad field. Cross-field rules
(one chief, a ``tensorflow`` container...) are checked by ``spec.py``.
Pod templates are kept as-is (``x-kubernetes-preserve-unknown-fields``) apart
from the few fields the operator relies on.
"""
from __future__ import annotations

from typing import Any

from . import api


def _enum(values: list[str], description: str) -> dict[str, Any]:
    return {'type': 'string', 'enum': values, 'description': description}


def _int(minimum: int, description: str) -> dict[str, Any]:
    return {'type': 'integer', 'format': 'int32', 'minimum': minimum, 'description': description}


def _preserved(description: str) -> dict[str, Any]:
    return {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True, 'description': description}


CONTAINER_SCHEMA = {
    'type': 'object',
    'required': ['name', 'image'],
    'x-kubernetes-preserve-unknown-fields': True,
    'properties': {
        'name': {'type': 'string', 'minLength': 1},
        'image': {'type': 'string', 'minLength': 1},
    },
}

TEMPLATE_SCHEMA = {
    'type': 'object',
    'description': 'Pod template of this replica type (a PodTemplateSpec).',
    'x-kubernetes-preserve-unknown-fields': True,
    'properties': {
        'metadata': _preserved('Labels and annotations copied onto every pod.'),
        'spec': {
            'type': 'object',
            'required': ['containers'],
            'x-kubernetes-preserve-unknown-fields': True,
            'properties': {
                'containers': {'type': 'array', 'minItems': 1, 'items': CONTAINER_SCHEMA},
            },
        },
    },
}

REPLICA_SPEC_SCHEMA = {
    'type': 'object',
    'required': ['template'],
    'properties': {
        'replicas': {**_int(0, f'Number of pods of this type (default 1); at most {api.MAX_REPLICAS_PER_JOB} '
                              'per job, all types together.'), 'maximum': api.MAX_REPLICAS_PER_JOB},
        'restartPolicy': _enum([p.value for p in api.RestartPolicy],
                               'What to do when a pod fails (default Never). ExitCode: 1-127 fail the '
                               'job, 128+ restart the pod.'),
        'template': TEMPLATE_SCHEMA,
    },
}

RUN_POLICY_SCHEMA = {
    'type': 'object',
    'properties': {
        'cleanPodPolicy': _enum([p.value for p in api.CleanPodPolicy],
                                'Pods deleted when the job finishes (default Running).'),
        'ttlSecondsAfterFinished': _int(0, 'Delete the TFJob this long after it finished.'),
        'activeDeadlineSeconds': _int(1, 'Fail the job this long after startTime.'),
        'backoffLimit': _int(0, 'Restarts allowed for the whole job, pod recreations included.'),
        'schedulingPolicy': {
            'type': 'object',
            'properties': {
                'minAvailable': _int(1, 'Gang size (default: all replicas).'),
                'queue': {'type': 'string'},
                'priorityClass': {'type': 'string'},
                'scheduleTimeoutSeconds': _int(0, 'Coscheduling timeout.'),
                'minResources': _preserved('Resources the gang needs.'),
            },
        },
        'suspend': {'type': 'boolean', 'description': 'Delete the pods and keep the job.'},
        'managedBy': {'type': 'string'},
    },
}


def _replica_status_schema() -> dict[str, Any]:
    index = {
        'type': 'object',
        'properties': {
            'index': {'type': 'integer'},
            'phase': {'type': 'string'},
            'restarts': {'type': 'integer'},
            'recreations': {'type': 'integer'},
            'earlierPodRestarts': {'type': 'integer'},
            'exitCode': {'type': 'integer'},
            'reason': {'type': 'string'},
            'message': {'type': 'string'},
            'lastExitCode': {'type': 'integer'},
            'lastReason': {'type': 'string'},
            'lastMessage': {'type': 'string'},
            'podUID': {'type': 'string'},
            'restartedPodUID': {'type': 'string'},
        },
    }
    counters = {k: {'type': 'integer'} for k in ('active', 'succeeded', 'failed', 'pending', 'restarts')}
    return {'type': 'object',
            'properties': {**counters, 'labelSelector': _preserved('Selector of the pods.'),
                           'replicas': {'type': 'array', 'items': index}}}


PROGRESS_SCHEMA = {
    'type': 'object',
    'description': 'Training progress read from the chief\'s (else worker 0\'s) metrics endpoint while the job '
                   'runs (docs/operator.md, "Training progress"); kept as last read after the job finishes.',
    'properties': {
        'globalStep': {'type': 'integer', 'format': 'int64', 'description': 'The global step the chief last saw.'},
        'totalSteps': {'type': 'integer', 'format': 'int64',
                       'description': 'The step the job trains to, when the trainer knows it.'},
        'loss': {'type': 'number', 'description': 'The last loss the chief computed.'},
        'examplesPerSecond': {'type': 'number', 'description': 'The chief\'s examples per second over its last '
                                                               'logging window.'},
        'lastUpdateTime': {'type': 'string', 'format': 'date-time',
                           'description': 'When these values last changed.'},
    },
}

STATUS_SCHEMA = {
    'type': 'object',
    'properties': {
        'conditions': {
            'type': 'array',
            'items': {
                'type': 'object',
                'required': ['type', 'status'],
                'properties': {
                    'type': {'type': 'string'},
                    'status': {'type': 'string'},
                    'reason': {'type': 'string'},
                    'message': {'type': 'string'},
                    'lastUpdateTime': {'type': 'string', 'format': 'date-time'},
                    'lastTransitionTime': {'type': 'string', 'format': 'date-time'},
                },
            },
        },
        'replicaStatuses': {'type': 'object', 'additionalProperties': _replica_status_schema()},
        'startTime': {'type': 'string', 'format': 'date-time'},
        'completionTime': {'type': 'string', 'format': 'date-time'},
        'lastReconcileTime': {'type': 'string', 'format': 'date-time'},
        'allRunningTime': {'type': 'string', 'format': 'date-time'},
        'reason': {'type': 'string'},
        'message': {'type': 'string'},
        'restarts': {'type': 'integer'},
        'observedSpecHash': {'type': 'string'},
        'progress': PROGRESS_SCHEMA,
    },
}


def open_api_schema() -> dict[str, Any]:
    """The openAPIV3Schema of the TFJob (also what tests validate examples against)."""
    return {
        'type': 'object',
        'required': ['spec'],
        'properties': {
            'apiVersion': {'type': 'string'},
            'kind': {'type': 'string'},
            'metadata': {'type': 'object'},
            'spec': {
                'type': 'object',
                'required': ['tfReplicaSpecs'],
                'properties': {
                    'tfReplicaSpecs': {
                        'type': 'object',
                        'minProperties': 1,
                        'description': 'Replica specs keyed Chief, Master, PS, Worker, Evaluator (other '
                                       'spellings such as worker are accepted, but the printer columns '
                                       'read these exact keys).',
                        'additionalProperties': REPLICA_SPEC_SCHEMA,
                    },
                    'runPolicy': RUN_POLICY_SCHEMA,
                    'successPolicy': _enum([p.value for p in api.SuccessPolicy],
                                           '"" (chief or worker 0) or AllWorkers.'),
                    'enableDynamicWorker': {'type': 'boolean'},
                },
            },
            'status': STATUS_SCHEMA,
        },
    }


def build_crd(group: str | None = None) -> dict[str, Any]:
    """The whole CRD object for ``group`` (default ``tensorfleet.io``)."""
    group = group or api.DEFAULT_GROUP
    columns = [
        {'name': 'State', 'type': 'string', 'jsonPath': '.status.conditions[-1:].type'},
        {'name': 'Reason', 'type': 'string', 'jsonPath': '.status.reason', 'priority': 1},
        {'name': 'Age', 'type': 'date', 'jsonPath': '.metadata.creationTimestamp'},
    ]
    for rtype in ('Chief', 'PS', 'Worker', 'Evaluator'):
        columns.append({'name': rtype, 'type': 'integer', 'priority': 0 if rtype in ('PS', 'Worker') else 1,
                        'jsonPath': f'.spec.tfReplicaSpecs.{rtype}.replicas'})
    columns += [
        {'name': 'Step', 'type': 'integer', 'jsonPath': '.status.progress.globalStep'},
        {'name': 'Total', 'type': 'integer', 'jsonPath': '.status.progress.totalSteps', 'priority': 1},
        {'name': 'Loss', 'type': 'number', 'jsonPath': '.status.progress.loss'},
    ]
    return {
        'apiVersion': 'apiextensions.k8s.io/v1',
        'kind': 'CustomResourceDefinition',
        'metadata': {'name': f'{api.PLURAL}.{group}'},
        'spec': {
            'group': group,
            'scope': 'Namespaced',
            'names': {'kind': api.KIND, 'plural': api.PLURAL, 'singular': api.SINGULAR,
                      'listKind': api.KIND + 'List', 'shortNames': list(api.SHORT_NAMES)},
            'versions': [{
                'name': api.VERSION,
                'served': True,
                'storage': True,
                'subresources': {'status': {}},
                'additionalPrinterColumns': columns,
                'schema': {'openAPIV3Schema': open_api_schema()},
            }],
        },
    }


def crd_yaml(group: str | None = None) -> str:
    import yaml
    header = ('# Generated by `python -m tensorfleet_operator --print-crd` from '
              'operator/tensorfleet_operator/api.py and crd.py. Do not edit.\n')
    return header + yaml.safe_dump(build_crd(group), sort_keys=False, width=120)
