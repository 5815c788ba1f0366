"""The CLI entry point and the Prometheus endpoint."""
import pathlib
import socket
import urllib.request

from tensorfleet_operator import api
from tensorfleet_operator.__main__ import main, parse_args
from tensorfleet_operator.metrics import OperatorMetrics

CRD_FILE = pathlib.Path(__file__).resolve().parents[2] / 'deploy' / 'crds' / 'tfjobs.tensorfleet.io.yaml'


def test_print_crd_matches_the_deployed_file(capsys, monkeypatch):
    monkeypatch.delenv(api.GROUP_ENV, raising=False)
    assert main(['--print-crd']) == 0
    assert capsys.readouterr().out == CRD_FILE.read_text()


def test_print_crd_for_the_kubeflow_group(capsys, monkeypatch):
    monkeypatch.setenv(api.GROUP_ENV, 'tensorfleet.io')       # restored after the test
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
