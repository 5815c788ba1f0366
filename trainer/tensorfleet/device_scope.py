"""Device placement of new ops: `tf.device` scope entries and `colocate_with` groups.

Framework layer, beside graph.py: `Graph.device()` pushes a `DeviceScope`; `Graph.create_op` calls
`place_new_op`, which applies the scopes innermost first, so fields set by an inner scope win (TF 1.15
merge rule) and a device function such as `tf.train.replica_device_setter` sees the device chosen so far.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .device_spec import DeviceSpec

if TYPE_CHECKING:
    from .graph import Operation


class DeviceScope:
    """One entry of the device stack: a merge spec, a user function, or a reset (None)."""

    __slots__ = ("spec", "function")

    def __init__(self, device_name_or_function):
        self.spec = None
        self.function = None
        if callable(device_name_or_function):
            self.function = device_name_or_function
        elif device_name_or_function is not None:
            self.spec = DeviceSpec.from_string(device_name_or_function)

    def apply(self, op: Operation) -> str:
        if self.function is not None:
            result = self.function(op)
            return result.to_string() if isinstance(result, DeviceSpec) else (result or "")
        # Fields already set by inner scopes win over this (outer) scope.
        return self.spec.make_merged_spec(DeviceSpec.from_string(op.device)).to_string()


def place_new_op(op: Operation, colocation_stack: list[Operation], device_stack: list[DeviceScope]) -> None:
    """Sets a new op's device: under `colocate_with` it joins the targets' groups and takes the innermost
    target's device; otherwise the device scopes apply innermost first, and a `tf.device(None)` entry
    hides the outer ones."""
    if colocation_stack:
        groups: list[str] = []
        for target in colocation_stack:
            for g in target._colocation_names():
                if g not in groups:
                    groups.append(g)
        op._colocation_groups = groups
        op._device = colocation_stack[-1].device
        return
    for scope in reversed(device_stack):  # innermost first
        if scope.spec is None and scope.function is None:
            break  # tf.device(None) hides outer scopes
        op._device = DeviceSpec.from_string(scope.apply(op)).to_string()
