"""Kernels for ops/string_ops.py, CPU only: a tf.string tensor is a numpy object array of `bytes` on the host.

Each follows the TF 1.15 kernel of the same name (as_string_op.cc, string_join_op.cc, string_split_op.cc,
decode_raw_op.cc, decode_csv_op.cc, sparse_to_dense_op.cc, print_v2 in logging_ops.cc) for the documented
behaviour and error texts.
"""
from __future__ import annotations

import csv
import re
import sys

import numpy as np

from .. import errors
from .backend import to_host
from .check_kernels import _one
from .registry import register_kernel

_CPU = ("CPU",)


def _strings(shape, items) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    out.reshape(-1)[:] = items if isinstance(items, list) else list(items)
    return out


def _bad(ctx, msg: str):
    return errors.InvalidArgumentError(None, ctx.op, f"{msg}\n\t [[node {ctx.op.name}]]")


# -- AsString -----------------------------------------------------------------
def _as_string_format(ctx, kind: str) -> str:
    a = ctx.op.attrs
    fill, width, precision = a["fill"], a["width"], a["precision"]
    if fill and fill not in " +-0#":
        raise _bad(ctx, f"Fill argument not supported: \"{fill}\"")
    if precision > -1 and kind in "iub":
        raise _bad(ctx, "Cannot select precision for integer or bool types")
    fmt = "%" + fill + (str(width) if width > -1 else "") + (f".{precision}" if precision > -1 else "")
    if kind in "iu":
        return fmt + "d"
    if kind == "b":
        return fmt + "s"
    return fmt + ("g" if a["shortest"] else "e" if a["scientific"] else "f")


@register_kernel("AsString", devices=_CPU)
def as_string(ctx, x):
    x = to_host(x)
    fmt = _as_string_format(ctx, x.dtype.kind)
    if x.dtype.kind == "b":
        items = [(fmt % ("true" if v else "false")).encode() for v in x.reshape(-1)]
    elif x.dtype.kind == "c":
        items = [f"({fmt % v.real},{fmt % v.imag})".encode() for v in x.reshape(-1)]
    elif x.dtype.kind in "iu":
        items = [(fmt % int(v)).encode() for v in x.reshape(-1)]
    else:
        items = [(fmt % float(v)).encode() for v in x.reshape(-1)]
    return _strings(x.shape, items)


# -- StringJoin ---------------------------------------------------------------
@register_kernel("StringJoin", devices=_CPU)
def string_join(ctx, *inputs):
    shapes = {np.shape(x) for x in inputs if np.ndim(x) != 0}
    if len(shapes) > 1:
        raise _bad(ctx, f"Input shapes do not match: {' vs. '.join(str(list(s)) for s in sorted(shapes))}")
    shape = shapes.pop() if shapes else ()
    sep = ctx.op.attrs["separator"]
    sep = sep.encode("utf-8") if isinstance(sep, str) else sep
    columns = [np.broadcast_to(np.asarray(x, dtype=object), shape).reshape(-1) for x in inputs]
    return _strings(shape, [sep.join(parts) for parts in zip(*columns, strict=True)] if columns[0].size else [])


@register_kernel("ReduceJoin", devices=_CPU)
def reduce_join(ctx, x):
    a = ctx.op.attrs
    x = np.asarray(x, dtype=object)
    axes, sep = a["axes"], a["separator"]
    sep = sep.encode("utf-8") if isinstance(sep, str) else sep
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, kept + list(reversed(axes)))  # the first reduced axis varies fastest, as TF
    rows = moved.reshape(int(np.prod([x.shape[i] for i in kept], dtype=np.int64)), -1) if x.size else \
        np.empty((int(np.prod([x.shape[i] for i in kept], dtype=np.int64)), 0), dtype=object)
    out = _strings([x.shape[i] for i in kept], [sep.join(r) for r in rows])
    if a["keep_dims"]:
        out = out.reshape([1 if i in axes else d for i, d in enumerate(x.shape)])
    return out


# -- StringSplit / StringSplitV2 -----------------------------------------------
def _sparse_from_rows(rows):
    indices = [(r, c) for r, toks in enumerate(rows) for c in range(len(toks))]
    values = [t for toks in rows for t in toks]
    width = max((len(toks) for toks in rows), default=0)
    idx = np.array(indices, dtype=np.int64).reshape(-1, 2)
    return idx, _strings((len(values),), values), np.array([len(rows), width], dtype=np.int64)


@register_kernel("StringSplit", devices=_CPU)
def string_split(ctx, source):
    delim, skip_empty = ctx.op.attrs["delimiter"], ctx.op.attrs["skip_empty"]
    rows = []
    for s in np.asarray(source, dtype=object).reshape(-1):
        if not delim:
            toks = [s[i:i + 1] for i in range(len(s))]
        else:
            toks = re.split(b"[" + re.escape(delim) + b"]", s)
        rows.append([t for t in toks if t] if skip_empty else toks)
    return _sparse_from_rows(rows)


@register_kernel("StringSplitV2", devices=_CPU)
def string_split_v2(ctx, source):
    sep, maxsplit = ctx.op.attrs["sep"], ctx.op.attrs["maxsplit"]
    rows = [s.split(sep, maxsplit) if s or sep is None else [b""] for s in np.asarray(source, dtype=object).ravel()]
    return _sparse_from_rows(rows)


# -- SparseToDense --------------------------------------------------------------
@register_kernel("SparseToDense", devices=_CPU)
def sparse_to_dense(ctx, indices, shape, values, default):
    indices, shape, values, default = (to_host(v) for v in (indices, shape, values, default))
    shape = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    idx = np.asarray(indices, dtype=np.int64).reshape(-1, len(shape)) if len(shape) else np.zeros((1, 0), np.int64)
    dtype = np.asarray(default).dtype if np.asarray(values).size == 0 else np.asarray(values).dtype
    out = np.empty(shape, dtype=dtype)
    out[...] = default
    for k, row in enumerate(idx):
        if np.any(row < 0) or np.any(row >= np.array(shape)):
            raise _bad(ctx, f"indices[{k}] = {list(row)} is out of bounds: need 0 <= index < {list(shape)}")
    if idx.shape[0]:
        out[tuple(idx.T)] = values
    return out


# -- elementwise helpers --------------------------------------------------------
def _each(x, fn, dtype=object):
    x = np.asarray(x, dtype=object)
    out = np.empty(x.shape, dtype=dtype)
    out.reshape(-1)[:] = [fn(v) for v in x.reshape(-1)] if x.size else []
    return out


@register_kernel("StringToNumber", devices=_CPU)
def string_to_number(ctx, x):
    out_type = ctx.op.attrs["out_type"]
    parse = float if out_type.is_floating else int

    def one(v):
        try:
            return parse(v.decode("utf-8").strip())
        except (ValueError, UnicodeDecodeError):
            raise _bad(ctx, f"StringToNumberOp could not correctly convert string: {v.decode('utf-8', 'replace')}")\
                from None
    return _each(x, one, out_type.np_dtype)


@register_kernel("StringLength", devices=_CPU)
def string_length(ctx, x):
    if ctx.op.attrs["unit"] == "UTF8_CHAR":
        return _each(x, lambda v: len(v.decode("utf-8", "replace")), np.int32)
    return _each(x, len, np.int32)


@register_kernel("StringStrip", devices=_CPU)
def string_strip(ctx, x):
    return _each(x, bytes.strip)


@register_kernel("Substr", devices=_CPU)
def substr(ctx, x):
    pos, n = ctx.op.attrs["pos"], ctx.op.attrs["len"]

    def one(v):
        if pos > len(v) or pos < -len(v):
            raise _bad(ctx, f"pos {pos} out of range for string b'{v!r}' at index 0")
        p = pos if pos >= 0 else len(v) + pos
        return v[p:p + n]
    return _each(x, one)


@register_kernel("RegexReplace", devices=_CPU)
def regex_replace(ctx, x):
    a = ctx.op.attrs
    pattern = re.compile(a["pattern"].encode() if isinstance(a["pattern"], str) else a["pattern"])
    rewrite = a["rewrite"].encode() if isinstance(a["rewrite"], str) else a["rewrite"]
    rewrite = re.sub(rb"\\(\d)", rb"\\g<\1>", rewrite)  # RE2's \1 means the same as Python's \g<1>
    return _each(x, lambda v: pattern.sub(rewrite, v, count=0 if a["replace_global"] else 1))


# -- DecodeRaw ----------------------------------------------------------------
@register_kernel("DecodeRaw", devices=_CPU)
def decode_raw(ctx, x):
    x = np.asarray(x, dtype=object)
    npd = ctx.op.attrs["out_type"].np_dtype
    wire = npd.newbyteorder("<" if ctx.op.attrs["little_endian"] else ">")
    flat = x.reshape(-1)
    size = len(flat[0]) if flat.size else 0
    for i, s in enumerate(flat):
        if len(s) != size:
            raise _bad(ctx, f"DecodeRaw requires input strings to all be the same size, but element {i} has size "
                            f"{len(s)} != {size}")
    if size % npd.itemsize:
        raise _bad(ctx, f"Input to DecodeRaw has length {size} that is not a multiple of {npd.itemsize}, the size "
                        f"of {ctx.op.attrs['out_type'].name}")
    data = b"".join(flat)
    return np.frombuffer(data, dtype=wire).astype(npd).reshape(x.shape + (size // npd.itemsize,))


# -- DecodeCSV ----------------------------------------------------------------
def _csv_fields(ctx, record: bytes, r: int):
    a = ctx.op.attrs
    text = record.decode("utf-8")
    try:
        if a["use_quote_delim"]:
            rows = list(csv.reader([text], delimiter=a["field_delim"], quotechar='"', strict=True))
        else:
            rows = list(csv.reader([text], delimiter=a["field_delim"], quoting=csv.QUOTE_NONE, strict=True))
    except csv.Error as e:
        raise _bad(ctx, f"Quoted field has to end with quote followed by delim or end in record {r}: {e}") from None
    return rows[0] if rows else [""]


def _csv_value(ctx, field: str, default, dtype, col: int, r: int):
    if field == "" or field == ctx.op.attrs["na_value"]:
        if np.asarray(default).size == 0:
            raise _bad(ctx, f"Field {col} is required but missing in record {r}!")
        return np.asarray(default).reshape(-1)[0]
    if dtype.kind == "O":
        return field.encode("utf-8")
    try:
        return int(field) if dtype.kind in "iu" else float(field)
    except ValueError:
        kind = {"i": f"int{dtype.itemsize * 8}", "f": "float"}.get(dtype.kind, str(dtype))
        raise _bad(ctx, f"Field {col} in record {r} is not a valid {kind}: {field}") from None


@register_kernel("DecodeCSV", devices=_CPU)
def decode_csv(ctx, records, *defaults):
    recs = np.asarray(records, dtype=object)
    defaults = [to_host(d) for d in defaults]
    dtypes = [t.dtype.np_dtype for t in ctx.op.inputs[1:]]
    select = ctx.op.attrs["select_cols"]
    outs = [np.empty(recs.shape, dtype=d) for d in dtypes]
    for r, record in enumerate(recs.reshape(-1)):
        fields = _csv_fields(ctx, record, r)
        if select is not None:
            if select[-1] >= len(fields):
                raise _bad(ctx, f"Expect {select[-1] + 1} fields but have {len(fields)} in record {r}")
            fields = [fields[c] for c in select]
        elif len(fields) != len(dtypes):
            raise _bad(ctx, f"Expect {len(dtypes)} fields but have {len(fields)} in record {r}")
        for c, (field, d, dt) in enumerate(zip(fields, defaults, dtypes, strict=True)):
            outs[c].reshape(-1)[r] = _csv_value(ctx, field, d, dt, c, r)
    return tuple(outs)


# -- PrintV2 ------------------------------------------------------------------
def format_v2(arr: np.ndarray, summarize: int, depth: int = 0) -> str:
    """TF's print_v2 tensor rendering: numpy-style nested brackets, '...' past `summarize` items at each end,
    strings quoted inside arrays and bare as scalars."""
    if arr.ndim == 0:
        v = arr[()]
        if isinstance(v, bytes):
            text = v.decode("utf-8", "replace")
            return text if depth == 0 else f'"{text}"'
        return _one(v)
    n = arr.shape[0]
    keep = list(range(n)) if summarize < 0 or n <= 2 * summarize else \
        list(range(summarize)) + [None] + list(range(n - summarize, n))
    parts = ["..." if i is None else format_v2(arr[i, ...], summarize, depth + 1) for i in keep]
    return "[" + (" " if arr.ndim == 1 else "\n" + " " * (depth + 1)).join(parts) + "]"


@register_kernel("PrintV2", devices=_CPU)
def print_v2(ctx, *values):
    a = ctx.op.attrs
    parts = [v if kind == "s" else format_v2(np.asarray(to_host(values[v])), a["summarize"])
             for kind, v in a["template"]]
    stream = sys.stdout if a["stream"] == "stdout" else sys.stderr
    stream.write(a["sep"].join(parts) + a["end"])
    stream.flush()
    return None
