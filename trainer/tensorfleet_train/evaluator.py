"""The evaluator role: evaluate every new checkpoint the chief writes, stop after its final one.

Flow: cli.py -> `evaluate_checkpoints(...)` here (no server, no peers: TF's evaluator is not part of
the training cluster; it shares only `--checkpoint-dir`, a volume in a cluster). Every
`--eval-interval` seconds it looks at `tf.train.latest_checkpoint`; a checkpoint it has not seen is
restored into a local evaluation graph of the same model and scored on the test split (one `eval`
log line with the checkpoint's global step, loss and accuracy; metrics; TensorBoard scalars under
`<dir>/eval` when tf.summary is available). It exits 0 once it has evaluated a checkpoint at or past
the step in the chief's `training_complete.json` marker (checkpoints.py), 143 on SIGTERM, and
STARTUP_TIMEOUT (retryable) when `--eval-timeout` passes without any new checkpoint (0: wait forever).
A checkpoint deleted by rotation between listing and restoring is skipped (the next poll sees a newer
one).
"""
from __future__ import annotations

import os
import time
from typing import Any, Optional

import tensorfleet as _tensorfleet

from . import checkpoints, models, runlog
from .exit_codes import ExitCode, LauncherExit

tf: Any = _tensorfleet   # its namespace is filled at import time: no static attributes


class _Evaluator:
    def __init__(self, args, task, telemetry):
        self.args, self.telemetry = args, telemetry
        self.data = models.load_data(args.data, seed=task.index)
        self.graph = tf.Graph()
        self.writer = None
        with self.graph.as_default():
            self.model = models.build(args.model, int(self.data.train.images.shape[1]), None, training=False)
            self.saver = tf.train.Saver()
            if hasattr(tf, "summary") and hasattr(tf.summary, "FileWriter"):
                self.loss_in = tf.placeholder(tf.float32, [], name="eval_loss")
                self.acc_in = tf.placeholder(tf.float32, [], name="eval_accuracy")
                self.summary_op = tf.summary.merge([tf.summary.scalar("loss", self.loss_in),
                                                    tf.summary.scalar("accuracy", self.acc_in)])
                self.writer = tf.summary.FileWriter(os.path.join(args.checkpoint_dir, "eval"))

    def evaluate(self, sess, path: str) -> Optional[int]:
        """Scores one checkpoint; its global step, or None when it vanished (rotated) meanwhile."""
        try:
            self.saver.restore(sess, path)
        except (tf.errors.NotFoundError, tf.errors.DataLossError, ValueError) as e:
            runlog.log("eval_skipped", f"{path}: {e}", path=path)
            return None
        step = int(sess.run(self.model.global_step))
        loss, accuracy = models.evaluate(sess, self.model, self.data.test.images, self.data.test.labels)
        self.telemetry.global_step(step)
        self.telemetry.loss(loss)
        runlog.log("eval", "", global_step=step, loss=round(loss, 6), accuracy=round(accuracy, 6),
                   checkpoint=os.path.basename(path))
        if self.writer is not None:
            summary = sess.run(self.summary_op, {self.loss_in: loss, self.acc_in: accuracy})
            self.writer.add_summary(summary, step)
            self.writer.flush()
        return step

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def evaluate_checkpoints(args, task, shutdown, telemetry) -> int:
    if not args.checkpoint_dir:
        raise LauncherExit(ExitCode.BAD_ARGUMENTS, "the evaluator needs --checkpoint-dir (where the chief saves)")
    evaluator = _Evaluator(args, task, telemetry)
    last_evaluated, last_step, last_new = None, -1, time.monotonic()
    runlog.log("evaluator", f"watching {args.checkpoint_dir} every {args.eval_interval:g} s")
    try:
        with tf.Session(graph=evaluator.graph) as sess:
            while True:
                latest = tf.train.latest_checkpoint(args.checkpoint_dir)
                if latest and latest != last_evaluated:
                    step = evaluator.evaluate(sess, latest)
                    if step is not None:
                        last_evaluated, last_step, last_new = latest, step, time.monotonic()
                marker = checkpoints.read_marker(args.checkpoint_dir)
                if marker is not None and last_step >= marker["global_step"]:
                    runlog.log("evaluator_done", "evaluated the chief's final checkpoint", global_step=last_step)
                    return ExitCode.SUCCESS
                if shutdown.requested:
                    return shutdown.exit_code
                if args.eval_timeout and time.monotonic() - last_new > args.eval_timeout:
                    raise LauncherExit(ExitCode.STARTUP_TIMEOUT, f"no new checkpoint in {args.checkpoint_dir} for "
                                                                 f"{args.eval_timeout:g} s")
                shutdown.event.wait(args.eval_interval)
    finally:
        evaluator.close()
