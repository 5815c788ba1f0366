"""Test builders: TFJob bodies and observed child pods (Kubeflow testutil style)."""
from __future__ import annotations

import copy
from typing import Any

UID = 'job-uid-1'


def template(image: str = 'tensorfleet/trainer:1', gpus: int | None = None, **container: Any) -> dict:
    c = {'name': 'tensorflow', 'image': image, **container}
    if gpus is not None:
        c['resources'] = {'limits': {'nvidia.com/gpu': gpus}}
    return {'spec': {'containers': [c]}}


def tfjob(name: str = 'j', namespace: str = 'ns', *, worker: int | None = 1, ps: int | None = None,
          chief: int | None = None, master: int | None = None, evaluator: int | None = None,
          restart: str | None = None, run_policy: dict | None = None, success_policy: str | None = None,
          status: dict | None = None, uid: str = UID, gpus: int | None = None) -> dict:
    specs = {}
    for key, n in (('Chief', chief), ('Master', master), ('PS', ps), ('Worker', worker), ('Evaluator', evaluator)):
        if n is not None:
            rs: dict[str, Any] = {'replicas': n, 'template': template(gpus=gpus)}
            if restart:
                rs['restartPolicy'] = restart
            specs[key] = rs
    spec: dict[str, Any] = {'tfReplicaSpecs': specs}
    if run_policy is not None:
        spec['runPolicy'] = run_policy
    if success_policy is not None:
        spec['successPolicy'] = success_policy
    body = {'apiVersion': 'tensorfleet.io/v1', 'kind': 'TFJob',
            'metadata': {'name': name, 'namespace': namespace, 'uid': uid,
                         'creationTimestamp': '2026-01-01T00:00:00Z'},
            'spec': spec}
    if status is not None:
        body['status'] = copy.deepcopy(status)
    return body


def pod(job: str, rtype: str, index: int, phase: str = 'Running', *, exit_code: int | None = None,
        reason: str | None = None, restarts: int = 0, uid: str | None = None, owner: str = UID,
        deleting: bool = False, waiting: str | None = None, unschedulable: bool = False) -> dict:
    name = f'{job}-{rtype}-{index}'
    cs: dict[str, Any] = {'name': 'tensorflow', 'restartCount': restarts, 'state': {}}
    if exit_code is not None:
        cs['state'] = {'terminated': {'exitCode': exit_code, 'reason': reason or ('Completed' if exit_code == 0
                                                                                 else 'Error')}}
    elif waiting:
        cs['state'] = {'waiting': {'reason': waiting}}
    elif phase == 'Running':
        cs['state'] = {'running': {'startedAt': '2026-01-01T00:00:01Z'}}
    status: dict[str, Any] = {'phase': phase, 'containerStatuses': [cs]}
    if unschedulable:
        status = {'phase': 'Pending', 'conditions': [{'type': 'PodScheduled', 'status': 'False',
                                                      'reason': 'Unschedulable',
                                                      'message': '0/3 nodes have nvidia.com/gpu'}]}
    meta: dict[str, Any] = {
        'name': name, 'namespace': 'ns', 'uid': uid or f'{name}-uid',
        'labels': {'training.kubeflow.org/job-name': job, 'training.kubeflow.org/replica-type': rtype,
                   'training.kubeflow.org/replica-index': str(index)},
        'ownerReferences': [{'apiVersion': 'tensorfleet.io/v1', 'kind': 'TFJob', 'name': job,
                             'uid': owner, 'controller': True}],
    }
    if deleting:
        meta['deletionTimestamp'] = '2026-01-01T00:10:00Z'
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': meta, 'status': status}


def service(job: str, rtype: str, index: int, owner: str = UID) -> dict:
    name = f'{job}-{rtype}-{index}'
    return {'metadata': {'name': name, 'namespace': 'ns', 'ownerReferences': [
        {'apiVersion': 'tensorfleet.io/v1', 'kind': 'TFJob', 'name': job, 'uid': owner, 'controller': True}]}}
