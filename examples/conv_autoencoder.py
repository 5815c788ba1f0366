"""A convolutional autoencoder with tf.layers.conv2d / conv2d_transpose on scikit-learn's 8x8 digits.

    python examples/conv_autoencoder.py [--steps 600]

Encoder: two stride-2 convolutions (8x8 -> 4x4 -> 2x2 x 8 channels); decoder: two stride-2 transposed
convolutions back to 8x8x1 with a sigmoid. Trained with Adam on the pixel MSE; it prints the test MSE next to
the MSE of always predicting the mean training image (the baseline an autoencoder has to beat).
"""
import argparse

import numpy as np

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets


def autoencoder(x):
    h = tf.layers.conv2d(x, 16, 3, strides=2, padding="same", activation=tf.nn.relu, name="enc1")
    code = tf.layers.conv2d(h, 8, 3, strides=2, padding="same", activation=tf.nn.relu, name="enc2")
    h = tf.layers.conv2d_transpose(code, 16, 3, strides=2, padding="same", activation=tf.nn.relu, name="dec1")
    return tf.layers.conv2d_transpose(h, 1, 3, strides=2, padding="same", activation=tf.nn.sigmoid, name="dec2")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args(argv)

    tf.set_random_seed(0)
    data = read_data_sets(source="digits", seed=0, reshape=False)
    x = tf.placeholder("float", [None, 8, 8, 1], name="x")
    reconstruction = autoencoder(x)
    loss = tf.reduce_mean(tf.square(reconstruction - x))
    train_op = tf.train.AdamOptimizer(1e-2).minimize(loss)

    baseline = float(np.mean((data.test.images - data.train.images.mean(axis=0)) ** 2))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        start = sess.run(loss, {x: data.test.images})
        for step in range(1, args.steps + 1):
            batch, _ = data.train.next_batch(args.batch_size)
            loss_v, _ = sess.run([loss, train_op], {x: batch})
            if step % 200 == 0:
                print(f"step {step}: train mse {loss_v:.4f}")
        test_mse = float(sess.run(loss, {x: data.test.images}))
    print(f"test mse {test_mse:.4f} (untrained {start:.4f}, mean-image baseline {baseline:.4f})")
    return {"test_mse": test_mse, "untrained_mse": float(start), "baseline_mse": baseline}


if __name__ == "__main__":
    main()
