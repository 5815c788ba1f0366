"""The idioms of the oldest TF1 tutorials, written as they were (only the import renamed): "float" placeholders,
the tutorials' input_data loader, tf.arg_max, tf.to_float, initialize_all_variables, a string constant."""
import warnings

import numpy as np

import tensorfleet as tf


def test_classic_mnist_softmax_tutorial_runs_as_written(tmp_path):
    from tensorfleet.examples.tutorials.mnist import input_data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the 5,000-image sample stands in when full MNIST is not fetched
        mnist = input_data.read_data_sets(str(tmp_path / "MNIST_data/"), one_hot=True)
    with tf.Graph().as_default():
        hello = tf.constant("Hello, TensorFlow!")
        x = tf.placeholder("float", [None, 784])
        W = tf.Variable(tf.zeros([784, 10]))
        b = tf.Variable(tf.zeros([10]))
        y = tf.nn.softmax(tf.matmul(x, W) + b)
        y_ = tf.placeholder("float", [None, 10])
        cross_entropy = -tf.reduce_sum(y_ * tf.log(y + 1e-10))
        train_step = tf.train.GradientDescentOptimizer(0.01).minimize(cross_entropy)
        init = tf.initialize_all_variables()
        sess = tf.Session()
        sess.run(init)
        assert sess.run(hello) == b"Hello, TensorFlow!"
        for _ in range(200):
            batch_xs, batch_ys = mnist.train.next_batch(100)
            sess.run(train_step, feed_dict={x: batch_xs, y_: batch_ys})
        correct_prediction = tf.equal(tf.arg_max(y, 1), tf.arg_max(y_, 1))
        accuracy = tf.reduce_mean(tf.to_float(correct_prediction))
        acc = sess.run(accuracy, feed_dict={x: mnist.test.images, y_: mnist.test.labels})
        # the oracle: numpy on the learned weights
        Wv, bv = sess.run([W, b])
        sess.close()
    logits = mnist.test.images @ Wv + bv
    np.testing.assert_allclose(acc, np.mean(logits.argmax(1) == mnist.test.labels.argmax(1)), atol=1e-6)
    assert acc > 0.8
