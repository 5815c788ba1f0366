"""`tf.contrib.framework.assign_from_checkpoint(_fn)` and `assign_from_values(_fn)`: initialize chosen variables
from a checkpoint (or from numpy values) after `global_variables_initializer`, as TF 1.15's contrib does.

`assign_from_checkpoint` and `assign_from_values` build one placeholder-fed Assign per variable
(placeholders named `placeholder/<variable>`) and return (op, feed_dict), so large values never become
graph constants. `assign_from_checkpoint_fn` returns a callback `fn(session)` that restores through a
`tf.train.Saver` over the variables (names in the checkpoint: `var.op.name`, or the dict's keys);
`ignore_missing_vars` drops (with a warning) the ones the checkpoint lacks, and `reshape_variables`
restores a saved tensor into a variable of another shape with the same number of elements.
"""
from __future__ import annotations

import numpy as np

from ...graph import GraphKeys
from ...default_graph import get_collection
from ...ops.array_ops import placeholder
from ...ops.control_flow_ops import group
from ...platform import tf_logging as logging
from ...train.checkpoint_utils import NewCheckpointReader
from ...train.saver import Saver
from .variables import get_variable_full_name

__all__ = ["assign_from_values", "assign_from_values_fn", "assign_from_checkpoint", "assign_from_checkpoint_fn"]


def _placeholder_assign(var):
    ph = placeholder(var.dtype.base_dtype, shape=var.get_shape(), name="placeholder/" + var.op.name)
    return ph, var.assign(ph)


def assign_from_values(var_names_to_values):
    """(an op assigning each named variable its value, the feed_dict that holds the values)."""
    feed_dict, assigns = {}, []
    for var_name, value in var_names_to_values.items():
        found = get_collection(GraphKeys.GLOBAL_VARIABLES, var_name)
        if not found:
            raise ValueError(f"Variable {var_name} wasn't found")
        if len(found) > 1:  # the collection filter matches prefixes: take the exact name
            found = [v for v in found if v.op.name == var_name][:1]
            if not found:
                raise ValueError(f"Variable {var_name} doesn't uniquely identify a variable")
        var = found[0]
        ph, assign = _placeholder_assign(var)
        assigns.append(assign)
        feed_dict[ph] = np.asarray(value).reshape(var.get_shape().as_list())
    return group(*assigns), feed_dict


def assign_from_values_fn(var_names_to_values):
    """A callback `fn(session)` that runs `assign_from_values(var_names_to_values)`."""
    assign_op, feed_dict = assign_from_values(var_names_to_values)
    return lambda session: session.run(assign_op, feed_dict)


def _grouped(var_list) -> dict:
    """{checkpoint name: [variables]}; parts of a partitioned variable share their whole variable's name."""
    grouped: dict = {}
    if isinstance(var_list, (list, tuple)):
        for var in var_list:
            grouped.setdefault(get_variable_full_name(var), []).append(var)
    else:
        for name, value in var_list.items():
            grouped[name] = list(value) if isinstance(value, (list, tuple)) else [value]
    return grouped


def assign_from_checkpoint(model_path, var_list, ignore_missing_vars=False):
    """(an op assigning each variable its checkpoint value, the feed_dict holding the values).

    `var_list`: variables (their checkpoint names are their op names, or the whole variable's for parts of
    a partitioned one) or a dict {checkpoint name: variable or list of variables}. A shape that differs from
    the saved one is a ValueError naming the variable.
    """
    reader = NewCheckpointReader(model_path)
    feed_dict, assigns = {}, []
    for ckpt_name, variables in _grouped(var_list).items():
        if not reader.has_tensor(ckpt_name):
            message = f"Checkpoint is missing variable [{ckpt_name}]"
            if ignore_missing_vars:
                logging.warning(message)
                continue
            raise ValueError(message)
        value = reader.get_tensor(ckpt_name)
        for var in variables:
            ph, assign = _placeholder_assign(var)
            assigns.append(assign)
            info = getattr(var, "_save_slice_info", None)
            if info:
                feed_dict[ph] = value[tuple(slice(o, o + n) for o, n in zip(info.var_offset, info.var_shape))]
                continue
            if tuple(var.get_shape().as_list()) != value.shape:
                raise ValueError(f"Total size of new array must be unchanged for {ckpt_name} lh_shape: "
                                 f"[{value.shape}], rh_shape: [{var.get_shape()}]")
            feed_dict[ph] = value
    return group(*assigns), feed_dict


def assign_from_checkpoint_fn(model_path, var_list, ignore_missing_vars=False, reshape_variables=False):
    """A callback `fn(session)` restoring `var_list` from the checkpoint at `model_path` (None, with a
    warning, when `ignore_missing_vars` leaves no variable to restore)."""
    if not var_list:
        raise ValueError("var_list cannot be empty")
    if ignore_missing_vars:
        reader = NewCheckpointReader(model_path)
        named = var_list if isinstance(var_list, dict) else {v.op.name: v for v in var_list}
        var_list = {}
        for name, var in named.items():
            if reader.has_tensor(name):
                var_list[name] = var
            else:
                logging.warning("Variable %s missing in checkpoint %s", name, model_path)
        if not var_list:
            logging.warning("No Variables to restore")
            return None
    if reshape_variables:
        assign_op, names = _reshaping_assign(var_list)

        def reshaping_callback(session):
            reader = NewCheckpointReader(model_path)
            session.run(assign_op, {ph: _reshaped(reader, name, var) for ph, (name, var) in names.items()})
        return reshaping_callback
    saver = Saver(var_list)

    def callback(session):
        saver.restore(session, model_path)
    return callback


def _reshaping_assign(var_list):
    named = var_list if isinstance(var_list, dict) else {v.op.name: v for v in var_list}
    names, assigns = {}, []
    for name, var in named.items():
        ph, assign = _placeholder_assign(var)
        names[ph] = (name, var)
        assigns.append(assign)
    return group(*assigns), names


def _reshaped(reader, name, var):
    """The saved tensor `name` in `var`'s shape (TF's Saver(reshape=True)): the element counts must agree."""
    value = reader.get_tensor(name)
    shape = var.get_shape().as_list()
    if int(np.prod(shape)) != value.size:
        raise ValueError(f"Restoring from checkpoint failed: cannot reshape {name} of shape {list(value.shape)} "
                         f"into variable {var.op.name} of shape {shape}: the numbers of elements differ")
    return value.reshape(shape)
