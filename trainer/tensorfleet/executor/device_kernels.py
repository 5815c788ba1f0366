"""Kernel wrappers the executor puts around nodes that run on a device other than the host.

Part of the executor (the plan's `bind_kernels` stage applies them when it binds
a node to its device's kernel): on real GPUs shape arithmetic stays on the host
(`gpu_host_memory`, TF's HostMemory/int32 rule) and host inputs are uploaded;
on a simulated, capped GPU outputs are checked against the cap; in a plan over
several GPUs each step makes its device current.
"""
from __future__ import annotations

import numpy as np

from ..kernels.backend import cupy_module
from .ordering import SHAPE_READERS  # their kernels return host values on any device


def gpu_host_memory(op, fn, ins, host_slots: set, gpu_xp):
    """(kernel, array module) of `op` on a real GPU, keeping shape arithmetic on the host (TF's int32 rule).

    Shape/Size/Rank return host arrays: a device copy would cost a device->host sync wherever a shape is
    read back (Reshape, Fill, broadcasting gradients). Like TF's int32 GPU kernels (HostMemory) and its
    int32 Const on GPUs, integer ops whose data inputs are all such host values (`tf.shape(x)[0] * 2`,
    `tf.stack([n, -1])`) and int32 constants run on the host with numpy, so their results stay host
    values too. Any other kernel gets its host inputs uploaded (cupy rejects numpy operands), except
    those it reads on the host (`kernels.registry.host_inputs`: shapes, sizes).
    """
    host_in = [k for k, s in enumerate(ins) if s in host_slots]
    integer = bool(op._outputs) and all(o.dtype.is_integer for o in op._outputs) and not op.op_def.stateful
    if op.type in SHAPE_READERS or (integer and (len(host_in) == len(ins) > 0 or (
            op.type == "Const" and op._outputs[0].dtype.np_dtype == np.int32))):
        return fn, np
    upload = tuple(k for k in host_in if k not in getattr(fn, "host_inputs", ()))
    return (_uploading(fn, upload, gpu_xp) if upload else fn), gpu_xp


def _uploading(fn, upload: tuple, xp):
    """`fn` with inputs `upload` (host values) copied to the device first; the same host array (an int32
    constant) is uploaded once."""
    last: dict = {}

    def uploaded(ctx, *args):
        device_args = list(args)
        for k in upload:
            host = device_args[k]
            cached = last.get(k)
            if cached is None or cached[0] is not host:
                cached = last[k] = (host, xp.asarray(host))
            device_args[k] = cached[1]
        return fn(ctx, *device_args)

    return uploaded


def checked_outputs(fn, mem):
    """Wraps a kernel on a simulated, capped GPU: an output over the memory cap fails like the real pool."""

    def checked(ctx, *args):
        r = fn(ctx, *args)
        for v in (r if isinstance(r, tuple) else (r,)):
            nbytes = getattr(v, "nbytes", 0)
            if nbytes:
                mem.check_request(nbytes, ctx.op)
        return r

    return checked


def on_cuda_device(fn, cuda_id: int):
    """`fn` making CUDA device `cuda_id` current while it runs (plans over several GPUs)."""
    dev = cupy_module().cuda.Device(cuda_id)

    def on_device(c, *args):
        with dev:
            return fn(c, *args)

    return on_device


def use_cuda_device(cuda_id: int) -> None:
    cp = cupy_module()
    if cp.cuda.runtime.getDevice() != cuda_id:
        cp.cuda.runtime.setDevice(cuda_id)
