"""The operator finds the API as client-go does (issue 27): the process run with only the in-cluster
environment (KUBERNETES_SERVICE_HOST/PORT, IPv4 and IPv6, a service-account token and CA in a
directory) against the emulated API over HTTPS reconciles a TFJob and follows the token as it
rotates; an explicit kubeconfig wins; an unreachable endpoint keeps readiness false and the
start-up error names the endpoint, where it came from and the cause; readiness follows the API
connection and liveness fails when the event loop is stuck."""
import asyncio
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from op_builders import tfjob
from tensorfleet_operator.cluster_login import ApiLogin, InCluster, LoginProblem, choose_login, join_host_port
from tls_emulator import https_listener, ipv6_loopback, make_ca, service_account_dir

pytestmark = pytest.mark.filterwarnings('ignore:read_binary is deprecated:DeprecationWarning')
ROOT = Path(__file__).resolve().parents[2]
ORIGIN = 'KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT'


def _free_port(host='127.0.0.1'):
    with socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
    except OSError:
        return None, {}


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(('KUBERNETES_', 'KUBECONFIG', 'TENSORFLEET_'))}
    env.update(HOME=str(tmp_path), PYTHONPATH=str(ROOT / 'operator'), **extra)   # no ~/.kube/config there
    return env


class OperatorProcess:
    """``python -m tensorfleet_operator`` with its probes on a free port and stderr in a file."""

    def __init__(self, tmp_path, env, *args):
        self.live = _free_port()
        self.log = tmp_path / f'operator-{self.live}.log'
        self.args = ['--namespace', 'ns', '--metrics-port', '0', '--liveness', f'http://127.0.0.1:{self.live}/healthz',
                     *args]
        self.env, self.proc = env, None

    async def __aenter__(self):
        self._log = self.log.open('wb')
        self.proc = await asyncio.create_subprocess_exec(sys.executable, '-m', 'tensorfleet_operator', *self.args,
                                                         env=self.env, stdout=self._log, stderr=self._log)
        return self

    async def probe(self, path):
        return await asyncio.to_thread(_get, f'http://127.0.0.1:{self.live}{path}')

    async def until(self, path, status, timeout=60.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got, body = await self.probe(path)
            if got == status:
                return body
            assert self.proc.returncode is None, self.text()
            await asyncio.sleep(0.1)
        raise AssertionError(f'{path} never answered {status}: {self.text()[-3000:]}')

    async def stop(self):
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.proc.wait(), 20)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        return self.proc.returncode

    def text(self):
        return self.log.read_text(errors='replace')

    async def __aexit__(self, *exc):
        await self.stop()
        self._log.close()


@pytest.fixture(scope='module')
def certs(tmp_path_factory):
    return make_ca(tmp_path_factory.mktemp('pki'))


@pytest.mark.parametrize('host', ['127.0.0.1', '::1'])
async def test_the_process_reconciles_with_only_the_in_cluster_environment(cluster, certs, tmp_path, host):
    if host == '::1' and not ipv6_loopback():
        pytest.skip('no IPv6 loopback here')
    sa = service_account_dir(tmp_path / 'sa', certs['ca'], 'token-1')
    async with https_listener(cluster.kmock, certs, host) as port:
        env = _env(tmp_path, KUBERNETES_SERVICE_HOST=host, KUBERNETES_SERVICE_PORT=str(port),
                   TENSORFLEET_SERVICE_ACCOUNT_DIR=str(sa))
        async with OperatorProcess(tmp_path, env) as op:
            assert (await op.until('/readyz', 200)) == {'ready': True, 'reason': 'the API answers'}
            await cluster.create_job(tfjob('incluster', worker=2))
            await cluster.wait_for(lambda: len(cluster.pods('incluster')) == 2, timeout=30, what='pods')
            await cluster.wait_for(lambda: cluster.conditions('incluster') == {'Created': 'True'})
            status, body = await op.probe('/healthz')
            assert status == 200 and body['jobs'] >= 1
            # The kubelet rotates the token and the API server stops accepting the old one.
            (sa / 'token').write_text('token-2\n')
            cluster.kmock.revoked_tokens = frozenset({'token-1'})
            await cluster.create_job(tfjob('rotated', worker=1))
            await cluster.wait_for(lambda: len(cluster.pods('rotated')) == 1, timeout=30, what='pods, new token')
            assert await op.stop() == 0, op.text()[-3000:]
    used = {token for token, _ in cluster.kmock.tokens}
    assert used == {'token-1', 'token-2'}, used            # the file's tokens only, nothing else
    server = f'https://{join_host_port(host, str(port))}'
    assert f'API connection: {ORIGIN} and the service account in {sa}' in op.text()
    assert server.startswith('https://[::1]:') == (host == '::1')


@pytest.mark.parametrize('how', ['flag', 'env'])
async def test_an_explicit_kubeconfig_wins_over_the_in_cluster_config(cluster, certs, tmp_path, how):
    kubeconfig = tmp_path / 'kubeconfig'
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: emu, cluster: {{server: '{cluster.url}'}}}}]
users: [{{name: emu, user: {{token: from-kubeconfig}}}}]
contexts: [{{name: emu, context: {{cluster: emu, user: emu}}}}]
current-context: emu
""")
    sa = service_account_dir(tmp_path / 'sa', certs['ca'], 'sa-token')
    env = _env(tmp_path, KUBERNETES_SERVICE_HOST='127.0.0.1', KUBERNETES_SERVICE_PORT=str(_free_port()),
               TENSORFLEET_SERVICE_ACCOUNT_DIR=str(sa), **({'KUBECONFIG': str(kubeconfig)} if how == 'env' else {}))
    args = ['--kubeconfig', str(kubeconfig)] if how == 'flag' else []
    async with OperatorProcess(tmp_path, env, *args) as op:
        await op.until('/readyz', 200)
        await cluster.create_job(tfjob('kc', worker=1))
        await cluster.wait_for(lambda: len(cluster.pods('kc')) == 1, timeout=30, what='pods')
    assert {token for token, _ in cluster.kmock.tokens} == {'from-kubeconfig'}
    assert f'API connection: kubeconfig {kubeconfig}' in op.text()


async def test_an_unreachable_endpoint_keeps_readiness_false_and_is_named(certs, tmp_path):
    port = _free_port()          # nothing listens there: connection refused
    sa = service_account_dir(tmp_path / 'sa', certs['ca'], 'token')
    env = _env(tmp_path, KUBERNETES_SERVICE_HOST='127.0.0.1', KUBERNETES_SERVICE_PORT=str(port),
               TENSORFLEET_SERVICE_ACCOUNT_DIR=str(sa))
    async with OperatorProcess(tmp_path, env, '--api-timeout', '60') as op:
        body = await op.until('/readyz', 503)
        for _ in range(15):                     # it stays so (1.5 s, through retries)
            status, body = await op.probe('/readyz')
            assert status == 503 and body['ready'] is False, body
            await asyncio.sleep(0.1)
        assert f'https://127.0.0.1:{port} (from {ORIGIN}' in body['reason'] and 'cannot connect' in body['reason']
        assert (await op.probe('/healthz'))[0] == 200         # alive: only not ready
        assert await op.stop() == 0                            # SIGTERM while waiting: a clean exit
    warning = next(line for line in op.text().splitlines() if 'cannot use the Kubernetes API' in line)
    assert f'https://127.0.0.1:{port}' in warning and 'retrying in' in warning


@pytest.mark.parametrize('problem, cause', [
    ('closed port', 'cannot connect'),
    ('other CA', 'TLS: the server certificate is not trusted'),
    ('revoked token', 'HTTP 401 (the credentials are not accepted)'),
])
async def test_the_start_up_error_names_endpoint_origin_and_cause(cluster, certs, tmp_path, problem, cause):
    ca = make_ca(tmp_path / 'other')['ca'] if problem == 'other CA' else certs['ca']
    sa = service_account_dir(tmp_path / 'sa', ca, 'token')
    cluster.kmock.revoked_tokens = frozenset({'token'} if problem == 'revoked token' else ())
    async with https_listener(cluster.kmock, certs) as port:
        port = _free_port() if problem == 'closed port' else port
        env = _env(tmp_path, KUBERNETES_SERVICE_HOST='127.0.0.1', KUBERNETES_SERVICE_PORT=str(port),
                   TENSORFLEET_SERVICE_ACCOUNT_DIR=str(sa))
        async with OperatorProcess(tmp_path, env, '--api-timeout', '1') as op:
            await asyncio.wait_for(op.proc.wait(), 60)
    assert op.proc.returncode == 1
    last = op.text().strip().splitlines()[-1]
    assert last.startswith(f'tensorfleet-operator: cannot use the Kubernetes API at https://127.0.0.1:{port} '
                           f'(from {ORIGIN} and the service account in {sa}): GET /apis/tensorfleet.io/v1/'
                           'namespaces/ns/tfjobs: '), last
    assert cause in last and '(gave up after 1 s; --api-timeout)' in last and 'Traceback' not in op.text()


def test_choose_login_follows_client_go_and_controller_runtime(tmp_path):
    sa = tmp_path / 'sa'
    sa.mkdir()
    (sa / 'token').write_text('t')
    home = tmp_path / 'home-config'
    env = {'KUBERNETES_SERVICE_HOST': 'fd00::1', 'KUBERNETES_SERVICE_PORT': '6443'}
    got = choose_login(None, env, str(sa), str(home))
    assert got.in_cluster == InCluster('fd00::1', '6443', str(sa)) and got.kubeconfig is None
    assert got.in_cluster.server == 'https://[fd00::1]:6443'
    assert choose_login(None, {**env, 'KUBERNETES_SERVICE_HOST': '10.0.0.1'}, str(sa),
                        str(home)).in_cluster.server == 'https://10.0.0.1:6443'
    kubeconfig = tmp_path / 'kc'
    kubeconfig.write_text('apiVersion: v1\n')
    assert choose_login(str(kubeconfig), env, str(sa), str(home)) == ApiLogin(
        origin=f'kubeconfig {kubeconfig}', kubeconfig=str(kubeconfig))          # explicit wins
    with pytest.raises(LoginProblem, match='does not exist'):
        choose_login(str(tmp_path / 'missing'), env, str(sa), str(home))
    (sa / 'token').unlink()
    with pytest.raises(LoginProblem) as err:
        choose_login(None, env, str(sa), str(home))
    assert f'{sa}/token does not exist' in str(err.value) and 'https://[fd00::1]:6443' in str(err.value)
    with pytest.raises(LoginProblem, match='KUBERNETES_SERVICE_HOST is set but KUBERNETES_SERVICE_PORT is not'):
        choose_login(None, {'KUBERNETES_SERVICE_HOST': 'h'}, str(sa), str(home))
    home.write_text('apiVersion: v1\n')                    # ~/.kube/config is the last resort
    assert choose_login(None, env, str(sa), str(home)) == ApiLogin(origin=f'kubeconfig {home}')
    assert join_host_port('[::1]', '443') == '[::1]:443' and join_host_port('h', '1') == 'h:1'


async def test_readiness_follows_the_api_connection_after_start(cluster):
    port = _free_port()
    await cluster.start(liveness_endpoint=f'http://127.0.0.1:{port}/healthz', api_check_seconds=0.1)
    probe = f'http://127.0.0.1:{port}/readyz'
    await cluster.wait_for(lambda: _get(probe)[0] == 200, timeout=30, what='ready')
    cluster.kmock.unavailable = True                       # an outage of the API server
    await cluster.wait_for(lambda: _get(probe)[0] == 503, timeout=30, what='not ready')
    assert 'HTTP 503' in _get(probe)[1]['reason'] and cluster.url in _get(probe)[1]['reason']
    cluster.kmock.unavailable = False
    await cluster.wait_for(lambda: _get(probe)[0] == 200, timeout=30, what='ready again')
    await cluster.create_job(tfjob('after', worker=1))     # kopf came through it
    await cluster.wait_for(lambda: len(cluster.pods('after')) == 1, what='pods after the outage')


async def test_liveness_fails_while_the_event_loop_is_stuck(cluster):
    port = _free_port()
    await cluster.start(liveness_endpoint=f'http://127.0.0.1:{port}/healthz', liveness_timeout_seconds=0.3)
    url = f'http://127.0.0.1:{port}/healthz'
    assert (await asyncio.to_thread(_get, url))[0] == 200
    answers = []
    probe = threading.Thread(target=lambda: (time.sleep(0.1), answers.append(_get(url))))
    probe.start()
    time.sleep(1.5)              # the operator's event loop is wedged (this test blocks it on purpose)
    await asyncio.to_thread(probe.join, 10)
    assert answers and answers[0][0] == 503, answers
    assert answers[0][1] == {'alive': False, 'reason': 'the event loop did not answer within 0.3 s'}
    assert (await asyncio.to_thread(_get, url))[0] == 200


async def test_the_token_file_is_read_again_as_it_rotates(cluster, certs, tmp_path):
    """Without a 401: the operator's client and kopf's connections take the new token within the
    refresh period (client-go re-reads its token file every minute; here 0.2 s)."""
    sa = service_account_dir(tmp_path / 'sa', certs['ca'], 'first')
    async with https_listener(cluster.kmock, certs) as port:
        login = ApiLogin(origin='test', in_cluster=InCluster('127.0.0.1', str(port), str(sa)))
        await cluster.start(api_login=login, token_refresh_seconds=0.2)
        await cluster.create_job(tfjob('a', worker=1))
        await cluster.wait_for(lambda: len(cluster.pods('a')) == 1, what='pods')
        (sa / 'token').write_text('second')
        await asyncio.sleep(0.5)
        await cluster.create_job(tfjob('b', worker=1))
        await cluster.wait_for(lambda: len(cluster.pods('b')) == 1, what='pods')
        tokens = cluster.kmock.tokens
        await cluster.wait_for(lambda: tokens[('second', True)] > 0, what='a watch with the new token')
        assert tokens[('second', False)] > 0 and cluster.kmock.unauthorized == 0
        await cluster.stop()
