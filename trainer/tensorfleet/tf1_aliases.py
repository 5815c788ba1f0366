"""TF 1.15's deprecated top-level aliases that old scripts still call (`tf.arg_max`, `tf.arg_min`, ...).

Top layer: thin wrappers over ops already defined in `ops/`, exported by the package `__init__`.
"""
from __future__ import annotations

from . import dtypes as _dtypes
from .ops import reduction_ops as _r

__all__ = ["arg_max", "arg_min"]


def arg_max(input, dimension, name=None, output_type=_dtypes.int64):
    """`tf.arg_max` (deprecated in TF 1.15 for tf.argmax): `dimension` is required."""
    return _r.argmax(input, axis=dimension, name=name, output_type=output_type)


def arg_min(input, dimension, name=None, output_type=_dtypes.int64):
    """`tf.arg_min` (deprecated in TF 1.15 for tf.argmin): `dimension` is required."""
    return _r.argmin(input, axis=dimension, name=name, output_type=output_type)


# -- tf.NodeDef and Operation.node_def ------------------------------------------
# Multi-GPU TF1 scripts write device functions as
#   node_def = op if isinstance(op, tf.NodeDef) else op.node_def; if node_def.op in PS_OPS: ...
# A device function runs while the op is being created, so `node_def` is built on demand from the op.
try:  # the framework protos (TF's field numbers), when this build has them
    from . import graph_def as _graph_def
    from .protos.node_def_pb2 import NodeDef
except ImportError:  # pragma: no cover - depends on whether the protos package is present
    _graph_def = None

    class NodeDef:  # type: ignore[no-redef]
        """`tf.NodeDef`'s fields that Python code reads: name, op, device, input (list), attr (dict)."""

        def __init__(self, name: str = "", op: str = "", device: str = ""):
            self.name, self.op, self.device = name, op, device
            self.input: list = []
            self.attr: dict = {}

        def __repr__(self) -> str:
            return f"NodeDef(name={self.name!r}, op={self.op!r}, device={self.device!r}, input={self.input!r})"


def _node_def(op) -> "NodeDef":
    """`Operation.node_def`: the op as a NodeDef (attributes that have no proto encoding are left out)."""
    if _graph_def is not None:
        try:
            return _graph_def.node_def(op, add_shapes=False)
        except Exception:  # noqa: BLE001 - an attribute without a proto encoding: fall back to the plain fields
            pass
    nd = NodeDef(name=op.name, op=op.type, device=op.device)
    nd.input.extend(t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}" for t in op.inputs)
    nd.input.extend("^" + c.name for c in op.control_inputs)
    return nd


def _install_node_def() -> None:
    """Operation.node_def becomes a NodeDef (graph.py's own is a plain dict: the graph layer cannot see protos)."""
    from .graph import Operation
    Operation.node_def = property(_node_def, doc=_node_def.__doc__)


_install_node_def()
__all__ += ["NodeDef"]
