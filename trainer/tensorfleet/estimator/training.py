"""`tf.estimator.train_and_evaluate`, `TrainSpec`, `EvalSpec`: one call that does the right thing in
every role of a TFJob.

Reads the role from the estimator's `RunConfig` (TF_CONFIG) and, as TF 1.15's `training.py`:
- no cluster: trains locally and evaluates after each checkpoint (at most every `throttle_secs`)
  and after the last one; returns `(eval_metrics, export_results)`;
- chief / master / worker: starts this task's `tf.train.Server`, waits `(task_id + 1) * 5` s
  (at most 60, `RunConfig(experimental_max_worker_delay_secs=...)`) on a non-chief worker, then
  trains on `grpc://<own address>` to `max_steps`; then (Tensorfleet) the chief waits for the
  workers and releases the ps tasks (`ps_release.py`);
- ps: serves variables in `server.join()` until the chief releases it;
- evaluator: after `start_delay_secs`, evaluates every new checkpoint in `model_dir` at most
  every `throttle_secs` (summaries in `model_dir/eval_<name>`), and exits once it has evaluated
  a checkpoint at or past `max_steps`.
"""
from __future__ import annotations

import collections
import os
import time

from .. import errors
from .. import tf_logging as logging
from ..config import ConfigProto
from ..graph import GraphKeys
from ..summary.saver_hook import SecondOrStepTimer
from ..train import basic_session_run_hooks as hooks_lib
from . import evaluator_wait, ps_release
from .estimator import Estimator, _load_global_step
from .exporter import Exporter
from .run_config import TaskType

__all__ = ["TrainSpec", "EvalSpec", "train_and_evaluate", "Exporter"]

_DELAY_SECS_PER_WORKER = 5
_MAX_DELAY_SECS = 60


def _validate_hooks(hooks):
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, hooks_lib.SessionRunHook):
            raise TypeError(f"All hooks must be `SessionRunHook` instances, given: {hook}")
    return hooks


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
    """`tf.estimator.TrainSpec(input_fn, max_steps=None, hooks=None, saving_listeners=None)`."""

    def __new__(cls, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn, max_steps, _validate_hooks(hooks), tuple(saving_listeners or []))


class EvalSpec(collections.namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters",
                                                   "start_delay_secs", "throttle_secs"])):
    """`tf.estimator.EvalSpec(input_fn, steps=100, name=None, hooks=None, exporters=None, start_delay_secs=120,
    throttle_secs=600)`."""

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None, start_delay_secs=120,
                throttle_secs=600):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be string, given: {name}")
        if start_delay_secs < 0:
            raise ValueError(f"Must specify start_delay_secs >= 0, given: {start_delay_secs}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        if exporters is None:
            exporters = ()
        elif not isinstance(exporters, (list, tuple)):
            exporters = (exporters,)
        names = set()
        for e in exporters:
            if not isinstance(e, Exporter):
                raise TypeError(f"`exporters` must be an Exporter, an iterable of Exporter, or `None`, found {e}.")
            if not e.name or not e.name.strip():
                raise ValueError("An Exporter must have a non-empty name.")
            if e.name in names:
                raise ValueError(f"`exporters` must have unique names. Such a name cannot be `None`. {e.name} was "
                                 "used more than once.")
            names.add(e.name)
        return super().__new__(cls, input_fn, steps, name, _validate_hooks(hooks), tuple(exporters),
                               start_delay_secs, throttle_secs)


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains, evaluates and (for the given exporters) exports, in whichever role TF_CONFIG gives."""
    if not isinstance(estimator, Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`, given {type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: {type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: {type(eval_spec)}")
    config = estimator.config
    if config.task_type == TaskType.EVALUATOR and config.task_id > 0:
        raise ValueError("For distributed training, there can only be one `evaluator` task (with task id 0).  "
                         f"Given task id {config.task_id}")
    return _TrainingExecutor(estimator, train_spec, eval_spec).run()


class _Evaluator:
    """Evaluates the latest checkpoint unless it was evaluated already; runs the exporters."""

    def __init__(self, estimator, eval_spec, max_training_steps):
        self._estimator, self._eval_spec, self._max_steps = estimator, eval_spec, max_training_steps
        self._previous_ckpt_path = None
        self.is_final_export_triggered = False
        self._last_warning_time = 0.0

    def _log_err_msg(self, message):
        if time.time() - self._last_warning_time > 60:   # TF logs these at most once a minute
            logging.warning(message)
            self._last_warning_time = time.time()

    def evaluate_and_export(self):
        """-> (status, metrics or None, export results)."""
        latest = self._estimator.latest_checkpoint()
        if not latest:
            self._log_err_msg("Estimator is not trained yet. Will start an evaluation when a checkpoint is ready.")
            return "missing checkpoint", None, []
        if latest == self._previous_ckpt_path:
            self._log_err_msg("No new checkpoint ready for evaluation. Skip the current evaluation pass as evaluation "
                              "results are expected to be same for the same checkpoint.")
            return "no new checkpoint", None, []
        try:
            metrics = self._estimator.evaluate(input_fn=self._eval_spec.input_fn, steps=self._eval_spec.steps,
                                               name=self._eval_spec.name, checkpoint_path=latest,
                                               hooks=self._eval_spec.hooks)
        except (errors.NotFoundError, errors.DataLossError) as e:   # rotated away between listing and reading
            logging.warning("Checkpoint %s could not be read (%s); waiting for the next one", latest, e)
            return "no new checkpoint", None, []
        if not metrics or GraphKeys.GLOBAL_STEP not in metrics:
            raise ValueError("Internal error: `Estimator.evaluate` result should have `global_step` in result. "
                             f"Given {metrics}")
        final = bool(self._max_steps) and metrics[GraphKeys.GLOBAL_STEP] >= self._max_steps
        export_base = os.path.join(self._estimator.model_dir, "export")
        exports = [e.export(estimator=self._estimator, export_path=os.path.join(export_base, e.name),
                            checkpoint_path=latest, eval_result=metrics, is_the_final_export=final)
                   for e in self._eval_spec.exporters]
        if final:
            self.is_final_export_triggered = True
        self._last_warning_time = 0.0
        self._previous_ckpt_path = latest
        return "evaluated", metrics, exports


class _EvaluateOnCheckpoint(hooks_lib.CheckpointSaverListener):
    """Local training: evaluate after a checkpoint save (at most every `throttle_secs`) and after the last."""

    def __init__(self, evaluator, throttle_secs):
        self._evaluator = evaluator
        self._throttle_secs = throttle_secs
        self._timer = SecondOrStepTimer(every_secs=throttle_secs)
        self.eval_result, self.export_results = None, []

    def begin(self):
        self._timer.reset()

    def after_save(self, session, global_step_value):
        if self._timer.should_trigger_for_step(global_step_value):
            self._evaluate(global_step_value)
        else:
            logging.info(f"Skip the current checkpoint eval due to throttle secs ({self._throttle_secs} secs).")

    def end(self, session, global_step_value):
        if global_step_value != self._timer.last_triggered_step():
            self._evaluate(global_step_value)

    def _evaluate(self, global_step_value):
        self._timer.update_last_triggered_step(global_step_value)
        status, metrics, exports = self._evaluator.evaluate_and_export()
        if status != "evaluated":
            raise RuntimeError(f"There was no new checkpoint after the training. Eval status: {status}")
        self.eval_result, self.export_results = metrics, exports


class _TrainingExecutor:
    def __init__(self, estimator, train_spec, eval_spec):
        self._estimator, self._train_spec, self._eval_spec = estimator, train_spec, eval_spec

    def run(self):
        config = self._estimator.config
        if not config.cluster_spec and config.task_type != TaskType.EVALUATOR:
            logging.info("Running training and evaluation locally (non-distributed).")
            return self.run_local()
        if not config.task_type:
            raise ValueError("`estimator.config` must have task_type set. This usually means TF_CONFIG environment "
                             "is not set correctly.")
        if config.task_type == "local":
            raise ValueError("`task.type` in TF_CONFIG cannot be `local`. Leaving `cluster` and `task` properties in "
                             "TF_CONFIG absent triggers train and evaluate `Estimator` locally (non-distributed).")
        runners = {TaskType.CHIEF: self.run_chief, TaskType.MASTER: self.run_master, TaskType.WORKER: self.run_worker,
                   TaskType.PS: self.run_ps, TaskType.EVALUATOR: self.run_evaluator}
        if config.task_type not in runners:
            raise ValueError(f"Task type {config.task_type} is not supported. Supported task types are "
                             f"{sorted(runners)}")
        return runners[config.task_type]()

    # -- roles ------------------------------------------------------------------------------------
    def run_local(self):
        config = self._estimator.config
        logging.info("Start train and evaluate loop. The evaluate will happen after every checkpoint. Checkpoint "
                     "frequency is determined based on RunConfig arguments: save_checkpoints_steps "
                     f"{config.save_checkpoints_steps} or save_checkpoints_secs {config.save_checkpoints_secs}.")
        listener = self._eval_listener()
        self._estimator.train(input_fn=self._train_spec.input_fn, max_steps=self._train_spec.max_steps,
                              hooks=list(self._train_spec.hooks),
                              saving_listeners=list(self._train_spec.saving_listeners) + [listener])
        if listener.eval_result is None:   # training was skipped (max_steps already reached): evaluate once
            status, metrics, exports = listener._evaluator.evaluate_and_export()
            return metrics, exports
        return listener.eval_result, listener.export_results

    def _eval_listener(self):
        evaluator = _Evaluator(self._estimator, self._eval_spec, self._train_spec.max_steps)
        return _EvaluateOnCheckpoint(evaluator, self._eval_spec.throttle_secs)

    def run_chief(self):
        return self._start_distributed_training()

    def run_master(self):
        return self._start_distributed_training(saving_listeners=[self._eval_listener()])

    def run_worker(self):
        return self._start_distributed_training()

    def run_ps(self):
        server = self._start_std_server(self._estimator.config)
        try:
            server.join()   # as TF's, never returns: the chief's release (or the idle timeout) ends the process
        except SystemExit as e:
            if e.code == 0:
                logging.info("The chief released this ps task; exiting")
            raise
        return None, None

    def run_evaluator(self):
        return self._start_continuous_evaluation()

    # -- helpers ----------------------------------------------------------------------------------
    def _start_std_server(self, config):
        from ..distributed.server import Server
        if not config.cluster_spec:
            raise RuntimeError("Could not start server; be sure to specify cluster_spec, task_type, and task in "
                               "RunConfig or set the TF_CONFIG environment variable.")
        if not config.master:
            jobs = config.cluster_spec.jobs
            if (len(jobs) == 1 and config.cluster_spec.num_tasks(jobs[0]) == 1
                    and config.task_type in (TaskType.CHIEF, TaskType.WORKER, TaskType.MASTER)):
                logging.info("Skip starting Tensorflow server as there is only one node in the cluster.")
                return None
            raise RuntimeError("Could not start server; be sure to specify master in RunConfig or set the TF_CONFIG "
                               "environment variable.")
        logging.info("Start Tensorflow server.")
        session_config = ConfigProto(log_device_placement=False)
        return Server(config.cluster_spec, job_name=config.task_type, task_index=config.task_id,
                      config=session_config, protocol=config.protocol)

    def _start_distributed_training(self, saving_listeners=None):
        config = self._estimator.config
        server = self._start_std_server(config)
        delay = 0
        if config.task_type == TaskType.WORKER:
            max_delay = _MAX_DELAY_SECS
            if config.experimental_max_worker_delay_secs is not None:
                max_delay = int(config.experimental_max_worker_delay_secs)
            delay = min(max_delay, (config.task_id + 1) * _DELAY_SECS_PER_WORKER)
        if delay > 0:
            logging.info("Waiting %d secs before starting training.", delay)
            time.sleep(delay)
        self._estimator.train(input_fn=self._train_spec.input_fn, max_steps=self._train_spec.max_steps,
                              hooks=list(self._train_spec.hooks),
                              saving_listeners=list(self._train_spec.saving_listeners) + list(saving_listeners or []))
        if config.is_chief:
            ps_release.release_ps_tasks(server, config)
            if TaskType.EVALUATOR in config.cluster_spec.jobs:
                self._wait_for_evaluator()
        return None, None

    def _wait_for_evaluator(self):
        target = evaluator_wait.step_to_wait_for(_load_global_step(self._estimator.model_dir),
                                                 self._train_spec.max_steps)
        default = self._eval_spec.start_delay_secs + self._eval_spec.throttle_secs + 300
        timeout = float(os.environ.get("TENSORFLEET_EVALUATOR_WAIT_SECS", default))
        evaluator_wait.wait_for_final_evaluation(self._estimator.eval_dir(self._eval_spec.name), target, timeout)

    def _start_continuous_evaluation(self):
        start_delay = self._eval_spec.start_delay_secs
        if start_delay:
            logging.info("Waiting %f secs before starting eval.", start_delay)
            time.sleep(start_delay)
        evaluator = _Evaluator(self._estimator, self._eval_spec, self._train_spec.max_steps)
        throttle = self._eval_spec.throttle_secs
        last = None
        while True:
            start = time.time()
            status, metrics, _ = evaluator.evaluate_and_export()
            if metrics is not None:
                last = metrics
            if evaluator.is_final_export_triggered:
                logging.info("Exiting evaluation, global_step=%s >= train max_steps=%s",
                             last[GraphKeys.GLOBAL_STEP], self._train_spec.max_steps)
                return last, None
            remaining = throttle - (time.time() - start)
            if remaining > 0:
                logging.info("Waiting %f secs before starting next eval run.", remaining)
                time.sleep(remaining)
            elif throttle == 0 and status != "evaluated":
                logging.warning("EvalSpec.throttle_secs is set as 0. This might overload the job before finding (next) "
                                "new checkpoint. Please consider to increase it.")
                time.sleep(0.5)
