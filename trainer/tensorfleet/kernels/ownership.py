"""Buffer ownership from reference counts: may a kernel overwrite its input, may an update go in place?

Below the kernels (which call `owns(x)` on an argument) and the variable store
(`ResourceStore.exclusive`). Both compare `sys.getrefcount` with a count
measured at import on a probe that has the same call structure, so they hold on
any CPython whose counts are consistent between two identical call patterns.

The contract, and what guards it:
- `owns(x)` is True only when x is a writable, non-view numpy array (or a cupy
  array) whose only references are the kernel's own argument chain: the
  executor's argument tuple, the kernel's parameter, and `owns` itself. The
  sequential executor gives a kernel such an argument by dropping the value's
  slot before the call (`executor.sequential`); every other executor path keeps
  the slot, so `owns` is False there. Anything else holding the array (another
  slot, a fetch, a feed, the variable store, a wrapper's own argument tuple, a
  local copy in the kernel) adds a reference and makes it False.
- Kernels call `owns` directly on their parameter (no helper frame in between:
  one would add a reference, which is safe but makes it always False).
- A wrong True would let a kernel write into an array someone else can see, so
  the executor checks the contract on its real call paths at import
  (`executor.sequential._check_ownership`): if a shared array ever reads as
  owned, it calls `disable()` and every kernel takes its allocating branch.
  `TENSORFLEET_NO_INPLACE=1` does the same by hand.
Tested on CPython 3.10-3.13 (tests/trainer/test_value_lifetimes.py).
"""
from __future__ import annotations

import os
import sys

import numpy as np

#: False: `owns` is always False and `ResourceStore.exclusive` always None (see `disable`)
in_place = os.environ.get("TENSORFLEET_NO_INPLACE", "") in ("", "0")


def _probe_refs(d: dict) -> int:
    arr = d.get("x")
    return sys.getrefcount(arr)


#: references to a stored array seen inside `ResourceStore.exclusive` when only the store holds it
EXCLUSIVE_REFS = _probe_refs({"x": np.zeros(1)})


def _count_refs(x) -> int:
    return sys.getrefcount(x)


def _owns_probe(x) -> int:
    return _count_refs(x)


def _kernel_probe(ctx, x):
    return _owns_probe(x)


# The executor calls `fn(*args)` with args = (ctx, *inputs) held in a local, as here; the kernel calls `owns(x)`,
# which calls `_count_refs(x)`: the probe has the same frames (CPython 3.10 counts two references per frame,
# 3.11+ one, so only the same depth calibrates).
_probe_args = (None, np.zeros(1))
#: references to a kernel argument seen by `owns` when the executor's argument tuple holds the only other one
_OWNED_REFS = _kernel_probe(*_probe_args)
del _probe_args


def owns(x) -> bool:
    """True when a kernel may overwrite its argument `x`: nothing else refers to the buffer (see the module)."""
    if not in_place:
        return False
    if isinstance(x, np.ndarray):
        if not x.flags.writeable:
            return False
    elif not hasattr(type(x), "__cuda_array_interface__"):  # numpy scalars and other values
        # (on the type: cupy's instance property builds a dict per access)
        return False
    return _count_refs(x) <= _OWNED_REFS and x.base is None


def enabled() -> bool:
    return in_place


def disable() -> None:
    """From now on `owns` is False and `ResourceStore.exclusive` None: kernels allocate, updates store new arrays."""
    global in_place
    in_place = False
