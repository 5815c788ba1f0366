"""Table tests of children.py: exact TF_CONFIG strings, env, names, labels, ports, services."""
import base64
import json

import pytest

from op_builders import tfjob
from tensorfleet_operator.core.api import ReplicaType as T
from tensorfleet_operator.core.children import (ChildOptions, desired_pod, desired_service, pod_group,
                                           rpc_token_secret, tf_config)
from tensorfleet_operator.core.spec import parse_job

OPTS = ChildOptions()


def env_of(pod, container='tensorflow'):
    c = next(c for c in pod['spec']['containers'] if c['name'] == container)
    return {e['name']: e.get('value', e.get('valueFrom')) for e in c.get('env', [])}


@pytest.mark.parametrize('body, rtype, index, domain, expected', [
    (tfjob('mnist', worker=2), T.WORKER, 1, '',
     '{"cluster":{"worker":["mnist-worker-0.ns.svc:2222","mnist-worker-1.ns.svc:2222"]},'
     '"task":{"type":"worker","index":1},"environment":"cloud"}'),
    (tfjob('dist', ps=2, worker=2), T.PS, 0, '',
     '{"cluster":{"ps":["dist-ps-0.ns.svc:2222","dist-ps-1.ns.svc:2222"],'
     '"worker":["dist-worker-0.ns.svc:2222","dist-worker-1.ns.svc:2222"]},'
     '"task":{"type":"ps","index":0},"environment":"cloud"}'),
    (tfjob('est', chief=1, ps=1, worker=2, evaluator=1), T.EVALUATOR, 0, '',
     '{"cluster":{"chief":["est-chief-0.ns.svc:2222"],"evaluator":["est-evaluator-0.ns.svc:2222"],'
     '"ps":["est-ps-0.ns.svc:2222"],"worker":["est-worker-0.ns.svc:2222","est-worker-1.ns.svc:2222"]},'
     '"task":{"type":"evaluator","index":0},"environment":"cloud"}'),
    (tfjob('est', chief=1, ps=1, worker=2, evaluator=1), T.CHIEF, 0, '',
     '{"cluster":{"chief":["est-chief-0.ns.svc:2222"],"evaluator":["est-evaluator-0.ns.svc:2222"],'
     '"ps":["est-ps-0.ns.svc:2222"],"worker":["est-worker-0.ns.svc:2222","est-worker-1.ns.svc:2222"]},'
     '"task":{"type":"chief","index":0},"environment":"cloud"}'),
    (tfjob('d', ps=1, worker=1), T.WORKER, 0, 'cluster.local',
     '{"cluster":{"ps":["d-ps-0.ns.svc.cluster.local:2222"],"worker":["d-worker-0.ns.svc.cluster.local:2222"]},'
     '"task":{"type":"worker","index":0},"environment":"cloud"}'),
    (tfjob('m', master=1, worker=1), T.MASTER, 0, '',
     '{"cluster":{"master":["m-master-0.ns.svc:2222"],"worker":["m-worker-0.ns.svc:2222"]},'
     '"task":{"type":"master","index":0},"environment":"cloud"}'),
])
def test_tf_config_is_kubeflows_exact_string(body, rtype, index, domain, expected):
    job = parse_job(body)
    assert tf_config(job, rtype, index, domain) == expected
    pod = desired_pod(job, rtype, index, ChildOptions(cluster_domain=domain))
    assert env_of(pod)['TF_CONFIG'] == expected


def test_custom_port_is_used_in_addresses():
    body = tfjob('p', ps=1, worker=1)
    body['spec']['tfReplicaSpecs']['PS']['template']['spec']['containers'][0]['ports'] = [
        {'name': 'tfjob-port', 'containerPort': 3333}]
    job = parse_job(body)
    assert json.loads(tf_config(job, T.WORKER, 0))['cluster'] == {
        'ps': ['p-ps-0.ns.svc:3333'], 'worker': ['p-worker-0.ns.svc:2222']}


def test_single_replica_job_gets_no_tf_config():
    pod = desired_pod(parse_job(tfjob('one', worker=1)), T.WORKER, 0, OPTS)
    assert 'TF_CONFIG' not in env_of(pod)


def test_operator_tf_config_replaces_users_and_sidecars_get_nothing():
    body = tfjob('s', worker=2)
    spec = body['spec']['tfReplicaSpecs']['Worker']['template']['spec']
    spec['containers'][0]['env'] = [{'name': 'TF_CONFIG', 'value': 'mine'}, {'name': 'A', 'value': '1'}]
    spec['containers'].append({'name': 'sidecar', 'image': 'busybox'})
    pod = desired_pod(parse_job(body), T.WORKER, 0, OPTS)
    env = env_of(pod)
    assert env['A'] == '1' and env['TF_CONFIG'].startswith('{"cluster"')
    assert [e['name'] for e in pod['spec']['containers'][0]['env']].count('TF_CONFIG') == 1
    assert 'env' not in pod['spec']['containers'][1]


@pytest.mark.parametrize('rtype, gpus, user_value, expected', [
    (T.PS, None, None, ''),
    (T.PS, 2, None, ''),
    (T.WORKER, 4, None, '0,1,2,3'),
    (T.WORKER, 1, None, '0'),
    (T.WORKER, None, None, None),       # no GPU limit: left alone
    (T.WORKER, 2, '1', '1'),            # user's own value untouched
    (T.PS, None, '0', '0'),
])
def test_cuda_visible_devices_per_role(rtype, gpus, user_value, expected):
    body = tfjob('g', ps=1, worker=1, gpus=gpus)
    if user_value is not None:
        for rs in body['spec']['tfReplicaSpecs'].values():
            rs['template']['spec']['containers'][0]['env'] = [{'name': 'CUDA_VISIBLE_DEVICES', 'value': user_value}]
    pod = desired_pod(parse_job(body), rtype, 0, OPTS)
    assert env_of(pod).get('CUDA_VISIBLE_DEVICES') == expected
    if gpus is not None:   # quantities become strings for the API client
        assert pod['spec']['containers'][0]['resources']['limits']['nvidia.com/gpu'] == str(gpus)


def test_pod_manifest_names_labels_owner_ports_and_secrets():
    body = tfjob('job1', ps=1, worker=2, restart='ExitCode')
    body['spec']['tfReplicaSpecs']['Worker']['template']['metadata'] = {'labels': {'team': 'a'},
                                                                       'annotations': {'x': 'y'}}
    pod = desired_pod(parse_job(body), T.WORKER, 1, OPTS)
    assert pod['metadata']['name'] == 'job1-worker-1'
    assert pod['metadata']['namespace'] == 'ns'
    assert pod['metadata']['labels'] == {
        'team': 'a',
        'training.kubeflow.org/operator-name': 'tfjob-controller',
        'training.kubeflow.org/job-name': 'job1',
        'training.kubeflow.org/replica-type': 'worker',
        'training.kubeflow.org/replica-index': '1',
        'tensorfleet.io/operator-name': 'tfjob-controller',
        'tensorfleet.io/job-name': 'job1',
        'tensorfleet.io/replica-type': 'worker',
        'tensorfleet.io/replica-index': '1',
    }
    assert pod['metadata']['annotations'] == {'x': 'y'}
    assert pod['metadata']['ownerReferences'] == [{
        'apiVersion': 'tensorfleet.io/v1', 'kind': 'TFJob', 'name': 'job1', 'uid': 'job-uid-1',
        'controller': True, 'blockOwnerDeletion': True}]
    assert pod['spec']['restartPolicy'] == 'Never'          # ExitCode -> Never
    container = pod['spec']['containers'][0]
    assert container['ports'] == [{'name': 'tfjob-port', 'containerPort': 2222},
                                  {'name': 'tf-metrics', 'containerPort': 9100}]
    env = {e['name']: e for e in container['env']}
    assert env['TENSORFLEET_METRICS_PORT'] == {'name': 'TENSORFLEET_METRICS_PORT', 'value': '9100'}
    assert env['TENSORFLEET_RPC_TOKEN'] == {'name': 'TENSORFLEET_RPC_TOKEN', 'valueFrom': {
        'secretKeyRef': {'name': 'job1-rpc-token', 'key': 'token'}}}
    assert 'value' not in env['TENSORFLEET_RPC_TOKEN']


@pytest.mark.parametrize('kwargs, master_pods', [
    ({'chief': 1, 'ps': 1, 'worker': 2}, {('Chief', 0)}),
    ({'master': 1, 'worker': 2}, {('Master', 0)}),
    ({'ps': 1, 'worker': 3}, {('Worker', 0)}),
])
def test_job_role_master_on_chief_or_worker_zero(kwargs, master_pods):
    job = parse_job(tfjob('r', **kwargs))
    found = set()
    for rtype, rspec in job.replicas.items():
        for i in range(rspec.replicas):
            labels = desired_pod(job, rtype, i, OPTS)['metadata']['labels']
            if labels.get('training.kubeflow.org/job-role') == 'master':
                assert labels['tensorfleet.io/job-role'] == 'master'
                found.add((rtype.value, i))
    assert found == master_pods


def test_restart_policy_maps_to_pod_policy():
    for policy, pod_policy in (('Always', 'Always'), ('OnFailure', 'OnFailure'), ('Never', 'Never'),
                               ('ExitCode', 'Never'), (None, 'Never')):
        job = parse_job(tfjob('r', worker=2, restart=policy))
        assert desired_pod(job, T.WORKER, 0, OPTS)['spec']['restartPolicy'] == pod_policy


def test_headless_service_per_replica():
    svc = desired_service(parse_job(tfjob('job1', ps=1, worker=1)), T.PS, 0, OPTS)
    assert svc['metadata']['name'] == 'job1-ps-0'
    assert svc['spec'] == {
        'clusterIP': 'None',
        'selector': {'training.kubeflow.org/operator-name': 'tfjob-controller',
                     'training.kubeflow.org/job-name': 'job1',
                     'training.kubeflow.org/replica-type': 'ps',
                     'training.kubeflow.org/replica-index': '0'},
        'ports': [{'name': 'tfjob-port', 'port': 2222, 'targetPort': 2222}],
    }
    assert svc['metadata']['ownerReferences'][0]['controller'] is True


def test_rpc_token_secret_is_owned_and_holds_the_token():
    secret = rpc_token_secret(parse_job(tfjob('job1')), 's3cr3t', OPTS)
    assert secret['metadata']['name'] == 'job1-rpc-token'
    assert base64.b64decode(secret['data']['token']) == b's3cr3t'
    assert secret['metadata']['ownerReferences'][0]['uid'] == 'job-uid-1'


def test_gang_volcano_pod_group_and_pod_fields():
    body = tfjob('g', ps=1, worker=3, run_policy={'schedulingPolicy': {'queue': 'q1', 'priorityClass': 'hi'}})
    job = parse_job(body)
    opts = ChildOptions(gang_scheduler='volcano')
    assert pod_group(job, opts) == {
        'apiVersion': 'scheduling.volcano.sh/v1beta1', 'kind': 'PodGroup',
        'metadata': {'name': 'g', 'namespace': 'ns', 'ownerReferences': [{
            'apiVersion': 'tensorfleet.io/v1', 'kind': 'TFJob', 'name': 'g', 'uid': 'job-uid-1',
            'controller': True, 'blockOwnerDeletion': True}]},
        'spec': {'minMember': 4, 'queue': 'q1', 'priorityClassName': 'hi'}}
    pod = desired_pod(job, T.WORKER, 2, opts)
    assert pod['spec']['schedulerName'] == 'volcano'
    assert pod['spec']['priorityClassName'] == 'hi'
    assert pod['metadata']['annotations'] == {'scheduling.k8s.io/group-name': 'g', 'volcano.sh/task-spec': 'worker'}


def test_gang_scheduler_plugins_min_available_and_label():
    job = parse_job(tfjob('g', worker=3, run_policy={'schedulingPolicy': {'minAvailable': 2,
                                                                          'scheduleTimeoutSeconds': 30}}))
    opts = ChildOptions(gang_scheduler='scheduler-plugins')
    group = pod_group(job, opts)
    assert group['apiVersion'] == 'scheduling.x-k8s.io/v1alpha1'
    assert group['spec'] == {'minMember': 2, 'scheduleTimeoutSeconds': 30}
    pod = desired_pod(job, T.WORKER, 0, opts)
    assert pod['metadata']['labels']['scheduling.x-k8s.io/pod-group'] == 'g'
    assert pod['spec']['schedulerName'] == 'scheduler-plugins-scheduler'
    assert pod_group(job, OPTS) is None


def test_kubeflow_group_owner_reference():
    pod = desired_pod(parse_job(tfjob('k')), T.WORKER, 0, ChildOptions(api_group='kubeflow.org'))
    assert pod['metadata']['ownerReferences'][0]['apiVersion'] == 'kubeflow.org/v1'


def test_whole_chief_pod_manifest_exactly():
    body = tfjob('mn', chief=1, ps=1, worker=2, gpus=2, restart='ExitCode',
                 run_policy={'schedulingPolicy': {'priorityClass': 'hi'}})
    body['spec']['tfReplicaSpecs']['Chief']['template']['spec']['containers'][0]['env'] = [
        {'name': 'CUDA_VISIBLE_DEVICES', 'value': '1'}]
    pod = desired_pod(parse_job(body), T.CHIEF, 0, ChildOptions(cluster_domain='cluster.local',
                                                                gang_scheduler='volcano'))
    labels = {f'{prefix}/{k}': v for prefix in ('training.kubeflow.org', 'tensorfleet.io') for k, v in (
        ('operator-name', 'tfjob-controller'), ('job-name', 'mn'), ('replica-type', 'chief'),
        ('replica-index', '0'), ('job-role', 'master'))}
    assert pod == {
        'apiVersion': 'v1', 'kind': 'Pod',
        'metadata': {
            'name': 'mn-chief-0', 'namespace': 'ns', 'labels': labels,
            'annotations': {'scheduling.k8s.io/group-name': 'mn', 'volcano.sh/task-spec': 'chief'},
            'ownerReferences': [{'apiVersion': 'tensorfleet.io/v1', 'kind': 'TFJob', 'name': 'mn',
                                 'uid': 'job-uid-1', 'controller': True, 'blockOwnerDeletion': True}]},
        'spec': {
            'containers': [{
                'name': 'tensorflow', 'image': 'tensorfleet/trainer:1',
                'resources': {'limits': {'nvidia.com/gpu': '2'}},
                'env': [
                    {'name': 'CUDA_VISIBLE_DEVICES', 'value': '1'},          # the user's, kept first
                    {'name': 'TF_CONFIG', 'value':
                        '{"cluster":{"chief":["mn-chief-0.ns.svc.cluster.local:2222"],'
                        '"ps":["mn-ps-0.ns.svc.cluster.local:2222"],'
                        '"worker":["mn-worker-0.ns.svc.cluster.local:2222","mn-worker-1.ns.svc.cluster.local:2222"]},'
                        '"task":{"type":"chief","index":0},"environment":"cloud"}'},
                    {'name': 'TENSORFLEET_METRICS_PORT', 'value': '9100'},
                    {'name': 'TENSORFLEET_RPC_TOKEN',
                     'valueFrom': {'secretKeyRef': {'name': 'mn-rpc-token', 'key': 'token'}}}],
                'ports': [{'name': 'tfjob-port', 'containerPort': 2222},
                          {'name': 'tf-metrics', 'containerPort': 9100}]}],
            'restartPolicy': 'Never',
            'schedulerName': 'volcano',
            'priorityClassName': 'hi'}}
