"""Jobs the API server would refuse (issue 26 item 4) end Failed/InvalidSpec naming the field, with one
event and no retry loop: pod-template labels and annotations it rejects, a job name too long for the
children's job-name label, and any child create it answers 400/422. The emulator answers as a real
API server does (kube_validation.py: 422 Invalid with the field in details.causes, 400 BadRequest for
an undecodable label value and for a bad label selector)."""
import pytest

from op_builders import tfjob
from tensorfleet_operator.core import metadata_rules

pytestmark = pytest.mark.filterwarnings('ignore:read_binary is deprecated:DeprecationWarning')
WORKER_TEMPLATE = 'spec.tfReplicaSpecs.Worker.template'


def _with_template_metadata(name, **meta):
    body = tfjob(name, ps=1, worker=2)
    body['spec']['tfReplicaSpecs']['Worker']['template']['metadata'] = meta
    return body


def _job_events(cluster, name):
    return [e for e in cluster.events() if e['involvedObject']['name'] == name]


async def _fails_once(cluster, name, field):
    """The job ends Failed/InvalidSpec naming ``field``, with exactly one event, and stays so."""
    await cluster.wait_for(lambda: cluster.status(name).get('reason') == 'InvalidSpec', what=f'{name} failed')
    await cluster.settle(quiet=0.5)
    status = cluster.status(name)
    assert cluster.conditions(name)['Failed'] == 'True'
    assert status['message'].startswith(f'invalid spec: {field}: '), status['message']
    events = _job_events(cluster, name)
    assert [(e['type'], e['reason']) for e in events] == [('Warning', 'InvalidSpec')], events
    assert cluster.pods(name) == {} and not [s for s in cluster.objects('services') if s.startswith(name)]
    errors = cluster.controller.metrics.registry.get_sample_value('tensorfleet_operator_reconcile_errors_total')
    assert errors == 0, 'the job was retried'
    return status['message']


@pytest.mark.parametrize('meta, field, words', [
    ({'labels': {'team/a/b': 'x'}}, 'labels', "key 'team/a/b': a qualified name must consist of"),
    ({'labels': {'bad key': 'x'}}, 'labels', "key 'bad key': name part must consist of"),
    ({'labels': {'-lead': 'x'}}, 'labels', 'name part must consist of'),
    ({'labels': {'big': 'v' * (512 * 1024)}}, 'labels', "value of 'big'"),   # the emulator takes 1 MiB
    ({'labels': {'app': 'a b'}}, 'labels', 'a valid label must be an empty string or consist of'),
    ({'labels': {'n': 7}}, 'labels', 'keys and values must be strings'),
    ({'annotations': {'Example.COM/Upper_Case': 'y', 'bad key': 'y'}}, 'annotations', "key 'bad key'"),
    ({'annotations': {'a': 'x' * (256 * 1024)}}, 'annotations', 'bytes of keys and values; at most'),
])
async def test_template_metadata_the_api_server_refuses_fails_before_any_create(cluster, meta, field, words):
    await cluster.start()
    await cluster.create_job(_with_template_metadata('meta', **meta))
    message = await _fails_once(cluster, 'meta', f'{WORKER_TEMPLATE}.metadata.{field}')
    assert words in message and len(message) < 1000, message
    assert cluster.kmock.refused == {}, 'the operator sent what the API server refuses'


async def test_a_64_character_name_fails_without_a_bad_label_selector(cluster):
    await cluster.start()
    name = 'j' * 64
    await cluster.create_job(tfjob(name, worker=1))
    message = await _fails_once(cluster, name, 'metadata.name')
    assert '64 characters; at most 63' in message and 'training.kubeflow.org/job-name' in message
    assert cluster.kmock.refused == {}, 'a selector with a 64-character value was sent (the API answers 400)'


@pytest.mark.parametrize('labels, status', [({'bad key': 'x'}, 422), ({'n': 7}, 400)])
async def test_a_child_create_refused_as_invalid_fails_the_job_once(cluster, monkeypatch, labels, status):
    """What the core does not check (here: its label check switched off, as for an admission policy's
    own rules) still ends the job: the API server's 422/400 on the pod create is terminal."""
    monkeypatch.setattr(metadata_rules, 'labels_problem', lambda labels: None)
    await cluster.start()
    await cluster.create_job(_with_template_metadata('api', labels=labels))
    field = f'{WORKER_TEMPLATE}.metadata.labels' if status == 422 else WORKER_TEMPLATE
    message = await _fails_once(cluster, 'api', field)
    assert 'the API server refused pod api-worker-' in message and f'(HTTP {status})' in message
    refused = dict(cluster.kmock.refused)
    assert refused == {('pods', status): 2}, refused        # one pass: both worker pods, never again
    assert 'api-ps-0' not in cluster.pods()                 # the ps pod of that pass was removed
    assert cluster.events('FailedCreateOrDelete') == []
    # The spec unchanged, nothing is retried; a fixed spec runs.
    await cluster.patch_job('api', {'metadata': {'labels': {'touched': 'yes'}}})
    await cluster.settle(quiet=0.5)
    assert dict(cluster.kmock.refused) == refused and len(_job_events(cluster, 'api')) == 1
    await cluster.patch_job('api', {'spec': {'tfReplicaSpecs': {'Worker': {'template': {'metadata': None}}}}})
    await cluster.wait_for(lambda: len(cluster.pods('api')) == 3, what='pods of the fixed spec')


async def test_the_emulator_refuses_as_the_api_server_does(cluster):
    """The oracle itself: a bad label key is 422 with its field, a 64-character selector value 400."""
    pod = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p', 'labels': {'bad key': 'x'}},
           'spec': {'containers': [{'name': 'c', 'image': 'i'}]}}
    async with cluster.kmock.request('POST', '/api/v1/namespaces/ns/pods', json=pod) as resp:
        body = await resp.json()
        assert resp.status == 422 and body['reason'] == 'Invalid'
        assert body['details']['causes'][0]['field'] == 'metadata.labels'
    selector = 'training.kubeflow.org/job-name=' + 'j' * 64
    async with cluster.kmock.request('GET', '/api/v1/namespaces/ns/pods', params={'labelSelector': selector}) as resp:
        assert resp.status == 400 and 'must be no more than 63 characters' in (await resp.json())['message']
    ok = {**pod, 'metadata': {'name': 'p', 'labels': {'example.com/Team_1': 'A-b.c_9', 'empty': ''}}}
    async with cluster.kmock.request('POST', '/api/v1/namespaces/ns/pods', json=ok) as resp:
        assert resp.status < 300


@pytest.mark.parametrize('key, ok', [
    ('a', True), ('A_b-c.d', True), ('example.com/Name', True), ('a.b/c', True), ('1', True),
    ('x' * 63, True), ('x' * 64, False), ('a/' + 'b' * 63, True), ('-a', False), ('a-', False), ('a b', False),
    ('/a', False), ('a/', False), ('a/b/c', False), ('Example.com/a', False), ('a_b.com/c', False),
    ('.'.join(['a' * 63] * 4) + '/n', False), ('.'.join(['a' * 63] * 3) + '.' + 'a' * 61 + '/n', True),
])
def test_label_keys_follow_the_api_servers_qualified_name_rule(key, ok):
    """The cases of apimachinery's TestIsQualifiedName, and the 253-character prefix bound."""
    assert (metadata_rules.qualified_name_problem(key) is None) is ok


@pytest.mark.parametrize('value, ok', [
    ('', True), ('a', True), ('A-b_c.d9', True), ('v' * 63, True), ('v' * 64, False), ('-a', False),
    ('a.', False), ('a b', False), ('a/b', False),
])
def test_label_values_follow_the_api_servers_rule(value, ok):
    assert (metadata_rules.label_value_problem(value) is None) is ok
