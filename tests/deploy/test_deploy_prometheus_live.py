"""The monitoring proof with a real Prometheus: every Grafana panel's query and every recording rule
returns data, and the hang alert fires, on metrics scraped from running processes.

A real Prometheus (Debian's package, unpacked by scripts/install-tools.sh; skipped with the reason
where it cannot be had) scrapes, every second, on 127.0.0.1 only:
* a running local job: deploy/examples/02-ps-worker-async.yaml through `tensorfleet run` (1 ps + 2
  workers of the built-in MLP, asynchronous, on the digits data), with the target labels
  `namespace` and `pod` a Kubernetes scrape adds;
* the operator's metrics endpoint, the operator running against the emulated API server of
  tests/operator and reconciling three jobs: one that mirrors the local job (its pods "run" on
  127.0.0.1, so the operator's progress poller reads worker 0's real metrics), one that restarts a
  replica and one that fails. The scrape keeps the operator's own labels (`honor_labels`, as the
  chart's ServiceMonitor does).
Prometheus loads deploy/prometheus/rules.yaml as shipped, plus a copy of the TFJobHung alert with
its windows scaled from minutes to seconds. The test evaluates, through the HTTP API, every
dashboard query (Grafana variables set to "All", `$__rate_interval` to 1m: the whole run) and
every recording rule and asserts each returns a finite value; alert expressions that must not
fire in a healthy run evaluate without error to nothing, and every series they read exists. Then
it freezes the job (SIGSTOP to the ps: the workers keep serving metrics, their global step
stops), shows the scaled TFJobHung firing, and runs the unmodified alert in a `promtool test
rules` case built from the global-step series Prometheus recorded (one recorded second = one
minute), which must fire at its end and not while the step moved.
"""
from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from deploy_tools import ROOT, tool

from loopback_ports import free_ports  # noqa: F401 (re-exported: the test modules import it from here)
from test_deploy_monitoring import dashboard_exprs, metric_names, rules

sys.path.insert(0, str(ROOT / 'tests' / 'operator'))      # for the emulator's modules only, then removed
from kube_emulator import TFJobEmulator, declare_resources  # noqa: E402
from op_builders import tfjob  # noqa: E402

_spec = importlib.util.spec_from_file_location('operator_test_harness', ROOT / 'tests' / 'operator' / 'conftest.py')
assert _spec and _spec.loader
harness_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness_module)
sys.path.remove(str(ROOT / 'tests' / 'operator'))

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings('ignore:read_binary is deprecated:DeprecationWarning')]
RULES = ROOT / 'deploy' / 'prometheus' / 'rules.yaml'
NS, JOB = 'ns', 'mnist'
RATE_INTERVAL = '1m'
# Panels whose series exist only on a GPU (docs/metrics.md: "only on a GPU"): no data on a CPU run.
GPU_ONLY = {'tensorfleet_gpu_memory_used_bytes', 'tensorfleet_gpu_memory_limit_bytes'}
# Histograms of a feature an asynchronous job does not use: the series exist (zero observations), so
# the query returns data, but the quantile of nothing is NaN.
NO_OBSERVATIONS_ASYNC = {'tensorfleet_sync_barrier_wait_seconds_bucket'}
# Alerts that must stay quiet in a healthy run (TFJobFailed fires: the test fails a job on purpose).
QUIET = {'TFJobStuckPending', 'TFJobHung', 'TFJobRestartStorm', 'TFJobPSBandwidthSaturated',
         'TensorfleetOperatorDown', 'TensorfleetOperatorErrors'}
BOUND = 90.0              # every wait below; the run takes about 40 s


@pytest.fixture()
def kmock_options() -> dict[str, Any]:
    return {'cls': TFJobEmulator}


@pytest.fixture()
async def cluster(kmock: Any) -> Any:
    declare_resources(kmock, harness_module.GROUP)
    harness = harness_module.Harness(kmock)
    try:
        yield harness
    finally:
        await harness.stop()



class Processes:
    """Every process the test starts; all killed at the end (a stopped one is continued first)."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []
        self.pids: list[int] = []           # grandchildren (tensorfleet run's replicas) a test may SIGSTOP

    def start(self, cmd: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
        with open(log, 'wb') as out:
            proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs.append(proc)
        return proc

    def stop_all(self) -> None:
        for pid in self.pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGCONT)
                    proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=20)


@pytest.fixture()
def processes():
    procs = Processes()
    try:
        yield procs
    finally:
        procs.stop_all()


def start_local_job(processes: Processes, tmp: Path) -> tuple[dict[str, int], dict[str, int]]:
    """deploy/examples/02-ps-worker-async.yaml (1 ps + 2 workers of the MLP, asynchronous) through `tensorfleet
    run`, as a user runs it, on the digits data and with a step count it never reaches; returns each replica's
    metrics port and process id, read from the run directory's run.yaml."""
    body = yaml.safe_load((ROOT / 'deploy' / 'examples' / '02-ps-worker-async.yaml').read_text())
    body['metadata'].update(name=JOB, namespace=NS)
    for rtype, spec in body['spec']['tfReplicaSpecs'].items():
        container = spec['template']['spec']['containers'][0]
        args = container['args']
        if rtype == 'Worker':
            args[args.index('--steps') + 1] = '100000000'
            args[args.index('--checkpoint-dir') + 1] = str(tmp / 'ckpt')
            args[args.index('--log-every') + 1] = '20'
        args += ['--data', 'digits', '--log-format', 'json', '--recovery-timeout', '600']
    job = tmp / 'job.yaml'
    job.write_text(yaml.safe_dump(body))
    run_dir = tmp / 'run'
    env = {**os.environ, 'OPENBLAS_NUM_THREADS': '1', 'PYTHONUNBUFFERED': '1',
           'PYTHONPATH': os.pathsep.join([str(ROOT / 'trainer'), str(ROOT / 'operator')])}
    processes.start([sys.executable, '-m', 'tensorfleet_operator.local', 'run', str(job), '--run-dir', str(run_dir),
                     '--no-tui', '--python', sys.executable], tmp / 'tensorfleet-run.log', env)
    deadline = time.monotonic() + BOUND
    while True:
        run = yaml.safe_load((run_dir / 'run.yaml').read_text()) if (run_dir / 'run.yaml').exists() else None
        if run and len(run.get('processes') or {}) == 3:
            break
        assert time.monotonic() < deadline, (tmp / 'tensorfleet-run.log').read_text()
        time.sleep(0.2)
    return ({label: ports['metrics'] for label, ports in run['ports'].items()},
            {label: proc['pid'] for label, proc in run['processes'].items()})


def prometheus_config(tmp: Path, trainers: dict[str, int], operator_port: int) -> Path:
    hang = next(r for r in rules() if r.get('alert') == 'TFJobHung')
    scaled = {'groups': [{'name': 'tensorfleet.test-scaled', 'rules': [{
        'alert': 'TFJobHung', 'expr': re.sub(r'\b(\d+)m\b', r'\1s', hang['expr']), 'for': '1s',
        'labels': {**hang['labels'], 'windows': 'seconds'}}]}]}
    (tmp / 'scaled.yaml').write_text(yaml.safe_dump(scaled))
    config = {
        'global': {'scrape_interval': '1s', 'scrape_timeout': '1s', 'evaluation_interval': '1s'},
        'rule_files': [str(RULES), str(tmp / 'scaled.yaml')],
        'scrape_configs': [
            {'job_name': 'tfjob-pods',
             'static_configs': [{'targets': [f'127.0.0.1:{port}'], 'labels': {'namespace': NS, 'pod': f'{JOB}-{task}'}}
                                for task, port in trainers.items()]},
            {'job_name': 'tensorfleet-operator', 'honor_labels': True,
             'static_configs': [{'targets': [f'127.0.0.1:{operator_port}'],
                                 'labels': {'namespace': 'tensorfleet-system', 'pod': 'operator'}}]},
        ]}
    path = tmp / 'prometheus.yml'
    path.write_text(yaml.safe_dump(config))
    return path


class PromAPI:
    def __init__(self, session: aiohttp.ClientSession, port: int) -> None:
        self.session, self.base = session, f'http://127.0.0.1:{port}/api/v1'

    async def get(self, path: str, **params: str) -> Any:
        async with self.session.get(self.base + path, params=params,
                                    timeout=aiohttp.ClientTimeout(total=10)) as resp:
            doc = await resp.json()
        assert doc['status'] == 'success', (params, doc)
        return doc['data']

    async def query(self, expr: str) -> list[dict[str, Any]]:
        data = await self.get('/query', query=expr)
        return data['result'] if data['resultType'] == 'vector' else [{'value': data['result']}]

    async def until(self, expr: str, what: str, check=bool) -> list[dict[str, Any]]:
        deadline = time.monotonic() + BOUND
        while True:
            try:
                result = await self.query(expr)
            except (aiohttp.ClientError, asyncio.TimeoutError, AssertionError):
                result = []
            if check(result):
                return result
            assert time.monotonic() < deadline, f'{what}: {expr} never held; last result {result}'
            await asyncio.sleep(0.5)


def finite(result: list[dict[str, Any]]) -> bool:
    return any(math.isfinite(float(r['value'][1])) for r in result)


def concrete(expr: str) -> str:
    """A dashboard query after Grafana's interpolation with namespace and job set to All."""
    return expr.replace('$__rate_interval', RATE_INTERVAL).replace('$namespace', '.*').replace('$job', '.*')


async def drive_operator_jobs(cluster: Any) -> None:
    """The mirror of the local job runs on 127.0.0.1; `flaky` restarts a replica; `broken` fails."""
    await cluster.create_job(tfjob(JOB, ps=1, worker=2, restart='ExitCode'))
    await cluster.create_job(tfjob('flaky', worker=1, restart='ExitCode'))
    await cluster.create_job(tfjob('broken', worker=1))
    pods = {JOB: [f'{JOB}-ps-0', f'{JOB}-worker-0', f'{JOB}-worker-1'], 'flaky': ['flaky-worker-0'],
            'broken': ['broken-worker-0']}
    for job, names in pods.items():
        await cluster.wait_for(lambda job=job, names=names: sorted(cluster.pods(job)) == names, what=f'{job} pods')
        for name in names:
            await cluster.set_pod(name, 'Running')
            await cluster._patch_status(f'/api/v1/namespaces/{NS}/pods/{name}/status', {'podIP': '127.0.0.1'}, False)
    await cluster.wait_for(lambda: cluster.conditions(JOB).get('Running') == 'True', what='Running')
    await cluster.set_pod('flaky-worker-0', 'Failed', exit_code=137, reason='OOMKilled')
    await cluster.set_pod('broken-worker-0', 'Failed', exit_code=1)
    await cluster.wait_for(lambda: cluster.conditions('broken').get('Failed') == 'True', what='broken failed')
    await cluster.wait_for(lambda: cluster.status('flaky').get('restarts', 0) >= 1, what='flaky restarted')


def aligned(series: dict[str, Any], start: float, n: int) -> list[float | None]:
    """A range-query series as one value per second from ``start`` (None where it had none)."""
    out: list[float | None] = [None] * n
    for stamp, value in series['values']:
        index = round(float(stamp) - start)
        if 0 <= index < n:
            out[index] = float(value)
    return out


async def recorded_steps(prom: PromAPI, start: float) -> tuple[list[dict[str, str]], list[list[float | None]]]:
    """The workers' global step as Prometheus recorded it since ``start``, one value per second."""
    end = time.time()
    data = await prom.get('/query_range', query=f'tensorfleet_train_global_step{{job_name="{JOB}", '
                          'replica_type="worker"}', start=f'{start:.3f}', end=f'{end:.3f}', step='1')
    n = int(end - start) + 1
    return [s['metric'] for s in data['result']], [aligned(s, start, n) for s in data['result']]


def last_change(values: list[float | None]) -> int:
    """The index from which the series holds its final value (the first frozen sample)."""
    index = 0
    for i in range(1, len(values)):
        if values[i] is not None and values[i] != values[i - 1]:
            index = i
    return index


def promtool_case(tmp: Path, metrics: list[dict[str, str]], recorded: list[list[float | None]], first_flat: int,
                  last: int) -> Path:
    """A `promtool test rules` file for the shipped rules: the recorded series, one second per minute."""
    hang = next(r for r in rules() if r.get('alert') == 'TFJobHung')
    labels = {'namespace': NS, 'job_name': JOB}
    summary = hang['annotations']['summary'].replace('{{ $labels.namespace }}', NS) \
        .replace('{{ $labels.job_name }}', JOB)
    inputs = []
    for m, values in zip(metrics, recorded):
        selector = ', '.join(f'{k}="{m[k]}"' for k in ('namespace', 'job_name', 'replica_type', 'replica_index'))
        inputs.append({'series': f'tensorfleet_train_global_step{{{selector}}}',
                       'values': ' '.join('_' if v is None else f'{v:g}' for v in values[:last + 1])})
    case = {'rule_files': [str(RULES)], 'evaluation_interval': '1m', 'tests': [{
        'name': 'TFJobHung on the global step a real Prometheus recorded (1 s recorded = 1 min here)',
        'interval': '1m', 'input_series': inputs,
        'alert_rule_test': [
            {'eval_time': f'{first_flat}m', 'alertname': 'TFJobHung', 'exp_alerts': []},
            {'eval_time': f'{last}m', 'alertname': 'TFJobHung', 'exp_alerts': [{
                'exp_labels': {**hang['labels'], **labels},
                'exp_annotations': {'summary': summary, 'description': hang['annotations']['description']}}]},
        ]}]}
    path = tmp / 'recorded_hang_test.yaml'
    path.write_text(yaml.safe_dump(case, width=1 << 20))
    return path


async def test_a_real_prometheus_answers_every_panel_and_rule_and_sees_the_hang(cluster, processes, tmp_path):
    prometheus, promtool = tool('prometheus'), tool('promtool')
    operator_port, web_port = free_ports(2)
    trainer_metrics, pids = start_local_job(processes, tmp_path)
    processes.pids.append(pids['ps-0'])                # continued before everything is stopped
    config = prometheus_config(tmp_path, trainer_metrics, operator_port)
    processes.start([prometheus, f'--config.file={config}', f'--storage.tsdb.path={tmp_path / "tsdb"}',
                     f'--web.listen-address=127.0.0.1:{web_port}'], tmp_path / 'prometheus.log')
    controller = await cluster.start(metrics_port=operator_port, metrics_address='127.0.0.1',
                                     trainer_metrics_port=trainer_metrics['worker-0'], progress_interval_seconds=0.5)
    async with aiohttp.ClientSession() as session:
        prom = PromAPI(session, web_port)
        # The operator's series are scraped before anything happens, so rate() sees every change.
        await prom.until('tensorfleet_operator_reconcile_errors_total', 'operator scraped')
        await drive_operator_jobs(cluster)
        await prom.until(f'tensorfleet_train_global_step{{job_name="{JOB}", replica_type="worker"}} > 0',
                         'training', lambda r: len(r) == 2)
        start = time.time()

        # Every panel query and every recording rule returns a finite value.
        panels = [(title, concrete(expr)) for title, expr in dashboard_exprs()]
        recording = [(r['record'], r['expr']) for r in rules() if 'record' in r]
        assert len(panels) >= 20 and len(recording) >= 7
        pending = dict(panels + recording)
        deadline = time.monotonic() + BOUND
        while pending and time.monotonic() < deadline:
            for name, expr in list(pending.items()):
                result = await prom.query(expr)
                names = metric_names(expr)
                if names <= GPU_ONLY and not result:
                    del pending[name]            # only on a GPU: checked below that the GPU is absent
                elif result and (finite(result) or names & NO_OBSERVATIONS_ASYNC):
                    del pending[name]
            await asyncio.sleep(0.5)
        assert not pending, f'no data from: {pending}'
        # The ps moves bytes both ways; the workers' calls name the ps as their peer (docs/metrics.md).
        bandwidth = await prom.query(f'sum by (direction) (rate(tensorfleet_rpc_bytes_total{{job_name="{JOB}", '
                                     f'replica_type="ps"}}[{RATE_INTERVAL}]))')
        assert {r['metric']['direction'] for r in bandwidth if float(r['value'][1]) > 0} == {'sent', 'received'}
        assert await prom.query('tensorfleet_rpc_requests_total{replica_type="worker", peer="ps:0", '
                                'direction="sent"} > 0')
        gpu = await prom.query('tensorfleet_gpu_memory_limit_bytes')
        assert gpu == [] or all(await prom.query(e) for t, e in panels if metric_names(e) <= GPU_ONLY)

        # Alert expressions evaluate; the quiet ones are empty and every series they read exists.
        for rule in (r for r in rules() if 'alert' in r):
            result = await prom.query(rule['expr'])        # evaluates (PromAPI asserts status success)
            if rule['alert'] == 'TFJobHung':
                assert result == [], result                # the step moves
            elif rule['alert'] not in QUIET:               # the failed job of this run
                assert rule['alert'] == 'TFJobFailed' and result[0]['metric']['reason'] == 'ReplicaFailed'
            for name in metric_names(rule['expr']):
                assert await prom.query(f'count({name})'), f'{rule["alert"]} reads {name}, which has no series'
        firing = await prom.query('ALERTS{alertstate="firing"}')
        assert {a['metric']['alertname'] for a in firing} <= {'TFJobFailed'}, firing

        # The operator's progress columns read the real worker 0.
        await cluster.wait_for(lambda: cluster.status(JOB).get('progress', {}).get('globalStep', 0) > 0,
                               timeout=BOUND, what='status.progress')

        # The step has moved for a while (so the recorded series has a moving part) ...
        deadline = time.monotonic() + BOUND
        while True:
            metrics, recorded = await recorded_steps(prom, start)
            if len(recorded) == 2 and all(len({v for v in values if v is not None}) >= 6 for values in recorded):
                break
            assert time.monotonic() < deadline, f'the recorded step did not move 6 times: {recorded}'
            await asyncio.sleep(0.5)
        # ... then hangs: the ps stops; the workers serve metrics, their step does not move.
        os.kill(pids['ps-0'], signal.SIGSTOP)
        stopped = time.time()
        fired = await prom.until('ALERTS{alertname="TFJobHung", alertstate="firing", windows="seconds"}',
                                 'the scaled hang alert')
        assert fired[0]['metric']['job_name'] == JOB and fired[0]['metric']['namespace'] == NS
        frozen = await prom.query(f'max(tensorfleet_train_global_step{{job_name="{JOB}", replica_index="0", '
                                  'replica_type="worker"})')
        step = int(float(frozen[0]['value'][1]))
        await cluster.wait_for(lambda: cluster.status(JOB)['progress']['globalStep'] == step, timeout=BOUND,
                               what=f'status.progress.globalStep == {step}, the frozen step Prometheus has')

        # The unmodified alert, in promtool, on the series Prometheus recorded since training began
        # (aligned by time stamp).
        while True:
            metrics, recorded = await recorded_steps(prom, start)
            first_flat = max(last_change(v) for v in recorded) if recorded else 0
            if len(recorded) == 2 and len(recorded[0]) - first_flat >= 14:
                break
            assert time.time() - stopped < BOUND, f'no 14 s of frozen steps recorded: {recorded}'
            await asyncio.sleep(1)
        assert first_flat >= 3, f'the step moved for too short a time to tell: {recorded}'
        last = len(recorded[0]) - 1
        case = promtool_case(tmp_path, metrics, recorded, first_flat, last)
        proc = await asyncio.to_thread(subprocess.run, [promtool, 'test', 'rules', str(case)],
                                       capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr + case.read_text()
        assert controller.metrics.reconcile_errors._value.get() == 0
