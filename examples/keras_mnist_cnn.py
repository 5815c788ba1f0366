"""A Keras CNN on MNIST: `tf.keras.datasets.mnist`, a Sequential model of Conv2D / MaxPooling2D / Dense, `fit` /
`evaluate`, as a TF 1.15 script writes it (only the import differs).

    python examples/keras_mnist_cnn.py                     # 3 epochs on the 60,000 images: ~0.99 test accuracy
    python examples/keras_mnist_cnn.py --train-samples 5000 --epochs 1

MNIST comes from the project's pinned copy (`python -m tensorfleet.datasets fetch`, run by `make install`).
"""
import argparse

import numpy as np

import tensorfleet as tf


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--filters", default="16,32", help="filters of the two convolutions")
    parser.add_argument("--train-samples", type=int, default=0, help="train on the first N images (0: all 60,000)")
    parser.add_argument("--test-samples", type=int, default=0, help="score the first N test images (0: all 10,000)")
    parser.add_argument("--save", help="save the trained weights here (a TF checkpoint prefix, or .h5)")
    parser.add_argument("--verbose", type=int, default=2, help="fit's verbosity (0, 1: progress bar, 2: a line)")
    args = parser.parse_args(argv)

    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    x_train = x_train.reshape(-1, 28, 28, 1).astype(np.float32) / 255.0
    x_test = x_test.reshape(-1, 28, 28, 1).astype(np.float32) / 255.0
    if args.train_samples:
        x_train, y_train = x_train[:args.train_samples], y_train[:args.train_samples]
    if args.test_samples:
        x_test, y_test = x_test[:args.test_samples], y_test[:args.test_samples]

    f1, f2 = (int(f) for f in args.filters.split(","))
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(f1, 3, activation="relu", padding="same", input_shape=(28, 28, 1)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(f2, 3, activation="relu", padding="same"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dropout(0.3),
        tf.keras.layers.Dense(10, activation="softmax"),
    ])
    model.summary()
    model.compile(optimizer=tf.keras.optimizers.Adam(), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs, verbose=args.verbose,
              validation_split=0.1)
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    if args.save:
        model.save_weights(args.save)
    print(f"test loss {loss:.4f}, test accuracy {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
