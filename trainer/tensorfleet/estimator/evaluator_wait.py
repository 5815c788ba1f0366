"""The chief of a cluster with an `evaluator` task waits for the evaluator's final evaluation before it exits.

A TFJob succeeds when its chief does, and then stops the pods still running (Kubeflow's default
`cleanPodPolicy: Running`): an evaluator that is still scoring the final checkpoint would be cut
short, and the job would end without the final evaluation TF users expect. So the chief, after its
final checkpoint (and after releasing the ps tasks), polls `model_dir/eval_<name>`'s event files
until one holds a summary at or past the step the evaluator will evaluate last (`step_to_wait_for`), for at
most `timeout` seconds
(`TENSORFLEET_EVALUATOR_WAIT_SECS`; default: the EvalSpec's start delay + throttle + 300 s). It never
fails the chief: a missing evaluator costs the wait and a warning. (TF 1.15's chief exits at once.)
"""
from __future__ import annotations

import glob
import os
import time

from .. import errors
from .. import tf_logging as logging
from ..io.tfrecord import read_records
from ..protos.event_pb2 import Event

__all__: list = []

POLL_SECONDS = 1.0


def evaluated_step(eval_dir: str) -> int:
    """The highest step of a summary in the event files of `eval_dir` (-1 if none yet)."""
    best = -1
    for path in sorted(glob.glob(os.path.join(eval_dir, "events.out.tfevents.*"))):
        try:
            for record in read_records(path, allow_truncated_tail=True):
                event = Event.FromString(record)
                if event.HasField("summary") and event.step > best:
                    best = event.step
        except (errors.OpError, OSError, ValueError):   # being written or rotated: look again later
            continue
    return best


def step_to_wait_for(final_step: int, max_steps) -> int:
    """The step whose evaluation ends the chief's wait. The evaluator leaves after its first evaluation at or past
    `max_steps` (TF's rule), which may be of a checkpoint before the chief's last one (async workers push the
    global step past max_steps between the two): so the chief waits for that, never for an evaluation of its own
    final checkpoint that will not happen."""
    return min(final_step, max_steps) if max_steps else final_step


def wait_for_final_evaluation(eval_dir: str, final_step: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    logging.info("Waiting up to %d s for the evaluator's evaluation of step %d in %s", timeout, final_step, eval_dir)
    while True:
        if evaluated_step(eval_dir) >= final_step:
            logging.info("The evaluator has evaluated the final checkpoint (step %d)", final_step)
            return True
        if time.monotonic() >= deadline:
            logging.warning("No evaluation of step %d in %s after %d s; exiting without it", final_step, eval_dir,
                            timeout)
            return False
        time.sleep(POLL_SECONDS)
