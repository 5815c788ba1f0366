"""A slim-style TF1 CNN with tf.contrib.layers, arg_scope, batch_norm and optimize_loss on scikit-learn's digits.

    python examples/contrib_layers_cnn.py [--steps 300] [--checkpoint-dir DIR] [--logdir DIR]

The way many TF 1.x scripts were written: the layers' shared arguments (L2 weight decay, batch norm as the
normalizer, its `is_training`) set once with `tf.contrib.framework.arg_scope`; conv/pool/fully-connected
layers from `tf.contrib.layers`; the total loss (cross-entropy plus the collected regularization losses)
trained by `tf.contrib.layers.optimize_loss` (Adam, an exponentially decayed learning rate, gradient
clipping, loss and learning-rate summaries) with the global step from
`tf.contrib.framework.get_or_create_global_step`. Training saves a checkpoint; evaluation builds the
model again with is_training=False (batch norm's moving statistics) in a fresh graph and initializes it
with `tf.contrib.framework.assign_from_checkpoint_fn` over `get_variables_to_restore()`.
"""
import argparse
import os
import tempfile

import numpy as np

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets

layers = tf.contrib.layers
arg_scope = tf.contrib.framework.arg_scope


def cnn(images, is_training, weight_decay=1e-4):
    """Logits [batch, 10] for images [batch, 8, 8, 1]."""
    batch_norm_params = {"is_training": is_training, "decay": 0.9, "scale": True}
    with arg_scope([layers.conv2d, layers.fully_connected],
                   weights_regularizer=layers.l2_regularizer(weight_decay),
                   normalizer_fn=layers.batch_norm, normalizer_params=batch_norm_params):
        with arg_scope([layers.max_pool2d], kernel_size=[2, 2], padding="SAME"):
            net = layers.conv2d(images, 16, [3, 3], scope="conv1")
            net = layers.max_pool2d(net, scope="pool1")
            net = layers.conv2d(net, 32, [3, 3], scope="conv2")
            net = layers.max_pool2d(net, scope="pool2")
        net = layers.flatten(net)
        net = layers.fully_connected(net, 64, scope="fc1")
        net = layers.dropout(net, keep_prob=0.8, is_training=is_training, seed=1)
        return layers.fully_connected(net, 10, activation_fn=None, normalizer_fn=None, scope="logits")


def train(data, args, checkpoint_prefix):
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
        labels = tf.placeholder(tf.int32, [None], name="labels")
        logits = cnn(images, is_training=True)
        tf.losses.softmax_cross_entropy(layers.one_hot_encoding(labels, 10), logits)
        total_loss = tf.losses.get_total_loss()  # cross-entropy + the layers' L2 regularization losses
        global_step = tf.contrib.framework.get_or_create_global_step()
        train_op = layers.optimize_loss(
            total_loss, global_step, learning_rate=0.01, optimizer="Adam", clip_gradients=5.0,
            learning_rate_decay_fn=lambda lr, step: tf.train.exponential_decay(lr, step, 100, 0.7),
            summaries=["loss", "learning_rate"])  # also runs batch norm's UPDATE_OPS every step
        summaries = tf.summary.merge_all()
        writer = tf.summary.FileWriter(args.logdir, tf.get_default_graph()) if args.logdir else None
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(1, args.steps + 1):
                xs, ys = data.train.next_batch(args.batch_size)
                feed = {images: xs.reshape(-1, 8, 8, 1), labels: ys}
                loss, summary = sess.run([train_op, summaries], feed)
                if writer is not None:
                    writer.add_summary(summary, i)
                if i % 100 == 0:
                    print(f"step {i}, loss {loss:.4f}")
            if writer is not None:
                writer.close()
            return saver.save(sess, checkpoint_prefix, global_step=global_step)


def evaluate(data, checkpoint):
    with tf.Graph().as_default():
        images = tf.placeholder(tf.float32, [None, 8, 8, 1])
        logits = cnn(images, is_training=False)
        init_fn = tf.contrib.framework.assign_from_checkpoint_fn(
            checkpoint, tf.contrib.framework.get_variables_to_restore())
        with tf.Session() as sess:
            init_fn(sess)
            predictions = sess.run(tf.argmax(logits, 1), {images: data.test.images.reshape(-1, 8, 8, 1)})
    return float(np.mean(predictions == data.test.labels))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--checkpoint-dir", default=None, help="where to save the model (default: a temp dir)")
    parser.add_argument("--logdir", default=None, help="write TensorBoard summaries here")
    args = parser.parse_args(argv)

    data = read_data_sets(source="digits", seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint_dir = args.checkpoint_dir or tmp
        tf.gfile.MakeDirs(checkpoint_dir)
        checkpoint = train(data, args, os.path.join(checkpoint_dir, "model.ckpt"))
        accuracy = evaluate(data, checkpoint)
    print(f"test accuracy (restored from {os.path.basename(checkpoint)}): {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
