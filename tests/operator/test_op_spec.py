"""spec.py: Kubeflow defaulting, and invalid specs that pass the schema name their field."""
import datetime

import pytest

from op_builders import template, tfjob
from tensorfleet_operator.core.api import CleanPodPolicy, ConditionType as C, ReplicaType, RestartPolicy
from tensorfleet_operator.core.conditions import set_condition
from tensorfleet_operator.core.spec import InvalidSpec, parse_job


def test_defaults_match_kubeflow_except_clean_pod_policy():
    body = tfjob('j', worker=None)
    body['spec']['tfReplicaSpecs'] = {'worker': {'template': template()}, 'ps': {'template': template()}}
    job = parse_job(body)
    assert list(job.replicas) == [ReplicaType.PS, ReplicaType.WORKER]    # keys case-normalised, ps first
    worker = job.replicas[ReplicaType.WORKER]
    assert worker.replicas == 1 and worker.restart_policy is RestartPolicy.NEVER and worker.port == 2222
    assert worker.template['spec']['containers'][0]['ports'] == [{'name': 'tfjob-port', 'containerPort': 2222}]
    assert job.run_policy.clean_pod_policy is CleanPodPolicy.RUNNING
    assert job.run_policy.backoff_limit is None and job.is_distributed


def _with(mutate, **kw):
    body = tfjob('j', **kw)
    mutate(body)
    return body




BROKEN = [
    ('no worker or chief', tfjob('j', worker=None, ps=1), 'spec.tfReplicaSpecs'),
    ('ps only', tfjob('j', worker=None, ps=3), 'spec.tfReplicaSpecs'),
    ('zero workers', tfjob('j', worker=0), 'spec.tfReplicaSpecs'),
    ('chief and master', tfjob('j', chief=1, master=1), 'spec.tfReplicaSpecs.Master'),
    ('two chiefs', tfjob('j', chief=2), 'spec.tfReplicaSpecs.Chief.replicas'),
    ('two evaluators', tfjob('j', evaluator=2), 'spec.tfReplicaSpecs.Evaluator.replicas'),
    ('unknown type', _with(lambda b: b['spec']['tfReplicaSpecs'].update({'Launcher': {'template': template()}})),
     'spec.tfReplicaSpecs.Launcher'),
    ('duplicate key by case', _with(lambda b: b['spec']['tfReplicaSpecs'].update({'worker': {'template': template()}})),
     'spec.tfReplicaSpecs.worker'),
    ('no tensorflow container', _with(lambda b: b['spec']['tfReplicaSpecs']['Worker']['template']['spec']
                                      ['containers'][0].update(name='main')),
     'spec.tfReplicaSpecs.Worker.template.spec.containers'),
    ('no image', _with(lambda b: b['spec']['tfReplicaSpecs']['Worker']['template']['spec']['containers'][0]
                       .pop('image')), 'spec.tfReplicaSpecs.Worker.template.spec.containers[0].image'),
    ('no template', _with(lambda b: b['spec']['tfReplicaSpecs']['Worker'].pop('template')),
     'spec.tfReplicaSpecs.Worker.template'),
    ('bad restart policy', tfjob('j', restart='Sometimes'), 'spec.tfReplicaSpecs.Worker.restartPolicy'),
    ('bad gpu count', _with(lambda b: b['spec']['tfReplicaSpecs']['Worker']['template']['spec']['containers'][0]
                            .update(resources={'limits': {'nvidia.com/gpu': '1.5'}})),
     'spec.tfReplicaSpecs.Worker.template.spec.containers[0].resources.limits[nvidia.com/gpu]'),
    ('negative backoff', tfjob('j', run_policy={'backoffLimit': -1}), 'spec.runPolicy.backoffLimit'),
    ('bad clean policy', tfjob('j', run_policy={'cleanPodPolicy': 'Some'}), 'spec.runPolicy.cleanPodPolicy'),
    ('bad success policy', tfjob('j', success_policy='Chief'), 'spec.successPolicy'),
    ('name too long for children', tfjob('a' * 60, worker=1), 'metadata.name'),
    ('name not dns-1035', tfjob('1job'), 'metadata.name'),
    ('dynamic workers', _with(lambda b: b['spec'].update(enableDynamicWorker=True)), 'spec.enableDynamicWorker'),
]


@pytest.mark.parametrize('case, body, field', BROKEN, ids=[c[0] for c in BROKEN])
def test_invalid_specs_name_the_field(case, body, field):
    with pytest.raises(InvalidSpec) as err:
        parse_job(body)
    assert err.value.field == field
    assert str(err.value).startswith(field + ': ')


def test_parse_never_raises_anything_but_invalid_spec_on_garbage():
    garbage = [{}, {'metadata': {'name': 'x'}}, {'metadata': {'name': 'x'}, 'spec': []},
               {'metadata': {'name': 'x'}, 'spec': {'tfReplicaSpecs': {'Worker': None}}},
               {'metadata': {'name': 'x'}, 'spec': {'tfReplicaSpecs': {'Worker': {'replicas': 'two'}}}},
               {'metadata': {'name': 'x'}, 'spec': {'tfReplicaSpecs': {'Worker': {'template': {'spec': {
                   'containers': ['nope']}}}}}},
               {'metadata': {'name': 'x'}, 'spec': {'tfReplicaSpecs': {'Worker': {'template': {'spec': {
                   'containers': [{'name': 'tensorflow', 'image': 'i', 'ports': 'x'}]}}}}}},
               {'metadata': {'name': 'x'}, 'spec': {'tfReplicaSpecs': {'Worker': {'template': template()}},
                                                    'runPolicy': {'schedulingPolicy': 3}}}]
    for body in garbage:
        with pytest.raises(InvalidSpec):
            parse_job(body)


NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
T1 = NOW + datetime.timedelta(seconds=5)


def test_condition_merge_rules():
    c = set_condition([], C.CREATED, True, 'TFJobCreated', 'm', NOW)
    c = set_condition(c, C.RUNNING, True, 'TFJobRunning', 'm', NOW)
    assert set_condition(c, C.RUNNING, True, 'TFJobRunning', 'other message', T1) is c   # no-op
    c = set_condition(c, C.RESTARTING, True, 'TFJobRestarting', 'm', T1)
    assert [x['type'] for x in c] == ['Created', 'Restarting']            # Running replaced
    c = set_condition(c, C.RUNNING, True, 'TFJobRunning', 'm', T1)
    assert [x['type'] for x in c] == ['Created', 'Running']
    c = set_condition(c, C.FAILED, True, 'ReplicaFailed', 'm', T1)
    assert {x['type']: x['status'] for x in c} == {'Created': 'True', 'Running': 'False', 'Failed': 'True'}
    assert set_condition(c, C.SUCCEEDED, True, 'TFJobSucceeded', 'm', T1) is c    # Failed is final


def test_same_status_new_reason_keeps_transition_time():
    c = set_condition([], C.SUSPENDED, False, 'A', 'm', NOW)
    c = set_condition(c, C.SUSPENDED, False, 'B', 'm', T1)
    assert c[0]['lastTransitionTime'] == '2026-01-01T00:00:00Z' and c[0]['lastUpdateTime'] == '2026-01-01T00:00:05Z'
