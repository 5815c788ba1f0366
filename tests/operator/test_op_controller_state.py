"""The controller keeps state per job only while the job exists (issue 8: a leak).

1,000 jobs are created, reconciled (with a gang scheduler, so each gets a Secret
and a PodGroup), and deleted, half of them with the DELETED watch event and half
only noticed by a reconcile that finds the job gone. Afterwards every container
the controller, its applier and its metrics keep per job must be empty. The API
is an in-memory store behind KubeClient's five verbs.
"""
import asyncio

from op_builders import tfjob
from tensorfleet_operator.config import OperatorConfig
from tensorfleet_operator.controller import Controller
from tensorfleet_operator.kubeclient import ApiError


class MemoryClient:
    """KubeClient's interface over a dict of collections (path -> {name: object})."""

    def __init__(self):
        self.collections: dict[str, dict[str, dict]] = {}

    @staticmethod
    def _split(path):
        parts = path.rstrip('/').split('/')
        if parts[-1] == 'status':
            return '/'.join(parts[:-2]), parts[-2]
        if len(parts) % 2 == 0 and parts[1] == 'apis' or len(parts) % 2 == 1 and parts[1] == 'api':
            return '/'.join(parts[:-1]), parts[-1]      # an object path
        return path, None

    async def get(self, path):
        coll, name = self._split(path)
        return self.collections.get(coll, {}).get(name)

    async def list(self, path, label_selector=None):
        key, value = label_selector.split('=')
        return [o for o in self.collections.get(path, {}).values()
                if (o['metadata'].get('labels') or {}).get(key) == value]

    async def create(self, path, body):
        coll = self.collections.setdefault(path, {})
        name = body['metadata'].get('name') or f"{body['metadata']['generateName']}{len(coll)}"
        if name in coll:
            return False
        coll[name] = {**body, 'metadata': {**body['metadata'], 'uid': f'uid-{name}-{len(coll)}'}}
        return True

    async def merge_patch(self, path, body):
        coll, name = self._split(path)
        obj = self.collections.get(coll, {}).get(name)
        if obj is None:
            raise ApiError(404, 'not found')
        obj['status'] = {**(obj.get('status') or {}), **body['status']}

    async def delete(self, path):
        coll, name = self._split(path)
        return self.collections.get(coll, {}).pop(name, None) is not None


def containers(obj):
    return {k: v for k, v in vars(obj).items() if isinstance(v, (dict, set, list))}


async def test_a_thousand_created_and_deleted_jobs_leave_no_state():
    controller = Controller(OperatorConfig(api_group='tensorfleet.io', gang_scheduler='volcano',
                                           debounce_seconds=0))
    client = controller.client = MemoryClient()
    jobs = '/apis/tensorfleet.io/v1/namespaces/ns/tfjobs'
    for i in range(1000):
        name = f'job-{i}'
        await client.create(jobs, tfjob(name, worker=1))
        controller.trigger('ns', name)
        await controller._jobs[('ns', name)].task
        assert len(await client.list('/api/v1/namespaces/ns/pods', f'training.kubeflow.org/job-name={name}')) == 1
        assert controller._jobs[('ns', name)].memory.secret and controller._jobs[('ns', name)].memory.pod_group
        await client.delete(f'{jobs}/{name}')
        if i % 2:
            controller.forget('ns', name)            # the DELETED watch event
        else:
            controller.trigger('ns', name)           # a child's event: the reconcile finds the job gone
            await controller._jobs[('ns', name)].task
    await asyncio.sleep(0)
    assert controller._jobs == {}
    assert {k: v for k, v in containers(controller).items() if v} == {}
    assert {k: v for k, v in containers(controller.applier).items() if v} == {}
    assert controller.metrics._condition == {}
    assert controller.metrics.registry.get_sample_value('tensorfleet_operator_jobs',
                                                        {'condition': 'Created'}) == 0
