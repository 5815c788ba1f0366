"""Kernel registry: the numpy/cupy implementations, per op type, device type and dtype.

Kernels are plain functions `fn(ctx, *input_arrays) -> array | tuple | None`
that never write into their inputs (outputs may be views of them),
written once against `ctx.xp` (numpy on CPU, cupy on GPU) wherever possible.
The placer asks `has_kernel` to validate devices; the executor binds `lookup`
results into its per-run plan, once, together with a `KernelContext`.
"""
from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

import numpy as np

from .. import errors
from ..dtypes import DType

KernelFn = Callable[..., Any]
ALL_DEVICES = ("CPU", "GPU")


@dataclass
class _KernelDef:
    fn: KernelFn
    dtypes: Optional[frozenset]  # None: any dtype


_KERNELS: dict[tuple[str, str], list[_KernelDef]] = {}


def register_kernel(op_type: str, devices: Iterable[str] = ALL_DEVICES, dtypes: Optional[Iterable[DType]] = None):
    """Decorator registering `fn` for `op_type` on each device type (optionally only some dtypes)."""

    def deco(fn: KernelFn) -> KernelFn:
        dts = None if dtypes is None else frozenset(dtypes)
        for dev in devices:
            _KERNELS.setdefault((op_type, dev), []).append(_KernelDef(fn, dts))
        return fn

    return deco


def host_inputs(*indices: int):
    """Decorator: the kernel reads these inputs on the host (shapes, sizes), so on a real GPU a host value
    there is passed as is, not uploaded (TF's HostMemory inputs; see device_steps.gpu_host_memory)."""

    def deco(fn: KernelFn) -> KernelFn:
        fn.host_inputs = frozenset(indices)
        return fn

    return deco


def kernel_dtype(op) -> Optional[DType]:
    """The dtype a kernel is selected by: attr T/dtype, else the first output's, else the first input's."""
    for key in ("T", "dtype"):
        v = op.attrs.get(key)
        if isinstance(v, DType):
            return v
    if op.outputs:
        return op.outputs[0].dtype
    if op.inputs:
        return op.inputs[0].dtype
    return None


def lookup(op, device_type: str) -> Optional[KernelFn]:
    dt = kernel_dtype(op)
    if device_type != "CPU" and dt is not None and dt.is_string:  # strings live in host memory, as in TF
        return None
    for kd in _KERNELS.get((op.type, device_type), ()):
        if kd.dtypes is None or dt in kd.dtypes:
            return kd.fn
    return None


def has_kernel(op, device_type: str) -> bool:
    return lookup(op, device_type) is not None


def _probe_refs(d: dict) -> int:
    arr = d.get("x")
    return sys.getrefcount(arr)


#: references to a stored array seen inside `ResourceStore.exclusive` when only the store holds it
_EXCLUSIVE_REFS = _probe_refs({"x": np.zeros(1)})


def _count_refs(x) -> int:
    return sys.getrefcount(x)


def _kernel_probe(ctx, x):
    return _count_refs(x)


# The executor calls `fn(*args)` with args = (ctx, *inputs) held in a local, as here.
_probe_args = (None, np.zeros(1))
#: references to a kernel argument seen by `owns` when the executor's argument tuple holds the only other one
_OWNED_REFS = _kernel_probe(*_probe_args)
del _probe_args


def owns(x) -> bool:
    """True when a kernel may overwrite its argument `x`: nothing else refers to the buffer.

    The sequential executor drops a value before calling its last reader, so
    the argument tuple holds the only reference; anything else (another slot, a
    fetch, the caller's feed array, a variable store, a view's base) shows up as
    an extra reference or a `base`. Kernels call it directly on their argument.
    """
    if isinstance(x, np.ndarray):
        if not x.flags.writeable:
            return False
    elif not hasattr(type(x), "__cuda_array_interface__"):  # numpy scalars and other values
        # (on the type: cupy's instance property builds a dict per access)
        return False
    return _count_refs(x) <= _OWNED_REFS + 1 and x.base is None


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
        if arr is None or sys.getrefcount(arr) > _EXCLUSIVE_REFS:
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


@dataclass
class KernelContext:
    """What a kernel may look at: its op (name, attrs), the array module, the session's resources."""

    op: Any
    xp: Any
    resources: ResourceStore
    device: str = ""
    attrs: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.op.name
