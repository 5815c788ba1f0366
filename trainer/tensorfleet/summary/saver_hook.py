"""`tf.train.SummarySaverHook` and `tf.train.SecondOrStepTimer`: write summaries every N steps or seconds.

Top layer (uses `summary.writer` and `train.training_util`). A hook in TF 1.15's shape — `begin()`,
`before_run(run_context)` returning run args with `fetches`, `after_run(run_context, run_values)`,
`end(session)` — so a MonitoredTrainingSession can drive it, and a plain loop can too:

    hook.begin()
    args = hook.before_run(ctx)                     # ctx.session is the Session
    results = sess.run([train_op, args.fetches])[1]
    hook.after_run(ctx, RunValues(results))         # anything with `.results`

As TF's: the first run always writes (after a SessionLog START at that global step); later runs write when
the timer triggers for the step about to run; summaries are written at the global step read after the
run; `end()` flushes the writer. Exactly one of `scaffold`/`summary_op`, one of `save_steps`/`save_secs`.
"""
from __future__ import annotations

import collections
import time
from typing import Optional

from ..protos.event_pb2 import SessionLog
from .writer import FileWriterCache

__all__ = ["SecondOrStepTimer", "SummarySaverHook"]

#: what `before_run` returns (TF's SessionRunArgs fields)
RunArgs = collections.namedtuple("RunArgs", ["fetches", "feed_dict", "options"])
RunArgs.__new__.__defaults__ = (None, None)


class SecondOrStepTimer:
    """Triggers at most once per step, every `every_secs` seconds or every `every_steps` steps."""

    def __init__(self, every_secs: Optional[float] = None, every_steps: Optional[int] = None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("Either every_secs or every_steps should be provided, and not both "
                             f"(got every_secs={every_secs}, every_steps={every_steps}).")
        self._every_secs, self._every_steps = every_secs, every_steps
        self.reset()

    def reset(self) -> None:
        self._last_triggered_step: Optional[int] = None
        self._last_triggered_time: Optional[float] = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= (self._last_triggered_time or 0.0) + self._every_secs:
            return True
        return self._every_steps is not None and step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step: int):
        """Records a trigger at `step`; returns (seconds, steps) since the previous one (None, None first)."""
        now, last_time, last_step = time.time(), self._last_triggered_time, self._last_triggered_step
        self._last_triggered_time, self._last_triggered_step = now, step
        if last_time is None or last_step is None:
            return None, None
        return now - last_time, step - last_step

    def last_triggered_step(self) -> Optional[int]:
        return self._last_triggered_step


class SummarySaverHook:
    """`tf.train.SummarySaverHook(save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
    scaffold=None, summary_op=None)`."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        from ..train import training_util

        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._next_step: Optional[int] = None
        self._global_step_tensor = training_util.get_global_step()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use SummarySaverHook.")

    def _summary_ops(self) -> Optional[list]:
        op = self._summary_op if self._summary_op is not None else getattr(self._scaffold, "summary_op", None)
        if op is None:
            return None
        return op if isinstance(op, list) else [op]

    def before_run(self, run_context) -> RunArgs:
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        requests = {"global_step": self._global_step_tensor}
        ops = self._summary_ops()
        if self._request_summary and ops is not None:
            requests["summary"] = ops
        return RunArgs(requests, None, None)

    def after_run(self, run_context, run_values) -> None:
        if not self._summary_writer:
            return
        global_step = int(run_values.results["global_step"]) + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session=None) -> None:
        if self._summary_writer:
            self._summary_writer.flush()
