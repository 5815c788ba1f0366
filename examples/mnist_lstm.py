"""The classic TF1 recurrent-network MNIST example: an LSTM reads each image as 28 rows of 28 pixels.

    python examples/mnist_lstm.py [--steps 3000] [--batch-size 128] [--rnn static|dynamic]

As in the TF1 tutorials, with only the import changed: `tf.contrib.rnn.BasicLSTMCell(128, forget_bias=1.0)`,
`tf.contrib.rnn.static_rnn` over the 28 rows (or `tf.nn.dynamic_rnn` with --rnn dynamic), a softmax layer on
the last output, Adam at 1e-3 on batches of 128. Data: `input_data.read_data_sets(dir, one_hot=True)` (the full
MNIST once `python -m tensorfleet.datasets fetch` has run; else the 5,000-image sample, with a warning).
Variables are TF 1.15's names (`rnn/basic_lstm_cell/kernel` [156, 512], `.../bias` [512]), so a TF checkpoint of
this model restores here. Returns the test accuracy.
"""
import argparse
import time

import tensorfleet as tf
from tensorfleet.examples.tutorials.mnist import input_data

TIMESTEPS, NUM_INPUT, NUM_HIDDEN, NUM_CLASSES = 28, 28, 128, 10


def rnn_logits(x, rnn_kind):
    """x: [batch, 28, 28] -> logits [batch, 10] from the LSTM's last output."""
    weights = tf.Variable(tf.random_normal([NUM_HIDDEN, NUM_CLASSES], stddev=0.1, seed=1), name="out_weights")
    biases = tf.Variable(tf.zeros([NUM_CLASSES]), name="out_biases")
    lstm_cell = tf.contrib.rnn.BasicLSTMCell(NUM_HIDDEN, forget_bias=1.0)
    if rnn_kind == "static":
        rows = tf.unstack(x, TIMESTEPS, 1)  # a list of 28 tensors [batch, 28]
        outputs, _ = tf.contrib.rnn.static_rnn(lstm_cell, rows, dtype=tf.float32)
        last = outputs[-1]
    else:
        outputs, state = tf.nn.dynamic_rnn(lstm_cell, x, dtype=tf.float32)
        last = state.h  # = outputs[:, -1] without sequence_length
    return tf.matmul(last, weights) + biases


def train_and_test(args):
    tf.set_random_seed(0)
    mnist = input_data.read_data_sets(args.data_dir, one_hot=True, seed=0)
    x = tf.placeholder("float", [None, TIMESTEPS, NUM_INPUT], name="x")
    y = tf.placeholder("float", [None, NUM_CLASSES], name="y")
    logits = rnn_logits(x, args.rnn)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(logits=logits, labels=y))
    train_op = tf.train.AdamOptimizer(learning_rate=args.learning_rate).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(y, 1)), tf.float32))

    start = time.time()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(1, args.steps + 1):
            batch_x, batch_y = mnist.train.next_batch(args.batch_size)
            batch_x = batch_x.reshape((-1, TIMESTEPS, NUM_INPUT))
            _, loss_v = sess.run([train_op, loss], {x: batch_x, y: batch_y})
            if step % 200 == 0 or step == args.steps:
                print(f"step {step}: minibatch loss {loss_v:.4f} ({time.time() - start:.0f}s)", flush=True)
        n = args.test_size or mnist.test.num_examples
        images = mnist.test.images[:n].reshape((-1, TIMESTEPS, NUM_INPUT))
        labels = mnist.test.labels[:n]
        correct = 0.0
        for i in range(0, n, 1000):
            correct += sess.run(accuracy, {x: images[i:i + 1000], y: labels[i:i + 1000]}) * len(labels[i:i + 1000])
        acc = correct / n
    print(f"test accuracy {acc:.4f} on {n} images after {args.steps} steps ({time.time() - start:.0f}s)")
    return acc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="training steps")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--rnn", choices=("static", "dynamic"), default="static")
    parser.add_argument("--test-size", type=int, default=None, help="test images to score (default: all)")
    parser.add_argument("--data-dir", default="MNIST_data")
    args = parser.parse_args(argv)

    with tf.Graph().as_default():  # a fresh graph per call, so main() can run twice in one process
        return train_and_test(args)


if __name__ == "__main__":
    main()
