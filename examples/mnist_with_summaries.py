"""TensorBoard summaries and run metadata, the way Kubeflow's TFJob example `mnist_with_summaries.py` writes them.

    python examples/mnist_with_summaries.py [--log-dir DIR] [--max-steps 1000] [--data mnist|mnist_5k|digits]

A one-hidden-layer network with name scopes per layer, summaries of every weight, bias, pre-activation and
activation (mean, stddev, max, min, histogram), a cross-entropy and an accuracy scalar. Every 10th step
evaluates the test split into `<log-dir>/test`; the other steps train and write their merged summaries into
`<log-dir>/train`; every 100th step (99, 199, ...) runs with `RunOptions(trace_level=FULL_TRACE)` and
writes its `RunMetadata` with `train_writer.add_run_metadata(run_metadata, 'step%03d' % i)`, so TensorBoard's
graph view shows compute time and memory per node for those steps. Written for this repository in the
style of that example (its structure and calls), not copied from it.
"""
import argparse
import os

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets


def variable_summaries(var):
    with tf.name_scope("summaries"):
        mean = tf.reduce_mean(var)
        tf.summary.scalar("mean", mean)
        with tf.name_scope("stddev"):
            stddev = tf.sqrt(tf.reduce_mean(tf.square(var - mean)))
        tf.summary.scalar("stddev", stddev)
        tf.summary.scalar("max", tf.reduce_max(var))
        tf.summary.scalar("min", tf.reduce_min(var))
        tf.summary.histogram("histogram", var)


def nn_layer(input_tensor, input_dim, output_dim, layer_name, act=tf.nn.relu):
    with tf.name_scope(layer_name):
        with tf.name_scope("weights"):
            weights = tf.Variable(tf.truncated_normal([input_dim, output_dim], stddev=0.1, seed=1))
            variable_summaries(weights)
        with tf.name_scope("biases"):
            biases = tf.Variable(tf.constant(0.1, shape=[output_dim]))
            variable_summaries(biases)
        with tf.name_scope("Wx_plus_b"):
            preactivate = tf.matmul(input_tensor, weights) + biases
            tf.summary.histogram("pre_activations", preactivate)
        activations = act(preactivate, name="activation")
        tf.summary.histogram("activations", activations)
        return activations


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log-dir", default="/tmp/tensorflow/mnist/logs/mnist_with_summaries")
    parser.add_argument("--max-steps", type=int, default=1000)
    parser.add_argument("--learning-rate", type=float, default=0.001)
    parser.add_argument("--dropout", type=float, default=0.9)
    parser.add_argument("--data", choices=["mnist", "mnist_5k", "digits"], default="mnist")
    args = parser.parse_args(argv)

    tf.set_random_seed(0)
    data = read_data_sets(source=args.data, one_hot=True, seed=0)
    n_in = data.train.images.shape[1]
    sess = tf.InteractiveSession()
    with tf.name_scope("input"):
        x = tf.placeholder(tf.float32, [None, n_in], name="x-input")
        y_ = tf.placeholder(tf.float32, [None, 10], name="y-input")
    hidden1 = nn_layer(x, n_in, 500, "layer1")
    with tf.name_scope("dropout"):
        keep_prob = tf.placeholder(tf.float32)
        tf.summary.scalar("dropout_keep_probability", keep_prob)
        dropped = tf.nn.dropout(hidden1, keep_prob, seed=2)
    y = nn_layer(dropped, 500, 10, "layer2", act=tf.identity)
    with tf.name_scope("cross_entropy"):
        with tf.name_scope("total"):
            cross_entropy = tf.losses.softmax_cross_entropy(onehot_labels=y_, logits=y)
    tf.summary.scalar("cross_entropy", cross_entropy)
    with tf.name_scope("train"):
        train_step = tf.train.AdamOptimizer(args.learning_rate).minimize(cross_entropy)
    with tf.name_scope("accuracy"):
        with tf.name_scope("correct_prediction"):
            correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
        with tf.name_scope("accuracy"):
            accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    tf.summary.scalar("accuracy", accuracy)

    merged = tf.summary.merge_all()
    train_writer = tf.summary.FileWriter(os.path.join(args.log_dir, "train"), sess.graph)
    test_writer = tf.summary.FileWriter(os.path.join(args.log_dir, "test"))
    tf.global_variables_initializer().run()

    def feed_dict(train):
        if train:
            xs, ys = data.train.next_batch(100)
            k = args.dropout
        else:
            xs, ys = data.test.images, data.test.labels
            k = 1.0
        return {x: xs, y_: ys, keep_prob: k}

    acc = None
    for i in range(args.max_steps):
        if i % 10 == 0:  # test-set accuracy and summaries
            summary, acc = sess.run([merged, accuracy], feed_dict=feed_dict(False))
            test_writer.add_summary(summary, i)
            print(f"Accuracy at step {i}: {acc}")
        elif i % 100 == 99:  # execution stats
            run_options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            run_metadata = tf.RunMetadata()
            summary, _ = sess.run([merged, train_step], feed_dict=feed_dict(True), options=run_options,
                                  run_metadata=run_metadata)
            train_writer.add_run_metadata(run_metadata, "step%03d" % i)
            train_writer.add_summary(summary, i)
            print("Adding run metadata for", i)
        else:
            summary, _ = sess.run([merged, train_step], feed_dict=feed_dict(True))
            train_writer.add_summary(summary, i)
    train_writer.close()
    test_writer.close()
    sess.close()
    return float(acc)


if __name__ == "__main__":
    main()
