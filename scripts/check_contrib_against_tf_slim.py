"""By-hand check of tf.contrib.layers/framework against TF 1.15's contrib code: runs one program on tensorfleet
and on real TensorFlow (2.15 `compat.v1`) with `tf_slim` (TF 1.15's contrib layers/framework, ported), then
prints every result that differs.

    python scripts/check_contrib_against_tf_slim.py [--tf-python /work/tfvenv/bin/python]

Needs a Python with tensorflow 2.15, tf-slim 1.1 and tf-keras 2.15 (not a project dependency; nothing in
the test suite runs this). Compared: variable names, order and collections, output op names, update ops,
regularization losses, optimize_loss's variables and summary names, arg_scope results, batch_norm's moving
statistics after one update (fused/rank-2/rank-3/unfused/in place) and outputs, layer_norm's output.
Random draws (initializers) are compared only by their statistics. Expected differences: op names inside
batch_norm (TF: FusedBatchNormV3), the regularization loss op's name (TF: `<scope>/kernel/Regularizer/...`)
and Operations instead of Tensors in UPDATE_OPS on TF's core-layer path.
"""
import json
import subprocess
import sys

import numpy as np


def _setup(side):
    """(tf, layers, framework, arg_scope, optimize_loss) for 'tf' (real TF + tf_slim) or 'tensorfleet'."""
    if side == "tf":
        import importlib

        import tensorflow.compat.v1 as tf
        from tensorflow.python.framework import ops as _ops
        from tensorflow.python.framework import tensor as _tensor
        _ops.Tensor = _tensor.Tensor  # tf_slim 1.1 predates TF 2.15's moves of Tensor and IndexedSlices
        _ops.IndexedSlices = tf.IndexedSlices
        for m in ("", ".base", ".core", ".convolutional", ".pooling", ".normalization"):
            sys.modules["tf_keras.legacy_tf_layers" + m] = importlib.import_module("tf_keras.src.legacy_tf_layers" + m)
        import tf_slim
        tf.disable_v2_behavior()
        return tf, tf_slim, tf_slim, tf_slim.arg_scope, tf_slim.optimize_loss
    import tensorfleet as tf
    return tf, tf.contrib.layers, tf.contrib.framework, tf.contrib.framework.arg_scope, tf.contrib.layers.optimize_loss


def run(side) -> dict:
    tf, layers, framework, arg_scope, optimize_loss = _setup(side)
    out = {}
    rng = np.random.default_rng(0)
    x4 = rng.standard_normal((4, 5, 5, 3)).astype(np.float32) * 2 + 1
    x2 = rng.standard_normal((6, 3)).astype(np.float32) * 3 - 1
    x3 = rng.standard_normal((3, 5, 2)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        p4 = tf.placeholder(tf.float32, [None, 5, 5, 3])
        p2 = tf.placeholder(tf.float32, [None, 3])
        p3 = tf.placeholder(tf.float32, [None, 5, 2])
        fc = layers.fully_connected(p2, 4, weights_regularizer=layers.l2_regularizer(0.5))
        layers.fully_connected(p2, 4, normalizer_fn=layers.batch_norm, scope="fcbn",
                               weights_initializer=tf.constant_initializer(0.5))
        with tf.variable_scope("tower"):
            c = layers.conv2d(p4, 6, [3, 3], stride=2)
            ct = layers.conv2d_transpose(p4, 2, 3, stride=2)
        bn_default = layers.batch_norm(p4, decay=0.5)
        bn_scale = layers.batch_norm(p4, decay=0.5, scale=True, updates_collections=None, scope="bn_inplace")
        layers.batch_norm(p2, decay=0.5, scope="bn2")
        bn_rank3 = layers.batch_norm(p3, decay=0.5, scope="bn3", updates_collections=None)
        layers.batch_norm(p4, decay=0.5, fused=False, scope="bn_unfused")
        ln = layers.layer_norm(p3, begin_norm_axis=-1)
        mp = layers.max_pool2d(p4, [2, 2])
        ap = layers.avg_pool2d(p4, 3, stride=1, padding="SAME")
        fl = layers.flatten(p4)
        oh = layers.one_hot_encoding(tf.constant([1, 0]), 3)
        dr = layers.dropout(p2, is_training=False)
        out["names"] = {"fc": fc.name, "c": c.name, "ct": ct.name, "bn_default": bn_default.name, "mp": mp.name,
                        "ap": ap.name, "fl": fl.name, "oh": oh.name, "dr": dr.name, "ln": ln.name}
        out["global"] = [v.name for v in tf.global_variables()]
        out["model"] = [v.name for v in tf.model_variables()]
        out["trainable"] = [v.name for v in tf.trainable_variables()]
        out["update_ops"] = [u.name for u in tf.get_collection(tf.GraphKeys.UPDATE_OPS)]
        out["reg_losses"] = [r.name for r in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)]
        step = tf.train.get_or_create_global_step()
        loss = tf.reduce_mean(tf.square(fc)) + tf.add_n(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))
        if optimize_loss is not None:
            optimize_loss(loss, step, 0.1, "SGD", clip_gradients=1.0,
                                  learning_rate_decay_fn=lambda lr, s: tf.train.exponential_decay(lr, s, 10, 0.5),
                                  summaries=["loss", "learning_rate", "global_gradient_norm", "gradients",
                                             "gradient_norm"])
            out["summary_tags"] = sorted(s.op.name for s in tf.get_collection(tf.GraphKeys.SUMMARIES))
            out["after_opt_globals"] = [v.name for v in tf.global_variables()][len(out["global"]):]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            feed = {p4: x4, p2: x2, p3: x3}
            sess.run([bn_scale, bn_rank3] + tf.get_collection(tf.GraphKeys.UPDATE_OPS), feed)
            vals = {v.op.name: sess.run(v).tolist() for v in tf.global_variables() if "moving" in v.op.name}
            out["moving"] = vals
            out["bn_default_out"] = sess.run(bn_default, feed)[0, 0, 0].tolist()
            out["ln_out"] = sess.run(ln, feed)[0, 0].tolist()
            out["reg_value"] = float(sess.run(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)[0]) /
                                     np.square(sess.run(tf.model_variables()[0])).sum())

    # arg_scope semantics
    @framework.add_arg_scope
    def f(a, b=1, c=2):
        return (a, b, c)

    with arg_scope([f], b=5) as sc:
        with arg_scope([f], c=7):
            r1 = f(0)
        r2 = f(0, b=9)
    with arg_scope(sc):
        r3 = f(0)
    out["arg_scope"] = [r1, r2, r3, framework.arg_scoped_arguments(f)]
    with tf.Graph().as_default():
        init = layers.variance_scaling_initializer()([100, 200])
        xav = layers.xavier_initializer()([100, 200])
        with tf.Session() as sess:
            a, b = sess.run([init, xav])
        out["init_std"] = [round(float(a.std()), 2), round(float(np.abs(b).max()), 2)]  # random draws: statistics only
    return out


def _same(a, b) -> bool:
    """Equal, numbers to float32 precision (rtol 1e-5)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return bool(np.isclose(a, b, rtol=1e-5, atol=1e-7))
    return a == b


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tf-python", default="/work/tfvenv/bin/python")
    ap.add_argument("--side", choices=["tf", "tensorfleet"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.side:
        print(json.dumps(run(args.side), sort_keys=True))
        return 0
    theirs = json.loads(subprocess.run([args.tf_python, __file__, "--side", "tf"], check=True, capture_output=True,
                                       text=True).stdout.splitlines()[-1])
    ours = json.loads(json.dumps(run("tensorfleet"), sort_keys=True))
    for key in sorted(set(theirs) | set(ours)):
        same = _same(theirs.get(key), ours.get(key))
        print(("same " if same else "DIFF ") + key)
        if not same:
            print("  tf:         ", theirs.get(key))
            print("  tensorfleet:", ours.get(key))
    return 0


if __name__ == "__main__":
    sys.exit(main())
