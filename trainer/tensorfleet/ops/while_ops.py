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
from ..tensor_shape import TensorShape, as_shape
from .functional_ops import (captured_union, check_bool_scalar, function_of, is_nested,
                             make_functional_op, nest_flatten, nest_pack, outer_controls, shape_less_or_equal,
                             to_graph_tensors, trace)
from .tensor_array_ops import TensorArray

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


def _invariants(structure, flat: list, shape_invariants, tensor_arrays: dict) -> list:
    """The shape invariant of each flat loop variable; a TensorArray's flow may take any shape."""
    if shape_invariants is None:
        shapes = [t.shape for t in flat]
    else:
        shapes = [as_shape(s) if k not in tensor_arrays else TensorShape(None)
                  for k, s in enumerate(_flatten_up_to(structure, shape_invariants, "shape_invariants"))]
    shapes = [TensorShape(None) if k in tensor_arrays else s for k, s in enumerate(shapes)]
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
        leaves = nest_flatten(structure)
        tas = {k: v for k, v in enumerate(leaves) if isinstance(v, TensorArray)}  # carried as their flows
        flat = [v.flow if k in tas else convert_to_tensor(v) for k, v in enumerate(leaves)]
        shapes = _invariants(structure, flat, shape_invariants, tas)

        def wrap(phs):
            return [tas[k]._with_flow(p) if k in tas else p for k, p in enumerate(phs)]
        inputs = []
        if maximum_iterations is not None:
            mx = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if not mx.dtype.is_integer:
                raise TypeError(f"maximum_iterations must be an integer tensor, got {mx.dtype.name}")
            if mx.shape.ndims not in (None, 0):
                raise ValueError(f"maximum_iterations must be a scalar, saw shape: {mx.shape}")
            inputs.append(mx)
        specs = [(t.dtype, s, "loop_var") for t, s in zip(flat, shapes, strict=True)]
        cg, c_phs, c_res = trace(scope + "cond", cond, specs, structure, unpack=True, wrap=wrap)
        pred = to_graph_tensors(cg, [c_res], "while_loop cond")[0]
        check_bool_scalar(pred, f"tf.while_loop '{label}': cond's result")
        bg, b_phs, b_res = trace(scope + "body", body, specs, structure, unpack=True, wrap=wrap)
        if not is_nested(b_res):
            b_res = [b_res]
        b_leaves = nest_flatten(b_res)
        b_tas = {k: v for k, v in enumerate(b_leaves) if isinstance(v, TensorArray)}
        outs = to_graph_tensors(bg, [v.flow if k in b_tas else v for k, v in enumerate(b_leaves)],
                                "while_loop body")
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
    results = [b_tas[k]._with_flow(t) if k in b_tas else t for k, t in enumerate(op.outputs)]
    res = nest_pack(b_res, results)
    if return_same_structure:
        return res
    return results[0] if len(flat) == 1 else res
