"""The chart's RBAC against what the operator really sends: the real handlers (kopf embedded)
run job lifecycles against the emulated API server (tests/operator's harness), every request they
make is mapped to its RBAC verb by Kubernetes' rules (GET item: get; GET collection: list, or watch
with ?watch; POST: create; PATCH: patch; DELETE: delete), and the rendered ClusterRole must allow
each one and grant nothing that no request used."""
from __future__ import annotations

import importlib.util
import sys
from typing import Any

import kopf
import pytest

from deploy_tools import ROOT, helm_template

OPERATOR_TESTS = ROOT / 'tests' / 'operator'
TOKEN = 'operator-service-account-token'     # marks the operator's requests (the harness sends none)
pytestmark = pytest.mark.filterwarnings('ignore:read_binary is deprecated:DeprecationWarning')


def _operator_harness() -> Any:
    sys.path.insert(0, str(OPERATOR_TESTS))       # kube_emulator, op_builders
    spec = importlib.util.spec_from_file_location('operator_tests_conftest', OPERATOR_TESTS / 'conftest.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


harness = _operator_harness()
from kube_emulator import TFJobEmulator, declare_resources  # noqa: E402
from op_builders import tfjob  # noqa: E402


class RecordingEmulator(TFJobEmulator):
    """Records (method, path, query) of every request that carries the operator's token."""
    seen: list[tuple[str, str, dict[str, str]]]

    async def _handle(self, request: Any) -> Any:
        if request.headers.get('Authorization') == f'Bearer {TOKEN}':
            self.seen.append((str(request.method).upper().split('.')[-1], request.url.path, dict(request.params)))
        return await super()._handle(request)


@pytest.fixture()
def kmock_options() -> dict[str, Any]:
    return {'cls': RecordingEmulator}


@pytest.fixture()
async def cluster(kmock: Any) -> Any:
    kmock.seen = []
    declare_resources(kmock, 'tensorfleet.io')
    h = harness.Harness(kmock)
    try:
        yield h
    finally:
        await h.stop()


def login(cluster: Any):
    return lambda **_: kopf.ConnectionInfo(server=cluster.url, insecure=True, token=TOKEN)


def rbac_request(method: str, path: str, query: dict[str, str]) -> tuple[str, str, str] | None:
    """(apiGroup, resource[/subresource], verb) of a request, as the API server authorizes it;
    None for discovery (non-resource URLs every authenticated user may read)."""
    parts = [p for p in path.split('/') if p]
    if parts[:1] == ['api'] and len(parts) >= 2:
        group, rest = '', parts[2:]
    elif parts[:1] == ['apis'] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return None
    if not rest:
        return None                                          # /api/v1, /apis/g/v: discovery
    if rest[0] == 'namespaces' and len(rest) >= 3:
        rest = rest[2:]                                     # namespaced: drop namespaces/<ns>
    resource, name, sub = rest[0], rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None
    if method == 'GET':
        verb = 'get' if name else ('watch' if query.get('watch') in ('true', '1') else 'list')
    else:
        verb = {'POST': 'create', 'PATCH': 'patch', 'PUT': 'update',
                'DELETE': 'delete' if name else 'deletecollection'}[method]
    return group, resource + (f'/{sub}' if sub else ''), verb


def allowed(rules: list[dict], group: str, resource: str, verb: str) -> bool:
    return any(group in r['apiGroups'] and resource in r['resources'] and verb in r['verbs'] for r in rules)


def test_rbac_request_mapping_oracle():
    assert rbac_request('GET', '/apis/tensorfleet.io/v1/tfjobs', {'watch': 'true'}) == \
        ('tensorfleet.io', 'tfjobs', 'watch')
    assert rbac_request('PATCH', '/apis/tensorfleet.io/v1/namespaces/ns/tfjobs/j/status', {}) == \
        ('tensorfleet.io', 'tfjobs/status', 'patch')
    assert rbac_request('GET', '/api/v1/namespaces/ns/pods', {'labelSelector': 'a'}) == ('', 'pods', 'list')
    assert rbac_request('GET', '/api/v1/namespaces/ns/secrets/s', {}) == ('', 'secrets', 'get')
    assert rbac_request('GET', '/apis', {}) is None and rbac_request('GET', '/api/v1', {}) is None


def used(cluster: Any) -> set[tuple[str, str, str]]:
    return {r for r in (rbac_request(*seen) for seen in cluster.kmock.seen) if r}


async def run_job_to_success(cluster: Any, name: str, **job: Any) -> None:
    await cluster.create_job(tfjob(name, **job))
    await cluster.wait_for(lambda: len(cluster.pods(name)) == sum(v or 0 for k, v in job.items()
                                                                   if k in ('ps', 'worker')), what='pods')
    for pod in cluster.pods(name):
        await cluster.set_pod(pod, 'Running')
    await cluster.wait_for(lambda: cluster.conditions(name).get('Running') == 'True', what='running')
    await cluster.set_pod(f'{name}-worker-0', 'Succeeded', exit_code=0)
    # (with ttlSecondsAfterFinished 0 the job may be gone before a poll sees Succeeded: it ran, so that is success)
    await cluster.wait_for(lambda: cluster.job(name) is None or cluster.conditions(name).get('Succeeded') == 'True',
                           what='succeeded')


async def test_default_rbac_allows_every_request_and_no_more(cluster):
    # 1: a job whose RPC-token Secret already exists under another owner (a deleted namesake's, not yet
    #    collected): the operator's create gets 409 and it reads the Secret to check the owner.
    secret = {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 'stale-rpc-token', 'namespace': 'ns'}}
    await cluster.call('POST', '/api/v1/namespaces/ns/secrets', secret)
    await cluster.create_job(tfjob('stale', worker=1))
    # (no clean-up grace: the running pods of the succeeded job below are deleted by the operator itself, before
    # its ttlSecondsAfterFinished 0 deletes the job)
    await cluster.start(login=login(cluster), clean_pod_grace_seconds=0)
    await cluster.wait_for(lambda: ('', 'secrets', 'get') in used(cluster), what='the Secret read back')
    # 2: a ps/worker job to success (children, status, events, cleanup of the running pods),
    #    deleted by its ttlSecondsAfterFinished.
    await run_job_to_success(cluster, 'mnist', ps=1, worker=2, run_policy={'ttlSecondsAfterFinished': 0})
    await cluster.wait_for(lambda: cluster.job('mnist') is None, what='ttl deletion')

    requests = used(cluster)
    rules = [r for role in helm_template() if role['kind'] == 'ClusterRole' for r in role['rules']]
    denied = sorted(r for r in requests if not allowed(rules, *r))
    assert not denied, f'the ClusterRole denies requests the operator makes: {denied}'
    granted = {(g, res, v) for r in rules for g in r['apiGroups'] for res in r['resources'] for v in r['verbs']}
    assert granted - requests == set(), 'granted but never used'


async def test_gang_and_peering_rules_cover_their_requests(cluster):
    peering = 'tensorfleet'
    await cluster.call('POST', '/apis/kopf.dev/v1/clusterkopfpeerings',
                       {'apiVersion': 'kopf.dev/v1', 'kind': 'ClusterKopfPeering', 'metadata': {'name': peering}})
    await cluster.start(login=login(cluster), gang_scheduler='volcano', peering_name=peering, standalone=False,
                        peering_lifetime=2)
    await run_job_to_success(cluster, 'gang', worker=1)
    await cluster.wait_for(lambda: any(g == 'scheduling.volcano.sh' and v == 'delete' for g, _, v in used(cluster)),
                           what='podgroup deleted')
    requests = used(cluster)
    docs = helm_template('--set', 'gangScheduler=volcano', '--set', 'peering.enabled=true',
                         '--set', f'peering.name={peering}')
    rules = [r for role in docs if role['kind'] == 'ClusterRole' for r in role['rules']]
    denied = sorted(r for r in requests if not allowed(rules, *r))
    assert not denied, denied
    extra = {(g, res, v) for r in rules for g in r['apiGroups'] for res in r['resources'] for v in r['verbs']
             if g in ('scheduling.volcano.sh', 'kopf.dev')} - requests
    assert extra == set(), 'gang/peering rules granted but never used'
