"""`tf.map_fn`, `tf.scan`, `tf.foldl`, `tf.foldr`: `tf.while_loop`s over the first dimension of `elems`.

Ops layer, above `while_ops`. Each iteration reads element `i` with `gather`
(the elems are captured by the loop body) and, for map_fn and scan, writes its
result into row `i` of an accumulator loop variable with `LoopAccumulatorWrite`
(`tensor_array_ops`, the flow of a TensorArray): the accumulator starts as an
empty `[0]` tensor and is allocated as `[n] + result shape` at the first write,
so result shapes need not be known statically. Gradients flow through the
While gradient.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import convert_to_tensor, get_default_graph
from ..tensor_shape import TensorShape
from .array_ops import shape as _shape
from .comparison_ops import less
from .functional_ops import nest_flatten, nest_pack
from .slicing_ops import gather
from .tensor_array_ops import accumulator_write as _accumulator_write, empty_accumulator as _empty
from .while_ops import while_loop

__all__ = ["map_fn", "scan", "foldl", "foldr"]


def _elements(elems, name):
    flat = [convert_to_tensor(e) for e in nest_flatten(elems)]
    if not flat:
        raise ValueError(f"{name}: elems must be a tensor or a non-empty structure of tensors")
    for t in flat:
        if t.shape.ndims == 0:
            raise ValueError(f"{name}: elements must have at least one dimension, got the scalar {t.name}")
    n = _shape(flat[0], out_type=_dtypes.int32)[0]
    static_n = flat[0].shape.as_tuple()[0] if flat[0].shape.ndims else None
    return flat, n, static_n


def _set_row_shapes(outs, static_n, row_shapes):
    for t, rs in zip(outs, row_shapes, strict=True):
        t.set_shape(TensorShape([static_n]).concatenate(rs))


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None):
    """`tf.map_fn`: `fn` on each slice `elems[i]`, results stacked; `dtype` when fn's output structure differs."""
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with get_default_graph().name_scope(name or "map"):
        flat, n, static_n = _elements(elems, "map_fn")
        out_struct = dtype if dtype is not None else nest_pack(elems, [t.dtype for t in flat])
        out_dtypes = [_dtypes.as_dtype(d) for d in nest_flatten(out_struct)]
        row_shapes: list = []

        def body(i, *accs):
            y = fn(nest_pack(elems, [gather(t, i) for t in flat]))
            ys = [convert_to_tensor(v) for v in nest_flatten(y)]
            if len(ys) != len(accs):
                raise ValueError(f"map_fn: fn returned {len(ys)} tensors but dtype has {len(accs)}; pass `dtype` "
                                 f"when fn's output structure differs from elems'")
            for v, dt in zip(ys, out_dtypes, strict=True):
                if v.dtype is not dt:
                    raise TypeError(f"map_fn: fn returned {v.dtype.name} where dtype is {dt.name}")
            row_shapes[:] = [v.shape for v in ys]
            return [i + 1] + [_accumulator_write(a, i, v, n) for a, v in zip(accs, ys, strict=True)]

        inv = [TensorShape([])] + [TensorShape(None)] * len(out_dtypes)
        res = while_loop(lambda i, *a: less(i, n), body, [0] + [_empty(dt) for dt in out_dtypes],
                         shape_invariants=inv, back_prop=back_prop, parallel_iterations=parallel_iterations or 10,
                         return_same_structure=True)
        outs = list(res[1:])
        _set_row_shapes(outs, static_n, row_shapes)
        return nest_pack(out_struct, outs)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """`tf.scan`: a = fn(a, elems[i]) for each i (reversed with `reverse`), every a stacked."""
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with get_default_graph().name_scope(name or "scan"):
        flat, n, static_n = _elements(elems, "scan")
        if initializer is None:
            a_struct, start = elems, 1
            first = 0 if not reverse else n - 1
            a0 = [gather(t, first) for t in flat]
        else:
            a_struct, start = initializer, 0
            a0 = [convert_to_tensor(v) for v in nest_flatten(initializer)]
        accs0 = [_empty(a.dtype) for a in a0]
        if initializer is None:
            accs0 = [_accumulator_write(acc, first, a, n) for acc, a in zip(accs0, a0, strict=True)]
        k = len(a0)

        def body(i, *state):
            a, accs = list(state[:k]), list(state[k:])
            j = n - 1 - i if reverse else i
            x = nest_pack(elems, [gather(t, j) for t in flat])
            new = [convert_to_tensor(v) for v in nest_flatten(fn(nest_pack(a_struct, a), x))]
            if len(new) != k:
                raise ValueError(f"scan: fn returned {len(new)} tensors but the accumulator has {k}")
            return [i + 1] + new + [_accumulator_write(acc, j, v, n) for acc, v in zip(accs, new, strict=True)]

        inv = [TensorShape([])] + [a.shape for a in a0] + [TensorShape(None)] * k
        res = while_loop(lambda i, *s: less(i, n), body, [start] + a0 + accs0, shape_invariants=inv,
                         back_prop=back_prop, parallel_iterations=parallel_iterations, return_same_structure=True)
        outs = list(res[1 + k:])
        _set_row_shapes(outs, static_n, [a.shape for a in a0])
        return nest_pack(a_struct, outs)


def _fold(fn, elems, initializer, back_prop, parallel_iterations, reverse, name, what):
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with get_default_graph().name_scope(name or what):
        flat, n, _ = _elements(elems, what)
        if initializer is None:
            a_struct, start = elems, 1
            a0 = [gather(t, n - 1 if reverse else 0) for t in flat]
        else:
            a_struct, start = initializer, 0
            a0 = [convert_to_tensor(v) for v in nest_flatten(initializer)]
        k = len(a0)

        def body(i, *a):
            j = n - 1 - i if reverse else i
            x = nest_pack(elems, [gather(t, j) for t in flat])
            new = [convert_to_tensor(v) for v in nest_flatten(fn(nest_pack(a_struct, list(a)), x))]
            if len(new) != k:
                raise ValueError(f"{what}: fn returned {len(new)} tensors but the accumulator has {k}")
            return [i + 1] + new

        res = while_loop(lambda i, *a: less(i, n), body, [start] + a0, back_prop=back_prop,
                         parallel_iterations=parallel_iterations, return_same_structure=True)
        return nest_pack(a_struct, list(res[1:]))


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """`tf.foldl`: a = fn(a, elems[i]) for i = 0..n-1; returns the last a."""
    return _fold(fn, elems, initializer, back_prop, parallel_iterations, False, name, "foldl")


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """`tf.foldr`: a = fn(a, elems[i]) for i = n-1..0; returns the last a."""
    return _fold(fn, elems, initializer, back_prop, parallel_iterations, True, name, "foldr")
