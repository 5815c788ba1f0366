"""The session's mutable state that stateful kernels use: variable values, RNG streams, hand-offs.

Below the kernels (each `KernelContext` carries its session's store) and beside
the kernel registry. Update kernels write a variable in place only through
`ResourceStore.exclusive`, i.e. when no reader holds its array any more (the
sequential executor drops values after their last reader; `ownership` says
how that is counted); otherwise they store a new array.
"""
from __future__ import annotations

import sys
import threading
from typing import Any, Optional

import numpy as np

from .. import errors
from . import ownership
from .ownership import EXCLUSIVE_REFS


class ResourceStore:
    """Per-session mutable state that stateful kernels use: variable values and RNG streams.

    Stored numpy values are frozen read-only, so a value read earlier in a step is
    a consistent snapshot and a fetched result never aliases a variable that
    changes later. Update kernels write in place only through `exclusive`, when
    no reader holds the array any more (the executor drops values after their
    last reader); otherwise they store a new array.
    """

    def __init__(self):
        self.variables: dict[str, Any] = {}
        self.lock = threading.RLock()
        self._rngs: dict[str, np.random.Generator] = {}
        #: values one kernel of a run leaves for a later one (e.g. Conv2D's im2col matrix for its
        #: filter gradient), keyed by what the plan decided at build time (`prepare` hooks)
        self.handoff: dict = {}

    def read(self, name: str, op_name: str):
        try:
            return self.variables[name]
        except KeyError:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized value {name}\n\t [[node {op_name}]]") from None

    def store(self, name: str, value) -> None:
        """Replaces a variable's value; numpy values are frozen so readers can share them."""
        if isinstance(value, np.ndarray):
            value.setflags(write=False)  # (setflags: no flags object per call)
        self.variables[name] = value

    def exclusive(self, name: str):
        """The variable's array made writable if nothing but this store refers to it, else None.

        The caller updates it in place and then calls `store(name, array)`, which freezes it again.
        """
        arr = self.variables.get(name)
        if arr is None or sys.getrefcount(arr) > EXCLUSIVE_REFS or not ownership.in_place:
            return None
        if getattr(arr, "base", None) is not None:  # a view (numpy or cupy): its base may be shared
            return None
        if isinstance(arr, np.ndarray):
            arr.setflags(write=True)
        return arr

    def rng(self, key: str, seed: Optional[tuple]) -> np.random.Generator:
        """A stream per random op: reproducible for a fixed (graph seed, op seed), fresh otherwise."""
        gen = self._rngs.get(key)
        if gen is None:
            gen = np.random.Generator(np.random.PCG64(seed if seed is not None else None))
            self._rngs[key] = gen
        return gen


def rng_for(ctx):
    """The per-op random stream of a random kernel, seeded from its `seed`/`seed2` attrs (`ops.random_seed`)."""
    s1, s2 = ctx.attrs.get("seed", 0), ctx.attrs.get("seed2", 0)
    seed = (s1, s2) if (s1 or s2) else None
    return ctx.resources.rng(ctx.op.name, seed)
