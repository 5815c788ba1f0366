"""The MLP of mnist_mlp.py trained in MonitoredTrainingSession style (TF1's distributed-script shape).

    python examples/mnist_monitored.py [--data digits|mnist|mnist_5k] [--steps 1500] [--checkpoint-dir DIR]

Batches go through a FIFOQueue fed by a QueueRunner thread (started by the
monitored session), StopAtStepHook ends training, CheckpointSaverHook saves
to --checkpoint-dir, and a FinalOpsHook measures test accuracy at the end. Run
it twice with the same --checkpoint-dir and the second run resumes from the
last checkpoint's global step.
"""
import argparse
import tempfile

import numpy as np

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets


def dense(x, units, name, activation=None):
    with tf.variable_scope(name):
        w = tf.get_variable("weights", [x.get_shape()[1], units], initializer=tf.glorot_uniform_initializer(seed=1))
        b = tf.get_variable("biases", [units], initializer=tf.zeros_initializer())
        out = tf.nn.xw_plus_b(x, w, b)
        return activation(out) if activation else out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=["digits", "mnist", "mnist_5k"], default="digits")
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=0.003)
    parser.add_argument("--checkpoint-dir", default=None)
    parser.add_argument("--save-checkpoint-steps", type=int, default=500)
    args = parser.parse_args(argv)
    checkpoint_dir = args.checkpoint_dir or tempfile.mkdtemp(prefix="mnist_monitored_")

    tf.set_random_seed(0)
    data = read_data_sets(source=args.data, one_hot=False, seed=0)
    n_in = data.train.images.shape[1]

    # input pipeline: a queue of batches, kept full by a QueueRunner thread
    batch_x = tf.placeholder(tf.float32, [None, n_in], name="batch_x")
    batch_y = tf.placeholder(tf.int64, [None], name="batch_y")
    queue = tf.FIFOQueue(8, [tf.float32, tf.int64], shapes=[[args.batch_size, n_in], [args.batch_size]])

    class BatchFeeder(tf.train.QueueRunner):
        """A queue runner whose enqueue op is fed a fresh batch every run."""

        def _run(self, sess, enqueue_op, coord=None):
            with coord.stop_on_exception():
                while not coord.should_stop():
                    xs, ys = data.train.next_batch(args.batch_size)
                    try:
                        sess.run(enqueue_op, {batch_x: xs, batch_y: ys})
                    except tf.errors.CancelledError:
                        return

    tf.train.add_queue_runner(BatchFeeder(queue, [queue.enqueue([batch_x, batch_y])]))
    x, labels = queue.dequeue()

    h1 = dense(x, args.hidden, "hidden1", tf.nn.relu)
    h2 = dense(h1, args.hidden, "hidden2", tf.nn.relu)
    logits = dense(h2, 10, "softmax_linear")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(args.learning_rate).minimize(loss, global_step=global_step)

    test_x = tf.constant(data.test.images, tf.float32)
    with tf.variable_scope("", reuse=True):
        t1 = dense(test_x, args.hidden, "hidden1", tf.nn.relu)
        t2 = dense(t1, args.hidden, "hidden2", tf.nn.relu)
        t_logits = dense(t2, 10, "softmax_linear")
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(t_logits, 1), tf.constant(data.test.labels, tf.int64)),
                                      tf.float32))

    final = tf.train.FinalOpsHook(accuracy)
    hooks = [tf.train.StopAtStepHook(last_step=args.steps), tf.train.NanTensorHook(loss),
             tf.train.LoggingTensorHook({"step": global_step, "loss": loss}, every_n_iter=500)]
    with tf.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir, hooks=hooks, chief_only_hooks=[final],
                                           save_checkpoint_steps=args.save_checkpoint_steps,
                                           save_summaries_steps=None, save_summaries_secs=None,
                                           log_step_count_steps=500, stop_grace_period_secs=30) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    acc = float(np.asarray(final.final_ops_values))
    print(f"test accuracy: {acc:.4f} (checkpoints in {checkpoint_dir})")
    return acc


if __name__ == "__main__":
    main()
