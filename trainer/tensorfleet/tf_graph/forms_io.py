"""TF forms of the string and tf.Example parsing ops a serving graph uses.

`ParseExample` here holds its feature spec as attributes (`dense`: key, dtype, shape, default; `sparse`:
key, dtype; `batch`); TF takes the keys and dense defaults as Const inputs and the types and shapes as
attributes: a batch is TF's ParseExample (inputs serialized, names, sparse keys, dense keys, dense
defaults), one example its ParseSingleExample. The outputs are in TF's order in both forms.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from .registry import REQUIRED, Emitter, Reader, reads, simple, writes

simple("AsString", "T", precision=-1, scientific=False, shortest=False, width=-1, fill="")
simple("StringJoin", "N*-", separator="")
simple("StringToNumber", "-", out_type=_dtypes.float32)
simple("DecodeRaw", "-", out_type=REQUIRED, little_endian=True)
simple("ReadFile", "-")


def _string_const(e: Emitter, values, suffix: str) -> str:
    """A string Const: a scalar for one key (TF's keys are scalars), a vector for a list."""
    arr = np.empty(len(values), dtype=object)
    arr[:] = [v.encode() for v in values]
    return e.const(arr.reshape(()) if len(values) == 1 else arr, _dtypes.string, suffix)


@writes("ParseExample")
def _write_parse_example(e: Emitter):
    dense, sparse, batch = e.attr("dense"), e.attr("sparse"), e.attr("batch")
    defaults = []
    for i, (_, dtype, shape, default) in enumerate(dense):
        value = np.zeros((0,), dtype.as_numpy_dtype) if default is None else np.asarray(default).reshape(shape)
        if dtype is _dtypes.string:
            arr = np.empty(value.shape, dtype=object)
            arr[...] = value
            value = arr
        defaults.append(e.const(value, dtype, f"dense_default_{i}" if len(dense) > 1 else "dense_default"))
    types = {"sparse_types": [d for _, d in sparse], "Tdense": [d for _, d, _, _ in dense],
             "dense_shapes": [TensorShape(list(s)) for _, _, s, _ in dense]}
    if batch:
        names = _string_const(e, [], "names")
        sparse_keys = [_string_const(e, [k], f"sparse_keys_{i}") for i, (k, _) in enumerate(sparse)]
        dense_keys = [_string_const(e, [k], f"dense_keys_{j}") for j, (k, *_) in enumerate(dense)]
        e.node("ParseExample", [e.inp(0), names] + sparse_keys + dense_keys + defaults,
               {"Nsparse": len(sparse), "Ndense": len(dense), **types})
    else:
        e.node("ParseSingleExample", [e.inp(0)] + defaults,
               {"num_sparse": len(sparse), "sparse_keys": [k for k, _ in sparse], "dense_keys": [k for k, *_ in dense],
                **types})


def _dense_spec(r: Reader, keys: list, first_default: int) -> tuple:
    types, shapes = r.attr("Tdense", ()), r.attr("dense_shapes", ())
    dense = []
    for j, key in enumerate(keys):
        default = r.const(first_default + j, f"dense_defaults[{j}]")
        shape = tuple(shapes[j].as_list())
        value = None if default.size == 0 else np.asarray(default).reshape(shape)
        dense.append((key, types[j], shape, value))
    return tuple(dense)


def _key(value) -> str:
    v = np.asarray(value).reshape(-1)[0]
    return v.decode() if isinstance(v, bytes) else str(v)


@reads("ParseExample")
def _read_parse_example(r: Reader):
    ns, nd = int(r.attr("Nsparse")), int(r.attr("Ndense"))
    sparse_keys = [_key(r.const(2 + i, "sparse_keys")) for i in range(ns)]
    dense_keys = [_key(r.const(2 + ns + j, "dense_keys")) for j in range(nd)]
    sparse = tuple(zip(sparse_keys, r.attr("sparse_types", ())))
    _check_sorted(r, sparse_keys, dense_keys)
    return r.node("ParseExample", [0], {"dense": _dense_spec(r, dense_keys, 2 + ns + nd), "sparse": sparse,
                                        "batch": True})


@reads("ParseSingleExample")
def _read_parse_single_example(r: Reader):
    sparse_keys, dense_keys = list(r.attr("sparse_keys", ())), list(r.attr("dense_keys", ()))
    sparse = tuple(zip(sparse_keys, r.attr("sparse_types", ())))
    _check_sorted(r, sparse_keys, dense_keys)
    return r.node("ParseExample", [0], {"dense": _dense_spec(r, dense_keys, 1), "sparse": sparse, "batch": False})


def _check_sorted(r: Reader, sparse_keys: list, dense_keys: list):
    if sparse_keys != sorted(sparse_keys) or dense_keys != sorted(dense_keys):
        r.fail("feature keys not in sorted order (as tf.parse_example writes them) are not supported here")
