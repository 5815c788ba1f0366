"""The numbered examples in deploy/examples run end to end through `tensorfleet run` (reduced steps)."""
import re

import yaml

from local_helpers import ROOT, read_yaml, tensorfleet, write_job

EXAMPLES = ROOT / 'deploy' / 'examples'


def with_args(path, tmp_path, **flags):
    """The example with some of its flags changed (``steps=100`` sets ``--steps 100``)."""
    body = yaml.safe_load(path.read_text())
    for spec in body['spec']['tfReplicaSpecs'].values():
        container = spec['template']['spec']['containers'][0]
        args = container['args']
        for flag, value in flags.items():
            option = '--' + flag.replace('_', '-')
            if option in args:  # (a ps takes no training flags)
                args[args.index(option) + 1] = str(value)
    return write_job(tmp_path, body)


def test_01_single_worker_trains_mnist(tmp_path):
    job = with_args(EXAMPLES / '01-single-worker.yaml', tmp_path, steps=100, checkpoint_dir=tmp_path / 'ckpt')
    run_dir = tmp_path / 'run'
    proc = tensorfleet('run', job, '--run-dir', run_dir, '--no-tui', timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    accuracy = float(re.search(r'\[worker-0\] test accuracy: ([0-9.]+)', proc.stdout).group(1))
    assert accuracy > 0.8           # a softmax regression after 100 steps (TF's tutorial: ~92% after 1000)
    assert (f'tensorfleet: mnist-softmax-worker-0: workingDir /opt/tensorfleet is not on this machine '
            f'(a path in the image); running in {ROOT}') in proc.stdout
    assert (tmp_path / 'ckpt' / 'model.ckpt-100.index').exists()
    status = read_yaml(run_dir / 'status.yaml')['status']
    assert status['reason'] == 'Succeeded' and status['replicaStatuses']['Worker']['succeeded'] == 1
    assert 'test accuracy' in (run_dir / 'worker-0.log').read_text()


def test_02_ps_worker_async_trains_mnist_and_releases_the_ps(tmp_path):
    """1 ps + 2 workers through the launcher: the chief reports its test accuracy, every process exits 0."""
    job = with_args(EXAMPLES / '02-ps-worker-async.yaml', tmp_path, steps=600, checkpoint_dir=tmp_path / 'ckpt')
    run_dir = tmp_path / 'run'
    proc = tensorfleet('run', job, '--run-dir', run_dir, '--no-tui', timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    accuracy = float(re.search(r'\[worker-0\] .* test global_step=\d+ loss=\S+ accuracy=([0-9.]+)',
                               proc.stdout).group(1))
    assert accuracy > 0.9           # an MLP after 600 global steps (the full 3000 reach ~0.97)
    assert 'released by the chief' in (run_dir / 'ps-0.log').read_text()
    status = read_yaml(run_dir / 'status.yaml')['status']
    assert status['reason'] == 'Succeeded'
    assert status['replicaStatuses']['Worker']['succeeded'] == 2
    assert status['replicaStatuses']['PS']['succeeded'] == 1
    assert (tmp_path / 'ckpt' / 'training_complete.json').exists()
