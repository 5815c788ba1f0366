"""`--sync-replicas`: a training step split at the sync barrier, so the wait for the token can be timed.

Used by training.py. `tf.train.SyncReplicasOptimizer`'s train op is, as in TF 1.15, "push every gradient
to its accumulator, then (control dependency) dequeue a token from the shared token queue into the local
step". Run as one `Session.run`, the time spent waiting for the chief's queue runner to release the step
cannot be told apart from the gradient computation. `BarrierStep` runs the same two halves as two runs:
the pushes (the dequeue's control inputs, the very ops of the train op) with the loss, then a dequeue of
the same queue into the same local step followed by a read of the global step; the second run's wall
time is the barrier wait (`tensorfleet_sync_barrier_wait_seconds`). The graph's semantics are those of
the single train op (the two halves in the same order).

`BarrierStep.build` returns None when the optimizer's graph does not have that shape (another
implementation): the launcher then runs the train op whole and observes no barrier wait.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Optional

import tensorfleet as _tensorfleet

tf: Any = _tensorfleet   # its namespace is filled at import time: no static attributes


@dataclass(frozen=True)
class BarrierStep:
    push: Any          # the gradient pushes of one step (the train op's accumulator applies)
    wait: Any          # the global step, read after a token was dequeued into the local step

    @classmethod
    def build(cls, optimizer, train_op, global_step) -> Optional["BarrierStep"]:
        """The two halves of `train_op` (call in the training graph, under its device scope), or None."""
        queue = getattr(optimizer, "_sync_token_queue", None)
        local_step = getattr(optimizer, "_local_step", None)
        op = getattr(train_op, "op", None)
        if queue is None or local_step is None or op is None:
            return None
        tokens = [t for t in op.inputs if t.op.type.startswith("QueueDequeue")]
        if len(tokens) != 1 or not tokens[0].op.control_inputs:
            return None
        push = tf.group(*tokens[0].op.control_inputs, name="sync_push_gradients")
        assign = tf.assign(local_step, queue.dequeue(name="sync_wait_token"), name="sync_take_token")
        with tf.control_dependencies([assign]):
            wait = global_step.read_value()
        return cls(push, wait)

    def run(self, sess, fetches: list, feeds: dict) -> tuple:
        """(values of `fetches` run with the pushes, the global step after the barrier, seconds waited)."""
        out = sess.run([self.push, *fetches], feeds)
        started = time.perf_counter()
        step = sess.run(self.wait)
        return out[1:], int(step), time.perf_counter() - started
