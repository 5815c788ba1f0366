"""Operator scale bench: one 1 ps + 500 worker TFJob, then 100 small TFJobs at once.

The API is the in-process emulator from tests/operator (kmock + TFJobEmulator);
the operator is the real CLI (``tensorfleet_operator.__main__.main``) in a child
process, logged in through a temporary kubeconfig, so its RSS is its own.

It runs once per API client (``--client``): the hand-written aiohttp client
(``tensorfleet_operator/kubeclient.py``) and an adapter over kubernetes_asyncio
(the official client's async port, plain-dict path: ``ApiClient.call_api`` with
``response_type object``) that the child process swaps in, so everything but the
client is the same. Prints absolute figures, their ratio to the targets
(children of the large job within 5 s per 200 workers; operator RSS under
150 MB), and the library's time relative to the hand-written client's.

Usage: .venv/bin/python bench/operator_scale.py [--workers 500] [--jobs 100] [--client both] [--repeat 1]
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
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tests' / 'operator'))

CLIENTS = ('hand-written', 'kubernetes_asyncio')


class LibraryClient:
    """KubeClient's interface (get/list/create/merge_patch/delete, update/close) over kubernetes_asyncio."""

    def __init__(self, creds: Any, max_in_flight: int = 32, refresh: object = None) -> None:
        from kubernetes_asyncio import client as kclient

        from tensorfleet_operator.kubeclient import ApiError
        self._k, self._api_error = kclient, ApiError
        self._limit = asyncio.Semaphore(max_in_flight)
        self._max = max_in_flight
        self._make(creds)

    def _make(self, creds: Any) -> None:
        cfg = self._k.Configuration(host=creds.server.rstrip('/'))
        cfg.verify_ssl = not creds.insecure
        cfg.ssl_ca_cert = creds.ca_path
        cfg.cert_file, cfg.key_file = creds.certificate_path, creds.private_key_path
        cfg.connection_pool_maxsize = self._max
        if creds.token:
            cfg.api_key = {'BearerToken': creds.token}
            cfg.api_key_prefix = {'BearerToken': creds.scheme or 'Bearer'}
        self.api = self._k.ApiClient(cfg)

    async def update(self, creds: Any) -> None:
        await self.api.close()
        self._make(creds)

    async def close(self) -> None:
        await self.api.close()

    async def _call(self, method: str, path: str, body: object = None, query: list | None = None,
                    content_type: str | None = None) -> Any:
        headers = {'Accept': 'application/json'}
        if content_type:
            headers['Content-Type'] = content_type
        async with self._limit:
            try:
                return await self.api.call_api(
                    path, method, query_params=query or [], header_params=headers, body=body,
                    response_types_map={200: 'object', 201: 'object', 202: 'object'},
                    auth_settings=['BearerToken'], _return_http_data_only=True)
            except self._k.ApiException as e:
                raise self._api_error(e.status, str(e.reason)) from None

    async def _tolerant(self, status: int, method: str, path: str, **kwargs: Any) -> bool:
        """True if the call succeeded, False if it got ``status`` (404 or 409: fine)."""
        try:
            await self._call(method, path, **kwargs)
            return True
        except self._api_error as e:
            if e.status == status:
                return False
            raise

    async def get(self, path: str) -> Any:
        try:
            return await self._call('GET', path)
        except self._api_error as e:
            if e.status == 404:
                return None
            raise

    async def list(self, path: str, label_selector: str | None = None) -> list:
        query = [('labelSelector', label_selector)] if label_selector else []
        return list((await self._call('GET', path, query=query) or {}).get('items') or [])

    async def create(self, path: str, body: dict) -> bool:
        return await self._tolerant(409, 'POST', path, body=body)

    async def merge_patch(self, path: str, body: dict) -> Any:
        return await self._call('PATCH', path, body=body, content_type='application/merge-patch+json')

    async def delete(self, path: str) -> bool:
        return await self._tolerant(404, 'DELETE', path)


def run_operator_child(client: str, argv: list[str]) -> int:
    """The child process: the operator CLI, with the library client swapped in if asked."""
    sys.path.insert(0, str(ROOT / 'operator'))
    from tensorfleet_operator import __main__ as cli
    from tensorfleet_operator import controller
    if client == 'kubernetes_asyncio':
        controller.KubeClient = LibraryClient     # type: ignore[misc,assignment]
    return cli.main(argv)


if __name__ == '__main__' and sys.argv[1:2] == ['--run-operator']:
    sys.exit(run_operator_child(sys.argv[2], sys.argv[3:]))

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


async def run_once(client: str, workers: int, jobs: int) -> dict[str, float]:
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
        proc = subprocess.Popen([sys.executable, __file__, '--run-operator', client, '--namespace', NS,
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

    return {'large': large, 'small': small, 'idle': idle_rss, 'after_large': large_rss, 'end': rss, 'peak': peak}


async def main(workers: int, jobs: int, clients: list[str], repeat: int) -> None:
    target = TARGET_SECONDS * workers / 200
    results: dict[str, list[dict[str, float]]] = {c: [] for c in clients}
    for _ in range(repeat):
        for client in clients:          # interleaved, so machine load hits both alike
            results[client].append(await run_once(client, workers, jobs))
    print(f'operator scale bench (emulated API in-process, operator CLI in a child process, '
          f'{os.cpu_count()} cores, {repeat} run(s) per client, best shown)')
    for client, runs in results.items():
        best = min(runs, key=lambda r: r['large'])
        print(f'  [{client}] large job 1 ps + {workers} workers: {2 * (1 + workers)} children in '
              f'{best["large"]:.2f} s (all runs: {", ".join(format(r["large"], ".2f") for r in runs)}; '
              f'target {target:.0f} s, ratio {best["large"] / target:.2f})')
        print(f'  [{client}] {jobs} small jobs (1 ps + 2 workers): {jobs * 6} children in '
              f'{min(r["small"] for r in runs):.2f} s')
        print(f'  [{client}] operator RSS: idle {best["idle"]:.0f} MB, after large job {best["after_large"]:.0f} MB, '
              f'end {best["end"]:.0f} MB, peak {max(r["peak"] for r in runs):.0f} MB '
              f'(target {TARGET_RSS_MB:.0f} MB)')
    if len(clients) == 2:
        base, lib = (min(r[k] for r in results[c]) for c, k in ((clients[0], 'large'), (clients[1], 'large')))
        base_s, lib_s = (min(r['small'] for r in results[c]) for c in clients)
        print(f'  {clients[1]} / {clients[0]}: large job {lib / base:.2f}x, small jobs {lib_s / base_s:.2f}x '
              f'(> 1: the library is slower)')


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--workers', type=int, default=500)
    parser.add_argument('--jobs', type=int, default=100)
    parser.add_argument('--client', choices=[*CLIENTS, 'both'], default='both')
    parser.add_argument('--repeat', type=int, default=1)
    args = parser.parse_args()
    asyncio.run(main(args.workers, args.jobs, list(CLIENTS) if args.client == 'both' else [args.client],
                     args.repeat))
