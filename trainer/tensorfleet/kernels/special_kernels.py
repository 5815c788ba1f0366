"""Kernels of ops/special_math_ops.py and ops/special_random_ops.py: TF 1.15's special functions (Erf, Lgamma,
Igamma, Betainc, Zeta, BesselI0e, ...), the internal IgammaGradA / RandomGammaGrad of their gradients,
CumulativeLogsumexp, NextAfter and the RandomGamma / RandomPoissonV2 samplers.

Values come from scipy.special on the CPU. On a GPU (`ctx.xp` is cupy) a function cupyx.scipy.special has runs
there; the others (and the series of IgammaGradA, the scans of CumulativeLogsumexp) run on the host and the
result is uploaded. Results keep the input dtype; where TF's kernels (Eigen) return NaN outside a function's
domain the kernels mask scipy's value to NaN the same way. Samplers draw on the host from the op's seeded
numpy stream (`resources.rng_for`, as kernels/random_kernels.py) and upload.
"""
from __future__ import annotations

import numpy as np

from .. import errors
from .array_kernels import _dims
from .backend import to_host
from .registry import host_inputs, register_kernel
from .resources import rng_for



def _scipy_special():
    """scipy.special, imported on first use: it costs a quarter of a second at start-up and most programs
    (every ps and worker process) never call these ops."""
    import scipy.special

    return scipy.special

def _device_special(xp):
    """cupyx.scipy.special for real cupy, else None (the host computes). Tests replace this function."""
    if getattr(xp, "__name__", "") != "cupy":
        return None
    try:
        import cupyx.scipy.special as cs
    except ImportError:  # pragma: no cover - cupy without cupyx.scipy
        return None
    return cs


def special(ctx, fn_name, *args):
    """scipy.special.<fn_name>(*args) on ctx's device, in the inputs' dtype (one dtype: the ops check it)."""
    xp = ctx.xp
    dtype = args[-1].dtype
    if xp is np:
        return np.asarray(getattr(_scipy_special(), fn_name)(*args)).astype(dtype, copy=False)
    mod = _device_special(xp)
    fn = getattr(mod, fn_name, None) if mod is not None else None
    if fn is not None:
        return fn(*args).astype(dtype, copy=False)
    host = [np.asarray(to_host(a)) for a in args]
    return xp.asarray(np.asarray(getattr(_scipy_special(), fn_name)(*host)).astype(dtype, copy=False))


def _nan_where(xp, bad, value):
    return xp.where(bad, float("nan"), value).astype(value.dtype, copy=False)


UNARY = (("Erf", "erf"), ("Erfc", "erfc"), ("Lgamma", "gammaln"), ("Digamma", "digamma"),
         ("BesselI0e", "i0e"), ("BesselI1e", "i1e"))


def _unary(op_type, fn_name):
    @register_kernel(op_type)
    def kernel(ctx, x):
        return special(ctx, fn_name, x)
    kernel.__name__ = fn_name
    return kernel


for _op, _fn in UNARY:
    _unary(_op, _fn)


@register_kernel("Polygamma")
def polygamma(ctx, a, x):
    """psi^(a)(x); NaN where the order `a` is negative or not an integer (as TF)."""
    xp = ctx.xp
    out = special(ctx, "polygamma", a, x)
    return _nan_where(xp, (a < 0) | (a != xp.floor(a)), out)


@register_kernel("Igamma")
def igamma(ctx, a, x):
    """Regularized lower incomplete gamma P(a, x); NaN for a <= 0 or x < 0 (Eigen's igamma)."""
    return _nan_where(ctx.xp, (a <= 0) | (x < 0), special(ctx, "gammainc", a, x))


@register_kernel("Igammac")
def igammac(ctx, a, x):
    """Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x); NaN for a <= 0 or x < 0."""
    return _nan_where(ctx.xp, (a <= 0) | (x < 0), special(ctx, "gammaincc", a, x))


@register_kernel("Zeta")
def zeta(ctx, x, q):
    """Hurwitz zeta(x, q) = sum_n (n + q)^-x; NaN for x < 1 (Eigen's zeta)."""
    return _nan_where(ctx.xp, x < 1, special(ctx, "zeta", x, q))


@register_kernel("Betainc")
def betainc(ctx, a, b, x):
    """Regularized incomplete beta I_x(a, b); NaN for a <= 0, b <= 0 or x outside [0, 1]."""
    xp = ctx.xp
    out = special(ctx, "betainc", a, b, x)
    return _nan_where(xp, (a <= 0) | (b <= 0) | (x < 0) | (x > 1), out)


@register_kernel("NextAfter")
def next_after(ctx, x1, x2):
    return ctx.xp.nextafter(x1, x2)


def igamma_grad_a_host(a, x):
    """d/da P(a, x) by the series P = sum_n exp((a + n) log x - x - lgamma(a + n + 1)), differentiated termwise:
    each term times (log x - digamma(a + n + 1)). Float64 on the host; terms are summed until they no longer
    change the sum, past the largest term (n > x - a); 0 where it is below 1e-300 (x far above a, P = 1 to the
    last bit). NaN for a <= 0 or x < 0, 0 at x = 0."""
    _sp = _scipy_special()
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.zeros(a.shape)
    bad = ~((a > 0) & (x >= 0))
    with np.errstate(divide="ignore", invalid="ignore"):  # x far above a: |dP/da| ~ Q (|log x| + |digamma(a)|)
        negligible = _sp.gammaincc(a, x) * (np.abs(np.log(x)) + np.abs(_sp.digamma(a)) + 1) < 1e-300
    idx = np.flatnonzero(~bad & (x > 0) & ~negligible)  # the rest stays 0 (below 1e-300 in magnitude)
    av, xv = a.ravel()[idx], x.ravel()[idx]
    logx = np.log(xv)
    logt = av * logx - xv - _sp.gammaln(av + 1)
    psi = _sp.digamma(av + 1)
    acc = np.zeros(idx.size)
    n = 0
    limit = 200 + int(10 * (xv.max() + 10 * np.sqrt(xv.max()))) if idx.size else 0
    while idx.size and n < limit:
        t = np.exp(logt)
        acc += t * (logx - psi)
        # past the largest term the terms fall; (logx - psi) crosses 0 there, so the test is on the term itself
        done = (n > xv - av) & (t * np.maximum(np.abs(logx - psi), 1.0) <= 1e-17 * np.maximum(np.abs(acc), 1e-300))
        logt += logx - np.log(av + n + 1)
        psi += 1.0 / (av + n + 1)
        n += 1
        if done.any():
            out.ravel()[idx[done]] = acc[done]
            keep = ~done
            idx, av, xv, logx, logt, psi, acc = (v[keep] for v in (idx, av, xv, logx, logt, psi, acc))
    out.ravel()[idx] = acc
    out[bad] = np.nan
    return out


def _host_op(ctx, fn, *args):
    dtype = args[-1].dtype
    out = fn(*[np.asarray(to_host(v)) for v in args]).astype(dtype, copy=False)
    return out if ctx.xp is np else ctx.xp.asarray(out)


@register_kernel("IgammaGradA")
def igamma_grad_a(ctx, a, x):
    return _host_op(ctx, igamma_grad_a_host, a, x)


def random_gamma_grad_host(alpha, sample):
    """d sample / d alpha of a Gamma(alpha, 1) sample at a fixed CDF value (implicit differentiation, TF's
    RandomGammaGrad): -(dP/da)(alpha, x) / (dP/dx)(alpha, x), with dP/dx the Gamma density."""
    a, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(sample, np.float64))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_density = -x + (a - 1) * np.log(x) - _scipy_special().gammaln(a)
        return -igamma_grad_a_host(a, x) / np.exp(log_density)


@register_kernel("RandomGammaGrad")
def random_gamma_grad(ctx, alpha, sample):
    return _host_op(ctx, random_gamma_grad_host, alpha, sample)


# -- CumulativeLogsumexp --------------------------------------------------------
def cumulative_logsumexp_host(x, axis, exclusive, reverse):
    """log(cumsum(exp(x))) along `axis` by np.logaddexp.accumulate (no overflow or underflow of the prefix)."""
    x = np.asarray(x)
    if reverse:
        x = np.flip(x, axis)
    with np.errstate(invalid="ignore"):
        out = np.logaddexp.accumulate(x, axis=axis) if x.shape[axis] else x.copy()
    if exclusive:
        out = np.moveaxis(out, axis, 0)
        out = np.concatenate([np.full((1,) + out.shape[1:], -np.inf, out.dtype), out[:-1]], axis=0)
        out = np.moveaxis(out, 0, axis)
    if reverse:
        out = np.flip(out, axis)
    return np.ascontiguousarray(out)


@register_kernel("CumulativeLogsumexp")
def cumulative_logsumexp(ctx, x):
    a = ctx.attrs
    axis = a["axis"]
    if not -x.ndim <= axis < x.ndim:
        raise errors.InvalidArgumentError(None, ctx.op, f"{ctx.op.name}: expected the scan axis in the range "
                                                        f"[{-x.ndim}, {x.ndim}), got {axis}")
    return _host_op(ctx, lambda v: cumulative_logsumexp_host(v, axis, a["exclusive"], a["reverse"]), x)


# -- samplers -------------------------------------------------------------------
def _sample_shape(ctx, dyn, param):
    static = ctx.attrs.get("shape")
    shape = tuple(static) if static is not None else tuple(_dims(dyn[0]))
    return shape + tuple(param.shape)


def _out_dtype(ctx):
    return ctx.attrs.get("dtype", ctx.attrs.get("T")).np_dtype


@register_kernel("RandomGamma")
@host_inputs(0)
def random_gamma(ctx, *inputs):
    """Gamma(alpha, 1) samples, shape `shape + alpha.shape`; NaN where alpha <= 0 (or NaN). Inputs: (shape,) alpha."""
    alpha = np.asarray(to_host(inputs[-1]))
    shape = _sample_shape(ctx, inputs[:-1], alpha)
    full = np.broadcast_to(alpha.astype(np.float64), shape)
    ok = full > 0
    out = np.full(shape, np.nan)
    out[ok] = rng_for(ctx).standard_gamma(full[ok])
    out = out.astype(_out_dtype(ctx))
    return out if ctx.xp is np else ctx.xp.asarray(out)


@register_kernel("RandomPoissonV2")
@host_inputs(0)
def random_poisson(ctx, *inputs):
    """Poisson(rate) samples in the output dtype, shape `shape + rate.shape`; a negative or NaN rate is an error.
    Inputs: (shape,) rate."""
    rate = np.asarray(to_host(inputs[-1]))
    shape = _sample_shape(ctx, inputs[:-1], rate)
    full = np.broadcast_to(rate.astype(np.float64), shape)
    if not (full >= 0).all():
        raise errors.InvalidArgumentError(None, ctx.op, f"{ctx.op.name}: the Poisson rate must be >= 0, got "
                                                        f"{full[~(full >= 0)].ravel()[0]}")
    out = rng_for(ctx).poisson(full).astype(_out_dtype(ctx))
    return out if ctx.xp is np else ctx.xp.asarray(out)
