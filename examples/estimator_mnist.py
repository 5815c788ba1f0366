"""DNNClassifier on MNIST through feature columns, with tf.estimator.train_and_evaluate: one script for every
TFJob role.

The same file runs as a single process (no TF_CONFIG: train, and evaluate after each checkpoint) and in
every pod of a chief + ps + workers + evaluator TFJob: RunConfig reads the role from TF_CONFIG, the chief
and workers train against the ps tasks, the chief checkpoints to --model-dir (a volume every pod shares),
the evaluator scores each new checkpoint on the test split and exits after the final one, and the ps tasks
serve until the chief releases them. Only the import differs from a TF 1.15 script.

    python examples/estimator_mnist.py --model-dir /tmp/estimator-mnist --steps 2000
    tensorfleet run deploy/examples/14-estimator-train-and-evaluate.yaml
"""
import argparse

import numpy as np

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", required=True, help="checkpoints and eval summaries (shared by every task)")
    parser.add_argument("--data", choices=["auto", "mnist", "mnist_5k", "digits"], default="auto",
                        help="auto: full MNIST when fetched (python -m tensorfleet.datasets fetch), else the 5k sample")
    parser.add_argument("--steps", type=int, default=2000, help="TrainSpec max_steps (global steps, all workers)")
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--hidden-units", default="256,128")
    parser.add_argument("--learning-rate", type=float, default=0.1, help="Adagrad")
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

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"pixels": train_x}, train_y))
        return ds.shuffle(10000).repeat().batch(args.batch_size)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"pixels": test_x}, test_y)).batch(1000)

    pixels = tf.feature_column.numeric_column("pixels", shape=(train_x.shape[1],))
    config = tf.estimator.RunConfig(save_checkpoints_steps=args.save_checkpoints_steps, keep_checkpoint_max=3,
                                    log_step_count_steps=200,
                                    experimental_max_worker_delay_secs=args.max_worker_delay_secs)
    classifier = tf.estimator.DNNClassifier(
        hidden_units=[int(u) for u in args.hidden_units.split(",")], feature_columns=[pixels],
        n_classes=n_classes, model_dir=args.model_dir, config=config,
        optimizer=tf.train.AdagradOptimizer(args.learning_rate))
    train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=args.steps)
    eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=None, name="test", throttle_secs=args.throttle_secs,
                                      start_delay_secs=args.start_delay_secs)
    metrics, _ = tf.estimator.train_and_evaluate(classifier, train_spec, eval_spec)
    if metrics is not None:
        print(f"final evaluation: global_step={int(metrics['global_step'])} accuracy={float(metrics['accuracy']):.4f} "
              f"loss={float(metrics['loss']):.4f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
