"""`tf.keras.Input` and `tf.keras.layers.InputLayer` (TF 1.15's keras/engine/input_layer.py).

`Input(shape=(784,))` makes a placeholder named like the layer (`input_1`, `input_2`, ... per graph, or
`name`) of shape `(batch_size,) + shape` and dtype floatx, and tags it as the output of node 0 of an
`InputLayer`: the start of a functional model. `Input(tensor=t)` wraps an existing tensor instead (a model
input that is not fed).
"""
from __future__ import annotations

from ... import dtypes as _dtypes
from ...tensor_shape import TensorShape
from .. import backend
from .base_layer import Layer
from .base_layer_utils import KerasHistory
from .node import Node


class InputLayer(Layer):
    """The layer behind a model input: its node 0 outputs the placeholder (or the given tensor)."""

    def __init__(self, input_shape=None, batch_size=None, dtype=None, input_tensor=None, sparse=False, name=None,
                 ragged=False, **kwargs):
        if "batch_input_shape" in kwargs:
            batch_input_shape = kwargs.pop("batch_input_shape")
            if input_shape and batch_input_shape:
                raise ValueError("Only provide the input_shape OR batch_input_shape argument to InputLayer, not "
                                 "both at the same time.")
            batch_size = batch_input_shape[0]
            input_shape = batch_input_shape[1:]
        if kwargs:
            raise ValueError("Unrecognized keyword arguments:", kwargs.keys())
        if sparse or ragged:
            raise NotImplementedError("InputLayer: sparse and ragged inputs are not supported")
        if not name:
            name = "input_" + str(backend.get_uid("input"))
        if not dtype:
            dtype = backend.floatx() if input_tensor is None else backend.dtype(input_tensor)
        elif input_tensor is not None and input_tensor.dtype != _dtypes.as_dtype(dtype):
            raise ValueError(f"`input_tensor.dtype` differs from `dtype`: {input_tensor.dtype.name} vs. {dtype}")
        super().__init__(dtype=dtype, name=name)
        self.built = True
        self.sparse = sparse
        self.ragged = ragged
        self.batch_size = batch_size
        self.supports_masking = True
        if isinstance(input_shape, TensorShape):
            input_shape = tuple(input_shape.as_list())
        elif isinstance(input_shape, int):
            input_shape = (input_shape,)
        if input_tensor is None:
            batch_input_shape = (batch_size,) + tuple(input_shape) if input_shape is not None else None
            with backend.get_graph().as_default():
                input_tensor = backend.placeholder(shape=batch_input_shape, dtype=dtype, name=self.name)
            self.is_placeholder = True
            self._batch_input_shape = batch_input_shape
        else:
            self.is_placeholder = False
            shape = input_tensor.shape
            self._batch_input_shape = tuple(shape.as_list()) if shape.ndims is not None else None
        input_tensor._keras_history = KerasHistory(self, 0, 0)
        input_tensor._keras_mask = None
        Node(self, inbound_layers=[], node_indices=[], tensor_indices=[], input_tensors=[input_tensor],
             output_tensors=[input_tensor])

    def get_config(self):
        return {"batch_input_shape": self._batch_input_shape, "dtype": self.dtype, "sparse": self.sparse,
                "ragged": self.ragged, "name": self.name}


def Input(shape=None, batch_size=None, name=None, dtype=None, sparse=False, tensor=None, ragged=False,  # noqa: N802
          **kwargs):
    """A Keras tensor: the placeholder of a new `InputLayer` (`shape` excludes the batch axis)."""
    batch_shape = None
    if "batch_shape" in kwargs:
        batch_shape = kwargs.pop("batch_shape")
        if shape and batch_shape:
            raise ValueError("Only provide the shape OR batch_shape argument to Input, not both at the same time.")
        batch_size = batch_shape[0]
        shape = batch_shape[1:]
    if kwargs:
        raise ValueError("Unrecognized keyword arguments:", kwargs.keys())
    if shape is None and tensor is None:
        raise ValueError("Please provide to Input either a `shape` or a `tensor` argument. Note that `shape` does "
                         "not include the batch dimension.")
    if batch_shape:
        layer = InputLayer(batch_input_shape=batch_shape, name=name, dtype=dtype, sparse=sparse, ragged=ragged,
                           input_tensor=tensor)
    else:
        layer = InputLayer(input_shape=shape, batch_size=batch_size, name=name, dtype=dtype, sparse=sparse,
                           ragged=ragged, input_tensor=tensor)
    outputs = layer._inbound_nodes[0].output_tensors
    return outputs[0] if len(outputs) == 1 else outputs
