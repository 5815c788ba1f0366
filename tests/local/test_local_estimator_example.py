"""deploy/examples/14-estimator-train-and-evaluate.yaml runs end to end through `tensorfleet run` (digits data,
300 steps instead of MNIST and 3000): chief, ps, 2 workers and the evaluator all succeed, the ps is released,
and the evaluator's last evaluation, of the final checkpoint, is in TensorBoard-readable summaries."""
import re

import yaml

from local_helpers import ROOT, read_yaml, tensorfleet, write_job

MANIFEST = ROOT / 'deploy' / 'examples' / '14-estimator-train-and-evaluate.yaml'


def test_estimator_train_and_evaluate_manifest(tmp_path):
    body = yaml.safe_load(MANIFEST.read_text())
    for spec in body['spec']['tfReplicaSpecs'].values():
        args = spec['template']['spec']['containers'][0]['args']
        args[args.index('--model-dir') + 1] = str(tmp_path / 'model')
        args[args.index('--steps') + 1] = '300'
        args += ['--data', 'digits', '--hidden-units', '32', '--save-checkpoints-steps', '100',
                 '--max-worker-delay-secs', '1']
    run_dir = tmp_path / 'run'
    proc = tensorfleet('run', write_job(tmp_path, body), '--run-dir', run_dir, '--no-tui', timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    status = read_yaml(run_dir / 'status.yaml')['status']
    assert status['reason'] == 'Succeeded'
    for rtype, n in (('Chief', 1), ('PS', 1), ('Worker', 2), ('Evaluator', 1)):
        assert status['replicaStatuses'][rtype]['succeeded'] == n, status
    assert 'The chief released this ps task' in (run_dir / 'ps-0.log').read_text()
    evaluator = (run_dir / 'evaluator-0.log').read_text()
    step = int(re.search(r'Exiting evaluation, global_step=(\d+) >= train max_steps=300', evaluator).group(1))
    accuracy = float(re.search(r'final evaluation: global_step=\d+ accuracy=([0-9.]+)', evaluator).group(1))
    assert accuracy > 0.9

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(tmp_path / 'model' / 'eval_test'))
    acc.Reload()
    last = acc.Scalars('accuracy')[-1]
    assert last.step == step and abs(last.value - accuracy) < 1e-4
