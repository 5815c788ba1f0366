"""The CRD file is generated from api.py; examples validate against its schema;
broken manifests are rejected with the path of the bad field (like kubectl apply)."""
import pathlib

import jsonschema
import pytest
import yaml

from tensorfleet_operator.config import GROUP_ENV
from tensorfleet_operator.core.crd import build_crd, crd_yaml
from tensorfleet_operator.core.spec import parse_job

ROOT = pathlib.Path(__file__).resolve().parents[2]
CRD_FILE = ROOT / 'deploy' / 'crds' / 'tfjobs.tensorfleet.io.yaml'
EXAMPLES = sorted((ROOT / 'deploy' / 'examples').glob('*.yaml'))
INVALID = sorted((pathlib.Path(__file__).parent / 'invalid_manifests').glob('*.yaml'))


def schema():
    crd = yaml.safe_load(CRD_FILE.read_text())
    return next(v for v in crd['spec']['versions'] if v['name'] == 'v1')['schema']['openAPIV3Schema']


def path_of(error):
    out = ''
    for part in error.absolute_path:
        out += f'[{part}]' if isinstance(part, int) else ('.' if out else '') + part
    return out


def test_crd_file_is_generated_from_api():
    assert CRD_FILE.read_text() == crd_yaml(), 'run: python -m tensorfleet_operator --print-crd > ' + str(CRD_FILE)


def test_crd_names_subresource_and_columns():
    crd = yaml.safe_load(CRD_FILE.read_text())
    assert crd['metadata']['name'] == 'tfjobs.tensorfleet.io'
    assert crd['spec']['names'] == {'kind': 'TFJob', 'plural': 'tfjobs', 'singular': 'tfjob',
                                    'listKind': 'TFJobList', 'shortNames': ['tfj']}
    version = crd['spec']['versions'][0]
    assert version['subresources'] == {'status': {}}
    columns = {c['name']: c['jsonPath'] for c in version['additionalPrinterColumns']}
    assert columns['State'] == '.status.conditions[-1:].type' and columns['Age'] == '.metadata.creationTimestamp'
    assert columns['Worker'] == '.spec.tfReplicaSpecs.Worker.replicas'


def test_kubeflow_group_variant(monkeypatch):
    monkeypatch.setenv(GROUP_ENV, 'tensorfleet.io')     # the core never reads the environment
    crd = build_crd('kubeflow.org')
    assert crd['metadata']['name'] == 'tfjobs.kubeflow.org' and crd['spec']['group'] == 'kubeflow.org'


@pytest.mark.parametrize('path', EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_validate_and_parse(path):
    doc = yaml.safe_load(path.read_text())
    assert doc['apiVersion'] == 'tensorfleet.io/v1' and doc['kind'] == 'TFJob'
    errors = list(jsonschema.Draft7Validator(schema()).iter_errors(doc))
    assert errors == []
    doc['metadata'].setdefault('namespace', 'default')
    parse_job(doc)     # and the operator accepts it


def test_there_are_examples_and_broken_manifests():
    assert len(EXAMPLES) >= 6 and len(INVALID) >= 10


@pytest.mark.parametrize('path', INVALID, ids=[p.name for p in INVALID])
def test_broken_manifests_fail_with_field_path(path):
    text = path.read_text()
    expected = text.splitlines()[0].removeprefix('# expect: ').strip()
    errors = list(jsonschema.Draft7Validator(schema()).iter_errors(yaml.safe_load(text)))
    assert errors, f'{path.name} was accepted'
    assert expected in [path_of(e) for e in errors], [(path_of(e), e.message) for e in errors]


def _structural_errors(node, path='openAPIV3Schema', root=True):  # noqa: C901 (one rule per branch)
    """apiextensions.k8s.io/v1 structural-schema rules the API server enforces on a CRD."""
    errors = []
    preserve = node.get('x-kubernetes-preserve-unknown-fields') is True
    if not node.get('type') and not preserve and not node.get('x-kubernetes-int-or-string'):
        errors.append(f'{path}: no type')
    if 'properties' in node and 'additionalProperties' in node:
        errors.append(f'{path}: properties and additionalProperties are mutually exclusive')
    if node.get('additionalProperties') is False:
        errors.append(f'{path}: additionalProperties: false is not allowed')
    for key in ('$ref', 'definitions', 'dependencies', 'patternProperties'):
        if key in node:
            errors.append(f'{path}: {key} is not allowed')
    if node.get('type') == 'array' and not isinstance(node.get('items'), dict):
        errors.append(f'{path}: an array needs one items schema')
    if node.get('format') not in (None, 'int32', 'int64', 'date-time', 'date', 'byte', 'float', 'double'):
        errors.append(f'{path}: unexpected format {node["format"]}')
    for name, sub in (node.get('properties') or {}).items():
        if root and name == 'metadata' and set(sub) - {'type'}:
            errors.append(f'{path}.metadata: only type is allowed at the root')
        errors += _structural_errors(sub, f'{path}.{name}', root=False)
    if isinstance(node.get('additionalProperties'), dict):
        errors += _structural_errors(node['additionalProperties'], f'{path}.*', root=False)
    if isinstance(node.get('items'), dict):
        errors += _structural_errors(node['items'], f'{path}[]', root=False)
    return errors


def test_crd_schema_is_structural():
    assert _structural_errors(schema()) == []
    assert _structural_errors({'type': 'object', 'properties': {'x': {'properties': {}}}}) == [
        'openAPIV3Schema.x: no type']


def _undeclared(node, value, path='status'):
    """Fields of ``value`` the schema does not declare: a real API server prunes them."""
    if node.get('x-kubernetes-preserve-unknown-fields') or not isinstance(value, (dict, list)):
        return []
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _undeclared(node.get('items') or {}, v, f'{path}[{i}]')]
    if isinstance(node.get('additionalProperties'), dict):
        return [p for k, v in value.items() for p in _undeclared(node['additionalProperties'], v, f'{path}.{k}')]
    props = node.get('properties') or {}
    out = [f'{path}.{k}' for k in value if k not in props]
    return out + [p for k, v in value.items() if k in props for p in _undeclared(props[k], v, f'{path}.{k}')]


def test_every_status_field_the_core_writes_survives_pruning():
    import datetime

    from op_builders import pod, tfjob
    from tensorfleet_operator.core.plan import reconcile

    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    status_schema = schema()['properties']['status']
    seen = []

    def run(body, pods):
        body['status'] = reconcile(body, pods, [], now).status
        seen.append(body['status'])

    body = tfjob('j', chief=1, ps=1, worker=2, evaluator=1, restart='ExitCode')
    run(body, [])
    run(body, [pod('j', 'chief', 0), pod('j', 'ps', 0, unschedulable=True), pod('j', 'evaluator', 0),
               pod('j', 'worker', 0, restarts=2, exit_code=137), pod('j', 'worker', 1, 'Failed', exit_code=137)])
    run(body, [pod('j', 'chief', 0), pod('j', 'ps', 0), pod('j', 'worker', 0, restarts=2)])
    run(body, [pod('j', 'chief', 0, 'Succeeded', exit_code=0)])
    invalid = tfjob('k', worker=None, ps=1)
    run(invalid, [])
    suspended = tfjob('s', worker=2, run_policy={'suspend': True})
    run(suspended, [pod('s', 'worker', 0)])
    written = {k for s in seen for k in s}
    assert {'reason', 'message', 'restarts', 'observedSpecHash', 'replicaStatuses', 'startTime'} <= written
    for status in seen:
        assert _undeclared(status_schema, status) == []
    assert _undeclared(status_schema, {'replicaStatuses': {'PS': {'replicas': [{'index': 0, 'x': 1}]}}}) == [
        'status.replicaStatuses.PS.replicas[0].x']
