"""kubeclient.py: credentials. A 401 on the operator's own requests logs in again and retries
once; client certificates given as data leave no file behind."""
import base64
import shutil
import ssl
import subprocess
import tempfile

import kopf
import pytest

from op_builders import tfjob
from tensorfleet_operator.kubeclient import Credentials, KubeClient

pytestmark = pytest.mark.filterwarnings('ignore:read_binary is deprecated:DeprecationWarning')


async def test_a_401_on_the_operators_own_request_logs_in_again_and_retries(cluster):
    token = {'value': 'old'}
    logins = []

    def login(**_):
        logins.append(token['value'])
        return kopf.ConnectionInfo(server=cluster.url, token=token['value'], insecure=True)

    controller = await cluster.start(login=login)
    await cluster.create_job(tfjob('before', worker=1))
    await cluster.wait_for(lambda: 'before-worker-0' in cluster.pods(), what='pod with the first token')
    # The token expires: the API server rejects it; logging in again yields a new one. kopf's own
    # watch streams are already open, so only the operator's own requests see the 401.
    token['value'] = 'new'
    cluster.kmock.revoked_tokens = frozenset({'old'})
    await cluster.create_job(tfjob('after', worker=1))
    await cluster.wait_for(lambda: 'after-worker-0' in cluster.pods(), what='pod after the 401')
    assert cluster.kmock.unauthorized >= 1
    assert logins[-1] == 'new' and set(logins[:-1]) == {'old'}    # run_operator's API check logs in first
    assert controller.client.creds.token == 'new'
    errors = controller.metrics.registry.get_sample_value('tensorfleet_operator_reconcile_errors_total')
    assert errors == 0, 'the 401 reached the reconcile instead of being retried'


async def test_a_401_with_nothing_new_from_the_login_is_raised_after_one_try(cluster):
    from tensorfleet_operator.kubeclient import ApiError
    cluster.kmock.revoked_tokens = frozenset({'old'})
    refreshes = []

    async def refresh():
        refreshes.append(1)
        return Credentials(server=cluster.url, token='old')      # the same: nothing to retry with
    client = KubeClient(Credentials(server=cluster.url, token='old'), refresh=refresh)
    try:
        with pytest.raises(ApiError) as err:
            await client.list('/api/v1/namespaces/ns/pods')
        assert err.value.status == 401 and refreshes == [1] and cluster.kmock.unauthorized == 1
    finally:
        await client.close()


def _openssl(*args, cwd):
    subprocess.run(['openssl', *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which('openssl') is None, reason='needs the openssl CLI to make a certificate')
@pytest.mark.parametrize('encoding', ['pem', 'base64'])
async def test_client_certificate_data_leaves_no_file_behind(tmp_path, monkeypatch, encoding):
    keys = tmp_path / 'keys'
    keys.mkdir()
    _openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem',
             '-days', '1', '-subj', '/CN=tensorfleet-test', cwd=keys)
    _openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'other.pem', '-out', 'o.pem',
             '-days', '1', '-subj', '/CN=other', cwd=keys)
    scratch = tmp_path / 'tmp'
    scratch.mkdir()
    monkeypatch.setattr(tempfile, 'tempdir', str(scratch))

    def data(name):      # kubeconfig's client-certificate-data/client-key-data are base64 of the PEM
        raw = (keys / name).read_bytes()
        return raw if encoding == 'pem' else base64.b64encode(raw).decode()

    creds = Credentials(server='https://127.0.0.1:6443', token='t', ca_data=data('c.pem'),
                        certificate_data=data('c.pem'), private_key_data=data('k.pem'))
    client = KubeClient(creds)
    session = await client._get_session()
    assert not session.closed
    assert list(scratch.iterdir()) == [], 'certificate or key data left on disk'
    await client.close()
    assert list(scratch.iterdir()) == []
    # The pair really is loaded: a key that does not match the certificate is refused.
    bad = KubeClient(Credentials(server='https://127.0.0.1:6443', certificate_data=data('c.pem'),
                                 private_key_data=data('other.pem')))
    with pytest.raises(ssl.SSLError):
        await bad._get_session()
    await bad.close()
    assert list(scratch.iterdir()) == []
