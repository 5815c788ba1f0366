"""numpy's floating-point error state during a step: all off, as TF's kernels make NaN/Inf silently.

Used by `session.py` around the executor call of each `Session.run` (one place, not per kernel), so that
NaN/Inf raise no raw numpy `RuntimeWarning` naming numpy's internals; `tf.check_numerics` finds them.
numpy keeps this state per thread (numpy 2: a context variable), so this covers the calling thread; the
executor's pool threads set it once per thread with `quiet_this_thread()`.

`enter()` / `exit(token)` set and restore the state. On numpy 2 they set numpy's context variable to a
prebuilt value directly (under 1 us per step, against about 3 us for `np.errstate(all="ignore")`, measured in
bench/run_overhead_errstate.py); other numpy versions fall back to `np.seterr`.
"""
from __future__ import annotations

import functools

import numpy as np

__all__ = ["enter", "exit", "quiet_this_thread"]

try:  # numpy >= 2.0: errstate is a context variable holding an "extobj"
    from numpy._core._ufunc_config import _extobj_contextvar as _VAR
    from numpy._core._ufunc_config import _make_extobj

    enter = functools.partial(_VAR.set, _make_extobj(all="ignore"))  # C calls only: cheaper than a def
    exit = _VAR.reset  # noqa: A001
except (ImportError, AttributeError, TypeError):  # pragma: no cover  (numpy 1.x)
    def enter():
        return np.seterr(all="ignore")

    def exit(token):  # noqa: A001
        np.seterr(**token)


def quiet_this_thread() -> None:
    """For worker threads: numpy's floating-point warnings off for the rest of this thread's life."""
    np.seterr(all="ignore")
