"""Kernel registry: the numpy/cupy implementations, per op type, device type and dtype.

Kernels are plain functions `fn(ctx, *input_arrays) -> array | tuple | None`,
written once against `ctx.xp` (numpy on CPU, cupy on GPU) wherever possible.
A kernel writes into an input only when it owns it (`ownership.owns`: nothing
else can see the buffer); outputs may be views of inputs. The placer asks
`has_kernel` to validate devices; the executor binds `lookup` results into its
plan, once, together with a `KernelContext`. The session's mutable state
(variables, RNG streams) is `resources.ResourceStore`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from ..dtypes import DType
from .resources import ResourceStore

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
    there is passed as is, not uploaded (TF's HostMemory inputs; see executor.device_kernels.gpu_host_memory)."""

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
