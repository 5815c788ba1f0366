"""Kernels: numpy/cupy implementations of every op, registered per device type and dtype."""
from . import core_kernels  # noqa: F401  (registration)
from .registry import KernelContext, ResourceStore, has_kernel, lookup, register_kernel  # noqa: F401
