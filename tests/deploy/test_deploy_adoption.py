"""`helm install` over an operator installed without Helm (issue 27 item 4), decided by the real helm
v4: its ownership check runs against the emulated API server (tests/operator/kube_emulator.py)
holding the objects `kubectl apply -f deploy/` would have made (`--dry-run=server`: helm looks up
every object of the release, refuses what it may not adopt, and stops before writing anything).

Helm adopts an existing object only when it carries the label app.kubernetes.io/managed-by: Helm and
the annotations meta.helm.sh/release-name and meta.helm.sh/release-namespace of the release being
installed; `--take-ownership` skips that check. The chart renders those marks, so deploy/operator.yaml
(release tensorfleet in tensorfleet-system) is adoptable by the documented `helm install`."""
from __future__ import annotations

import asyncio
import copy
import sys
from typing import Any

import pytest
import yaml

from deploy_tools import CHART, ROOT, tool

sys.path.insert(0, str(ROOT / 'tests' / 'operator'))      # kube_emulator
from kube_emulator import TFJobEmulator, declare_resources  # noqa: E402

pytestmark = pytest.mark.filterwarnings('ignore:read_binary is deprecated:DeprecationWarning')
PLURALS = {'ServiceAccount': 'serviceaccounts', 'ConfigMap': 'configmaps',
           'CustomResourceDefinition': 'customresourcedefinitions', 'ClusterRole': 'clusterroles',
           'ClusterRoleBinding': 'clusterrolebindings', 'Service': 'services', 'Deployment': 'deployments'}
OWNERSHIP = ('meta.helm.sh/release-name', 'meta.helm.sh/release-namespace')


@pytest.fixture()
def kmock_options() -> dict[str, Any]:
    return {'cls': TFJobEmulator}


def deploy_docs() -> list[dict]:
    """deploy/operator.yaml's objects but its Namespace (no chart object: `helm install
    --create-namespace` takes an existing one; kmock cannot create namespaces)."""
    docs = [d for d in yaml.safe_load_all((ROOT / 'deploy' / 'operator.yaml').read_text()) if d]
    return [d for d in docs if d['kind'] != 'Namespace']


def without_ownership(docs: list[dict]) -> list[dict]:
    """The objects as an operator.yaml without Helm's annotations (before this chart rendered them)."""
    docs = copy.deepcopy(docs)
    for d in docs:
        for key in OWNERSHIP:
            (d['metadata'].get('annotations') or {}).pop(key, None)
    return docs


class Cluster:
    def __init__(self, kmock: Any, tmp_path: Any) -> None:
        self.kmock = kmock
        declare_resources(kmock)
        self.kubeconfig = tmp_path / 'kubeconfig'
        self.kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: emu, cluster: {{server: '{str(kmock.url).rstrip('/')}'}}}}]
users: [{{name: emu, user: {{token: admin}}}}]
contexts: [{{name: emu, context: {{cluster: emu, user: emu}}}}]
current-context: emu
""")

    async def apply(self, docs: list[dict]) -> None:
        """Create the objects as `kubectl apply` does on a first apply."""
        for d in docs:
            group, _, version = d['apiVersion'].rpartition('/')
            base = f'/apis/{group}/{version}' if group else f'/api/{version}'
            ns = d['metadata'].get('namespace')
            path = f'{base}/namespaces/{ns}/{PLURALS[d["kind"]]}' if ns else f'{base}/{PLURALS[d["kind"]]}'
            async with self.kmock.request('POST', path, json=d) as resp:
                assert resp.status < 300, (path, resp.status, await resp.text())

    async def helm_install(self, release: str, namespace: str, *args: str) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            tool('helm'), 'install', release, str(CHART), '-n', namespace, '--kubeconfig', str(self.kubeconfig),
            '--dry-run=server', '--disable-openapi-validation', *args,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(proc.communicate(), 120)
        return proc.returncode, out.decode()


@pytest.fixture()
def cluster(kmock: Any, tmp_path: Any) -> Cluster:
    return Cluster(kmock, tmp_path)


async def test_helm_install_adopts_what_kubectl_apply_of_deploy_made(cluster):
    await cluster.apply(deploy_docs())
    rc, out = await cluster.helm_install('tensorfleet', 'tensorfleet-system')
    assert rc == 0 and 'Dry run complete' in out, out[-2000:]


async def test_without_the_ownership_marks_helm_refuses_and_take_ownership_adopts(cluster):
    """The failure the issue reported, and helm v4's --take-ownership (real helm: v4.3)."""
    await cluster.apply(without_ownership(deploy_docs()))
    rc, out = await cluster.helm_install('tensorfleet', 'tensorfleet-system')
    assert rc != 0 and 'exists and cannot be imported into the current release: invalid ownership metadata' in out
    assert 'missing key "meta.helm.sh/release-name": must be set to "tensorfleet"' in out
    rc, out = await cluster.helm_install('tensorfleet', 'tensorfleet-system', '--take-ownership')
    assert rc == 0 and 'Dry run complete' in out, out[-2000:]


async def test_another_release_installs_next_to_the_crd_of_deploy_with_crds_install_false(cluster):
    crd = [d for d in deploy_docs() if d['kind'] == 'CustomResourceDefinition']
    await cluster.apply(crd)
    rc, out = await cluster.helm_install('tf', 'ops')
    assert rc != 0 and 'CustomResourceDefinition "tfjobs.tensorfleet.io"' in out
    assert 'must equal "tf": current value is "tensorfleet"' in out
    rc, out = await cluster.helm_install('tf', 'ops', '--set', 'crds.install=false')
    assert rc == 0, out[-2000:]


async def test_the_crd_of_deploy_crds_is_adopted_once_labelled_as_the_readme_says(cluster):
    """deploy/crds/ holds the bare CRD (`--print-crd`): no Helm marks at all. The README's three
    commands (`kubectl label`/`kubectl annotate`) make it adoptable."""
    crd = yaml.safe_load((ROOT / 'deploy' / 'crds' / 'tfjobs.tensorfleet.io.yaml').read_text())
    await cluster.apply([crd])
    rc, out = await cluster.helm_install('tensorfleet', 'tensorfleet-system')
    assert rc != 0 and 'label validation error: missing key "app.kubernetes.io/managed-by"' in out
    patch = {'metadata': {'labels': {'app.kubernetes.io/managed-by': 'Helm'}, 'annotations': {
        'meta.helm.sh/release-name': 'tensorfleet', 'meta.helm.sh/release-namespace': 'tensorfleet-system'}}}
    async with cluster.kmock.request('PATCH', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/'
                                     'tfjobs.tensorfleet.io', json=patch,
                                     headers={'Content-Type': 'application/merge-patch+json'}) as resp:
        assert resp.status == 200
    rc, out = await cluster.helm_install('tensorfleet', 'tensorfleet-system')
    assert rc == 0, out[-2000:]


def test_every_object_of_deploy_operator_yaml_carries_helms_ownership_marks():
    docs = deploy_docs()
    assert len(docs) >= 7
    for d in docs:
        meta = d['metadata']
        assert meta['labels']['app.kubernetes.io/managed-by'] == 'Helm', d['kind']
        assert {k: meta['annotations'][k] for k in OWNERSHIP} == {
            'meta.helm.sh/release-name': 'tensorfleet', 'meta.helm.sh/release-namespace': 'tensorfleet-system'}
