"""Run-time checks and printing: `tf.Assert`, `tf.assert_equal` & co. (Assert op), `tf.assert_variables_initialized`
(Rank ops reading the variables), the monotonicity tests `tf.math.is_non_decreasing` / `is_strictly_increasing`
and `tf.Print` (Print op).

Sits in `ops/` (kernels in kernels/check_kernels.py). As TF 1.15:
* `tf.Assert(condition, data)` returns an Operation (use it in `tf.control_dependencies` or run it); when the
  condition is false at run time it raises InvalidArgumentError "assertion failed: [msg] [x (x:0) = ] [1 2 3]":
  each data item in brackets, tensors as their first `summarize` (default 3) elements joined by spaces, "..."
  when cut. Strings in `data` are kept as attrs (there are no string tensors).
* `assert_equal/none_equal/less/less_equal/greater/greater_equal(x, y, data, summarize, message, name)` build
  TF's message ("Condition x == y did not hold element-wise:", ...); when both x and y are constants the check
  runs at graph-build time and a failure raises InvalidArgumentError there (TF's static check).
  `assert_positive/negative/non_negative/non_positive` compare with 0. `assert_rank/assert_rank_at_least`
  check a known rank at graph-build time (ValueError, TF's text) and otherwise at run time.
* `assert_near(x, y, rtol, atol)`: |x - y| < atol + rtol * |y| element-wise; the tolerances default to
  10 * eps of x's dtype (x must be floating: numpy's finfo raises ValueError otherwise).
* `assert_rank_in(x, ranks)`: with x's rank and every rank known at graph-build time, a failure is a ValueError
  naming the tensor and the op returned is a no_op; otherwise an Assert checks rank(x) at run time.
  The ranks must be int32 scalars (TypeError / ValueError "Rank must be a scalar.").
* `assert_variables_initialized(var_list=None)`: the rank of each variable (a Rank op that reads it), stacked
  when there are several; running it raises FailedPreconditionError naming the first uninitialized one.
  None when there are no variables.
* `tf.math.is_non_decreasing(x)` / `is_strictly_increasing(x)`: a bool scalar tensor (no Assert): whether x,
  flattened, never decreases / always increases (True with fewer than 2 elements).
* `tf.Print(input_, data, message, first_n, summarize)` is an identity of `input_` that writes
  message + "[v1][v2]..." to stderr each run (only the first `first_n` runs per session when first_n > 0).
"""
from __future__ import annotations

__all__ = ["Assert", "Print", "assert_equal", "assert_none_equal", "assert_less", "assert_less_equal",
           "assert_greater", "assert_greater_equal", "assert_positive", "assert_negative", "assert_non_negative",
           "assert_non_positive", "assert_rank", "assert_rank_at_least", "assert_near", "assert_rank_in",
           "assert_variables_initialized", "is_non_decreasing", "is_strictly_increasing"]

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from ..graph import GraphKeys, Tensor
from ..default_graph import control_dependencies, get_default_graph, name_scope
from . import array_ops as _a
from . import comparison_ops as _c
from . import math_ops as _m
from .common import NotDifferentiable, convert_to_tensor, is_tensor_like, make_op, make_tensor, register_gradient, \
    register_op
from .shape_util import constant_value

register_op("Assert", lambda op: [], stateful=True)
NotDifferentiable("Assert")
register_op("Print", lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)], stateful=True)


def _template(data):
    """(template, tensors): strings stay in the template, everything else becomes a tensor input."""
    template, tensors = [], []
    for d in data:
        if isinstance(d, (str, bytes)):
            template.append(("s", d.decode() if isinstance(d, bytes) else d))
        else:
            template.append(("t", len(tensors)))
            tensors.append(convert_to_tensor(d))
    return tuple(template), tensors


def Assert(condition, data, summarize=None, name=None):
    """`tf.Assert`: an op raising InvalidArgumentError("assertion failed: ...") when `condition` is false."""
    with name_scope(name, "Assert", [condition]):
        cond = convert_to_tensor(condition, name="Condition")
        if cond.shape.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {cond.shape.ndims} for 'Assert' (condition)")
        template, tensors = _template(data)
        return make_op("Assert", [cond] + tensors, {"template": template, "summarize": 3 if summarize is None
                                                    else int(summarize)}, name="Assert")


def _static_text(d):
    if isinstance(d, str):
        return d
    v = constant_value(d) if isinstance(d, Tensor) else np.asarray(d)
    return str(v) if v is not None else str(d)


def _binary_assert(sym, opname, op_func, static_func, x, y, data, summarize, message, name):
    with name_scope(name, opname, [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        if data is None:
            data = [f"Condition x {sym} y did not hold element-wise:", f"x ({x.name}) = ", x,
                    f"y ({y.name}) = ", y]
        if message is not None:
            data = [message] + list(data)
        from .reduction_ops import reduce_all
        condition = reduce_all(op_func(x, y))
        xs, ys = constant_value(x), constant_value(y)
        if xs is not None and ys is not None and not np.all(static_func(xs, ys)):
            raise errors.InvalidArgumentError(None, None, "\n".join(_static_text(d) for d in data))
        return Assert(condition, data, summarize=summarize)


def _cmp(name):
    from . import comparison_ops
    return getattr(comparison_ops, name)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    """`tf.assert_equal`: x == y element-wise (with broadcasting)."""
    return _binary_assert("==", "assert_equal", _cmp("equal"), np.equal, x, y, data, summarize, message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("!=", "assert_none_equal", _cmp("not_equal"), np.not_equal, x, y, data, summarize,
                          message, name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("<", "assert_less", _cmp("less"), np.less, x, y, data, summarize, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("<=", "assert_less_equal", _cmp("less_equal"), np.less_equal, x, y, data, summarize,
                          message, name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert(">", "assert_greater", _cmp("greater"), np.greater, x, y, data, summarize, message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert(">=", "assert_greater_equal", _cmp("greater_equal"), np.greater_equal, x, y, data,
                          summarize, message, name)


def _sign_assert(opname, cond_text, op_func, zero_first, x, data, summarize, message, name):
    message = message or ""
    with name_scope(name, opname, [x]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [message, f"Condition x {cond_text} did not hold element-wise:", f"x ({x.name}) = ", x]
        zero = convert_to_tensor(0, dtype=x.dtype)
        a, b = (zero, x) if zero_first else (x, zero)
        return op_func(a, b, data=data, summarize=summarize)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert("assert_positive", "> 0", assert_less, True, x, data, summarize, message, name)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert("assert_negative", "< 0", assert_less, False, x, data, summarize, message, name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert("assert_non_negative", ">= 0", assert_less_equal, True, x, data, summarize, message, name)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert("assert_non_positive", "<= 0", assert_less_equal, False, x, data, summarize, message,
                        name)


def _rank_assert(opname, what, static_ok, dyn_func, x, rank, data, summarize, message, name):
    from .array_ops import rank as rank_op, shape as shape_op
    from .control_flow_ops import no_op
    message = message or ""
    with name_scope(name, opname, [x]):
        x = convert_to_tensor(x, name="x")
        rank_v = constant_value(rank) if is_tensor_like(rank) else rank
        if rank_v is None:
            raise ValueError(f"{opname}: rank must be static")
        rank_v = int(np.asarray(rank_v))
        if x.shape.ndims is not None:
            if not static_ok(x.shape.ndims, rank_v):
                raise ValueError(f"{message}.  Tensor {x.name} must have rank{what} {rank_v}.  Received rank "
                                 f"{x.shape.ndims}, shape {x.shape}")
            return no_op()
        if data is None:
            data = [message, f"Tensor {x.name} must have rank{what}", rank_v, "Received shape: ", shape_op(x)]
        return Assert(dyn_func(rank_op(x), rank_v), data, summarize=summarize)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """`tf.assert_rank`: a known rank is checked now (ValueError), an unknown one at run time."""
    return _rank_assert("assert_rank", "", lambda a, r: a == r, _cmp("equal"), x, rank, data, summarize, message,
                        name)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    return _rank_assert("assert_rank_at_least", " at least", lambda a, r: a >= r, _cmp("greater_equal"), x, rank,
                        data, summarize, message, name)


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


def _monotone(x, strict, name, default):
    with name_scope(name, default, [x]):
        x = _a.reshape(convert_to_tensor(x), [-1])
        head, tail = x[:-1], x[1:]
        cmp = _c.less if strict else _c.less_equal
        return _m.reduce_all(cmp(head, tail))


def is_non_decreasing(x, name=None):
    """`tf.math.is_non_decreasing(x)`: True if x (flattened) never decreases (True when it has < 2 elements)."""
    return _monotone(x, False, name, "is_non_decreasing")


def is_strictly_increasing(x, name=None):
    """`tf.math.is_strictly_increasing(x)`: True if x (flattened) always increases."""
    return _monotone(x, True, name, "is_strictly_increasing")


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):
    """`tf.Print`: returns `input_` unchanged and prints message + "[v]..." for each of `data` to stderr."""
    input_ = convert_to_tensor(input_)
    template, tensors = _template(data)
    return make_tensor("Print", [input_] + tensors, {"template": template, "message": message or "",
                                                     "first_n": -1 if first_n is None else int(first_n),
                                                     "summarize": 3 if summarize is None else int(summarize)},
                       name=name, default_name="Print")


@register_gradient("Print")
def _print_grad(op, grad, *rest):
    return [grad] + [None] * (len(op.inputs) - 1)
