"""The CLI entry point and the Prometheus endpoint."""
import json
import pathlib
import socket
import urllib.request

import pytest

from tensorfleet_operator.__main__ import main, parse_args
from tensorfleet_operator.config import GROUP_ENV
from tensorfleet_operator.metrics import OperatorMetrics

CRD_FILE = pathlib.Path(__file__).resolve().parents[2] / 'deploy' / 'crds' / 'tfjobs.tensorfleet.io.yaml'


def test_print_crd_matches_the_deployed_file(capsys, monkeypatch):
    monkeypatch.delenv(GROUP_ENV, raising=False)
    assert main(['--print-crd']) == 0
    assert capsys.readouterr().out == CRD_FILE.read_text()


def test_print_crd_for_the_kubeflow_group(capsys, monkeypatch):
    monkeypatch.setenv(GROUP_ENV, 'tensorfleet.io')       # restored after the test
    assert main(['--api-group', 'kubeflow.org', '--print-crd']) == 0
    out = capsys.readouterr().out
    assert 'name: tfjobs.kubeflow.org' in out and 'group: kubeflow.org' in out


def test_cli_defaults_standalone_all_namespaces():
    args = parse_args([])
    assert args.namespace == [] and args.peering is None and args.metrics_port == 8080
    assert args.liveness == 'http://0.0.0.0:8081/healthz' and args.gang_scheduler is None
    args = parse_args(['-n', 'a', '-n', 'b', '--peering', 'tfjobs', '--gang-scheduler', 'volcano'])
    assert args.namespace == ['a', 'b'] and args.peering == 'tfjobs' and args.gang_scheduler == 'volcano'


def test_metrics_endpoint_serves_the_documented_series():
    metrics = OperatorMetrics()
    metrics.transitions('ns', [('created', None), ('failed', 'BackoffLimitExceeded'), ('restarted', 'Worker')], 1.0)
    metrics.job_condition(('ns', 'a'), 'Running')
    metrics.job_condition(('ns', 'b'), 'Running')
    metrics.job_condition(('ns', 'a'), 'Failed')
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    metrics.serve(port, '127.0.0.1')
    text = urllib.request.urlopen(f'http://127.0.0.1:{port}/metrics').read().decode()
    assert 'tensorfleet_operator_jobs_created_total{namespace="ns"} 1.0' in text
    assert 'tensorfleet_operator_jobs_failed_total{namespace="ns",reason="BackoffLimitExceeded"} 1.0' in text
    assert 'tensorfleet_operator_jobs_restarted_total{namespace="ns",replica_type="Worker"} 1.0' in text
    assert 'tensorfleet_operator_jobs{condition="Running"} 1.0' in text
    assert 'tensorfleet_operator_jobs{condition="Failed"} 1.0' in text
    docs = (CRD_FILE.parents[2] / 'docs' / 'metrics.md').read_text()
    for line in text.splitlines():
        if line.startswith('# TYPE '):
            name = line.split()[2]
            if name.endswith('_created'):      # prometheus_client's creation-time companions
                continue
            assert f'`{name}' in docs, f'{name} is not documented in docs/metrics.md'


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status, resp.read().decode()
    except OSError:
        return None, ''


@pytest.mark.filterwarnings('ignore:read_binary is deprecated:DeprecationWarning')
async def test_the_cli_runs_the_operator_with_liveness_and_metrics_on_their_own_ports(cluster, tmp_path):
    """`python -m tensorfleet_operator` against the emulated API: kubeconfig login, one
    namespace, the liveness endpoint and the Prometheus endpoint on separate ports, SIGTERM."""
    import asyncio
    import os
    import signal
    import sys

    from op_builders import tfjob
    kubeconfig = tmp_path / 'kubeconfig'
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: emu, cluster: {{server: '{cluster.url}'}}}}]
users: [{{name: emu, user: {{}}}}]
contexts: [{{name: emu, context: {{cluster: emu, user: emu, namespace: ns}}}}]
current-context: emu
""")
    live, prom = _free_port(), _free_port()
    root = CRD_FILE.parents[2]
    env = {**os.environ, 'KUBECONFIG': str(kubeconfig), 'PYTHONPATH': str(root / 'operator'),
           'TENSORFLEET_API_GROUP': 'tensorfleet.io'}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, '-m', 'tensorfleet_operator', '--namespace', 'ns',
        '--liveness', f'http://127.0.0.1:{live}/healthz', '--metrics-port', str(prom),
        '--metrics-address', '127.0.0.1', env=env, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE)
    try:
        for _ in range(200):            # kopf serves the liveness endpoint once it runs
            if proc.returncode is not None or (await asyncio.to_thread(_get, f'http://127.0.0.1:{live}/healthz'))[0]:
                break
            await asyncio.sleep(0.05)
        assert proc.returncode is None
        await cluster.create_job(tfjob('cli', worker=2))
        await cluster.wait_for(lambda: sorted(cluster.pods('cli')) == ['cli-worker-0', 'cli-worker-1'],
                               timeout=10, what='pods made by the CLI operator')
        await cluster.wait_for(lambda: cluster.conditions('cli') == {'Created': 'True'})
        status, body = await asyncio.to_thread(_get, f'http://127.0.0.1:{live}/healthz')
        assert status == 200 and isinstance(json.loads(body)['jobs'], int)   # kopf caches probes 10 s
        status, text = await asyncio.to_thread(_get, f'http://127.0.0.1:{prom}/metrics')
        assert status == 200
        assert 'tensorfleet_operator_pods_created_total{namespace="ns"} 2.0' in text
        assert 'tensorfleet_operator_jobs_created_total{namespace="ns"} 1.0' in text
        assert 'tensorfleet_operator_jobs{condition="Created"} 1.0' in text
        assert (await asyncio.to_thread(_get, f'http://127.0.0.1:{live}/metrics'))[0] != 200
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), 15)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
    stderr = (await proc.stderr.read()).decode()
    assert proc.returncode == 0, stderr[-2000:]
