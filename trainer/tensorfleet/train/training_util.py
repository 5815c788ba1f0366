"""Global step helpers of `tf.train`: create/get the int64 `global_step` variable, read it.

The step is a scalar int64 variable named `global_step`, in the GLOBAL_VARIABLES
and GLOBAL_STEP collections, created with `tf.get_variable` at the root scope
(zero-initialized, not trainable). `Optimizer.apply_gradients(global_step=...)`
increments it; `Saver.save(global_step=...)` reads it.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from ..graph import GraphKeys
from ..default_graph import get_default_graph
from ..ops.variable_scope import get_variable
from ..ops.array_ops import constant

__all__ = ["get_global_step", "create_global_step", "get_or_create_global_step", "global_step",
           "assert_global_step"]


def global_step(sess, global_step_tensor) -> int:
    """The current value of `global_step_tensor` as a Python int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor) -> None:
    """TypeError unless it is a variable/tensor holding an integer scalar."""
    if not (hasattr(global_step_tensor, "op") and hasattr(global_step_tensor, "dtype")):
        raise TypeError(f"Existing \"global_step\" must be a Variable or Tensor: {global_step_tensor}.")
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError(f"Existing \"global_step\" does not have integer type: {global_step_tensor.dtype}")
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f"Existing \"global_step\" is not scalar: {shape}")


def get_global_step(graph=None):
    """The global step variable of `graph` (collection GLOBAL_STEP, else the tensor 'global_step:0'), or None."""
    graph = graph or get_default_graph()
    tensors = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(tensors) == 1:
        step = tensors[0]
    elif not tensors:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except KeyError:
            return None
    else:
        raise TypeError("Multiple tensors in global_step collection.")
    assert_global_step(step)
    return step


def create_global_step(graph=None):
    """Creates the global step variable; ValueError if the graph already has one."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')

    with graph.as_default(), graph.name_scope(None), graph.control_dependencies(None):
        return get_variable(GraphKeys.GLOBAL_STEP, shape=[], dtype=_dtypes.int64,
                            initializer=_zeros_int64, trainable=False,
                            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def _zeros_int64(shape, dtype=_dtypes.int64, partition_info=None):

    return constant(np.zeros(shape, dtype=_dtypes.as_dtype(dtype).np_dtype))


def get_or_create_global_step(graph=None):
    """The graph's global step variable, created if needed."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step
