"""`tf.cond` and `tf.case`: both branches traced into sub-graphs of one functional `If` op.

Ops layer, above `functional_ops` (tracing, the `If` op). Only the taken
branch runs (its stateful ops too: a tf.assign or tf.Print inside a branch
executes only when that branch is taken); tensors from outside a branch are
captured as inputs of the `If` op. `tf.case` is a chain of conds, as in TF.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import convert_to_tensor, get_default_graph
from ..graph import Operation
from .array_ops import constant, identity
from .arithmetic_ops import cast
from .check_ops import Assert
from .comparison_ops import equal, less_equal
from .join_ops import stack
from .reduction_ops import reduce_sum
from .tensor_array_ops import TensorArray
from .functional_ops import (assert_same_structure, captured_union, check_bool_scalar, function_of,
                             make_functional_op, most_specific_compatible, nest_flatten, nest_pack, outer_controls,
                             to_graph_tensors, trace)

__all__ = ["cond", "case", "switch_case"]


def _leaves_and_ops(g, result, what: str):
    """(tensors of g, positions that were Operations): an Operation leaf becomes a bool tensor after it."""
    flat = [v.flow if isinstance(v, TensorArray) else v for v in nest_flatten(result)]
    op_pos = set()
    with g.as_default():
        for i, v in enumerate(flat):
            if isinstance(v, Operation):
                op_pos.add(i)
                with g.control_dependencies([v]):
                    flat[i] = constant(True, name="op_done")
    return to_graph_tensors(g, flat, what), op_pos


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """`tf.cond`: `true_fn()` if `pred` else `false_fn()`; only the taken branch runs."""
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): true_fn and fn1 may not be set simultaneously.")
        true_fn = fn1
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): false_fn and fn2 may not be set simultaneously.")
        false_fn = fn2
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    g = get_default_graph()
    with g.name_scope(name or "cond") as scope:
        pred = convert_to_tensor(pred, name="pred")
        check_bool_scalar(pred, f"tf.cond '{scope[:-1]}': pred")
        tg, _, t_res = trace(scope + "true_fn", true_fn, [])
        fg, _, f_res = trace(scope + "false_fn", false_fn, [])
        if t_res is None:
            raise ValueError("true_fn must have a return value.")
        if f_res is None:
            raise ValueError("false_fn must have a return value.")
        assert_same_structure(t_res, f_res, f"tf.cond '{scope[:-1]}': true_fn and false_fn")
        t_flat, t_ops = _leaves_and_ops(tg, t_res, "true_fn")
        f_flat, f_ops = _leaves_and_ops(fg, f_res, "false_fn")
        for a, b in zip(t_flat, f_flat, strict=True):
            if a.dtype is not b.dtype:
                raise TypeError(f"Outputs of true_fn and false_fn must have the same type: "
                                f"{a.dtype.name}, {b.dtype.name} (tf.cond '{scope[:-1]}')")
        union = captured_union([tg, fg])
        then_f, else_f = function_of(tg, [], union, t_flat), function_of(fg, [], union, f_flat)
        shapes = tuple(most_specific_compatible(a.shape, b.shape) for a, b in zip(t_flat, f_flat, strict=True))
        op = make_functional_op("If", [pred] + union, {"then_branch": then_f, "else_branch": else_f,
                                                       "output_shapes": shapes},
                                outer_controls([tg, fg]), scope)
    t_leaves = nest_flatten(t_res)
    outs = [op if i in t_ops | f_ops else t_leaves[i]._with_flow(t) if isinstance(t_leaves[i], TensorArray) else t
            for i, t in enumerate(op.outputs)]
    res = nest_pack(t_res, outs)
    if not strict and isinstance(res, (list, tuple)) and not hasattr(res, "_fields") and len(res) == 1:
        res = res[0]
    return res


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """`tf.case`: the fn of the first true predicate (all predicates are evaluated); `default` if none.

    Without `default`, the last pair's fn is the default and fails with
    InvalidArgumentError when its predicate is false too (TF 1.15). With
    `exclusive`, more than one true predicate is an InvalidArgumentError.
    """
    pairs = sorted(pred_fn_pairs.items(), key=lambda kv: kv[0].name) if isinstance(pred_fn_pairs, dict) \
        else list(pred_fn_pairs)
    if not pairs:
        raise ValueError("tf.case: pred_fn_pairs must not be empty")
    for p in pairs:
        if not isinstance(p, (tuple, list)) or len(p) != 2:
            raise TypeError(f"Each entry in pred_fn_pairs must be a 2-tuple, got {p!r}")
        if not callable(p[1]):
            raise TypeError(f"fn for pred {getattr(p[0], 'name', p[0])} must be callable.")
    g = get_default_graph()
    with g.name_scope(name or "case"):
        preds = [convert_to_tensor(p) for p, _ in pairs]
        for p in preds:
            check_bool_scalar(p, f"tf.case pred {p.name}")
        fns = [f for _, f in pairs]
        all_preds = stack(preds, name="preds_c")
        if default is None:
            last_pred, last_fn = preds[-1], fns[-1]
            preds, fns = preds[:-1], fns[:-1]

            def default(last_pred=last_pred, last_fn=last_fn):
                check = Assert(last_pred, ["Input error: None of conditions evaluated as True:", all_preds])
                return _after(check, last_fn(), identity)

        chain = default
        for p, f in reversed(list(zip(preds, fns, strict=True))):
            def chain(p=p, f=f, rest=chain):
                return cond(p, f, rest, strict=True)
        res = chain()
        if exclusive and len(pairs) > 1:
            n_true = reduce_sum(cast(all_preds, _dtypes.int32))
            check = Assert(less_equal(n_true, 1), ["Input error: exclusive=True but more than 1 conditions "
                                                   "evaluated as True:", all_preds])
            res = _after(check, res, identity)
    if not strict and isinstance(res, (list, tuple)) and not hasattr(res, "_fields") and len(res) == 1:
        res = res[0]
    return res


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """`tf.switch_case`: `branch_fns[branch_index]()`; an out-of-range index runs `default` (else the last fn).

    `branch_fns` is a list of callables, or of (int, callable) pairs / a dict keyed 0..n-1.
    """
    if isinstance(branch_fns, dict):
        branch_fns = sorted(branch_fns.items())
    fns = list(branch_fns)
    if not fns:
        raise ValueError("branch_fns must be a non-empty list of callables")
    if all(isinstance(f, (tuple, list)) for f in fns):
        if [k for k, _ in fns] != list(range(len(fns))):
            raise ValueError(f"branch_fns keys must be 0..{len(fns) - 1}")
        fns = [f for _, f in fns]
    for f in fns:
        if not callable(f):
            raise TypeError(f"branch_fns must contain callables, got {f!r}")
    g = get_default_graph()
    with g.name_scope(name or "switch_case"):
        index = convert_to_tensor(branch_index, name="branch_index")
        if not index.dtype.is_integer or index.shape.ndims not in (None, 0):
            raise TypeError(f"branch_index must be a scalar int32 tensor, got {index.dtype.name} {index.shape}")
        chain = default if default is not None else fns[-1]
        last = len(fns) if default is not None else len(fns) - 1
        for k in reversed(range(last)):
            def chain(k=k, rest=chain):
                return cond(equal(index, k), fns[k], rest, strict=True)
        return chain()


def _after(check: Operation, res, identity):
    """`res` with every tensor leaf re-made after `check` ran."""
    flat = nest_flatten(res)
    with get_default_graph().control_dependencies([check]):
        flat = [identity(t) if not isinstance(t, Operation) else t for t in flat]
    return nest_pack(res, flat)
