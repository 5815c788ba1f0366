"""deploy/examples/15-export-saved-model.yaml runs end to end through `tensorfleet run` (digits data, 200 steps):
ps, chief and worker succeed, and the chief's SavedModel is in --export-dir as one numbered version that the
SavedModel loader serves (probabilities that sum to 1 for each image, classes = their argmax)."""
import os

import numpy as np
import yaml

from local_helpers import ROOT, read_yaml, tensorfleet, write_job

MANIFEST = ROOT / 'deploy' / 'examples' / '15-export-saved-model.yaml'


def test_export_saved_model_manifest(tmp_path):
    body = yaml.safe_load(MANIFEST.read_text())
    chief_args = body['spec']['tfReplicaSpecs']['Chief']['template']['spec']['containers'][0]['args']
    assert chief_args[chief_args.index('--export-dir') + 1] == '/tmp/tensorfleet-models/mnist'
    mount = body['spec']['tfReplicaSpecs']['Chief']['template']['spec']['containers'][0]['volumeMounts'][0]
    assert mount['mountPath'] == '/tmp/tensorfleet-models'  # the volume holds the export
    for spec in body['spec']['tfReplicaSpecs'].values():
        args = spec['template']['spec']['containers'][0]['args']
        if '--steps' in args:
            args[args.index('--steps') + 1] = '200'
        for flag, where in (('--export-dir', 'export'), ('--checkpoint-dir', 'ckpt')):
            if flag in args:
                args[args.index(flag) + 1] = str(tmp_path / where)
        args += ['--data', 'digits']
    run_dir = tmp_path / 'run'
    proc = tensorfleet('run', write_job(tmp_path, body), '--run-dir', run_dir, '--no-tui', timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    status = read_yaml(run_dir / 'status.yaml')['status']
    assert status['reason'] == 'Succeeded'
    for rtype in ('Chief', 'PS', 'Worker'):
        assert status['replicaStatuses'][rtype]['succeeded'] == 1, status
    versions = os.listdir(tmp_path / 'export')
    assert len(versions) == 1 and versions[0].isdigit(), versions
    assert 'exported' in (run_dir / 'chief-0.log').read_text()
    assert 'exported' not in (run_dir / 'worker-0.log').read_text()

    import tensorfleet as tf
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.loader.load(sess, ['serve'], str(tmp_path / 'export' / versions[0]))
        sig = mg.signature_def['serving_default']
        images = np.random.RandomState(0).rand(4, 64).astype(np.float32) * 16
        probs, classes = sess.run([sig.outputs['probabilities'].name, sig.outputs['classes'].name],
                                  {sig.inputs['images'].name: images})
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    assert classes.tolist() == probs.argmax(1).tolist()
