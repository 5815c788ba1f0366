"""Operator scale bench: one 1 ps + 200 worker TFJob, then 100 small TFJobs at once.

The API is the in-process emulator from tests/operator (kmock + TFJobEmulator);
the operator is the real CLI (`python -m tensorfleet_operator`) in a child
process, logged in through a temporary kubeconfig, so its RSS is its own.

Prints absolute figures and their ratio to the targets:
  * all 402 children (201 pods + 201 services) of the large job within 5 s;
  * operator RSS under 150 MB.

Usage: .venv/bin/python bench/operator_scale.py [--workers 200] [--jobs 100]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tests' / 'operator'))

import kmock  # noqa: E402
from kube_emulator import TFJobEmulator, declare_resources  # noqa: E402

TARGET_SECONDS = 5.0
TARGET_RSS_MB = 150.0
NS = 'bench'


def tfjob(name: str, ps: int, workers: int) -> dict:
    tmpl = {'spec': {'containers': [{'name': 'tensorflow', 'image': 'tensorfleet/trainer:latest',
                                     'resources': {'requests': {'cpu': 1}}}]}}
    specs = {'Worker': {'replicas': workers, 'template': tmpl}}
    if ps:
        specs['PS'] = {'replicas': ps, 'template': tmpl}
    return {'apiVersion': 'tensorfleet.io/v1', 'kind': 'TFJob',
            'metadata': {'name': name, 'namespace': NS}, 'spec': {'tfReplicaSpecs': specs}}


def count(emulator: TFJobEmulator, plural: str) -> int:
    return sum(1 for key in list(emulator.objects)
               if key[0].plural == plural and key[1] == NS and not emulator.objects[key].deleted)


def rss_mb(pid: int) -> tuple[float, float]:
    fields = {}
    for line in pathlib.Path(f'/proc/{pid}/status').read_text().splitlines():
        key, _, value = line.partition(':')
        fields[key] = value.strip()
    return int(fields['VmRSS'].split()[0]) / 1024, int(fields['VmHWM'].split()[0]) / 1024


async def wait_children(emulator: TFJobEmulator, expected: int, started: float, timeout: float = 120) -> float:
    while True:
        if count(emulator, 'pods') + count(emulator, 'services') >= expected:
            return time.perf_counter() - started
        if time.perf_counter() - started > timeout:
            raise SystemExit(f'timeout: {count(emulator, "pods")} pods, {count(emulator, "services")} services')
        await asyncio.sleep(0.005)


async def main(workers: int, jobs: int) -> None:
    async with TFJobEmulator() as emulator, kmock.Server(emulator):
        declare_resources(emulator)
        url = str(emulator.url).rstrip('/')
        kubeconfig = tempfile.NamedTemporaryFile('w', suffix='.yaml', delete=False)
        kubeconfig.write(f"""apiVersion: v1
kind: Config
clusters: [{{name: emu, cluster: {{server: '{url}'}}}}]
users: [{{name: emu, user: {{}}}}]
contexts: [{{name: emu, context: {{cluster: emu, user: emu, namespace: {NS}}}}}]
current-context: emu
""")
        kubeconfig.close()
        env = {**os.environ, 'KUBECONFIG': kubeconfig.name, 'PYTHONPATH': str(ROOT / 'operator')}
        proc = subprocess.Popen([sys.executable, '-m', 'tensorfleet_operator', '--namespace', NS,
                                 '--metrics-port', '0', '--liveness', ''], env=env,
                                stdout=subprocess.DEVNULL, stderr=open(os.environ.get("BENCH_LOG", os.devnull), "w"))
        try:
            await asyncio.sleep(3)      # let kopf start its watches
            if proc.poll() is not None:
                raise SystemExit("operator exited; set BENCH_LOG=file to see its log")
            idle_rss, _ = rss_mb(proc.pid)

            children = 2 * (1 + workers)
            started = time.perf_counter()
            async with emulator.post(f'/apis/tensorfleet.io/v1/namespaces/{NS}/tfjobs',
                                     json=tfjob('large', 1, workers)) as resp:
                assert resp.status < 300, await resp.text()
            large = await wait_children(emulator, children, started)
            large_rss, _ = rss_mb(proc.pid)

            small_children = jobs * 2 * 3     # 1 ps + 2 workers, pod + service each
            started = time.perf_counter()
            await asyncio.gather(*(emulator.post(f'/apis/tensorfleet.io/v1/namespaces/{NS}/tfjobs',
                                                 json=tfjob(f'small-{i}', 1, 2)) for i in range(jobs)))
            small = await wait_children(emulator, children + small_children, started)
            await asyncio.sleep(2)      # let status updates settle before the last RSS reading
            rss, peak = rss_mb(proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
            os.unlink(kubeconfig.name)

    print(f'operator scale bench (emulated API in-process, operator CLI in a child process, {os.cpu_count()} cores)')
    print(f'  large job 1 ps + {workers} workers: {children} children in {large:.2f} s '
          f'(target {TARGET_SECONDS:.0f} s, ratio {large / TARGET_SECONDS:.2f})')
    print(f'  {jobs} small jobs (1 ps + 2 workers): {small_children} children in {small:.2f} s')
    print(f'  operator RSS: idle {idle_rss:.0f} MB, after large job {large_rss:.0f} MB, '
          f'end {rss:.0f} MB, peak {peak:.0f} MB (target {TARGET_RSS_MB:.0f} MB, ratio {peak / TARGET_RSS_MB:.2f})')


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--workers', type=int, default=200)
    parser.add_argument('--jobs', type=int, default=100)
    args = parser.parse_args()
    asyncio.run(main(args.workers, args.jobs))
