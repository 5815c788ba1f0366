"""The floating-point state kernels run in, as TF's: errors silent, and denormals flushed to zero on x86-64.

Used by `session.py` around the executor call of each `Session.run`, and by the distributed worker around each
RunGraph (one place per step, not per kernel); the executor's pool threads set it once for their whole life
with `kernel_thread()`. Two parts:

- **numpy's error state: all off.** TF's kernels make NaN/Inf silently, so NaN/Inf raise no raw numpy
  `RuntimeWarning` naming numpy's internals; `tf.check_numerics` finds them. numpy keeps this state per
  thread (numpy 2: a context variable). On numpy 2 it is set to a prebuilt value directly (under 1 us per
  step, against about 3 us for `np.errstate(all="ignore")`, measured in bench/run_overhead_errstate.py);
  other numpy versions fall back to `np.seterr`.
- **Denormals are zero, and results flush to zero** (the x86 MXCSR's DAZ and FTZ bits, float32 and float64
  alike), as TF's executor runs every CPU kernel (`port::ScopedFlushDenormal`): in a step, 2e-39 + 0.0 is
  0 and 1e-38 * 0.5 is 0; a value only passed through (a feed fetched back, a variable read) keeps its
  bits. Besides TF's numbers this keeps TF's speed: an optimizer slot decaying through the denormal range
  (Adam's `m` for a weight whose gradient is often 0, e.g. an MNIST border pixel's) makes numpy's loops
  several times slower on x86 (bench/dist_mnist_adam.py --cpu shows the ps's CPU per step). Set through
  glibc's `fegetmode`/`fesetmode` (three C calls a step on per-thread buffers, about 1.5 us; the mode is
  read at every step, so one the user set between steps is what the step restores) and restored after the step, so the
  user's own numpy and Python arithmetic between steps keeps IEEE denormals. A step inside a step (a
  py_func running a session) finds the bits on and leaves them to the outer step. Elsewhere (not x86-64
  Linux, or no `fesetmode` in the C library) denormals are kept, as numpy keeps them.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import importlib
import platform
import sys
import threading
from typing import Any, Callable, Optional, Tuple

import numpy as np

__all__ = ["enter", "exit", "kernel_thread", "FLUSHES_DENORMALS"]

_FTZ_DAZ = 0x8040   # MXCSR: flush-to-zero (bit 15) and denormals-are-zero (bit 6)


def _seterr_enter() -> Any:
    return np.seterr(all="ignore")


def _seterr_exit(token: Any) -> None:
    np.seterr(**token)


def _context_variable() -> Optional[Tuple[Callable[[], Any], Callable[[Any], None]]]:
    """numpy >= 2.0 keeps the state in a context variable: set it to a prebuilt value (C calls only)."""
    try:
        config = importlib.import_module("numpy._core._ufunc_config")
        var, make = config._extobj_contextvar, config._make_extobj
        return functools.partial(var.set, make(all="ignore")), var.reset
    except (ImportError, AttributeError, TypeError):  # pragma: no cover  (numpy 1.x)
        return None


_np_enter, _np_exit = _context_variable() or (_seterr_enter, _seterr_exit)


_FTZ_DAZ_MODE = _FTZ_DAZ << 32   # the same bits in glibc's x86-64 `femode_t` read as one little-endian u64:
#                                   the x87 control word (u16), 2 bytes reserved, then the SSE MXCSR (u32)


def _mode_functions() -> Optional[Tuple[Callable[[int], int], Callable[[int], int]]]:
    """(fegetmode, fesetmode) of the C library on x86-64 Linux, called with a buffer's address (no argument
    conversion: a step pays three such calls); None where denormals cannot be flushed."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return None
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        get, set_ = libm.fegetmode, libm.fesetmode   # glibc >= 2.25
    except (OSError, AttributeError):  # pragma: no cover  (a C library without them)
        return None
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
    return proto(ctypes.cast(get, ctypes.c_void_p).value), proto(ctypes.cast(set_, ctypes.c_void_p).value)


_MODE = _mode_functions()
FLUSHES_DENORMALS = _MODE is not None
_GET, _SET = _MODE or (None, None)


class _ThreadModes(threading.local):
    """Per thread, made once: a buffer to read the mode into, the mode a step restores and the step's own
    (each a `femode_t` as a u64), and their addresses."""

    def __init__(self) -> None:
        # saved 0: none read yet (no real mode is 0: the x87 control word's reserved bit 6 always reads 1)
        self.now, self.saved, self.flushed = ctypes.c_uint64(), ctypes.c_uint64(0), ctypes.c_uint64()
        self.now_at, self.saved_at, self.flushed_at = (ctypes.addressof(m) for m in
                                                       (self.now, self.saved, self.flushed))


_THREAD = _ThreadModes()


def _flush() -> int:
    """Turns DAZ and FTZ on in this thread; -> the address of the mode to restore, 0 when they were on already
    (a step inside a step, a pool thread) or cannot be set."""
    if _GET is None:
        return 0
    t = _THREAD
    _GET(t.now_at)
    now = t.now.value
    if now & _FTZ_DAZ_MODE == _FTZ_DAZ_MODE:
        return 0
    if now != t.saved.value:   # the thread's first step, or a mode changed since its last one
        t.saved.value, t.flushed.value = now, now | _FTZ_DAZ_MODE
    _SET(t.flushed_at)
    return t.saved_at


def enter() -> Any:
    """Before a step's kernels, in the thread that runs them: -> the token for `exit`."""
    return _np_enter(), _flush()


def exit(token: Any) -> None:  # noqa: A001 - the pair of `enter`
    """After the step: this thread's state as before `enter`."""
    np_token, mode_at = token
    if mode_at:
        _SET(mode_at)
    _np_exit(np_token)


def kernel_thread() -> None:
    """For threads that only run kernels (the executor's pools): the kernels' state for the thread's life."""
    np.seterr(all="ignore")
    _flush()
