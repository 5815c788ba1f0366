"""`tf.while_loop`: cond and body traced into sub-graphs of one functional `While` op.

Ops layer, above `functional_ops` (tracing, the `While` op). Loop variables
are nested structures of tensors (lists, tuples, namedtuples, dicts); their
shapes must stay within the shape invariants (default: the entry shapes), which
is checked when the body is traced and again at run time. `maximum_iterations`
is an input of the op, counted by the kernel; `parallel_iterations` and
`swap_memory` are accepted and ignored (iterations run one after another);
`back_prop=False` makes the loop's outputs carry no gradient.
"""
from __future__ import annotations

from ..default_graph import convert_to_tensor, get_default_graph
from ..tensor_shape import as_shape
from .functional_ops import (captured_union, check_bool_scalar, function_of, is_nested,
                             make_functional_op, nest_flatten, nest_pack, outer_controls, shape_less_or_equal,
                             to_graph_tensors, trace)

__all__ = ["while_loop"]


def _flatten_up_to(structure, value, what: str) -> list:
    """`value`'s parts at the leaves of `structure` (a leaf of `structure` takes a whole sub-value: a shape list)."""
    if isinstance(structure, dict):
        if not isinstance(value, dict) or sorted(value) != sorted(structure):
            raise ValueError(f"{what} must have the same structure as loop_vars")
        return [x for k in sorted(structure) for x in _flatten_up_to(structure[k], value[k], what)]
    if isinstance(structure, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(structure):
            raise ValueError(f"{what} must have the same structure as loop_vars")
        return [x for s, v in zip(structure, value, strict=True) for x in _flatten_up_to(s, v, what)]
    return [value]


def _invariants(structure, flat: list, shape_invariants) -> list:
    if shape_invariants is None:
        return [t.shape for t in flat]
    shapes = [as_shape(s) for s in _flatten_up_to(structure, shape_invariants, "shape_invariants")]
    for t, s in zip(flat, shapes, strict=True):
        if not shape_less_or_equal(t.shape, s):
            raise ValueError(f"The shape invariant specified for {t.name} is not compatible with the initial shape "
                             f"of the loop variable. It enters the loop with shape {t.shape}, but the specified "
                             f"shape invariant is {s}.")
    return shapes


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """`tf.while_loop`: repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`; returns the final vars."""
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if not isinstance(parallel_iterations, int) or parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    single = not is_nested(loop_vars)
    structure = [loop_vars] if single else loop_vars
    if isinstance(structure, dict) or not nest_flatten(structure):
        raise ValueError("No loop variables provided" if not nest_flatten(structure)
                         else "loop_vars must be a tensor, list, tuple or namedtuple")
    if single and shape_invariants is not None:
        shape_invariants = [shape_invariants]
    g = get_default_graph()
    with g.name_scope(name or "while") as scope:
        label = scope[:-1]
        flat = [convert_to_tensor(v) for v in nest_flatten(structure)]
        shapes = _invariants(structure, flat, shape_invariants)
        inputs = []
        if maximum_iterations is not None:
            mx = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if not mx.dtype.is_integer:
                raise TypeError(f"maximum_iterations must be an integer tensor, got {mx.dtype.name}")
            if mx.shape.ndims not in (None, 0):
                raise ValueError(f"maximum_iterations must be a scalar, saw shape: {mx.shape}")
            inputs.append(mx)
        specs = [(t.dtype, s, "loop_var") for t, s in zip(flat, shapes, strict=True)]
        cg, c_phs, c_res = trace(scope + "cond", cond, specs, structure, unpack=True)
        pred = to_graph_tensors(cg, [c_res], "while_loop cond")[0]
        check_bool_scalar(pred, f"tf.while_loop '{label}': cond's result")
        bg, b_phs, b_res = trace(scope + "body", body, specs, structure, unpack=True)
        if not is_nested(b_res):
            b_res = [b_res]
        outs = to_graph_tensors(bg, nest_flatten(b_res), "while_loop body")
        if len(outs) != len(flat):  # TF checks the flat count only; the result takes the body's structure
            raise ValueError(f"Number of inputs and outputs of body must match loop_vars: {len(flat)}, {len(outs)} "
                             f"(tf.while_loop '{label}')")
        for t, o, s in zip(flat, outs, shapes, strict=True):
            if o.dtype is not t.dtype:
                raise TypeError(f"Loop variable {t.name} of tf.while_loop '{label}' enters the loop as "
                                f"{t.dtype.name} but the body returns {o.dtype.name}")
            if not shape_less_or_equal(o.shape, s):
                raise ValueError(f"Input tensor '{t.name}' enters the loop with shape {s}, but has shape {o.shape} "
                                 f"after one iteration. To allow the shape to vary across iterations, use the "
                                 f"`shape_invariants` argument of tf.while_loop to specify a less-specific shape.")
        union = captured_union([cg, bg])
        cond_f = function_of(cg, c_phs, union, [pred])
        body_f = function_of(bg, b_phs, union, outs)
        attrs = {"cond": cond_f, "body": body_f, "shapes": tuple(shapes), "num_vars": len(flat),
                 "has_max": maximum_iterations is not None, "back_prop": bool(back_prop),
                 "parallel_iterations": int(parallel_iterations)}
        op = make_functional_op("While", inputs + flat + union, attrs, outer_controls([cg, bg]), scope)
    res = nest_pack(b_res, op.outputs)
    if return_same_structure:
        return res
    return op.outputs[0] if len(flat) == 1 else res
