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

    def __init__(self, body):
        self.body = body
        self.created, self.patches, self.events, self.services = [], [], [], []

    async def get(self, path):
        return self.body

    async def list(self, path, selector=None):
        return list(self.services) if path.endswith('/services') else []

    async def create(self, path, obj):
        if path.endswith('/events'):
            self.events.append(obj)
        elif path.endswith('/pods'):
            raise ApiError(403, 'pods "j-worker-0" is forbidden: exceeded quota: gpu')
        else:
            self.created.append(obj['metadata']['name'])
            if path.endswith('/services'):
                self.services.append(obj)
        return True

    async def merge_patch(self, path, body):
        self.patches.append(body)
        self.body = {**self.body, 'status': {**self.body.get('status', {}), **body['status']}}

    async def delete(self, path):
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
