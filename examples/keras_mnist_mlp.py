"""A Keras MLP on MNIST: `tf.keras.datasets.mnist`, a Sequential model, `fit` / `evaluate`, callbacks and model
saving, exactly as a TF 1.15 script writes them (only the import differs).

    python examples/keras_mnist_mlp.py                       # 5 epochs on the 60,000 images: ~0.98 test accuracy
    python examples/keras_mnist_mlp.py --logdir /tmp/mlp-logs --save /tmp/mlp.h5

MNIST comes from the project's pinned copy (`python -m tensorfleet.datasets fetch`, run by `make install`).
"""
import argparse

import numpy as np

import tensorfleet as tf


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=512, help="units of the hidden layer")
    parser.add_argument("--train-samples", type=int, default=0, help="train on the first N images (0: all 60,000)")
    parser.add_argument("--logdir", help="TensorBoard event files (epoch_loss, epoch_acc, ...)")
    parser.add_argument("--save", help="save the trained model here (HDF5 for .h5, as model.save)")
    parser.add_argument("--verbose", type=int, default=2, help="fit's verbosity (0, 1: progress bar, 2: a line)")
    args = parser.parse_args(argv)

    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    x_train = x_train.reshape(-1, 784).astype(np.float32) / 255.0
    x_test = x_test.reshape(-1, 784).astype(np.float32) / 255.0
    if args.train_samples:
        x_train, y_train = x_train[:args.train_samples], y_train[:args.train_samples]
    y_train = tf.keras.utils.to_categorical(y_train, 10)
    y_test = tf.keras.utils.to_categorical(y_test, 10)

    model = tf.keras.Sequential([
        tf.keras.layers.Dense(args.hidden, activation="relu", input_shape=(784,)),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(10, activation="softmax"),
    ])
    model.summary()
    model.compile(optimizer=tf.keras.optimizers.Adam(), loss="categorical_crossentropy", metrics=["accuracy"])

    callbacks = [tf.keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1),
                 tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=3, restore_best_weights=True)]
    if args.logdir:
        callbacks.append(tf.keras.callbacks.TensorBoard(log_dir=args.logdir))
    model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs, verbose=args.verbose,
              validation_split=0.1, callbacks=callbacks)
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    if args.save:
        model.save(args.save)
    print(f"test loss {loss:.4f}, test accuracy {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
