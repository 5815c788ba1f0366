"""`tensorfleet render` equals what the operator core creates; `tensorfleet validate` reports
schema and semantic problems field path first; bad input is one line and exit 2."""
import datetime
import pathlib

import pytest
import yaml

from local_helpers import ROOT, tensorfleet
from tensorfleet_operator.local import cli, manifest
from tensorfleet_operator.local import operator_core as core

EXAMPLES = sorted((ROOT / 'deploy' / 'examples').glob('*.yaml'))
INVALID = sorted((ROOT / 'tests' / 'operator' / 'invalid_manifests').glob('*.yaml'))
NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def run_cli(capsys):
    """The CLI's main() in this process (the subprocess path is covered by the tests marked e2e below)."""
    def call(*args):
        capsys.readouterr()
        code = cli.main([str(a) for a in args])
        out = capsys.readouterr()
        return Result(code, out.out, out.err)
    return call


@pytest.mark.parametrize('path', EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_render_equals_what_the_operator_creates(path, run_cli):
    uid = '5d0c3a52-8d4e-4b53-9a3e-1f0e6f1c2b7a'
    proc = run_cli('render', path, '--namespace', 'team-a', '--token', 's3cret', '--uid', uid)
    assert proc.returncode == 0, proc.stderr
    rendered = list(yaml.safe_load_all(proc.stdout))
    # The oracle: the operator's own first reconcile of the job, as its shell would apply it.
    body = yaml.safe_load(path.read_text())
    body['metadata']['namespace'] = 'team-a'
    body['metadata']['uid'] = uid
    plan = core.reconcile(body, [], [], NOW)
    if body['spec'].get('runPolicy', {}).get('suspend'):
        assert plan.create_pods == []        # the operator creates nothing until resumed; render shows the pods
        body['spec']['runPolicy']['suspend'] = False
        plan = core.reconcile(body, [], [], NOW)
    assert plan.ensure_secret
    secret = core.rpc_token_secret(core.parse_job(body), 's3cret', core.ChildOptions())
    assert rendered == [secret, *plan.create_services, *plan.create_pods]
    assert [o['kind'] for o in rendered].count('Pod') == core.parse_job(body).total_replicas
    assert manifest.decode_secret(rendered[0]) == 's3cret'
    assert all(o['metadata']['ownerReferences'][0]['uid'] == uid for o in rendered)
    # Without --uid (the job is not created yet) the same objects come without ownerReferences,
    # so `kubectl apply` takes them.
    plain = run_cli('render', path, '--namespace', 'team-a', '--token', 's3cret')
    assert plain.stdout.startswith('# ownerReferences left out')
    for obj in rendered:
        del obj['metadata']['ownerReferences']
    assert list(yaml.safe_load_all(plain.stdout)) == rendered


def test_render_shows_tf_config_and_gpus(run_cli):
    proc = run_cli('render', ROOT / 'deploy' / 'examples' / '10-multi-worker-gpu.yaml', '--token', 't')
    pods = [o for o in yaml.safe_load_all(proc.stdout) if o['kind'] == 'Pod']
    env = {p['metadata']['name']: {e['name']: e.get('value') for e in p['spec']['containers'][0]['env']}
           for p in pods}
    assert env['multi-worker-worker-1']['TF_CONFIG'] == (
        '{"cluster":{"worker":["multi-worker-worker-0.default.svc:2222","multi-worker-worker-1.default.svc:2222"]},'
        '"task":{"type":"worker","index":1},"environment":"cloud"}')
    assert env['multi-worker-worker-0']['CUDA_VISIBLE_DEVICES'] == '0'


def expected_path(path):
    return path.read_text().splitlines()[0].removeprefix('# expect: ').strip()


@pytest.mark.parametrize('path', INVALID, ids=[p.name for p in INVALID])
def test_validate_names_the_bad_field(path, run_cli):
    proc = run_cli('validate', path)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert lines and all(line.startswith(f'{path}: ') for line in lines)
    assert any(line.startswith(f'{path}: {expected_path(path)}: ') for line in lines), lines


def test_validate_reports_every_file_and_semantic_rules(job_file, tmp_path, run_cli):
    two_chiefs = job_file("""
apiVersion: tensorfleet.io/v1
kind: TFJob
metadata: {name: two-chiefs}
spec:
  tfReplicaSpecs:
    Chief: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: img}]}}}
""", 'chiefs.yaml')
    no_tf = job_file("""
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: no-tf}
spec:
  tfReplicaSpecs:
    Worker: {template: {spec: {containers: [{name: main, image: img}]}}}
""", 'notf.yaml')
    good = ROOT / 'deploy' / 'examples' / '11-simple.yaml'
    proc = run_cli('validate', good, two_chiefs, no_tf)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [f'{good}: valid']
    assert proc.stderr.splitlines() == [
        f'{two_chiefs}: spec.tfReplicaSpecs.Chief.replicas: TensorFlow allows at most one chief, got 2',
        f"{no_tf}: spec.tfReplicaSpecs.Worker.template.spec.containers: one container must be named "
        f"'tensorflow' (it gets TF_CONFIG)"]
    ok = run_cli('validate', *EXAMPLES)
    assert ok.returncode == 0 and ok.stderr == '' and len(ok.stdout.splitlines()) == len(EXAMPLES)


@pytest.mark.parametrize('command', ['render', 'run', 'validate'])
def test_bad_input_is_one_line_and_exit_2(command, job_file, tmp_path, run_cli):
    cases = {
        tmp_path / 'missing.yaml': 'no such file',
        job_file('kind: TFJob\nspec: [unclosed\n', 'bad.yaml'): 'not valid YAML at line 3',
        job_file('apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n', 'deploy.yaml'):
            "kind 'Deployment' is not a TFJob",
        job_file('apiVersion: example.com/v1\nkind: TFJob\nmetadata: {name: x}\n', 'group.yaml'):
            "apiVersion 'example.com/v1' is not one of tensorfleet.io/v1, kubeflow.org/v1",
        tmp_path: 'is a directory',
    }
    for path, message in cases.items():
        proc = run_cli(command, path)
        assert proc.returncode == 2, (path, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0] and message in lines[0], lines
        assert 'Traceback' not in proc.stderr


def test_render_of_an_invalid_job_names_the_field(tmp_path, run_cli):
    proc = run_cli('render', ROOT / 'tests' / 'operator' / 'invalid_manifests' / 'replicas-negative.yaml')
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith('spec.tfReplicaSpecs.Worker.replicas: -1 is less than the minimum of 0')


def test_local_mode_never_imports_the_operator_shell():
    import subprocess
    import sys

    from local_helpers import cli_env
    code = ('import sys, tensorfleet_operator.local.cli, tensorfleet_operator.local.runner;'
            'bad = [m for m in sys.modules if m.split(".")[0] in ("kopf", "aiohttp", "kubernetes") or m in '
            '("tensorfleet_operator.handlers", "tensorfleet_operator.kubeclient", "tensorfleet_operator.metrics",'
            ' "tensorfleet_operator.__main__")]; print(bad)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert out.stdout.strip() == '[]', out.stderr
    # and only the adapter reaches into the core
    local = pathlib.Path(core.__file__).parent
    for path in local.glob('*.py'):
        if path.name != 'operator_core.py':
            text = path.read_text()
            assert 'from ..' not in text and 'tensorfleet_operator.' not in text.replace(
                'tensorfleet_operator.local', ''), path.name


def test_the_command_line_end_to_end(tmp_path):
    """The same commands as real processes (python -m tensorfleet_operator.local): output, exit codes."""
    example = ROOT / 'deploy' / 'examples' / '11-simple.yaml'
    rendered = tensorfleet('render', example, '--token', 't', '--uid', 'u')
    assert rendered.returncode == 0 and [o['kind'] for o in yaml.safe_load_all(rendered.stdout)][:2] == [
        'Secret', 'Service']
    bad = ROOT / 'tests' / 'operator' / 'invalid_manifests' / 'backoff-limit.yaml'
    checked = tensorfleet('validate', example, bad)
    assert checked.returncode == 1 and checked.stdout == f'{example}: valid\n'
    assert checked.stderr == f"{bad}: spec.runPolicy.backoffLimit: 'three' is not of type 'integer'\n"
    missing = tensorfleet('run', tmp_path / 'missing.yaml')
    assert missing.returncode == 2 and missing.stderr == f'tensorfleet: {tmp_path / "missing.yaml"}: no such file\n'
