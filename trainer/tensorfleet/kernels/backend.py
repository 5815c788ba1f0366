"""Array modules per device type: numpy for CPU, cupy for GPU (imported lazily).

The only place that imports cupy; kernels reach it through `KernelContext.xp`.
"""
from __future__ import annotations

import numpy as np

_cupy = None


def cupy_module():
    """Returns cupy, or None when it is not installed or no CUDA device is usable."""
    global _cupy
    if _cupy is None:
        try:
            import cupy  # noqa: F401

            cupy.cuda.runtime.getDeviceCount()
            _cupy = cupy
        except Exception:  # ImportError, CUDARuntimeError: no GPU here
            _cupy = False
    return _cupy or None


def array_module(device_type: str):
    if device_type == "GPU":
        cp = cupy_module()
        if cp is None:
            raise RuntimeError("GPU kernels need cupy and a CUDA device")
        return cp
    return np


def to_host(value):
    """Converts a device array to numpy (no-op for numpy values)."""
    if isinstance(value, np.ndarray) or np.isscalar(value):
        return value
    get = getattr(value, "get", None)
    return get() if get is not None else np.asarray(value)
