"""More of TF 1.15's run-time checks: `tf.assert_near`, `tf.assert_rank_in`, `tf.assert_variables_initialized`.

Sits in `ops/` beside check_ops.py and builds on its `Assert` op (no new op types). As TF 1.15:
* assert_near(x, y, rtol, atol): |x - y| < atol + rtol * |y| element-wise; the tolerances default to
  10 * eps of x's dtype (x must be floating: numpy's finfo raises ValueError otherwise).
* assert_rank_in(x, ranks): with x's rank and every rank known at graph-build time, a failure is a ValueError
  naming the tensor and the op returned is a no_op; otherwise an Assert checks rank(x) at run time.
  The ranks must be int32 scalars (TypeError / ValueError "Rank must be a scalar.").
* assert_variables_initialized(var_list=None): the rank of each variable (a Rank op that reads it), stacked
  when there are several; running it raises FailedPreconditionError naming the first uninitialized one.
  None when there are no variables.
"""
from __future__ import annotations

__all__ = ["assert_near", "assert_rank_in", "assert_variables_initialized"]

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import control_dependencies, get_default_graph, name_scope
from ..graph import GraphKeys
from . import math_ops as _m
from .check_ops import Assert
from .common import convert_to_tensor, make_tensor
from .shape_util import constant_value


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None, name=None):
    """`tf.assert_near`: an Assert that every |x - y| < atol + rtol * |y|."""
    message = message or ""
    with name_scope(name, "assert_near", [x, y, rtol, atol, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        eps = np.finfo(x.dtype.np_dtype).eps
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol", dtype=x.dtype)
        atol = convert_to_tensor(10 * eps if atol is None else atol, name="atol", dtype=x.dtype)
        if data is None:
            data = [message, f"x and y not equal to tolerance rtol = {rtol!r}, atol = {atol!r}",
                    f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        tol = _m.add(atol, _m.multiply(rtol, _m.abs(y)))
        diff = _m.abs(_m.subtract(x, y))
        return Assert(_m.reduce_all(_m.less(diff, tol)), data, summarize=summarize)


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """`tf.assert_rank_in`: x's rank is one of `ranks` (now when known, else at run time)."""
    from .array_ops import rank as rank_op, shape as shape_op
    from .control_flow_ops import no_op
    with name_scope(name, "assert_rank_in", (x,) + tuple(ranks) + tuple(data or [])):
        x = convert_to_tensor(x, name="x")
        ranks = tuple(convert_to_tensor(r, name="rank") for r in ranks)
        message = message or ""
        if data is None:
            data = [message, f"Tensor {x.name} must have rank in"] + list(ranks) + ["Received shape: ",
                                                                                     shape_op(x)]
        for r in ranks:
            if r.dtype != _dtypes.int32:
                raise TypeError(f"{r.name} must be of type <dtype: 'int32'>; got <dtype: '{r.dtype.name}'>")
        static = tuple(constant_value(r) for r in ranks)
        if not any(s is None for s in static):
            if any(np.ndim(s) != 0 for s in static):
                raise ValueError("Rank must be a scalar.")
            if x.shape.ndims is not None:
                if x.shape.ndims not in [int(s) for s in static]:
                    raise ValueError(f"{message}.  Tensor {x.name} must have rank in "
                                     f"{tuple(int(s) for s in static)}.  Received rank {x.shape.ndims}, "
                                     f"shape {x.shape}")
                return no_op(name="static_checks_determined_all_ok")
        actual = rank_op(x)
        condition = _m.equal(ranks[0], actual) if ranks else convert_to_tensor(False)
        for r in ranks[1:]:
            condition = _m.logical_or(condition, _m.equal(r, actual))
        checks = []
        for r, s in zip(ranks, static):
            if s is None:  # TF: a rank given as a tensor must itself be a scalar (run-time check)
                from .check_ops import assert_rank
                checks.append(assert_rank(r, 0, data=["Rank must be a scalar. Received rank: ", r]))
        if checks:
            from .array_ops import identity
            with control_dependencies(checks):
                condition = identity(condition)
        return Assert(condition, data, summarize=summarize)


def assert_variables_initialized(var_list=None):
    """`tf.assert_variables_initialized`: an op that reads every variable of `var_list` (default: global and
    local variables), so running it raises FailedPreconditionError for an uninitialized one; None if none."""
    graph = get_default_graph()
    if var_list is None:
        var_list = graph.get_collection(GraphKeys.GLOBAL_VARIABLES) + graph.get_collection(
            GraphKeys.LOCAL_VARIABLES)
    var_list = list(var_list)
    if not var_list:
        var_list = [op.outputs[0] for op in graph.get_operations() if op.type == "VariableV2"]
    if not var_list:
        return None
    ranks = []
    for var in var_list:
        with graph.colocate_with(var.op):  # TF: rank_internal(var, optimize=False), a Rank op reading the variable
            ranks.append(make_tensor("Rank", [convert_to_tensor(var)], {"out_type": _dtypes.int32},
                                     default_name="Rank"))
    if len(ranks) == 1:
        return ranks[0]
    from .join_ops import stack
    return stack(ranks)
