"""Copy nodes: the runtime-inserted nodes that move a tensor between two devices.

Sits between placement and execution: when the executor builds a plan and an
edge (or a feed) crosses devices, it inserts one `CopyNode` per (tensor,
destination device), placed on the destination (TF's Recv side), shared by
every consumer there. Copies are not graph operations; they exist only in the
plan, show up in `log_device_placement` as `<op>/_copy_<i>_to_<TYPE>_<n>: (_Copy): <device>`
and run the kernel `copy_kernel(src, dst)` picks:
numpy->numpy (CPU <-> simulated GPU): pass the (immutable) array through;
numpy->cupy / cupy->numpy: pinned staging buffers (`backend`); cupy->cupy: peer copy.
"""
from __future__ import annotations

import numpy as np

from . import backend

COPY_OP_TYPE = "_Copy"


class CopyNode:
    """A plan-only node that copies `tensor` (or a feed) onto `device`; quacks like an Operation for errors."""

    __slots__ = ("name", "type", "device", "tensor", "src_device", "attrs", "fed")

    def __init__(self, name: str, tensor, src_device, device, fed: bool = False):
        self.fed = fed  # True: copies a fed value from the host (no producer node in the plan)
        self.name = name
        self.type = COPY_OP_TYPE
        self.device = device.name
        self.tensor = tensor
        self.src_device = src_device
        self.attrs = {}

    @property
    def outputs(self):
        return [self.tensor]

    def __repr__(self):
        return f"<CopyNode '{self.name}' {self.src_device.name} -> {self.device}>"


def copy_node_name(tensor, dst_device, fed: bool = False) -> str:
    op_name = tensor.op.name if not fed else tensor.op.name + "/_feed"
    return f"{op_name}/_copy_{tensor.value_index}_to_{dst_device.device_type}_{dst_device.spec.device_index}"


def _pass_through(ctx, x):
    return x


def _to_host(ctx, x):
    return backend.to_host(x)


def copy_kernel(src, dst):
    """The kernel copying an array from device `src` to device `dst` (Device records)."""
    src_gpu, dst_gpu = src.is_real_gpu, dst.is_real_gpu
    if not src_gpu and not dst_gpu:
        return _pass_through
    if not src_gpu and dst_gpu:
        cuda_id = dst.cuda_id

        def h2d(ctx, x):
            return backend.host_to_device(x if isinstance(x, np.ndarray) else np.asarray(x), cuda_id)

        return h2d
    if src_gpu and not dst_gpu:
        return _to_host
    if src.cuda_id == dst.cuda_id:
        return _pass_through
    cuda_id = dst.cuda_id

    def d2d(ctx, x):
        return backend.device_to_device(x, cuda_id)

    return d2d
