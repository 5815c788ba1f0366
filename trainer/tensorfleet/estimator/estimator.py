"""`tf.estimator.Estimator`: builds a fresh graph per call from `input_fn` + `model_fn` and runs it.

Top of the trainer's layers (above `train/`): `train` runs a `MonitoredTrainingSession` on the
config's master (a chief restores or initialises and checkpoints to `model_dir`, other workers wait
for it), `evaluate` restores a checkpoint into a local eval graph, runs the metrics' update ops
over the eval input and writes the results as summaries to `model_dir/eval[_<name>]`, `predict`
yields predictions. In a cluster the graph is built under TF's `replica_device_setter` (variables
on the ps tasks). TF 1.15's argument checks, hooks, log lines and summary tags.
"""
from __future__ import annotations

import copy
import os
import re
import tempfile

import numpy as np

from .. import dtypes as _dtypes
from .. import tf_logging as logging
from ..config import ConfigProto
from ..default_graph import add_to_collection, get_collection
from ..graph import Graph, GraphKeys
from ..ops import metrics_ops, state_ops
from ..protos.summary_pb2 import Summary
from ..summary.writer import FileWriterCache
from ..train import basic_session_run_hooks as hooks_lib
from ..train import checkpoint_io
from ..train.checkpoint_utils import checkpoint_prefix
from ..train.device_setter import replica_device_setter
from ..train.monitored_session import ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession
from ..train.saver import Saver, latest_checkpoint
from ..train.training_util import get_global_step, get_or_create_global_step
from . import inputs, saved_model_export
from .model_fn import LOSS_METRIC_KEY, EstimatorSpec, ModeKeys
from .run_config import RunConfig, TaskType

__all__ = ["Estimator", "WarmStartSettings"]

STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable", "MutableHashTableV2",
                   "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
                   "MutableDenseHashTableV2", "VarHandleOp", "BoostedTreesEnsembleResourceHandleOp")


class WarmStartSettings:
    """`tf.estimator.WarmStartSettings(ckpt_to_initialize_from, vars_to_warm_start='.*')`: variables whose
    names match the regex (or are in the list) start from the checkpoint's values when a training run
    initialises (not when it restores from `model_dir`)."""

    def __init__(self, ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
                 var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise ValueError("`ckpt_to_initialize_from` MUST be set in WarmStartSettings")
        self.ckpt_to_initialize_from = os.fspath(ckpt_to_initialize_from)
        self.vars_to_warm_start = vars_to_warm_start
        self.var_name_to_prev_var_name = dict(var_name_to_prev_var_name or {})
        if var_name_to_vocab_info:
            raise NotImplementedError("WarmStartSettings(var_name_to_vocab_info=...) is not supported")


def _replica_device_setter(config):
    if config.num_ps_replicas <= 0:
        return None
    worker_device = f"/job:{config.task_type}/task:{config.task_id}" if config.task_type else "/job:worker"
    return replica_device_setter(ps_tasks=config.num_ps_replicas, worker_device=worker_device, merge_devices=True,
                                 ps_ops=list(STANDARD_PS_OPS), cluster=config.cluster_spec)


def _load_global_step(model_dir):
    ckpt = latest_checkpoint(model_dir) if model_dir else None
    if not ckpt:
        return 0
    try:
        return int(checkpoint_io.read_checkpoint(ckpt, [GraphKeys.GLOBAL_STEP])[GraphKeys.GLOBAL_STEP])
    except Exception:  # noqa: BLE001  (no global step in it: start from 0, as TF)
        return 0


class Estimator:
    """`tf.estimator.Estimator(model_fn, model_dir=None, config=None, params=None, warm_start_from=None)`."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        if config is None:
            config = RunConfig()
        elif not isinstance(config, RunConfig):
            raise ValueError(f"config must be an instance of `RunConfig`, but provided {config}.")
        model_dir = os.fspath(model_dir) if model_dir is not None else None
        if model_dir is not None and config.model_dir is not None and model_dir != config.model_dir:
            raise ValueError("`model_dir` are set both in constructor and `RunConfig`, but with different values. "
                             f"In constructor: '{model_dir}', in `RunConfig`: '{config.model_dir}' ")
        model_dir = model_dir or config.model_dir
        if model_dir is None:
            model_dir = tempfile.mkdtemp()
            logging.warning("Using temporary folder as model directory: %s", model_dir)
        if config.model_dir != model_dir:
            config = config.replace(model_dir=model_dir)
        self._config = config
        self._model_dir = model_dir
        logging.info("Using config: %s", config)
        if model_fn is None:
            raise ValueError("model_fn must be provided to Estimator.")
        args = inputs.fn_args(model_fn)
        if "features" not in args:
            raise ValueError(f"model_fn ({model_fn}) must include features argument.")
        if params is not None and "params" not in args:
            raise ValueError(f"model_fn ({model_fn}) does not include params argument, but params ({params}) is "
                             "passed to Estimator.")
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._session_config = config.session_config or ConfigProto(allow_soft_placement=True)
        self._device_fn = config.device_fn or _replica_device_setter(config)
        if isinstance(warm_start_from, (str, os.PathLike)):
            warm_start_from = WarmStartSettings(warm_start_from)
        self._warm_start_settings = warm_start_from

    # -- properties -----------------------------------------------------------------------------
    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: copy.deepcopy(self._config))
    params = property(lambda self: copy.deepcopy(self._params))
    model_fn = property(lambda self: self._model_fn)

    def eval_dir(self, name=None):
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    def latest_checkpoint(self):
        return latest_checkpoint(self._model_dir)

    def get_variable_names(self):
        ckpt = self._require_checkpoint()
        return sorted(checkpoint_io.read_checkpoint(ckpt))

    def get_variable_value(self, name):
        ckpt = self._require_checkpoint()
        values = checkpoint_io.read_checkpoint(ckpt)
        if name not in values:
            raise ValueError(f"Variable {name!r} is not in checkpoint {ckpt}")
        return np.asarray(values[name])

    def _require_checkpoint(self):
        ckpt = self.latest_checkpoint()
        if not ckpt:
            raise ValueError(f"No checkpoint found in {self._model_dir}. Train the estimator first.")
        return ckpt

    # -- graph building -------------------------------------------------------------------------
    def _call_model_fn(self, features, labels, mode, config):
        args = inputs.fn_args(self._model_fn)
        kwargs = {}
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = config
        logging.info("Calling model_fn.")
        spec = self._model_fn(features=features, **kwargs)
        logging.info("Done calling model_fn.")
        if not isinstance(spec, EstimatorSpec):
            raise ValueError("model_fn should return an EstimatorSpec.")
        return spec

    def _features_and_labels(self, input_fn, mode):
        return inputs.build_input(input_fn, mode, self.params, self.config)

    # -- train ------------------------------------------------------------------------------------
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains until `steps` more steps, `max_steps` in all, or the end of the input."""
        if self._config.task_type in (TaskType.EVALUATOR, TaskType.PS):
            raise ValueError("Train has been called wrong configuration. Please use tf.estimator.train_and_evaluate "
                             "which calls proper API according to given configuration. Current configuration: "
                             f"{self._config}.")
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None and max_steps <= _load_global_step(self._model_dir):
            logging.info("Skipping training since max_steps has already saved.")
            return self
        hooks = _check_hooks(hooks)
        if steps is not None or max_steps is not None:
            hooks.append(hooks_lib.StopAtStepHook(num_steps=steps, last_step=max_steps))
        loss = self._train_model(input_fn, hooks, list(saving_listeners or []))
        logging.info("Loss for final step: %s.", loss)
        return self

    def _train_model(self, input_fn, hooks, saving_listeners):
        g = Graph()
        with g.as_default(), g.device(self._device_fn):
            if self._config.tf_random_seed is not None:
                from ..default_graph import set_random_seed
                set_random_seed(self._config.tf_random_seed)
            global_step = get_or_create_global_step(g)
            features, labels, input_hooks = self._features_and_labels(input_fn, ModeKeys.TRAIN)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self.config)
            global_step = get_global_step(g)
            return self._train_with_spec(spec, list(input_hooks), hooks, global_step, saving_listeners, g)

    def _train_with_spec(self, spec, worker_hooks, hooks, global_step, saving_listeners, g):
        from ..summary import summary_api
        if self._warm_start_settings is not None:
            _install_warm_start(spec.scaffold, self._warm_start_settings)
        if not any(getattr(x, "op", None) is not None and x.op.name == "loss"
                   for x in get_collection(GraphKeys.SUMMARIES)):
            summary_api.scalar("loss", spec.loss)
        add_to_collection(GraphKeys.LOSSES, spec.loss)
        worker_hooks.extend(hooks)
        worker_hooks.append(hooks_lib.NanTensorHook(spec.loss))
        if self._config.log_step_count_steps is not None:
            worker_hooks.append(hooks_lib.LoggingTensorHook({"loss": spec.loss, "step": global_step},
                                                            every_n_iter=self._config.log_step_count_steps))
        worker_hooks.extend(spec.training_hooks)
        if not (spec.scaffold.saver or get_collection(GraphKeys.SAVERS)):
            add_to_collection(GraphKeys.SAVERS, Saver(sharded=True, max_to_keep=self._config.keep_checkpoint_max,
                                                      keep_checkpoint_every_n_hours=(
                                                          self._config.keep_checkpoint_every_n_hours),
                                                      save_relative_paths=True))
        chief_hooks: list = []
        all_hooks = worker_hooks + list(spec.training_chief_hooks)
        saver_hooks = [h for h in all_hooks if isinstance(h, hooks_lib.CheckpointSaverHook)]
        if self._config.save_checkpoints_secs or self._config.save_checkpoints_steps:
            if not saver_hooks:
                chief_hooks = [hooks_lib.CheckpointSaverHook(self._model_dir,
                                                             save_secs=self._config.save_checkpoints_secs,
                                                             save_steps=self._config.save_checkpoints_steps,
                                                             scaffold=spec.scaffold)]
                saver_hooks = [chief_hooks[0]]
        if saving_listeners:
            if not saver_hooks:
                raise ValueError("There should be a CheckpointSaverHook to use saving_listeners. Please set one of the "
                                 "RunConfig.save_checkpoints_steps or RunConfig.save_checkpoints_secs.")
            saver_hooks[0]._listeners.extend(saving_listeners)
        loss, any_step_done = None, False
        try:
            with MonitoredTrainingSession(master=self._config.master, is_chief=self._config.is_chief,
                                          checkpoint_dir=self._model_dir, scaffold=spec.scaffold, hooks=worker_hooks,
                                          chief_only_hooks=tuple(chief_hooks) + tuple(spec.training_chief_hooks),
                                          save_checkpoint_secs=0, save_summaries_steps=self._config.save_summary_steps,
                                          config=self._session_config,
                                          log_step_count_steps=self._config.log_step_count_steps,
                                          max_wait_secs=self._config.session_creation_timeout_secs) as sess:
                while not sess.should_stop():
                    _, loss = sess.run([spec.train_op, spec.loss])
                    any_step_done = True
        finally:
            _close_feeders(worker_hooks)
        if not any_step_done:
            logging.warning("Training with estimator made no steps. Perhaps input is empty or misspecified.")
        return loss

    def _latest_or_initialize(self, purpose: str):
        """The latest checkpoint in model_dir, or None (TF then runs the initializers, saying so)."""
        path = latest_checkpoint(self._model_dir)
        if not path:
            logging.info(f"Could not find trained model in model_dir: {self._model_dir}, running "
                         f"initialization to {purpose}.")
        return path

    # -- evaluate ---------------------------------------------------------------------------------
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates the latest (or given) checkpoint for `steps` batches or until the input ends; writes the
        results to `eval_dir(name)` and returns them (with `global_step`)."""
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        hooks = _check_hooks(hooks)
        checkpoint_path = checkpoint_path or self._latest_or_initialize("evaluate")
        with Graph().as_default():
            global_step = get_or_create_global_step()
            features, labels, input_hooks = self._features_and_labels(input_fn, ModeKeys.EVAL)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self.config)
            if LOSS_METRIC_KEY in spec.eval_metric_ops:
                raise ValueError(f'Metric with name "{LOSS_METRIC_KEY}" is not allowed, because Estimator already '
                                 "defines a default metric with the same name.")
            metric_ops = dict(spec.eval_metric_ops)
            metric_ops[LOSS_METRIC_KEY] = metrics_ops.mean(spec.loss)
            update_ops = [v[1] for v in metric_ops.values()]
            eval_dict = {k: v[0] for k, v in metric_ops.items()}
            if GraphKeys.GLOBAL_STEP in eval_dict:
                raise ValueError("Metric with name `global_step` is not allowed, because Estimator already defines "
                                 "a default metric with the same name.")
            eval_dict[GraphKeys.GLOBAL_STEP] = global_step
            all_hooks = list(input_hooks) + hooks + list(spec.evaluation_hooks)
            results = self._evaluate_once(checkpoint_path, spec.scaffold, update_ops, eval_dict, all_hooks, steps)
        step = int(results[GraphKeys.GLOBAL_STEP])
        write_dict_to_summary(self.eval_dir(name), results, step)
        return results

    def _evaluate_once(self, checkpoint_path, scaffold, update_ops, eval_dict, hooks, steps):
        import datetime
        eval_step = state_ops.Variable(0, name="eval_step", trainable=False, dtype=_dtypes.int64,
                                       collections=[GraphKeys.LOCAL_VARIABLES])
        with_step = [update_ops, state_ops.assign_add(eval_step, 1)]
        final = hooks_lib.FinalOpsHook(eval_dict)
        all_hooks = list(hooks) + ([_StopAfterNEvalsHook(steps)] if steps is not None else []) + [final]
        logging.info("Starting evaluation at %s", datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"))
        if checkpoint_path:
            logging.info("Restoring parameters from %s", checkpoint_path)
        creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_filename_with_path=checkpoint_path,
                                      master=self._config.evaluation_master, config=self._session_config)
        try:
            with MonitoredSession(session_creator=creator, hooks=all_hooks) as session:
                while not session.should_stop():
                    session.run(with_step)
        finally:
            _close_feeders(all_hooks)
        logging.info("Finished evaluation at %s", datetime.datetime.utcnow().strftime("%Y-%m-%d-%H:%M:%S"))
        values = final.final_ops_values
        if values is None:
            raise RuntimeError("Evaluation ended before its final metric values were read")
        return values

    # -- predict ----------------------------------------------------------------------------------
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True):
        """Yields predictions (one example at a time, or whole batches) until the input ends."""
        hooks = _check_hooks(hooks)
        checkpoint_path = checkpoint_path or self._latest_or_initialize("predict")
        with Graph().as_default():
            get_or_create_global_step()
            features, _labels, input_hooks = inputs.build_input(input_fn, ModeKeys.PREDICT, self.params,
                                                                self.config)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self.config)
            predictions = spec.predictions
            if predict_keys is not None:
                if not isinstance(predictions, dict):
                    raise ValueError("predict_keys argument is not valid in case of non-dict predictions.")
                missing = [k for k in predict_keys if k not in predictions]
                if missing:
                    raise ValueError(f"Expected to run at least one output from {list(predictions)}, provided "
                                     f"{predict_keys}.")
                predictions = {k: predictions[k] for k in predict_keys}
            all_hooks = list(input_hooks) + hooks + list(spec.prediction_hooks)
            creator = ChiefSessionCreator(scaffold=spec.scaffold, checkpoint_filename_with_path=checkpoint_path,
                                          master=self._config.master, config=self._session_config)
            try:
                with MonitoredSession(session_creator=creator, hooks=all_hooks) as session:
                    while not session.should_stop():
                        values = session.run(predictions)
                        if not yield_single_examples:
                            yield values
                        elif not isinstance(values, dict):
                            yield from values
                        else:
                            n = len(next(iter(values.values())))
                            for i in range(n):
                                yield {k: v[i] for k, v in values.items()}
            finally:
                _close_feeders(all_hooks)

    export_saved_model = saved_model_export.export_saved_model
    export_savedmodel = saved_model_export.export_savedmodel


class _StopAfterNEvalsHook(hooks_lib.SessionRunHook):
    def __init__(self, num_evals):
        self._num_evals, self._done = num_evals, 0

    def after_run(self, run_context, run_values):
        self._done += 1
        if self._done >= self._num_evals:
            run_context.request_stop()


def _check_hooks(hooks) -> list:
    hooks = list(hooks or [])
    for h in hooks:
        if not isinstance(h, hooks_lib.SessionRunHook):
            raise TypeError(f"Hooks must be a SessionRunHook, given: {h}")
    return hooks


def _close_feeders(hooks) -> None:
    for h in hooks:
        if isinstance(h, inputs.InputFeeder):
            h.close()


def _install_warm_start(scaffold, settings):
    """Scaffold's `init_fn` loads the matching trainable variables from the checkpoint after initialisation."""
    ckpt = checkpoint_prefix(settings.ckpt_to_initialize_from)
    wanted = settings.vars_to_warm_start
    variables = get_collection(GraphKeys.TRAINABLE_VARIABLES)
    # a part of a partitioned variable goes by its full name (TF's _infer_var_name) and gets its slice
    named = [(getattr(v, "_save_slice_info", None), v) for v in variables]
    named = [(info.full_name if info else v.op.name, info, v) for info, v in named]
    if isinstance(wanted, str):
        pattern = re.compile(wanted)
        chosen = [(n, i, v) for n, i, v in named if pattern.match(v.op.name)]
    else:
        names = set(wanted or [])
        chosen = [(n, i, v) for n, i, v in named if n in names]
    values = checkpoint_io.read_checkpoint(ckpt)
    prev = settings.var_name_to_prev_var_name
    pairs = []
    for name, info, v in chosen:
        src = prev.get(name, name)
        if src not in values:
            raise ValueError(f"Warm-start: variable {src!r} is not in checkpoint {ckpt}")
        value = values[src]
        if info is not None:
            if value.shape != tuple(info.full_shape):
                raise ValueError(f"Warm-start: partitioned variable {name} has shape {list(info.full_shape)}, "
                                 f"tensor {src!r} in checkpoint {ckpt} has {list(value.shape)}")
            value = value[tuple(slice(o, o + n) for o, n in zip(info.var_offset, info.var_shape, strict=True))]
        pairs.append((v, value))
    logging.info("Warm-starting %d variable(s) from %s", len(pairs), ckpt)
    previous = scaffold._init_fn

    def init_fn(session):
        if previous is not None:
            previous(session)
        for var, value in pairs:
            var.load(value, session)

    scaffold._init_fn = init_fn


def write_dict_to_summary(output_dir, dictionary, current_global_step):
    """The eval results as scalar summaries at `current_global_step` (TF's `_write_dict_to_summary`)."""
    logging.info("Saving dict for global step %d: %s", current_global_step,
                 ", ".join(f"{k} = {dictionary[k]}" for k in sorted(dictionary)))
    writer = FileWriterCache.get(output_dir)
    summary = Summary()
    for key in sorted(dictionary):
        if key == GraphKeys.GLOBAL_STEP:
            continue
        value = np.asarray(dictionary[key])
        if value.dtype.kind in "fiu" and value.size == 1:
            summary.value.add(tag=key, simple_value=float(value.reshape(())))
        else:
            logging.warning("Skipping summary for %s, must be a float or an int scalar.", key)
    writer.add_summary(summary, current_global_step)
    writer.flush()
