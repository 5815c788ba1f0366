"""What `Model.compile` builds (TF 1.15's training.py `compile` / `_prepare_total_loss` / `_handle_metrics`).

Per model output with a loss (an "endpoint"): a target placeholder `<output>_target` (rank of the output,
dtype of the output), a sample-weight `placeholder_with_default` `<output>_sample_weights` (ones unless fed:
shape [None], or [None, None] for sample_weight_mode='temporal'), the loss function wrapped as Keras does
(strings and functions become `LossFunctionWrapper`s reducing SUM_OVER_BATCH_SIZE) and the metrics.

`build_loss_and_metrics(model, outputs, targets, weights)` builds, in the name scopes `loss` and `metrics`:
total_loss = sum(loss_weight * output loss) + the model's regularization/added losses (its unconditional
losses and those of its inputs), the per-output loss means (when several outputs) and every metric's result
tensor (which runs the metric's update). `compile` calls it on the placeholders; a tf.data input calls it
again on the dataset's tensors (engine/training_dataset.py), sharing the metric objects.
"""
from __future__ import annotations

from ... import dtypes as _dtypes
from ...ops import array_ops, math_ops
from ...ops.functional_ops import nest_flatten
from .. import backend as K
from .. import losses as losses_module
from .. import metrics as metrics_module
from ..utils.generic_utils import to_list
from ..utils.losses_utils import ReductionV2, compute_weighted_loss


def get_loss_function(loss):
    if loss is None or isinstance(loss, losses_module.Loss):
        return loss
    if isinstance(loss, dict):
        loss = losses_module.get(loss)
    if callable(loss) and not hasattr(loss, "__name__"):
        return loss
    fn = losses_module.get(loss)
    return losses_module.LossFunctionWrapper(fn, name=fn.__name__, reduction=ReductionV2.SUM_OVER_BATCH_SIZE)


def prepare_loss_functions(loss, output_names):
    if isinstance(loss, dict):
        unknown = set(loss) - set(output_names)
        if unknown:
            raise ValueError(f"Unknown entries in loss dictionary: {sorted(unknown)}. Only expected following keys: "
                             f"{output_names}")
        return [get_loss_function(loss.get(name)) for name in output_names]
    if isinstance(loss, str):
        return [get_loss_function(loss) for _ in output_names]
    if isinstance(loss, (list, tuple)):
        if len(loss) != len(output_names):
            raise ValueError(f"When passing a list as loss, it should have one entry per model outputs. The model has "
                             f"{len(output_names)} outputs, but you passed loss={loss}")
        return [get_loss_function(x) for x in loss]
    return [get_loss_function(loss) for _ in output_names]


def prepare_loss_weights(loss_weights, output_names):
    if loss_weights is None:
        return [1.0] * len(output_names)
    if isinstance(loss_weights, dict):
        unknown = set(loss_weights) - set(output_names)
        if unknown:
            raise ValueError(f"Unknown entries in loss_weights dictionary: {sorted(unknown)}. Only expected "
                             f"following keys: {output_names}")
        return [loss_weights.get(name, 1.0) for name in output_names]
    if isinstance(loss_weights, list):
        if len(loss_weights) != len(output_names):
            raise ValueError(f"When passing a list as loss_weights, it should have one entry per model output. The "
                             f"model has {len(output_names)} outputs, but you passed loss_weights={loss_weights}")
        return list(loss_weights)
    raise TypeError(f"Could not interpret loss_weights argument: {loss_weights} - expected a list of dicts.")


def _is_loss_of(loss_fn, fn, cls):
    return isinstance(loss_fn, cls) or (isinstance(loss_fn, losses_module.LossFunctionWrapper)
                                        and loss_fn.fn is fn)


def is_sparse_categorical(loss_fn):
    return _is_loss_of(loss_fn, losses_module.sparse_categorical_crossentropy,
                       losses_module.SparseCategoricalCrossentropy)


def get_metric_name(metric, weighted=False):
    """TF 1.15 (TF1 behaviour): 'accuracy'/'acc' -> 'acc', 'crossentropy'/'ce' -> 'ce', else the metric's
    name or function name; 'weighted_' prefixed for weighted metrics."""
    prefix = "weighted_" if weighted else ""
    if metric in ("accuracy", "acc"):
        return prefix + "acc"
    if metric in ("crossentropy", "ce"):
        return prefix + "ce"
    fn = metrics_module.get(metric)
    return prefix + (fn.name if hasattr(fn, "name") else fn.__name__)


def get_metric_function(metric, output_shape=None, loss_fn=None):
    """'accuracy'/'acc' and 'crossentropy'/'ce' resolved by the output's size and the loss, as Keras does."""
    if metric not in ("accuracy", "acc", "crossentropy", "ce"):
        return metrics_module.get(metric)
    sparse = is_sparse_categorical(loss_fn)
    binary = _is_loss_of(loss_fn, losses_module.binary_crossentropy, losses_module.BinaryCrossentropy)
    if metric in ("accuracy", "acc"):
        if output_shape[-1] == 1 or binary:
            return metrics_module.binary_accuracy
        if sparse:
            return metrics_module.sparse_categorical_accuracy
        return metrics_module.categorical_accuracy
    if output_shape[-1] == 1 or binary:
        return metrics_module.binary_crossentropy
    if sparse:
        return metrics_module.sparse_categorical_crossentropy
    return metrics_module.categorical_crossentropy


def collect_per_output_metrics(metrics, output_names, output_shapes, loss_fns, weighted=False):
    """[{name: Metric}] per output."""
    if not metrics:
        return [{} for _ in output_names]
    if isinstance(metrics, list):
        if any(isinstance(m, list) for m in metrics):
            if len(metrics) != len(output_names):
                raise ValueError(f"When passing a list of lists as `metrics`, it should have one entry per model "
                                 f"output. The model has {len(output_names)} outputs, but you passed "
                                 f"metrics={metrics}")
            nested = [to_list(m) for m in metrics]
        elif len(output_names) > 1:
            nested = [[_clone_metric(m) for m in metrics] for _ in output_names]
        else:
            nested = [metrics]
    elif isinstance(metrics, dict):
        unknown = set(metrics) - set(output_names)
        if unknown:
            raise ValueError(f"Unknown entries in metrics dictionary: {sorted(unknown)}. Only expected following "
                             f"keys: {output_names}")
        nested = [to_list(metrics.get(name, [])) for name in output_names]
    else:
        raise TypeError(f"Type of `metrics` argument not understood. Expected a list or dictionary, found: "
                        f"{metrics}")
    per_output = []
    for i, output_metrics in enumerate(nested):
        named = {}
        for metric in output_metrics:
            name = get_metric_name(metric, weighted)
            fn = get_metric_function(metric, output_shape=output_shapes[i], loss_fn=loss_fns[i])
            if not isinstance(fn, metrics_module.Metric):
                with K.name_scope(None):
                    fn = metrics_module.MeanMetricWrapper(fn, name=name)
            named[name] = fn
        per_output.append(named)
    return per_output


def _clone_metric(metric):
    if isinstance(metric, metrics_module.Metric):
        return metric.__class__.from_config(metric.get_config())
    return metric


def build_loss_and_metrics(model, outputs, targets, sample_weights, inputs=None):
    """(total_loss, per-output loss results, metric results) for these output/target/weight tensors; the
    model's losses conditional on `inputs` (default: its inputs) are added."""
    total_loss = None
    loss_results = []
    with K.name_scope("loss"):
        for i, endpoint in enumerate(model._endpoints):
            if endpoint.loss_fn is None:
                continue
            y_true, y_pred, weight = targets[i], outputs[i], sample_weights[i]
            with K.name_scope(endpoint.loss_name):
                loss_fn = endpoint.loss_fn
                if isinstance(loss_fn, losses_module.Loss):
                    per_sample = loss_fn.call(y_true, y_pred)
                    reduction = loss_fn._get_reduction()
                    output_loss = compute_weighted_loss(per_sample, sample_weight=weight, reduction=reduction)
                else:
                    output_loss = loss_fn(y_true, y_pred, sample_weight=weight)
            if len(model.outputs) > 1:
                loss_results.append(endpoint.output_loss_metric(output_loss))
            term = endpoint.loss_weight * output_loss
            total_loss = term if total_loss is None else total_loss + term
        if total_loss is None:
            if not model.losses:
                raise ValueError("The model cannot be compiled because it has no loss to optimize.")
            total_loss = array_ops.constant(0.0, dtype=_dtypes.as_dtype(K.floatx()))
        custom = model.get_losses_for(None) + model.get_losses_for(model.inputs if inputs is None else inputs)
        if custom:
            total_loss = total_loss + math_ops.add_n([math_ops.cast(x, total_loss.dtype) for x in custom])
    metric_results = []
    with K.name_scope("metrics"):
        for i, endpoint in enumerate(model._endpoints):
            if endpoint.loss_fn is None:
                continue
            for metric in endpoint.metrics.values():
                metric_results.append(metric(targets[i], outputs[i]))
            for metric in endpoint.weighted_metrics.values():
                metric_results.append(metric(targets[i], outputs[i], sample_weight=sample_weights[i]))
    return total_loss, loss_results, metric_results


class Endpoint:
    """One model output in training: its loss, weight, target/sample-weight placeholders and metrics."""

    def __init__(self, output, name, loss_fn, loss_weight, sample_weight_mode, target=None, sample_weight=None):
        self.output, self.output_name = output, name
        self.loss_fn, self.loss_weight = loss_fn, loss_weight
        self.loss_name = name + "_loss"
        self.sample_weight_mode = sample_weight_mode
        self.metrics: dict = {}
        self.weighted_metrics: dict = {}
        self.output_loss_metric = None
        self.target = self.sample_weight = None
        self.target_is_placeholder = target is None
        if loss_fn is None:
            return
        shape = output.shape
        ndim = shape.ndims if shape.ndims is not None else 2
        self.target = target if target is not None else K.placeholder(ndim=ndim, name=name + "_target",
                                                                      dtype=output.dtype)
        if sample_weight is not None:  # a tensor from model_to_estimator's input
            self.sample_weight = sample_weight
            return
        temporal = sample_weight_mode == "temporal"
        default = array_ops.constant([[1.0]] if temporal else [1.0], dtype=_dtypes.as_dtype(K.floatx()))
        self.sample_weight = array_ops.placeholder_with_default(default, shape=[None, None] if temporal else [None],
                                                                name=name + "_sample_weights")

    def feed_output_shape(self):
        """The shape targets are checked against (None for custom losses; (..., 1) for sparse labels)."""
        shape = tuple(self.output.shape.as_list()) if self.output.shape.ndims is not None else None
        if self.loss_fn is None or shape is None:
            return None
        if is_sparse_categorical(self.loss_fn):
            return shape[:-1] + (1,)
        if not isinstance(self.loss_fn, losses_module.Loss) or (
                isinstance(self.loss_fn, losses_module.LossFunctionWrapper)
                and getattr(losses_module, self.loss_fn.fn.__name__, None) is None):
            return None
        return shape


def standardize_target_tensors(target_tensors, output_names):
    """`compile(target_tensors=...)` as one tensor (or None) per output, with TF 1.15's checks."""
    if target_tensors is None:
        return [None] * len(output_names)
    if isinstance(target_tensors, (list, tuple)):
        if len(target_tensors) != len(output_names):
            raise ValueError(f"When passing a list as `target_tensors`, it should have one entry per model output. "
                             f"The model has {len(output_names)} outputs, but you passed "
                             f"target_tensors={target_tensors}")
        return list(target_tensors)
    if isinstance(target_tensors, dict):
        for name in target_tensors:
            if name not in output_names:
                raise ValueError(f'Unknown entry in `target_tensors` dictionary: "{name}". Only expected the '
                                 f"following keys: {output_names}")
        return [target_tensors.get(name) for name in output_names]
    if hasattr(target_tensors, "dtype") and hasattr(target_tensors, "op"):
        return [target_tensors]
    raise TypeError(f"Expected `target_tensors` to be a list or tuple or dict or a single tensor, but got: "
                    f"{target_tensors}")


def flat(x):
    return nest_flatten(x)
