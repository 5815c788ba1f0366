"""`tf.keras.Model`: a Network with `compile`, `fit`, `evaluate`, `predict` (TF 1.15's keras/engine/training.py,
graph mode, the v1 loops).

`compile` builds the loss and metric graph at once (training_compile.py) and remembers the trainable weights;
the first `fit`/`train_on_batch` builds the train function in the name scope `training`: the optimizer's
updates (`training/Adam/...`) + the model's updates, fetched as [total_loss] + metric results by ONE cached
session callable (backend/function.py). Its inputs are the model's input placeholders, the targets, the
sample weights and (when the learning phase is not fixed) the learning phase, fed True. evaluate/predict
use the test/predict functions (no learning-phase feed: it defaults to False).
"""
from __future__ import annotations

from ... import tf_logging as logging
from ...graph import Tensor
from ...ops.functional_ops import nest_flatten
from .. import backend as K
from .. import optimizers as optimizers_module
from ..callbacks.base import ModeKeys
from . import training_arrays
from . import training_compile as tc
from .training_utils import standardize_sample_or_class_weights
from .network import Network


class Model(Network):
    """`Model(inputs, outputs, name=None)` or a subclass with `call`; see the module doc for training."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        with self._no_tracking():
            self._is_compiled = False
            self._endpoints: list = []
            self.loss = None
            self.train_function = self.test_function = self.predict_function = None
            self.stop_training = False
            self.history = None

    # -- compile ------------------------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, sample_weight_mode=None,
                weighted_metrics=None, target_tensors=None, distribute=None, **kwargs):
        """Configures training: the optimizer, the loss(es) per output and the metrics."""
        if set(kwargs) - {"_sample_weight_tensors"}:  # (model_to_estimator passes the input_fn's sample weights)
            raise TypeError(f"Invalid keyword argument(s) in `compile`: {sorted(kwargs)}")
        if distribute is not None:
            raise NotImplementedError("compile: distribute is not supported")
        with self._no_tracking():
            self.optimizer = optimizers_module.get(optimizer)
            self.loss = loss or {}
            self._compile_args = dict(metrics=metrics, weighted_metrics=weighted_metrics, loss_weights=loss_weights,
                                      sample_weight_mode=sample_weight_mode, target_tensors=target_tensors,
                                      sample_weight_tensors=kwargs.pop("_sample_weight_tensors", None))
            self._is_compiled = True
            if not self.inputs:  # subclassed / deferred: compiled when the data sets the inputs
                return
            self._compile_endpoints()

    def _compile_endpoints(self):
        args = self._compile_args
        names = self.output_names
        loss_fns = tc.prepare_loss_functions(self.loss, names)
        loss_weights = tc.prepare_loss_weights(args["loss_weights"], names)
        modes = args["sample_weight_mode"]
        modes = [modes.get(n) if isinstance(modes, dict) else (modes[i] if isinstance(modes, list) else modes)
                 for i, n in enumerate(names)]
        targets = tc.standardize_target_tensors(args["target_tensors"], names)
        weights = standardize_sample_or_class_weights(args["sample_weight_tensors"], names, "sample_weight")
        with K.get_graph().as_default():
            self._endpoints = [tc.Endpoint(o, n, fn, w, m, target=t, sample_weight=sw) for o, n, fn, w, m, t, sw
                               in zip(self.outputs, names, loss_fns, loss_weights, modes, targets, weights)]
            shapes = [tuple(o.shape.as_list()) if o.shape.ndims is not None else (None,) for o in self.outputs]
            per_output = tc.collect_per_output_metrics(args["metrics"], names, shapes, loss_fns)
            weighted = tc.collect_per_output_metrics(args["weighted_metrics"], names, shapes, loss_fns, True)
            used = ["loss"]
            if len(self._endpoints) > 1:
                with K.name_scope(None):
                    for e in self._endpoints:
                        if e.loss_fn is not None:
                            e.output_loss_metric = _mean_metric(e.loss_name)
                            used.append(e.loss_name)
            for i, e in enumerate(self._endpoints):
                if e.loss_fn is None:
                    continue
                for target, source in ((e.metrics, per_output[i]), (e.weighted_metrics, weighted[i])):
                    for name, metric in source.items():
                        unique = self._unique_metric_name(name, i, used)
                        metric._name = unique
                        used.append(unique)
                        target[unique] = metric
            self._feed_targets = [e.target for e in self._endpoints
                                  if e.loss_fn is not None and e.target_is_placeholder]
            self._feed_sample_weights = [e.sample_weight for e in self._endpoints if e.loss_fn is not None]
            self._feed_output_names = [e.output_name for e in self._endpoints if e.loss_fn is not None]
            self.total_loss, self._loss_results, self._metric_results = tc.build_loss_and_metrics(
                self, self.outputs, [e.target for e in self._endpoints],
                [e.sample_weight for e in self._endpoints])
        with self._no_tracking():  # a record, not weights of the model's own
            self._collected_trainable_weights = self.trainable_weights
        self.train_function = self.test_function = self.predict_function = None

    def _unique_metric_name(self, name, output_index, used):
        if len(self.output_names) > 1:
            name = f"{self.output_names[output_index]}_{name}"
        base, j = name, 1
        while name in used:
            name = f"{base}_{j}"
            j += 1
        return name

    @property
    def _compile_metric_functions(self):
        """The compiled metric objects (per output: metrics, then weighted metrics), as TF names them."""
        return [m for e in self._endpoints if e.loss_fn is not None
                for m in list(e.metrics.values()) + list(e.weighted_metrics.values())]

    @property
    def metrics(self):
        """The compiled metric objects (per output: metrics then weighted metrics) and the layers' metrics."""
        out = []
        for e in self._endpoints:
            out += list(e.metrics.values()) + list(e.weighted_metrics.values())
        return out + super().metrics

    @property
    def metrics_names(self):
        names = ["loss"]
        if len(self._endpoints) > 1:
            names += [e.loss_name for e in self._endpoints if e.loss_fn is not None]
        return names + [m.name for m in self.metrics]

    def _training_eval_metrics(self):
        return [e.output_loss_metric for e in self._endpoints if e.output_loss_metric is not None] + self.metrics

    def reset_metrics(self):
        """Zeroes every compiled metric (fit/evaluate do it at each epoch start)."""
        values = [(v, 0) for m in self._training_eval_metrics() for v in m.variables]
        K.batch_set_value(values)

    # -- functions ------------------------------------------------------------------------------------------
    def _learning_phase_feed(self):
        phase = K.symbolic_learning_phase()
        return [] if isinstance(phase, int) else [phase]

    def _make_train_function(self):
        if self.train_function is not None:
            return self.train_function
        self._check_trainable_weights_consistency()
        inputs = self._feed_inputs + self._feed_targets + self._feed_sample_weights + self._learning_phase_feed()
        with K.get_graph().as_default():
            with K.name_scope("training"):
                updates = self.optimizer.get_updates(params=self._collected_trainable_weights, loss=self.total_loss)
                updates += self.get_updates_for(None) + self.get_updates_for(self.inputs)
            with K.name_scope("training"):  # a second `training` scope, as TF's (`training_1`): same op names
                self.train_function = K.function(inputs, [self.total_loss] + self._loss_results + self._metric_results,
                                                 updates=updates, name="train_function")
        return self.train_function

    def _make_test_function(self):
        if self.test_function is None:
            inputs = self._feed_inputs + self._feed_targets + self._feed_sample_weights
            with K.get_graph().as_default():
                self.test_function = K.function(inputs, [self.total_loss] + self._loss_results + self._metric_results,
                                                updates=self.state_updates, name="test_function")
        return self.test_function

    def _make_predict_function(self):
        if self.predict_function is None:
            with K.get_graph().as_default(), K.name_scope(ModeKeys.PREDICT):
                self.predict_function = K.function(self._feed_inputs, self.outputs, updates=self.state_updates,
                                                   name="predict_function")
        return self.predict_function

    def _make_execution_function(self, mode):
        if mode == ModeKeys.TRAIN:
            return self._make_train_function()
        if mode == ModeKeys.TEST:
            return self._make_test_function()
        return self._make_predict_function()

    def _check_trainable_weights_consistency(self):
        if len(self.trainable_weights) != len(self._collected_trainable_weights):
            logging.warning("Discrepancy between trainable weights and collected trainable weights, did you set "
                            "`model.trainable` without calling `model.compile` after ?")

    def _prepare_feed_values(self, inputs, targets, sample_weights, mode):
        ins = list(inputs)
        if mode != ModeKeys.PREDICT:
            ins += list(targets) + list(sample_weights)
        if mode == ModeKeys.TRAIN and self._learning_phase_feed():
            ins.append(True)
        return ins

    # -- data ---------------------------------------------------------------------------------------------
    def _set_inputs(self, inputs, outputs=None, training=None):
        """Sets a subclassed/deferred model's inputs (placeholders made from numpy data) and outputs."""
        from .training_inputs import set_inputs
        set_inputs(self, inputs, outputs, training)

    def _standardize_user_data(self, x, y=None, sample_weight=None, class_weight=None, batch_size=None,
                               check_steps=False, steps_name="steps", steps=None, validation_split=0,
                               shuffle=False):
        from .training_inputs import standardize_user_data
        return standardize_user_data(self, x, y, sample_weight, class_weight)

    # -- training API ---------------------------------------------------------------------------------------
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_freq=1, max_queue_size=10, workers=1,
            use_multiprocessing=False, **kwargs):
        """Trains for `epochs` epochs over numpy arrays or a tf.data Dataset; returns the History."""
        from .training_inputs import fit_inputs
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {kwargs}")
        feeds = fit_inputs(self, x, y, batch_size, sample_weight, class_weight, validation_split, validation_data,
                           steps_per_epoch, validation_steps, epochs)
        return training_arrays.model_iteration(
            self, feeds.x, feeds.y, feeds.sample_weights, batch_size=feeds.batch_size, epochs=epochs,
            verbose=verbose, callbacks=callbacks, val_inputs=feeds.val_x, val_targets=feeds.val_y,
            val_sample_weights=feeds.val_sample_weights, shuffle=shuffle, initial_epoch=initial_epoch,
            steps_per_epoch=feeds.steps, validation_steps=feeds.validation_steps,
            validation_freq=validation_freq, mode=ModeKeys.TRAIN, reset_dataset=feeds.reset)

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, sample_weight=None, steps=None, callbacks=None,
                 max_queue_size=10, workers=1, use_multiprocessing=False):
        """The loss and metrics on the data: a scalar, or a list in `metrics_names` order."""
        from .training_inputs import eval_inputs
        feeds = eval_inputs(self, x, y, batch_size, sample_weight, steps)
        return training_arrays.model_iteration(self, feeds.x, feeds.y, feeds.sample_weights,
                                               batch_size=feeds.batch_size, verbose=verbose,
                                               steps_per_epoch=feeds.steps, callbacks=callbacks, mode=ModeKeys.TEST,
                                               reset_dataset=feeds.reset)

    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None, max_queue_size=10, workers=1,
                use_multiprocessing=False):
        """The model's outputs on the data (numpy; a list for several outputs)."""
        from .training_inputs import predict_inputs
        feeds = predict_inputs(self, x, batch_size, steps)
        return training_arrays.model_iteration(self, feeds.x, batch_size=feeds.batch_size, verbose=verbose,
                                               steps_per_epoch=feeds.steps, callbacks=callbacks,
                                               mode=ModeKeys.PREDICT, reset_dataset=feeds.reset)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, reset_metrics=True):
        """One gradient update on one batch; returns the loss (and metrics)."""
        inputs, targets, weights = self._standardize_user_data(x, y, sample_weight=sample_weight,
                                                               class_weight=class_weight)
        outputs = self._make_train_function()(self._prepare_feed_values(inputs, targets, weights, ModeKeys.TRAIN))
        if reset_metrics:
            self.reset_metrics()
        return outputs[0] if len(outputs) == 1 else outputs

    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True):
        inputs, targets, weights = self._standardize_user_data(x, y, sample_weight=sample_weight)
        outputs = self._make_test_function()(self._prepare_feed_values(inputs, targets, weights, ModeKeys.TEST))
        if reset_metrics:
            self.reset_metrics()
        return outputs[0] if len(outputs) == 1 else outputs

    def predict_on_batch(self, x):
        inputs, _, _ = self._standardize_user_data(x)
        outputs = self._make_predict_function()(inputs)
        return outputs[0] if len(outputs) == 1 else outputs

    def _get_callback_model(self):
        return self


def _mean_metric(name):
    from ..metrics import Mean
    return Mean(name=name)


def _is_symbolic(x):
    return any(isinstance(t, Tensor) for t in nest_flatten(x))
