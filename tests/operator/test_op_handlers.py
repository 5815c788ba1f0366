"""controller.Controller with a scripted API client: API errors never crash the
operator, are reported once as a Warning event, and are retried."""
import pytest

from op_builders import tfjob
from tensorfleet_operator.config import OperatorConfig
from tensorfleet_operator.apply import merge_diff
from tensorfleet_operator.controller import Controller, _JobState
from tensorfleet_operator.kubeclient import ApiError


class ScriptedClient:
    """Just enough of KubeClient: one job, pod creation refused by admission."""

    def __init__(self, body, pod_status=403):
        self.body = body
        self.pod_status = pod_status
        self.created, self.patches, self.events, self.services, self.deleted = [], [], [], [], []

    async def get(self, path):
        return self.body

    async def list(self, path, selector=None):
        return list(self.services) if path.endswith('/services') else []

    async def create(self, path, obj):
        if path.endswith('/events'):
            self.events.append(obj)
        elif path.endswith('/pods'):
            raise ApiError(self.pod_status, 'pods "j-worker-0" is forbidden: exceeded quota: gpu')
        else:
            self.created.append(obj['metadata']['name'])
            if path.endswith('/services'):
                self.services.append(obj)
        return True

    async def merge_patch(self, path, body):
        self.patches.append(body)
        self.body = {**self.body, 'status': {**self.body.get('status', {}), **body['status']}}

    async def delete(self, path):
        self.deleted.append(path.rsplit('/', 1)[-1])
        self.services = [s for s in self.services if s['metadata']['name'] != self.deleted[-1]]
        return True


async def test_api_errors_are_reported_once_and_raised_for_retry():
    controller = Controller(OperatorConfig(api_group='tensorfleet.io'))
    body = tfjob('j', worker=1)
    client = ScriptedClient(body)
    controller.client = client
    controller._jobs[('ns', 'j')] = _JobState()      # as trigger() would have made it
    for _ in range(3):
        with pytest.raises(RuntimeError, match='exceeded quota'):
            await controller.reconcile('ns', 'j')
    warnings = [e for e in client.events if e['reason'] == 'FailedCreateOrDelete']
    assert len(warnings) == 1 and warnings[0]['type'] == 'Warning'
    assert 'exceeded quota: gpu' in warnings[0]['message']
    assert client.created == ['j-rpc-token', 'j-worker-0']      # the Secret and the Service went through
    assert len(client.patches) == 1                             # the status was written once


def test_merge_diff_is_a_minimal_merge_patch():
    old = {'a': 1, 'b': {'c': 2, 'd': 3}, 'gone': True, 'l': [1]}
    new = {'a': 1, 'b': {'c': 2, 'd': 4}, 'l': [1, 2], 'n': 'x'}
    assert merge_diff(old, new) == {'gone': None, 'b': {'d': 4}, 'l': [1, 2], 'n': 'x'}
    assert merge_diff(new, new) == {}


@pytest.mark.parametrize('status, terminal', [(400, True), (422, True), (403, False), (429, False), (500, False)])
async def test_only_a_create_refused_as_invalid_fails_the_job(status, terminal):
    """400/422 say the object is wrong: the job fails (InvalidSpec, one event, the pass undone).
    403 (quota), 429 (throttled) and 5xx can pass: retried with backoff."""
    controller = Controller(OperatorConfig(api_group='tensorfleet.io'))
    client = ScriptedClient(tfjob('j', worker=1), pod_status=status)
    controller.client = client
    controller._jobs[('ns', 'j')] = _JobState()
    if not terminal:
        with pytest.raises(RuntimeError):
            await controller.reconcile('ns', 'j')
        assert client.body['status'].get('reason') is None
        return
    plan = await controller.reconcile('ns', 'j')
    assert client.body['status']['reason'] == 'InvalidSpec'
    assert client.body['status']['message'].startswith(
        f'invalid spec: spec.tfReplicaSpecs.Worker.template: the API server refused pod j-worker-0 (HTTP {status})')
    assert [e['reason'] for e in client.events] == ['InvalidSpec']
    assert client.deleted == ['j-worker-0'] and plan.create_pods == []     # its Service went again
    await controller.reconcile('ns', 'j')                                     # the same spec: no retry
    assert [e['reason'] for e in client.events] == ['InvalidSpec'] and client.created.count('j-worker-0') == 1
