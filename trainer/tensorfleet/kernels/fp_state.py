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
import importlib
from typing import Any, Callable, Optional, Tuple

import numpy as np

__all__ = ["enter", "exit", "quiet_this_thread"]


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


enter, exit = _context_variable() or (_seterr_enter, _seterr_exit)  # noqa: A001


def quiet_this_thread() -> None:
    """For worker threads: numpy's floating-point warnings off for the rest of this thread's life."""
    np.seterr(all="ignore")
