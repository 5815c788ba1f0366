"""A tf.data input pipeline feeding a small CNN (tf.layers) on scikit-learn's 8x8 digits.

    python examples/data_pipeline_cnn.py [--steps 400] [--batch-size 64]

The TF1 pattern: `Dataset.from_tensor_slices((images, labels))` -> `map` (reshape and scale, on 2 threads)
-> `shuffle` -> `repeat` -> `batch` -> `prefetch` (the pipeline runs ahead on its own thread), one
reinitializable iterator (`Iterator.from_structure`) switched between the training and the test set, and a
training loop that runs until `OutOfRangeError` ends the epochs.
"""
import argparse

import numpy as np

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets


def parse(image, label):
    image = tf.reshape(tf.cast(image, "float"), [8, 8, 1])  # "float" is float32, as in TF
    return image, tf.cast(label, tf.int32)


def model(images, training):
    h = tf.layers.conv2d(images, 16, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 32, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.flatten(tf.layers.max_pooling2d(h, 2, 2))
    h = tf.layers.dropout(h, 0.3, training=training, seed=1)
    return tf.layers.dense(h, 10)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400, help="training steps (epochs are derived from it)")
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args(argv)

    tf.set_random_seed(0)
    data = read_data_sets(source="digits", seed=0)
    train_x, train_y = data.train.images, data.train.labels
    test_x, test_y = data.test.images, data.test.labels
    epochs = max(1, -(-args.steps * args.batch_size // len(train_y)))

    train_ds = (tf.data.Dataset.from_tensor_slices((train_x, train_y))
                .map(parse, num_parallel_calls=2)
                .shuffle(len(train_y), seed=0)
                .repeat(epochs)
                .batch(args.batch_size)
                .take(args.steps)
                .prefetch(2))
    test_ds = tf.data.Dataset.from_tensor_slices((test_x, test_y)).map(parse).batch(256)
    iterator = tf.data.Iterator.from_structure(train_ds.output_types, train_ds.output_shapes)
    images, labels = iterator.get_next()
    train_init, test_init = iterator.make_initializer(train_ds), iterator.make_initializer(test_ds)

    training = tf.placeholder_with_default(False, [], name="training")
    logits = model(images, training)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = tf.train.AdamOptimizer(3e-3).minimize(loss)
    correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), labels), tf.int32))

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_init)
        step = 0
        try:
            while True:
                loss_v, _ = sess.run([loss, train_op], {training: True})
                step += 1
                if step % 100 == 0:
                    print(f"step {step}: loss {loss_v:.4f}")
        except tf.errors.OutOfRangeError:
            pass
        sess.run(test_init)
        right = 0
        try:
            while True:
                right += int(sess.run(correct))
        except tf.errors.OutOfRangeError:
            pass
    accuracy = right / len(test_y)
    print(f"trained {step} steps ({epochs} epochs); test accuracy {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
