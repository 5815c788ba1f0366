"""Issue 9, operator items: bounded jobs, port and env collisions, GPU quantities,
replica-key spelling, and the CLI's fail-fast start-up checks.

Oracles: the Kubernetes API's rules (Service ports unique by number, quantities
as in ``resource.Quantity``, the later of two env entries wins), the CRD schema
(jsonschema), and the operator's documented bounds in ``api.py``.
"""
import copy
import gc
import json
import os
import pathlib
import socket
import subprocess
import sys
import tracemalloc

import jsonschema
import pytest

from op_builders import template, tfjob
from tensorfleet_operator import __version__
from tensorfleet_operator.core import api
from tensorfleet_operator.core.children import ChildOptions, desired_pod, desired_service
from tensorfleet_operator.core.crd import open_api_schema
from tensorfleet_operator.core.plan import reconcile
from tensorfleet_operator.core.spec import InvalidSpec, parse_job, parse_quantity
from test_op_plan import NOW

ROOT = pathlib.Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.filterwarnings("ignore:read_binary is deprecated:DeprecationWarning")


def spec_error(body):
    with pytest.raises(InvalidSpec) as err:
        parse_job(body)
    return err.value


def env_of(pod):
    return {e['name']: e for e in pod['spec']['containers'][0].get('env', [])}


# -- bounded jobs ------------------------------------------------------------------------------
def test_replicas_past_the_maximum_are_rejected_by_schema_and_core():
    body = tfjob('huge', worker=100000)
    err = spec_error(body)
    assert err.field == 'spec.tfReplicaSpecs' and str(api.MAX_REPLICAS_PER_JOB) in err.message
    with pytest.raises(jsonschema.ValidationError, match='maximum'):
        jsonschema.validate(body, open_api_schema())
    # The bound is on the job: two types that each fit can still be too many together.
    assert spec_error(tfjob('two', ps=api.MAX_REPLICAS_PER_JOB // 2 + 1, worker=api.MAX_REPLICAS_PER_JOB // 2))
    jsonschema.validate(tfjob('max', worker=api.MAX_REPLICAS_PER_JOB), open_api_schema())
    parse_job(tfjob('max', worker=api.MAX_REPLICAS_PER_JOB))


def test_tf_config_size_is_checked_against_the_bound():
    long_ns = 'n' * 63
    body = tfjob('j' * 50, namespace=long_ns, worker=api.MAX_REPLICAS_PER_JOB)
    plan = reconcile(body, [], [], NOW, ChildOptions(cluster_domain='cluster.example.internal'))
    assert plan.status['reason'] == 'InvalidSpec' and 'TF_CONFIG would be' in plan.status['message']
    assert plan.create_pods == []
    # The same job with short names fits, and its real TF_CONFIG is under the bound.
    plan = reconcile(tfjob('j', worker=api.MAX_REPLICAS_PER_JOB), [], [], NOW)
    assert len(plan.create_pods) == api.MAX_REPLICAS_PER_JOB
    last = plan.create_pods[api.MAX_REPLICAS_PER_JOB - 1]
    assert len(env_of(last)['TF_CONFIG']['value']) <= api.MAX_TF_CONFIG_BYTES


def _traced_peak(fn):
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_planning_the_largest_job_keeps_memory_bounded():
    """The plan holds pod keys, not manifests; sending builds one batch at a time (as handlers does).
    Target: 20 MB for the largest allowed job, where all its manifests at once take far more."""
    body = tfjob('big', ps=1, worker=api.MAX_REPLICAS_PER_JOB - 1)

    def plan_and_send_in_batches():
        pods = reconcile(copy.deepcopy(body), [], [], NOW).create_pods
        for start in range(0, len(pods), api.POD_CREATE_BATCH):
            batch = pods[start:start + api.POD_CREATE_BATCH]
            assert len(batch) <= api.POD_CREATE_BATCH
    bounded = _traced_peak(plan_and_send_in_batches)
    everything = _traced_peak(lambda: list(reconcile(copy.deepcopy(body), [], [], NOW).create_pods))
    assert bounded < 20e6, bounded
    assert everything > 2 * bounded          # the oracle: what building every pod at once costs
    rejected = _traced_peak(lambda: reconcile(tfjob('huge', worker=10**9), [], [], NOW))
    assert rejected < 1e6, rejected


async def test_huge_job_is_rejected_while_other_jobs_reconcile(cluster):
    await cluster.start()
    await cluster.create_job(tfjob('huge', worker=100000))
    await cluster.create_job(tfjob('wide', ps=1, worker=150))
    await cluster.create_job(tfjob('small', ps=1, worker=1))
    await cluster.wait_for(lambda: cluster.status('huge').get('reason') == 'InvalidSpec', what='huge rejected')
    await cluster.wait_for(lambda: len(cluster.pods('small')) == 2, what='small job pods')
    await cluster.wait_for(lambda: len(cluster.pods('wide')) == 151, what='wide job pods', timeout=60)
    assert cluster.pods('huge') == {}
    assert 'at most 1000' in cluster.status('huge')['message']


# -- ports and env -----------------------------------------------------------------------------
def test_user_port_on_2222_is_reused_not_doubled():
    body = tfjob('p', worker=2)
    body['spec']['tfReplicaSpecs']['Worker']['template'] = template(ports=[{'name': 'grpc', 'containerPort': 2222}])
    job = parse_job(body)
    svc = desired_service(job, job.chief_type or list(job.replicas)[0], 0, ChildOptions())
    assert svc['spec']['ports'] == [{'name': 'grpc', 'port': 2222, 'targetPort': 2222}]
    pod = desired_pod(job, list(job.replicas)[0], 1, ChildOptions())
    numbers = [p['containerPort'] for p in pod['spec']['containers'][0]['ports']]
    assert len(numbers) == len(set(numbers)) and 2222 in numbers
    assert '"worker":["p-worker-0.ns.svc:2222","p-worker-1.ns.svc:2222"]' in env_of(pod)['TF_CONFIG']['value']


def test_duplicate_port_numbers_are_rejected_with_the_field():
    body = tfjob('p', worker=1)
    body['spec']['tfReplicaSpecs']['Worker']['template'] = template(ports=[
        {'name': 'tfjob-port', 'containerPort': 2300}, {'name': 'other', 'containerPort': 2300}])
    err = spec_error(body)
    assert err.field == 'spec.tfReplicaSpecs.Worker.template.spec.containers[0].ports[1].containerPort'


@pytest.mark.parametrize('user_port, expected', [(9100, 9101), (2222, 9100)])
def test_metrics_port_moves_past_a_user_port(user_port, expected):
    body = tfjob('m', worker=2)
    body['spec']['tfReplicaSpecs']['Worker']['template'] = template(
        ports=[{'name': 'tfjob-port', 'containerPort': user_port}])
    job = parse_job(body)
    pod = desired_pod(job, list(job.replicas)[0], 0, ChildOptions())
    ports = pod['spec']['containers'][0]['ports']
    assert sorted(p['containerPort'] for p in ports) == sorted({user_port, expected})
    assert env_of(pod)['TENSORFLEET_METRICS_PORT']['value'] == str(expected)
    assert {'name': 'tf-metrics', 'containerPort': expected} in ports


def test_metrics_port_of_a_sidecar_is_avoided_and_a_user_setting_kept():
    body = tfjob('m', worker=2)
    tmpl = template(env=[{'name': 'TENSORFLEET_METRICS_PORT', 'value': '9300'}])
    tmpl['spec']['containers'].append({'name': 'sidecar', 'image': 'x', 'ports': [{'containerPort': 9100}]})
    body['spec']['tfReplicaSpecs']['Worker']['template'] = tmpl
    job = parse_job(body)
    pod = desired_pod(job, list(job.replicas)[0], 0, ChildOptions())
    assert env_of(pod)['TENSORFLEET_METRICS_PORT']['value'] == '9300'
    assert {'name': 'tf-metrics', 'containerPort': 9300} in pod['spec']['containers'][0]['ports']
    body['spec']['tfReplicaSpecs']['Worker']['template']['spec']['containers'][0]['env'] = []
    pod = desired_pod(parse_job(body), list(job.replicas)[0], 0, ChildOptions())
    assert env_of(pod)['TENSORFLEET_METRICS_PORT']['value'] == '9101'


def test_min_available_larger_than_the_job_is_rejected():
    err = spec_error(tfjob('g', ps=1, worker=2, run_policy={'schedulingPolicy': {'minAvailable': 4}}))
    assert err.field == 'spec.runPolicy.schedulingPolicy.minAvailable' and 'more than' in err.message
    parse_job(tfjob('g', ps=1, worker=2, run_policy={'schedulingPolicy': {'minAvailable': 3}}))


def test_duplicate_tf_config_entries_leave_only_the_operators():
    body = tfjob('d', worker=2)
    body['spec']['tfReplicaSpecs']['Worker']['template'] = template(env=[
        {'name': 'TF_CONFIG', 'value': '{"mine": 1}'}, {'name': 'A', 'value': 'a'},
        {'name': 'TF_CONFIG', 'value': '{"mine": 2}'}])
    job = parse_job(body)
    pod = desired_pod(job, list(job.replicas)[0], 1, ChildOptions())
    env = pod['spec']['containers'][0]['env']
    tf_configs = [e for e in env if e['name'] == 'TF_CONFIG']
    assert len(tf_configs) == 1 and json.loads(tf_configs[0]['value'])['task'] == {'type': 'worker', 'index': 1}
    assert {'name': 'A', 'value': 'a'} in env


# -- quantities and keys -----------------------------------------------------------------------
@pytest.mark.parametrize('raw, value', [(2, 2), ('2', 2), (2.0, 2), ('2.0', 2), ('2000m', 2), ('1Ki', 1024),
                                        ('1e3', 1000), ('0.5', 0.5), ('+3', 3)])
def test_quantities(raw, value):
    assert parse_quantity(raw) == value


@pytest.mark.parametrize('raw', [2, '2.0', 2.0, '2000m'])
def test_gpu_quantity_spellings_give_two_gpus(raw):
    body = tfjob('g', worker=2)
    body['spec']['tfReplicaSpecs']['Worker']['template'] = template(resources={'limits': {'nvidia.com/gpu': raw}})
    job = parse_job(body)
    assert job.replicas[list(job.replicas)[0]].gpus == 2
    assert env_of(desired_pod(job, list(job.replicas)[0], 0, ChildOptions()))['CUDA_VISIBLE_DEVICES']['value'] == '0,1'


@pytest.mark.parametrize('raw, words', [('1.5', 'whole number'), ('two', 'Kubernetes quantity'),
                                        ('-1', 'negative'), (True, 'Kubernetes quantity')])
def test_bad_gpu_quantities_name_the_field(raw, words):
    body = tfjob('g', worker=1)
    body['spec']['tfReplicaSpecs']['Worker']['template'] = template(resources={'limits': {'nvidia.com/gpu': raw}})
    err = spec_error(body)
    assert err.field.endswith('.resources.limits[nvidia.com/gpu]') and words in err.message


def test_lowercase_replica_key_works_and_warns_once():
    body = tfjob('k', worker=2)
    body['spec']['tfReplicaSpecs'] = {'worker': body['spec']['tfReplicaSpecs']['Worker']}
    plan = reconcile(body, [], [], NOW)
    assert len(plan.create_pods) == 2
    warnings = [e for e in plan.events if e.reason == 'NonCanonicalReplicaKey']
    assert len(warnings) == 1 and "write 'Worker'" in warnings[0].message
    body['status'] = plan.status
    assert not [e for e in reconcile(body, [], [], NOW).events if e.reason == 'NonCanonicalReplicaKey']


# -- CLI -------------------------------------------------------------------------------------
def _cli(*args, env=None, timeout=60):
    full_env = {k: v for k, v in os.environ.items()
                if k not in ('KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT')}
    full_env.update(env or {})
    return subprocess.run([sys.executable, '-m', 'tensorfleet_operator', *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout)


def test_version():
    out = _cli('--version')
    assert out.returncode == 0 and out.stdout.strip() == f'tensorfleet-operator {__version__}'
    assert __version__.startswith('0.')


def test_no_credentials_is_one_line_and_exit_1(tmp_path):
    out = _cli(env={'HOME': str(tmp_path)})
    assert out.returncode == 1 and out.stdout == ''
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and 'no Kubernetes credentials' in lines[0]
    assert 'KUBECONFIG' in lines[0] and '--kubeconfig' in lines[0] and 'service account' in lines[0]
    out = _cli('--kubeconfig', str(tmp_path / 'missing.yaml'), env={'HOME': str(tmp_path)})
    assert out.returncode == 1 and 'missing.yaml does not exist' in out.stderr


@pytest.mark.parametrize('flag', ['--metrics-port', '--liveness'])
def test_taken_port_fails_fast_naming_port_and_flag(tmp_path, flag):
    kubeconfig = tmp_path / 'config'
    kubeconfig.write_text('apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n')
    with socket.socket() as busy:
        busy.bind(('127.0.0.1', 0))
        busy.listen()
        port = busy.getsockname()[1]
        value = str(port) if flag == '--metrics-port' else f'http://127.0.0.1:{port}/healthz'
        other = ['--liveness', ''] if flag == '--metrics-port' else ['--metrics-port', '0']
        out = _cli('--kubeconfig', str(kubeconfig), '--metrics-address', '127.0.0.1', flag, value, *other)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and f'port {port}' in lines[0] and flag in lines[0], out.stderr


# -- examples ----------------------------------------------------------------------------------
TRAINER_IMAGE = 'tensorfleet/trainer'
IMAGE_ROOT = '/opt/tensorfleet'           # where the trainer image holds the repo (examples/)
# Kubeflow's own example images, kept verbatim to show drop-in compatibility (they exist upstream).
UPSTREAM_IMAGES = {'kubeflow/tf-mnist-with-summaries:latest', 'kubeflow/multi_worker_strategy:v1.0'}


def _example_containers():
    import yaml
    for path in sorted((ROOT / 'deploy' / 'examples').glob('*.yaml')):
        doc = yaml.safe_load(path.read_text())
        for rtype, rspec in doc['spec']['tfReplicaSpecs'].items():
            for c in rspec['template']['spec']['containers']:
                yield f'{path.name}:{rtype}:{c["name"]}', c


def _help_of(script, cache={}):      # noqa: B006 (a per-run cache of --help outputs)
    if script not in cache:
        env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(ROOT / 'trainer'), os.environ.get('PYTHONPATH', '')])}
        target = ['-m', script.split(':', 1)[1]] if isinstance(script, str) else [str(script)]  # 'mod:NAME' or a path
        out = subprocess.run([sys.executable, *target, '--help'], capture_output=True, text=True, env=env,
                             timeout=120, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        cache[script] = out.stdout
    return cache[script]


def test_every_example_command_exists():
    seen = 0
    for where, c in _example_containers():
        image = c['image']
        if image in UPSTREAM_IMAGES:
            continue
        assert image.split(':')[0] == TRAINER_IMAGE, f'{where}: unknown image {image}'
        cmd = list(c.get('command') or []) + list(c.get('args') or [])
        assert cmd[:1] == ['python'], f'{where}: needs an explicit python command, got {cmd}'
        assert c.get('workingDir') == IMAGE_ROOT, where
        checks = []             # (script or 'mod:NAME', its arguments)
        if cmd[1] == '-m':      # the trainer launcher (or another module of the trainer package)
            module = cmd[2]
            assert (ROOT / 'trainer' / module.replace('.', '/')).is_dir(), f'{where}: no module {module}'
            rest = cmd[3:]
            if '--script' in rest:   # the launcher runs a script: its flags after `--` are the script's
                split = rest.index('--') if '--' in rest else len(rest)
                rest, script_args = rest[:split], rest[split + 1:]
                checks.append((ROOT / rest[rest.index('--script') + 1], script_args))
            checks.insert(0, ('mod' + ':' + module, rest))
        else:
            checks.append((ROOT / cmd[1], cmd[2:]))
        for script, args in checks:
            if not isinstance(script, str):
                assert script.is_file() and ROOT / 'examples' in script.parents, f'{where}: {script} does not exist'
            help_text = _help_of(script)
            for flag in (a for a in args if a.startswith('--') and a != '--'):
                assert flag in help_text, f'{where}: {script} has no flag {flag}'
        seen += 1
    assert seen >= 5
