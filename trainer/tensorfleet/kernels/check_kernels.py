"""Kernels for ops/check_ops.py: Assert (raises InvalidArgumentError) and Print (identity + stderr line), CPU only:
they format host values; and for ops/numerics.py: CheckNumerics (CPU and GPU)."""
from __future__ import annotations

import sys

import numpy as np

from .. import errors
from .backend import to_host
from .registry import register_kernel


def summarize_value(value, summarize: int) -> str:
    """TF's Tensor::SummarizeValue (non-v2): the first `summarize` elements joined by spaces, '...' when cut."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return _one(arr[()])
    flat = arr.ravel()
    limit = flat.size if summarize is None or summarize < 0 else min(summarize, flat.size)
    text = " ".join(_one(v) for v in flat[:limit])
    return text + "..." if flat.size > limit else text


def _one(v) -> str:
    """One element as TF's StrCat prints it: %g with 6 (float32) / 15 (float64) digits, more if needed to
    round-trip; bools as 1/0."""
    if isinstance(v, bytes):  # a tf.string element: its text, as TF prints it
        return v.decode("utf-8", "replace")
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, np.floating):
        short, full = (15, 17) if v.dtype == np.float64 else (6, 9)
        text = f"{float(v):.{short}g}"
        return text if type(v)(text) == v or v != v else f"{float(v):.{full}g}"
    return str(v)


def _render(template, values, summarize, sep):
    parts = []
    for kind, v in template:
        text = v if kind == "s" else summarize_value(to_host(values[v]), summarize)
        parts.append(f"[{text}]")
    return sep.join(parts)


@register_kernel("Assert", devices=("CPU",))
def assert_(ctx, condition, *data):
    if bool(to_host(condition)):
        return None
    msg = "assertion failed: " + _render(ctx.attrs["template"], data, ctx.attrs["summarize"], " ")
    raise errors.InvalidArgumentError(None, ctx.op, f"{msg}\n\t [[node {ctx.op.name}]]")


@register_kernel("Print", devices=("CPU",))
def print_(ctx, x, *data):
    first_n = ctx.attrs["first_n"]
    if first_n >= 0:
        res = ctx.resources
        with res.lock:
            counts = res.__dict__.setdefault("_print_counts", {})
            n = counts.get(ctx.op.name, 0)
            counts[ctx.op.name] = n + 1
        if n >= first_n:
            return x
    line = ctx.attrs["message"] + _render(ctx.attrs["template"], data, ctx.attrs["summarize"], "")
    print(line, file=sys.stderr, flush=True)
    return x


@register_kernel("CheckNumerics")
def check_numerics(ctx, x):
    """TF's CheckNumerics: x, or InvalidArgumentError "<message> : Tensor had NaN values" naming the node."""
    xp = ctx.xp
    if bool(xp.isfinite(x).all()):
        return x
    has_nan, has_inf = bool(xp.isnan(x).any()), bool(xp.isinf(x).any())
    status = "Inf and NaN" if has_nan and has_inf else ("NaN" if has_nan else "Inf")
    raise errors.InvalidArgumentError(None, ctx.op, f"{ctx.attrs['message']} : Tensor had {status} values\n\t "
                                                    f"[[node {ctx.op.name}]]")
