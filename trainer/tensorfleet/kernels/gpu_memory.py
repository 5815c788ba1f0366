"""GPU memory policy (TF's GPUOptions) on cupy's memory pool, and TF-style OOM errors.

Sits under the executor: `devices` creates one `DeviceMemory` per GPU when a
session starts; the executor turns an allocation failure inside a kernel into
`ResourceExhaustedError` naming the op, the size and the cap.

Policy (documented default, see also `config`):
- `per_process_gpu_memory_fraction = f > 0`: the process's cupy pool on that GPU
  is capped at `f x total device memory` (`MemoryPool.set_limit`).
- default (fraction 0): no cap below the device's memory; the pool grows on demand
  (TF's `allow_growth=True` behaviour; TF itself reserves ~all memory by default).
- `allow_growth=False` set explicitly with a fraction: the capped amount is
  reserved up front (allocated once and returned to the pool), like TF.
The pool is process-wide, so, like TF's GPU allocator, the first session to
touch a GPU fixes its policy; later sessions reuse it.
Simulated GPUs (numpy) get the same cap arithmetic; the executor checks each
output's size against the cap, so the error path is tested on CPU.
"""
from __future__ import annotations

import re
import threading
from typing import Optional

from .. import errors

_CUDA_MEMORY: dict = {}
_LOCK = threading.Lock()


def memory_cap(total_bytes: int, fraction: float) -> int:
    """Bytes this process may use on a device of `total_bytes` under `fraction` (0 = no cap)."""
    if fraction is None or fraction <= 0:
        return int(total_bytes)
    if fraction > 1.0:
        # TF allows > 1 only with unified memory; without it, the device is the limit.
        raise ValueError(f"gpu_options.per_process_gpu_memory_fraction must be in (0, 1], got {fraction}")
    return int(total_bytes * fraction)


def oom_error(op, device_name: str, nbytes: int, cap_bytes: int, total_bytes: int, fraction: float,
              in_use: Optional[int] = None) -> errors.ResourceExhaustedError:
    """TF-style OOM error naming the op, the requested size and the cap."""
    name = getattr(op, "name", op)
    why = (f"gpu_options.per_process_gpu_memory_fraction={fraction:g} of {total_bytes} bytes" if fraction
           else "the whole device")
    used = "" if in_use is None else f", {in_use} bytes already in use"
    return errors.ResourceExhaustedError(
        None, op if not isinstance(op, str) else None,
        f"OOM when allocating {nbytes} bytes for op '{name}' on {device_name}: over this process's GPU memory "
        f"cap of {cap_bytes} bytes ({why}{used})\n\t [[node {name}]]")


_OOM_TEXT = re.compile(r"allocating ([\d,]+) bytes")


def requested_bytes(exc) -> Optional[int]:
    """The size a cupy OutOfMemoryError was asked for (attribute, else parsed from its text)."""
    size = getattr(exc, "_size", None)
    if isinstance(size, int):
        return size
    m = _OOM_TEXT.search(str(exc))
    return int(m.group(1).replace(",", "")) if m else None


class FakePool:
    """A memory-pool stand-in with cupy's MemoryPool interface (set_limit/malloc/used_bytes) for tests."""

    class OutOfMemoryError(MemoryError):
        def __init__(self, size, total, limit=0):
            self._size, self._total, self._limit = size, total, limit
            super().__init__(f"Out of memory allocating {size:,} bytes (allocated so far: {total:,} bytes, "
                             f"limit set to: {limit:,} bytes).")

    def __init__(self, total_bytes: int):
        self.total = total_bytes
        self._limit = 0
        self._used = 0

    def set_limit(self, size=None, fraction=None):
        self._limit = int(size or 0)

    def get_limit(self):
        return self._limit

    def used_bytes(self):
        return self._used

    def total_bytes(self):
        return self._used

    def malloc(self, nbytes):
        limit = self._limit or self.total
        if self._used + nbytes > limit:
            raise FakePool.OutOfMemoryError(nbytes, self._used, self._limit)
        self._used += nbytes
        return nbytes

    def free(self, nbytes):
        self._used -= nbytes


class DeviceMemory:
    """One GPU's memory policy: its cap, its pool, and the translation of pool failures."""

    def __init__(self, device_name: str, total_bytes: int, gpu_options=None, pool=None, simulated=False):
        self.device_name = device_name
        self.total_bytes = int(total_bytes)
        self.fraction = float(getattr(gpu_options, "per_process_gpu_memory_fraction", 0.0) or 0.0)
        self.allow_growth = getattr(gpu_options, "allow_growth", None)
        self.cap_bytes = memory_cap(self.total_bytes, self.fraction)
        self.pool = pool
        self.simulated = simulated
        #: True when outputs must be checked against the cap by the executor (simulated capped devices)
        self.check_outputs = simulated and self.cap_bytes < self.total_bytes
        if pool is not None:
            self.apply_to_pool(pool)

    def apply_to_pool(self, pool) -> None:
        if self.cap_bytes < self.total_bytes:
            pool.set_limit(size=self.cap_bytes)
        if self.allow_growth is False and self.fraction > 0:  # TF-style up-front reservation
            try:
                pool.malloc(self.cap_bytes - (1 << 20))  # freed at once: the pool keeps the block cached
            except MemoryError:
                pass

    @classmethod
    def for_simulated(cls, device_name: str, total_bytes: int, gpu_options=None) -> "DeviceMemory":
        return cls(device_name, total_bytes, gpu_options, simulated=True)

    @classmethod
    def for_cuda(cls, device_name: str, cuda_id: int, gpu_options=None) -> "DeviceMemory":
        """The process-wide policy of CUDA device `cuda_id` (the first session's options win, like TF)."""
        with _LOCK:
            mem = _CUDA_MEMORY.get(cuda_id)
            if mem is None:
                import cupy as cp

                with cp.cuda.Device(cuda_id):
                    _free, total = cp.cuda.runtime.memGetInfo()
                    mem = cls(device_name, total, gpu_options, pool=cp.get_default_memory_pool())
                _CUDA_MEMORY[cuda_id] = mem
            return mem

    def in_use(self) -> Optional[int]:
        if self.pool is None:
            return None
        return int(self.pool.used_bytes())

    def check_request(self, nbytes: int, op) -> None:
        """Simulated devices: a single request over the cap fails like the real pool would."""
        if nbytes > self.cap_bytes:
            raise self.error(op, nbytes)

    def error(self, op, nbytes: int) -> errors.ResourceExhaustedError:
        return oom_error(op, self.device_name, nbytes, self.cap_bytes, self.total_bytes, self.fraction,
                         self.in_use())

    def translate(self, exc, op) -> errors.ResourceExhaustedError:
        """A pool's OutOfMemoryError raised while running `op` -> ResourceExhaustedError."""
        nbytes = requested_bytes(exc)
        return self.error(op, nbytes if nbytes is not None else -1)


def is_oom(exc) -> bool:
    """True for cupy's (or the fake pool's) OutOfMemoryError."""
    return isinstance(exc, MemoryError) and type(exc).__name__ == "OutOfMemoryError"


def known_cuda_memory() -> list:
    """The DeviceMemory of every CUDA device this process has touched (for the metrics collector)."""
    with _LOCK:
        return list(_CUDA_MEMORY.values())
