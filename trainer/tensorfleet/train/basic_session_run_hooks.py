"""Session-run hooks: the hook protocol (`SessionRunHook`, `SessionRunArgs`, ...) and TF 1.15's basic hooks.

Part of the training-loop layer (train/): `MonitoredSession` calls `begin` once,
`after_create_session` for each (re)created session, `before_run`/`after_run`
around every `run`, and `end` when the loop finishes normally. Hooks fetch what
they need by returning `SessionRunArgs` from `before_run`; everything goes
through the public Session API.
"""
from __future__ import annotations

import collections
import os
import time

import numpy as np

from ..platform import tf_logging as logging
from . import training_util

from ..summary.saver_hook import SecondOrStepTimer
from ..summary.writer import FileWriterCache

__all__ = ["SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues", "StopAtStepHook",
           "CheckpointSaverHook", "CheckpointSaverListener", "LoggingTensorHook", "NanTensorHook",
           "NanLossDuringTrainingError", "StepCounterHook", "FinalOpsHook", "FeedFnHook", "GlobalStepWaiterHook",
           "SecondOrStepTimer"]


class SessionRunHook:
    """`tf.train.SessionRunHook`: the base class of hooks (every method a no-op)."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """`tf.train.SessionRunArgs(fetches, feed_dict=None, options=None)`: what a hook adds to a run."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """`tf.train.SessionRunContext`: the run's original args and session; a hook may `request_stop()`."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self):
        self._stop_requested = True


class SessionRunValues(collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])):
    """`tf.train.SessionRunValues`: the hook's fetched `results` (same structure as its fetches)."""


def _global_step_tensor(hook_name):
    gs = training_util.get_global_step()
    if gs is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return gs


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step` (or after `num_steps` more steps)."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = _global_step_tensor("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        global_step = int(run_values.results) + 1
        if global_step >= self._last_step:
            step = int(run_context.session.run(self._global_step_tensor))  # TF: re-read, the step may have moved
            if step >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener:
    """`tf.train.CheckpointSaverListener`: called around each save; `after_save` returning True stops training."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint every `save_steps` steps or `save_secs` seconds, after the first step and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None, checkpoint_basename="model.ckpt",
                 scaffold=None, listeners=None, save_graph_def=True):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = listeners or []
        self._steps_per_run = 1
        self._save_graph_def = save_graph_def

    def begin(self):
        self._global_step_tensor = _global_step_tensor("CheckpointSaverHook")
        os.makedirs(self._checkpoint_dir, exist_ok=True)  # TF's hook writes graph.pbtxt there, creating it
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        global_step = int(session.run(self._global_step_tensor))
        # TF saves the graph here (graph.pbtxt; each checkpoint gets its .meta) and a checkpoint of the step
        # the session starts at
        if self._save_graph_def:
            from ..graph_io import write_graph
            from ..default_graph import get_default_graph
            write_graph(get_default_graph().as_graph_def(add_shapes=True), self._checkpoint_dir, "graph.pbtxt")
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        stale_global_step = int(run_values.results)
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session):
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        from ..default_graph import get_default_graph
        from ..graph import GraphKeys
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(f"No items in collection {GraphKeys.SAVERS}. Please add a saver to the collection "
                               "or provide a saver or scaffold.")
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which one "
                               "to use by passing it to the constructor.")
        self._saver = savers[0]
        return savers[0]

    def _save(self, session, step) -> bool:
        logging.info("Saving checkpoints for %d into %s.", step, self._save_path)
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._save_path, global_step=step, write_meta_graph=self._save_graph_def)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                logging.info("A CheckpointSaverListener requested that training be stopped. listener: %s", listener)
                should_stop = True
        return should_stop


class StepCounterHook(SessionRunHook):
    """Logs (and, with a summary writer, records) global steps per second every N steps or seconds."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step = None
        self._steps_per_run = 1
        self.rates: list = []  # (global_step, steps/sec) of each report, for callers and tests

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = _global_step_tensor("StepCounterHook")
        self._summary_tag = training_util.get_global_step().op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        stale_global_step = int(run_values.results)
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time is not None and elapsed_time > 0:
                    rate = elapsed_steps / elapsed_time
                    self.rates.append((global_step, rate))
                    logging.info("%s: %g", self._summary_tag, rate)
                    if self._summary_writer is not None and hasattr(self._summary_writer, "add_summary"):
                        self._write_summary(rate, global_step)
        self._last_global_step = stale_global_step

    def _write_summary(self, rate, global_step):
        from ..protos.summary_pb2 import Summary
        self._summary_writer.add_summary(Summary(value=[Summary.Value(tag=self._summary_tag, simple_value=rate)]),
                                         global_step)


class LoggingTensorHook(SessionRunHook):
    """Logs the values of `tensors` every N local steps or seconds (or only at the end: at_end=True)."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = [getattr(t, "name", t) for t in tensors]
            tensors = {getattr(t, "name", t): t for t in tensors}
        else:
            self._tag_order = sorted(tensors.keys())
        self._tensors = tensors
        self._formatter = formatter
        self._timer = SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter) if not only_log_at_end \
            else None
        self._log_at_end = at_end
        self.logged: list = []  # the dicts logged, for callers and tests

    def begin(self):
        if self._timer is not None:
            self._timer.reset()
        self._iter_count = 0
        from ..default_graph import get_default_graph
        g = get_default_graph()
        self._current_tensors = {tag: g.as_graph_element(t, allow_tensor=True, allow_operation=False)
                                 if isinstance(t, str) else t for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer is not None and self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, tensor_values):
        self.logged.append(dict(tensor_values))
        if self._formatter:
            logging.info(self._formatter(tensor_values))
        else:
            stats = [f"{tag} = {np.array2string(np.asarray(tensor_values[tag]))}" for tag in self._tag_order]
            logging.info("%s", ", ".join(stats))

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._timer.update_last_triggered_step(self._iter_count)
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Raises NanLossDuringTrainingError (or, with fail_on_nan_loss=False, requests a stop) on a NaN loss."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            failure_message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                logging.error(failure_message)
                raise NanLossDuringTrainingError
            logging.warning(failure_message)
            run_context.request_stop()


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` in `end()`; their values are `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is not None:
            self._final_ops_values = session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)


class FeedFnHook(SessionRunHook):
    """Adds `feed_fn()`'s feed dict to every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first run until the global step reaches `wait_until_step` (staggered worker start)."""

    def __init__(self, wait_until_step, poll_secs=0.5):
        self._wait_until_step = wait_until_step
        self._poll_secs = poll_secs

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = _global_step_tensor("GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        logging.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = int(run_context.session.run(self._global_step_tensor))
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                logging.info("Waiting for global step %d before starting training. Current step is %d.",
                             self._wait_until_step, current_step)
                last_logged_step = current_step
            time.sleep(self._poll_secs)
