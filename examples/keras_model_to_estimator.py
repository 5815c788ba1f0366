"""A compiled tf.keras model trained as a TFJob: `tf.keras.estimator.model_to_estimator` +
`tf.estimator.train_and_evaluate`, one script for every role.

The same file runs as a single process (no TF_CONFIG) and in every pod of a chief + ps + workers + evaluator
TFJob: RunConfig reads the role from TF_CONFIG; the chief writes the Keras model's weights to
<model-dir>/keras/ and the estimator warm-starts from them; the chief and the workers train the Keras model
(cloned onto the input pipeline's tensors, its variables on the ps tasks) with its own optimizer, loss and
metrics; the evaluator scores each new checkpoint (`loss`, `acc`) and, after the final one, exports the model
for serving (<model-dir>/export/keras/<timestamp>, signature `serving_default`). Only the import differs
from a TF 1.15 script.

    python examples/keras_model_to_estimator.py --model-dir /tmp/keras-estimator --steps 2000
    tensorfleet run deploy/examples/16-keras-model-to-estimator.yaml
"""
import argparse
import os

import numpy as np

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets


def build_model(pixels, n_classes, hidden_units, learning_rate):
    layers = [tf.keras.layers.Dense(hidden_units[0], activation="relu", input_shape=(pixels,))]
    layers += [tf.keras.layers.Dense(units, activation="relu") for units in hidden_units[1:]]
    layers += [tf.keras.layers.Dropout(0.2), tf.keras.layers.Dense(n_classes, activation="softmax")]
    model = tf.keras.Sequential(layers)
    model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", required=True, help="checkpoints, summaries, exports (shared by all tasks)")
    parser.add_argument("--data", choices=["auto", "mnist", "mnist_5k", "digits"], default="auto",
                        help="auto: full MNIST when fetched (python -m tensorfleet.datasets fetch), else the 5k sample")
    parser.add_argument("--steps", type=int, default=2000, help="TrainSpec max_steps (global steps, all workers)")
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--hidden-units", default="256,128")
    parser.add_argument("--learning-rate", type=float, default=0.001, help="Adam")
    parser.add_argument("--eval-examples", type=int, default=0, help="test examples to score (0: all)")
    parser.add_argument("--save-checkpoints-steps", type=int, default=500)
    parser.add_argument("--throttle-secs", type=int, default=5, help="EvalSpec throttle_secs")
    parser.add_argument("--start-delay-secs", type=int, default=0, help="EvalSpec start_delay_secs")
    parser.add_argument("--max-worker-delay-secs", type=int, default=None,
                        help="RunConfig experimental_max_worker_delay_secs (TF's default: (index+1)*5 s, <= 60)")
    args = parser.parse_args(argv)
    tf.logging.set_verbosity(tf.logging.INFO)

    source = None if args.data == "auto" else args.data
    data = read_data_sets(source=source, one_hot=False, seed=0)
    train_x, train_y = data.train.images.astype(np.float32), data.train.labels.astype(np.int64)
    test_x, test_y = data.test.images.astype(np.float32), data.test.labels.astype(np.int64)
    if args.eval_examples:
        test_x, test_y = test_x[:args.eval_examples], test_y[:args.eval_examples]
    n_classes = int(max(train_y.max(), test_y.max())) + 1

    model = build_model(train_x.shape[1], n_classes, [int(u) for u in args.hidden_units.split(",")],
                        args.learning_rate)
    input_name = model.input_names[0]  # the features' key: the Keras model's input name ('dense_input')

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({input_name: train_x}, train_y))
        return ds.shuffle(10000).repeat().batch(args.batch_size)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({input_name: test_x}, test_y)).batch(1000)

    serving_input_fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {input_name: tf.placeholder(tf.float32, [None, train_x.shape[1]], name=input_name)})
    config = tf.estimator.RunConfig(save_checkpoints_steps=args.save_checkpoints_steps, keep_checkpoint_max=3,
                                    log_step_count_steps=200,
                                    experimental_max_worker_delay_secs=args.max_worker_delay_secs)
    estimator = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=args.model_dir, config=config)
    train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=args.steps)
    eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=None, name="test", throttle_secs=args.throttle_secs,
                                      start_delay_secs=args.start_delay_secs,
                                      exporters=[tf.estimator.FinalExporter("keras", serving_input_fn)])
    result = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    metrics = result[0] if result else None
    if metrics is not None:  # the evaluator (or a single process): the final evaluation and the export
        print(f"final evaluation: global_step={int(metrics['global_step'])} acc={float(metrics['acc']):.4f} "
              f"loss={float(metrics['loss']):.4f}", flush=True)
        base = os.path.join(args.model_dir, "export", "keras")
        versions = sorted(int(v) for v in os.listdir(base) if v.isdigit()) if os.path.isdir(base) else []
        if versions:
            print(f"exported: {os.path.join(base, str(versions[-1]))}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
