"""Array modules per device: numpy for CPU (and simulated GPUs), cupy for real GPUs.

The only place that imports cupy; kernels reach it through `KernelContext.xp`,
`devices` asks `cupy_module()` which GPUs exist, copy kernels and
`Session` fetches move data with `host_to_device` / `to_host`, which go
through pinned (page-locked) staging buffers, one per thread and GPU, grown
to the largest transfer seen.
"""
from __future__ import annotations

import threading

import numpy as np

_cupy = None
_staging = threading.local()


def cupy_module():
    """Returns cupy, or None when it is not installed or no CUDA device is usable."""
    global _cupy
    if _cupy is None:
        try:
            import cupy  # noqa: F401

            if cupy.cuda.runtime.getDeviceCount() < 1:
                raise RuntimeError("no CUDA device")
            _cupy = cupy
        except Exception:  # ImportError, CUDARuntimeError: no GPU here
            _cupy = False
    return _cupy or None


def is_device_array(value) -> bool:
    return not isinstance(value, np.ndarray) and hasattr(value, "__cuda_array_interface__")


def _pinned(nbytes: int, cuda_id: int) -> np.ndarray:
    """This thread's pinned staging buffer for GPU `cuda_id`, at least `nbytes` long (uint8)."""
    bufs = getattr(_staging, "bufs", None)
    if bufs is None:
        bufs = _staging.bufs = {}
    buf = bufs.get(cuda_id)
    if buf is None or buf.nbytes < nbytes:
        cp = cupy_module()
        size = max(nbytes, 1 << 16)
        mem = cp.cuda.alloc_pinned_memory(size)
        buf = np.frombuffer(mem, np.uint8, size)
        bufs[cuda_id] = buf
    return buf


def host_to_device(value, cuda_id: int):
    """numpy -> cupy on GPU `cuda_id` through a pinned staging buffer (synchronous copy)."""
    cp = cupy_module()
    value = np.asarray(value)
    with cp.cuda.Device(cuda_id):
        out = cp.empty(value.shape, value.dtype)
        if value.nbytes == 0:
            return out
        if value.nbytes < 4096:  # tiny: the staging memcpy costs more than it saves
            out.set(np.ascontiguousarray(value))
            return out
        stage = _pinned(value.nbytes, cuda_id)[:value.nbytes].view(value.dtype).reshape(value.shape)
        np.copyto(stage, value)
        out.set(stage)
        return out


def device_to_host(value) -> np.ndarray:
    """cupy -> a fresh numpy array, staged through pinned memory for large transfers."""
    nbytes = value.nbytes
    if nbytes < 4096:
        return value.get()
    cuda_id = value.device.id
    stage = _pinned(nbytes, cuda_id)[:nbytes].view(value.dtype).reshape(value.shape)
    cp = cupy_module()
    with cp.cuda.Device(cuda_id):
        value = cp.ascontiguousarray(value)
        value.get(out=stage)
    return stage.copy()


def device_to_device(value, cuda_id: int):
    """cupy on one GPU -> a copy on GPU `cuda_id` (peer copy where the driver allows it)."""
    cp = cupy_module()
    with cp.cuda.Device(cuda_id):
        return cp.array(value, copy=True)


def to_host(value):
    """Converts a device array to numpy (no-op for numpy values)."""
    if isinstance(value, np.ndarray) or np.isscalar(value):
        return value
    if is_device_array(value) and hasattr(value, "device"):
        return device_to_host(value)
    get = getattr(value, "get", None)
    return get() if get is not None else np.asarray(value)
