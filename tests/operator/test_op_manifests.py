"""The CRD file is generated from api.py; examples validate against its schema;
broken manifests are rejected with the path of the bad field (like kubectl apply)."""
import pathlib

import jsonschema
import pytest
import yaml

from tensorfleet_operator import api
from tensorfleet_operator.crd import build_crd, crd_yaml
from tensorfleet_operator.spec import parse_job

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


def test_crd_file_is_generated_from_api(monkeypatch):
    monkeypatch.delenv(api.GROUP_ENV, raising=False)
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
    monkeypatch.setenv(api.GROUP_ENV, 'kubeflow.org')
    crd = build_crd()
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
