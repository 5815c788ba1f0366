"""Array modules per device: numpy for CPU (and simulated GPUs), cupy for real GPUs.

The only place that imports cupy; kernels reach it through `KernelContext.xp`,
`devices` asks `cupy_module()` which GPUs exist, copy kernels and
`Session` fetches move data with `host_to_device` / `to_host`, which go
through pinned (page-locked) staging buffers, per thread and GPU, grown
to the largest transfer seen (a small ring of them, see `upload_via_pinned`).
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
    # looked up on the type: cupy's __cuda_array_interface__ is a property that builds a dict per access
    return not isinstance(value, np.ndarray) and hasattr(type(value), "__cuda_array_interface__")


#: pinned staging buffers per thread and GPU, used round-robin so the host can stage a few uploads ahead
_RING = 4


def _stage(nbytes: int, cuda_id: int):
    """(buffer, events, slot): the next pinned staging buffer of this thread for GPU `cuda_id`, at least
    `nbytes` long (uint8), once the upload last staged through it is done (`events[slot]` marks it)."""
    rings = getattr(_staging, "rings", None)
    if rings is None:
        rings = _staging.rings = {}
    ring = rings.get(cuda_id)
    if ring is None:
        ring = rings[cuda_id] = [0, [None] * _RING, [None] * _RING]  # next slot, buffers, pending events
    slot = ring[0]
    ring[0] = (slot + 1) % _RING
    bufs, events = ring[1], ring[2]
    pending = events[slot]
    if pending is not None:  # the device may still be reading this buffer
        events[slot] = None
        pending.synchronize()
    buf = bufs[slot]
    if buf is None or buf.nbytes < nbytes:
        cp = cupy_module()
        size = max(nbytes, 1 << 16)
        mem = cp.cuda.alloc_pinned_memory(size)
        buf = np.frombuffer(mem, np.uint8, size)
        bufs[slot] = buf
    return buf, events, slot


def _pinned(nbytes: int, cuda_id: int) -> np.ndarray:
    """A pinned staging buffer of this thread for GPU `cuda_id`, at least `nbytes` long (uint8), free to overwrite."""
    return _stage(nbytes, cuda_id)[0]


def upload_via_pinned(out, value: np.ndarray, cuda_id: int) -> None:
    """Host array `value` -> existing device array `out` (same shape and dtype) on GPU `cuda_id`.

    `ndarray.set` enqueues the copy on the current stream and returns (cupy >= 13
    always uses cudaMemcpyAsync): from pinned memory the host must not touch the
    buffer until the copy ran, so an event marks that point and the buffer's next
    use waits for it. Tiny values go straight from pageable memory (the driver
    stages those before returning). `set` accepts non-contiguous and 0-d sources
    (np.ascontiguousarray would turn a 0-d array into shape (1,), which `set` rejects).
    """
    if value.nbytes == 0:
        return
    if value.nbytes < 4096:  # tiny: the staging memcpy costs more than it saves
        out.set(value)
        return
    cp = cupy_module()
    buf, events, slot = _stage(value.nbytes, cuda_id)
    stage = buf[:value.nbytes].view(value.dtype).reshape(value.shape)
    np.copyto(stage, value)
    with cp.cuda.Device(cuda_id):
        stream = cp.cuda.get_current_stream()
        out.set(stage, stream)
        event = cp.cuda.Event(block=False, disable_timing=True)
        event.record(stream)
    events[slot] = event


def host_to_device(value, cuda_id: int):
    """numpy -> cupy on GPU `cuda_id` through a pinned staging buffer (stream-ordered copy)."""
    cp = cupy_module()
    value = np.asarray(value)
    with cp.cuda.Device(cuda_id):
        out = cp.empty(value.shape, value.dtype)
    upload_via_pinned(out, value, cuda_id)
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
