"""deploy/examples/16-keras-model-to-estimator.yaml runs end to end through `tensorfleet run` (digits data, 300
steps instead of MNIST and 3000): a compiled Keras model under model_to_estimator trains in the chief, ps and 2
workers and is evaluated and exported by the evaluator; every replica succeeds, the ps is released, the
warm-start checkpoint of the Keras weights is there, the evaluator's last evaluation (Keras's `acc` metric) is
in TensorBoard-readable summaries, and the SavedModel it exported serves predictions of the trained weights."""
import re

import numpy as np
import yaml

from local_helpers import ROOT, read_yaml, tensorfleet, write_job

MANIFEST = ROOT / 'deploy' / 'examples' / '16-keras-model-to-estimator.yaml'


def test_keras_model_to_estimator_manifest(tmp_path):
    body = yaml.safe_load(MANIFEST.read_text())
    for spec in body['spec']['tfReplicaSpecs'].values():
        args = spec['template']['spec']['containers'][0]['args']
        args[args.index('--model-dir') + 1] = str(tmp_path / 'model')
        args[args.index('--steps') + 1] = '300'
        args += ['--data', 'digits', '--hidden-units', '32', '--learning-rate', '0.01',
                 '--save-checkpoints-steps', '100', '--max-worker-delay-secs', '1']
    run_dir = tmp_path / 'run'
    proc = tensorfleet('run', write_job(tmp_path, body), '--run-dir', run_dir, '--no-tui', timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    status = read_yaml(run_dir / 'status.yaml')['status']
    assert status['reason'] == 'Succeeded'
    for rtype, n in (('Chief', 1), ('PS', 1), ('Worker', 2), ('Evaluator', 1)):
        assert status['replicaStatuses'][rtype]['succeeded'] == n, status
    assert 'The chief released this ps task' in (run_dir / 'ps-0.log').read_text()
    assert 'Warm-starting' in (run_dir / 'chief-0.log').read_text()
    model_dir = tmp_path / 'model'
    assert (model_dir / 'keras' / 'keras_model.ckpt.index').is_file()

    evaluator = (run_dir / 'evaluator-0.log').read_text()
    found = re.search(r'final evaluation: global_step=(\d+) acc=([0-9.]+)', evaluator)
    assert found, evaluator[-3000:]
    step, accuracy = int(found.group(1)), float(found.group(2))
    assert step >= 300 and accuracy > 0.85
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(model_dir / 'eval_test'))
    acc.Reload()
    last = acc.Scalars('acc')[-1]
    assert last.step == step and abs(last.value - accuracy) < 1e-4

    exported = re.search(r'exported: (\S+)', evaluator).group(1)
    import tensorfleet as tf
    from tensorfleet.datasets import load_digits_arrays
    x = (load_digits_arrays()[0].reshape(-1, 64) / 16.0).astype(np.float32)[:20]
    ckpt = tf.train.latest_checkpoint(str(model_dir))
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ['serve'], exported)
        sig = meta.signature_def['serving_default']
        assert list(sig.inputs) == ['dense_input'] and list(sig.outputs) == ['dense_1']
        probs = sess.run(sig.outputs['dense_1'].name, {sig.inputs['dense_input'].name: x})
    # the same network computed with numpy from the final checkpoint's weights (no dropout at serving time)
    w = {name: tf.train.load_variable(ckpt, name) for name in ('dense/kernel', 'dense/bias', 'dense_1/kernel',
                                                               'dense_1/bias')}
    hidden = np.maximum(x @ w['dense/kernel'] + w['dense/bias'], 0)
    logits = hidden @ w['dense_1/kernel'] + w['dense_1/bias']
    want = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(probs, want / want.sum(1, keepdims=True), rtol=1e-4, atol=1e-6)
