"""`tf.layers` building blocks shared by every layer module: the layer's variable scope, its variables, the
argument normalizers (pairs, padding, data format) and `tf.layers.Layer`, the callable layer object.

Sits above `ops/` (variables through `ops/variable_scope.get_variable`, so `reuse=` and enclosing
`tf.variable_scope`s, their initializers, regularizers and custom getters apply as in TF). The other modules
of this package (core, convolutional, pooling, normalization) and `tf.contrib.layers` build on these.
"""
from __future__ import annotations

import numpy as np

from ..graph import GraphKeys, Tensor
from ..default_graph import convert_to_tensor, get_default_graph
from ..ops import variable_scope as _vs

__all__ = ["Layer"]


# -- scope and variables ------------------------------------------------------
def layer_scope(name, default_name, reuse):
    """TF's layer scope: variable_scope(name or a unique default_name), which also opens the name scope."""
    return _vs.variable_scope(name, default_name=default_name, reuse=reuse)


def weight(name, shape, dtype, initializer, trainable, regularizer=None, constraint=None):
    """A layer variable through tf.get_variable in the current scope."""
    return _vs.get_variable(name, shape=shape, dtype=dtype, initializer=initializer, trainable=trainable,
                            regularizer=regularizer, constraint=constraint)


def activity_regularize(out, activity_regularizer):
    """TF adds activity_regularizer(output) to the REGULARIZATION_LOSSES collection."""
    if activity_regularizer is not None:
        with get_default_graph().name_scope("ActivityRegularizer"):
            loss = activity_regularizer(out)
        if loss is not None:
            get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return out


def activate(out, activation):
    return activation(out) if activation is not None else out


# -- argument checks ----------------------------------------------------------
def float_inputs(inputs, layer):
    x = convert_to_tensor(inputs)
    if not x.dtype.is_floating:
        raise ValueError(f"{layer}: inputs must be floating point, got {x.dtype.name}")
    return x


def is_tensor(v) -> bool:
    return isinstance(v, Tensor) or hasattr(v, "_as_graph_element")


def pair(v, what):
    """An int or a 1/2-sequence as a pair of ints (TF's conv_utils.normalize_tuple for n=2)."""
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise ValueError(f"The `{what}` argument must be a tuple of 2 integers. Received: {v}")
    return v


def tf_padding(padding):
    p = str(padding).lower()
    if p not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be one of \"valid\", \"same\". Received: {padding}")
    return p.upper()


def tf_format(data_format):
    if data_format in ("channels_last", None):
        return "NHWC"
    if data_format == "channels_first":
        return "NCHW"
    raise ValueError(f"The `data_format` argument must be one of \"channels_first\", \"channels_last\". "
                     f"Received: {data_format}")


def fmt1d(data_format):
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', got {data_format!r}")
    return "NWC" if data_format == "channels_last" else "NCW"


# -- the layer object -----------------------------------------------------------
class Layer:
    """A callable TF1 layer object. The first call reserves `variable_scope(name or a unique default)` and
    runs the functional layer in it, creating the variables; later calls run it again there with
    reuse=True, so they share them."""

    _default_name = "layer"

    def __init__(self, *args, name=None, trainable=True, **kwargs):
        self._args, self._kwargs = args, dict(kwargs)
        if self._has_weights():
            self._kwargs["trainable"] = trainable
        self.trainable = trainable
        self._name = name
        self._scope = None
        self._variables: list = []
        self.built = False

    @staticmethod
    def _functional(inputs, *args, **kwargs):
        raise NotImplementedError

    def _has_weights(self) -> bool:
        return True

    @property
    def name(self) -> str:
        return self._scope.name.rsplit("/", 1)[-1] if self._scope is not None else (self._name or self._default_name)

    def __call__(self, inputs, *args, **kwargs):
        g = get_default_graph()
        if self._scope is None:
            with _vs.variable_scope(self._name, default_name=self._default_name) as scope:
                self._scope = scope
        before = len(g.get_collection(GraphKeys.GLOBAL_VARIABLES))
        kw = dict(self._kwargs, **kwargs)
        if self._has_weights():
            kw["reuse"] = True if self.built else None
        out = self._functional(inputs, *self._args, *args, name=self._scope, **kw)
        if not self.built:
            self._variables = g.get_collection(GraphKeys.GLOBAL_VARIABLES)[before:]
            self.built = True
        return out

    @property
    def variables(self) -> list:
        return list(self._variables)

    weights = variables

    @property
    def trainable_variables(self) -> list:
        trainable = set(get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES))
        return [v for v in self._variables if v in trainable]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        trainable = set(self.trainable_variables)
        return [v for v in self._variables if v not in trainable]

    non_trainable_weights = non_trainable_variables


class NoWeightsLayer(Layer):
    """A layer object over a functional layer without variables (pooling, flatten, dropout)."""

    def _has_weights(self) -> bool:
        return False
