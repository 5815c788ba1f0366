"""The built-in models (`--model mnist-softmax|mnist-mlp|mnist-cnn`) and their data (`--data`).

Called by the roles (training.py, evaluator.py) to build one graph: the caller decides the device
scope (`replica_device_setter` in a cluster). Every model has the same interface (`Model`): `x`
(float32 [None, pixels]), `labels` (int64 [None]), `loss`, `accuracy`, `train_op` (None when built for
evaluation), `global_step`, `logits` and the feeds that switch dropout on for training. The input size follows
the data (784 for MNIST, 64 for scikit-learn's 8x8 digits).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional

import tensorfleet as _tensorfleet

from .exit_codes import ExitCode, LauncherExit

tf: Any = _tensorfleet   # its namespace is filled at import time: no static attributes

MODELS = ("mnist-softmax", "mnist-mlp", "mnist-cnn")
DATA_SOURCES = ("auto", "mnist", "mnist_5k", "digits")
# (optimizer, learning rate) per model: what reaches a good accuracy in a few hundred steps.
DEFAULT_LEARNING_RATES = {"mnist-softmax": 0.5, "mnist-mlp": 0.3, "mnist-cnn": 0.002}


@dataclasses.dataclass
class Model:
    x: object
    labels: object
    loss: object
    accuracy: object
    global_step: object
    train_op: Optional[object]
    train_feeds: dict            # extra feeds while training (dropout)
    step_after_train: Optional[object] = None   # the global step read after train_op has run
    logits: Optional[object] = None             # [None, 10]: what the serving signature turns into classes


def evaluate(sess, model: Model, images, labels, batch_size: int = 1000) -> tuple:
    """(mean loss, accuracy) of `model` over a whole data split, in batches."""
    total_loss = total_correct = 0.0
    n = len(labels)
    for start in range(0, n, batch_size):
        xs, ys = images[start:start + batch_size], labels[start:start + batch_size]
        loss, acc = sess.run([model.loss, model.accuracy], {model.x: xs, model.labels: ys})
        total_loss += float(loss) * len(ys)
        total_correct += float(acc) * len(ys)
    return total_loss / max(n, 1), total_correct / max(n, 1)


def load_data(source: str, seed: int):
    """`tensorfleet.datasets.read_data_sets` for `--data` (`auto`: full MNIST when fetched, else the 5k
    sample); a missing data set exits DATA_UNAVAILABLE with the library's instructions."""
    from tensorfleet import datasets

    try:
        return datasets.read_data_sets(source=None if source == "auto" else source, one_hot=False, seed=seed)
    except (datasets.MissingDataError, FileNotFoundError, ImportError) as e:
        raise LauncherExit(ExitCode.DATA_UNAVAILABLE, f"--data {source}: {e}") from None


def _dense(x, units: int, name: str, seed: int, activation=None):
    with tf.variable_scope(name):
        w = tf.get_variable("weights", [int(x.get_shape()[1]), units],
                            initializer=tf.glorot_uniform_initializer(seed=seed))
        b = tf.get_variable("biases", [units], initializer=tf.zeros_initializer())
        out = tf.nn.xw_plus_b(x, w, b)
        return activation(out) if activation else out


def _softmax(x, keep_prob, pixels):
    return _dense(x, 10, "softmax_linear", seed=1)


def _mlp(x, keep_prob, pixels):
    h1 = _dense(x, 128, "hidden1", seed=1, activation=tf.nn.relu)
    h2 = _dense(tf.nn.dropout(h1, keep_prob=keep_prob), 128, "hidden2", seed=2, activation=tf.nn.relu)
    return _dense(h2, 10, "softmax_linear", seed=3)


def _cnn(x, keep_prob, pixels):
    side = int(round(math.sqrt(pixels)))
    image = tf.reshape(x, [-1, side, side, 1])

    def conv_pool(inp, channels_in, channels_out, name, seed):
        with tf.variable_scope(name):
            w = tf.get_variable("weights", [5, 5, channels_in, channels_out],
                                initializer=tf.truncated_normal_initializer(stddev=0.1, seed=seed))
            b = tf.get_variable("biases", [channels_out], initializer=tf.constant_initializer(0.1))
            h = tf.nn.relu(tf.nn.conv2d(inp, w, strides=[1, 1, 1, 1], padding="SAME") + b)
            return tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")

    h_pool2 = conv_pool(conv_pool(image, 1, 32, "conv1", 1), 32, 64, "conv2", 2)
    pooled = (side + 3) // 4
    flat = tf.reshape(h_pool2, [-1, pooled * pooled * 64])
    h_fc1 = _dense(flat, 256, "fc1", seed=3, activation=tf.nn.relu)
    return _dense(tf.nn.dropout(h_fc1, keep_prob=keep_prob), 10, "softmax_linear", seed=4)


_BUILDERS = {"mnist-softmax": _softmax, "mnist-mlp": _mlp, "mnist-cnn": _cnn}


def build(name: str, pixels: int, learning_rate: Optional[float], training: bool = True,
          optimizer_wrapper=None) -> Model:
    """Builds `name` in the current graph and device scope. `optimizer_wrapper(opt)` may wrap the optimizer
    (SyncReplicasOptimizer)."""
    if name not in _BUILDERS:
        raise LauncherExit(ExitCode.BAD_ARGUMENTS, f"--model must be one of {', '.join(MODELS)}, got {name!r}")
    global_step = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, pixels], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    keep_prob = tf.placeholder_with_default(1.0, [], name="keep_prob")
    logits = _BUILDERS[name](x, keep_prob, pixels)
    # op names leave "loss" and "accuracy" free for the summaries' tags
    per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    loss = tf.reduce_mean(per_example, name="cross_entropy")
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32), name="batch_accuracy")
    train_op = step_after = None
    if training:
        rate = DEFAULT_LEARNING_RATES[name] if learning_rate is None else learning_rate
        opt = tf.train.AdamOptimizer(rate) if name == "mnist-cnn" else tf.train.GradientDescentOptimizer(rate)
        if optimizer_wrapper is not None:
            opt = optimizer_wrapper(opt)
        train_op = opt.minimize(loss, global_step=global_step)
        with tf.control_dependencies([train_op]):
            # read_value() is colocated with the variable (on its ps), so the control dependency orders the
            # read itself after the update; tf.identity(global_step) would only order a copy of an earlier read
            step_after = global_step.read_value()
    dropout_keep = {"mnist-mlp": 0.9, "mnist-cnn": 0.5}.get(name)
    feeds = {keep_prob: dropout_keep} if dropout_keep and training else {}
    return Model(x, labels, loss, accuracy, global_step, train_op, feeds, step_after, logits)
