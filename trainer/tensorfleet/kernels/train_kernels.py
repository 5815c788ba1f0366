"""Kernels of the fused optimizer updates (ops defined in `train/training_ops.py`).

Each kernel reads the variable and its slots from the session's ResourceStore
under `resources.lock` and computes the update with TF's kernel formulas
(tensorflow/core/kernels/training_ops.cc) in the variable's dtype. When no
reader holds the arrays any more (`ResourceStore.exclusive`), the hot kernels
(GradientDescent, Momentum, Adam) update them in place through a per-plan
scratch buffer, with no allocation, like hand-written numpy; otherwise every
kernel stores NEW arrays (slots first, the variable last), so a value read
earlier in the step stays a consistent snapshot. The output is the variable's
new value. Written against `ctx.xp` (numpy on CPU, cupy on GPU).
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from .. import errors
from .backend import to_host
from .ownership import owns
from .registry import register_kernel

_FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def _read(ctx, attr):
    var_op = ctx.attrs[attr]
    return ctx.resources.read(var_op.name, ctx.op.name)


def _check(ctx, var, grad, *slots):
    if grad.shape != var.shape:
        raise errors.InvalidArgumentError(
            None, ctx.op, f"var and grad do not have the same shape{list(var.shape)} {list(grad.shape)}"
                          f"\n\t [[node {ctx.op.name}]]")
    for name, s in slots:
        if s.shape != var.shape:
            raise errors.InvalidArgumentError(
                None, ctx.op, f"var and {name} do not have the same shape{list(var.shape)} {list(s.shape)}"
                              f"\n\t [[node {ctx.op.name}]]")


def _finish(ctx, var, new_var, **new_slots):
    """Stores the slots' and the variable's new arrays (in var's dtype) and returns the new variable."""
    dt = var.dtype
    for attr, value in new_slots.items():
        ctx.resources.store(ctx.attrs[attr].name, value.astype(dt, copy=False))
    new_var = new_var.astype(dt, copy=False)
    ctx.resources.store(ctx.attrs["var"].name, new_var)
    return new_var


def _exclusive(ctx, *attrs):
    """The arrays of these variables, writable, if the store alone holds every one of them; else None."""
    res = ctx.resources
    arrays = []
    for attr in attrs:
        arr = res.exclusive(ctx.attrs[attr].name)
        if arr is None:
            for a, done in zip(attrs, arrays):  # refreeze what was unlocked
                res.store(ctx.attrs[a].name, done)
            return None
        arrays.append(arr)
    return arrays


def _scratch(ctx, like):
    """A per-plan buffer shaped like `like` (the executor runs a plan's kernels under the store lock)."""
    buf = ctx.attrs.get("_scratch")
    if buf is None or buf.shape != like.shape or buf.dtype != like.dtype:
        buf = ctx.attrs["_scratch"] = ctx.xp.empty_like(like)
    return buf


def _store_all(ctx, **arrays):
    for attr, arr in arrays.items():
        ctx.resources.store(ctx.attrs[attr].name, arr)
    return arrays["var"]


@register_kernel("ApplyGradientDescent", dtypes=_FLOATS)
def apply_gradient_descent(ctx, alpha, delta):
    xp, res = ctx.xp, ctx.resources
    name = ctx.attrs["var"].name
    with res.lock:
        var = res.exclusive(name)
        if var is not None:
            if var.shape == delta.shape:  # the hot path, kept lean: two ufuncs, like numpy by hand
                dt = var.dtype
                if alpha.dtype != dt:
                    alpha = alpha.astype(dt)
                t = delta if delta.dtype == dt and owns(delta) else _scratch(ctx, var)
                xp.multiply(delta, alpha, out=t)
                xp.subtract(var, t, out=var)
                res.store(name, var)
                return var
            res.store(name, var)  # refreeze; the check below raises
        var = _read(ctx, "var")
        _check(ctx, var, delta)
        # One fresh buffer (asarray: numpy turns a 0-d product into a scalar, which `out=` rejects)...
        new = xp.asarray(xp.multiply(delta, alpha.astype(var.dtype, copy=False)))
        xp.subtract(var, new, out=new)  # ...updated in place: it is ours, not an input
        return _finish(ctx, var, new)


@register_kernel("ApplyMomentum", dtypes=_FLOATS)
def apply_momentum(ctx, lr, momentum, grad):
    xp = ctx.xp
    with ctx.resources.lock:
        var, accum = _read(ctx, "var"), _read(ctx, "accum")
        _check(ctx, var, grad, ("accum", accum))
        del var, accum
        owned = _exclusive(ctx, "var", "accum")
        if owned is not None:
            var, accum = owned
            t = _scratch(ctx, var)
            momentum = momentum.astype(var.dtype, copy=False)
            lr = lr.astype(var.dtype, copy=False)
            accum *= momentum
            accum += grad
            if ctx.attrs.get("use_nesterov"):
                xp.multiply(accum, momentum, out=t)
                t += grad
                t *= lr
            else:
                xp.multiply(accum, lr, out=t)
            var -= t
            return _store_all(ctx, accum=accum, var=var)
        var, accum = _read(ctx, "var"), _read(ctx, "accum")
        new_accum = accum * momentum + grad
        if ctx.attrs.get("use_nesterov"):
            new_var = var - (grad * lr + new_accum * momentum * lr)
        else:
            new_var = var - lr * new_accum
        return _finish(ctx, var, xp.asarray(new_var), accum=new_accum)


@register_kernel("ApplyAdam", dtypes=_FLOATS)
def apply_adam(ctx, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad):
    xp = ctx.xp
    with ctx.resources.lock:
        var, m, v = _read(ctx, "var"), _read(ctx, "m"), _read(ctx, "v")
        _check(ctx, var, grad, ("m", m), ("v", v))
        one = 1  # a Python scalar takes the operand's dtype; no per-step host->device upload on a GPU
        lr_t = lr * xp.sqrt(one - beta2_power) / (one - beta1_power)
        del var, m, v
        owned = None if ctx.attrs.get("use_nesterov") else _exclusive(ctx, "var", "m", "v")
        if owned is not None:
            var, m, v = owned
            t = _scratch(ctx, var)
            dt = var.dtype
            xp.subtract(grad, m, out=t)
            t *= (one - beta1).astype(dt, copy=False)
            m += t
            xp.multiply(grad, grad, out=t)
            t -= v
            t *= (one - beta2).astype(dt, copy=False)
            v += t
            xp.sqrt(v, out=t)
            t += epsilon.astype(dt, copy=False)
            xp.divide(m, t, out=t)
            t *= lr_t.astype(dt, copy=False)
            var -= t
            return _store_all(ctx, m=m, v=v, var=var)
        var, m, v = _read(ctx, "var"), _read(ctx, "m"), _read(ctx, "v")
        new_m = m + (grad - m) * (one - beta1)
        new_v = v + (grad * grad - v) * (one - beta2)
        if ctx.attrs.get("use_nesterov"):
            step = ((grad * (one - beta1) + beta1 * new_m) * lr_t) / (xp.sqrt(new_v) + epsilon)
        else:
            step = (new_m * lr_t) / (xp.sqrt(new_v) + epsilon)
        return _finish(ctx, var, var - step, m=new_m, v=new_v)


@register_kernel("ApplyAdagrad", dtypes=_FLOATS)
def apply_adagrad(ctx, lr, grad):
    xp = ctx.xp
    with ctx.resources.lock:
        var, accum = _read(ctx, "var"), _read(ctx, "accum")
        _check(ctx, var, grad, ("accum", accum))
        new_accum = accum + grad * grad if ctx.attrs.get("update_slots", True) else accum
        new_var = var - lr * grad / xp.sqrt(new_accum)
        return _finish(ctx, var, new_var, accum=new_accum)


@register_kernel("ApplyRMSProp", dtypes=_FLOATS)
def apply_rms_prop(ctx, lr, rho, momentum, epsilon, grad):
    xp = ctx.xp
    with ctx.resources.lock:
        var, ms, mom = _read(ctx, "var"), _read(ctx, "ms"), _read(ctx, "mom")
        _check(ctx, var, grad, ("ms", ms), ("mom", mom))
        one = 1  # a Python scalar takes the operand's dtype; no per-step host->device upload on a GPU
        new_ms = ms + (grad * grad - ms) * (one - rho)
        new_mom = mom * momentum + (grad * lr) / xp.sqrt(new_ms + epsilon)
        return _finish(ctx, var, var - new_mom, ms=new_ms, mom=new_mom)


@register_kernel("ApplyCenteredRMSProp", dtypes=_FLOATS)
def apply_centered_rms_prop(ctx, lr, rho, momentum, epsilon, grad):
    xp = ctx.xp
    with ctx.resources.lock:
        var, mg, ms, mom = _read(ctx, "var"), _read(ctx, "mg"), _read(ctx, "ms"), _read(ctx, "mom")
        _check(ctx, var, grad, ("mg", mg), ("ms", ms), ("mom", mom))
        one = 1  # a Python scalar takes the operand's dtype; no per-step host->device upload on a GPU
        new_mg = mg + (grad - mg) * (one - rho)
        new_ms = ms + (grad * grad - ms) * (one - rho)
        denom = (new_ms - new_mg * new_mg) + epsilon
        new_mom = mom * momentum + (grad * lr) / xp.sqrt(denom)
        return _finish(ctx, var, var - new_mom, mg=new_mg, ms=new_ms, mom=new_mom)


def _positive(l1) -> bool:
    """TF's kernels pick the l1 branch on the host (`l1 > 0`); so do we (one scalar read on a GPU)."""
    return bool(to_host(l1) > 0)


@register_kernel("ApplyAdadelta", dtypes=_FLOATS)
def apply_adadelta(ctx, lr, rho, epsilon, grad):
    xp = ctx.xp
    with ctx.resources.lock:
        var, accum, accum_update = _read(ctx, "var"), _read(ctx, "accum"), _read(ctx, "accum_update")
        _check(ctx, var, grad, ("accum", accum), ("accum_update", accum_update))
        one = 1
        new_accum = accum * rho + grad * grad * (one - rho)
        update = xp.sqrt(accum_update + epsilon) / xp.sqrt(new_accum + epsilon) * grad
        new_accum_update = accum_update * rho + update * update * (one - rho)
        return _finish(ctx, var, var - update * lr, accum=new_accum, accum_update=new_accum_update)


def _proximal_step(xp, prox, lr, l1, l2, l1_positive):
    """TF's proximal (FOBOS) step: sign(prox) * max(|prox| - lr * l1, 0) / (1 + lr * l2); no shrink when l1 <= 0."""
    one = 1
    if l1_positive:
        return xp.sign(prox) * xp.maximum(xp.abs(prox) - lr * l1, 0) / (one + l2 * lr)
    return prox / (one + l2 * lr)


@register_kernel("ApplyProximalGradientDescent", dtypes=_FLOATS)
def apply_proximal_gradient_descent(ctx, alpha, l1, l2, delta):
    xp = ctx.xp
    with ctx.resources.lock:
        var = _read(ctx, "var")
        _check(ctx, var, delta)
        prox = var - delta * alpha
        return _finish(ctx, var, xp.asarray(_proximal_step(xp, prox, alpha, l1, l2, _positive(l1))))


@register_kernel("ApplyProximalAdagrad", dtypes=_FLOATS)
def apply_proximal_adagrad(ctx, lr, l1, l2, grad):
    xp = ctx.xp
    with ctx.resources.lock:
        var, accum = _read(ctx, "var"), _read(ctx, "accum")
        _check(ctx, var, grad, ("accum", accum))
        new_accum = accum + grad * grad
        lr_t = lr / xp.sqrt(new_accum)  # TF: lr * rsqrt(accum), per element
        prox = var - grad * lr_t
        return _finish(ctx, var, xp.asarray(_proximal_step(xp, prox, lr_t, l1, l2, _positive(l1))),
                       accum=new_accum)


@register_kernel("ApplyAdagradDA", dtypes=_FLOATS)
def apply_adagrad_da(ctx, lr, l1, l2, global_step, grad):
    xp = ctx.xp
    with ctx.resources.lock:
        var = _read(ctx, "var")
        g_acc, gg_acc = _read(ctx, "gradient_accumulator"), _read(ctx, "gradient_squared_accumulator")
        _check(ctx, var, grad, ("gradient_accumulator", g_acc), ("gradient_squared_accumulator", gg_acc))
        new_g, new_gg = g_acc + grad, gg_acc + grad * grad
        step = float(to_host(global_step))  # TF: static_cast<float>(global_step)
        t = xp.asarray(step, dtype=var.dtype)
        denom = l2 * (t * lr) + xp.sqrt(new_gg)
        if _positive(l1):
            num = xp.sign(new_g) * xp.maximum(xp.abs(new_g) - t * l1, 0)
        else:
            num = new_g
        return _finish(ctx, var, xp.asarray(-lr * num / denom), gradient_accumulator=new_g,
                       gradient_squared_accumulator=new_gg)
