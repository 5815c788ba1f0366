"""kubeclient.py: credentials. Client certificates given as data (PEM, or base64 as in a
kubeconfig) are loaded and leave no file behind."""
import base64
import shutil
import ssl
import subprocess
import tempfile

import pytest

from tensorfleet_operator.kubeclient import Credentials, KubeClient


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
