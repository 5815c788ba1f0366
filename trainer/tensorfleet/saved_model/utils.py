"""`tf.saved_model.utils`: TensorInfo protos for the tensors a signature names, and back (TF 1.15).

A TensorInfo holds a tensor's name (or a SparseTensor's three tensor names), dtype and static shape;
`build_tensor_info_from_op` names an op (DT_INVALID, unknown shape), as TF writes the init and train ops
into their reserved signatures.
"""
from __future__ import annotations

from ..default_graph import convert_to_tensor, get_default_graph
from ..graph import Tensor
from ..ops.string_ops import SparseTensor
from ..protos.meta_graph_pb2 import TensorInfo
from ..tensor_proto import dtype_to_enum, shape_to_proto
from ..tensor_shape import TensorShape

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]


def build_tensor_info(tensor) -> TensorInfo:
    """`tf.saved_model.utils.build_tensor_info(tensor)`: a Tensor's (or SparseTensor's) name, dtype and shape."""
    if isinstance(tensor, SparseTensor):
        info = TensorInfo(dtype=dtype_to_enum(tensor.values.dtype), tensor_shape=shape_to_proto(_sparse_shape(tensor)))
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
        return info
    if not isinstance(tensor, Tensor):
        tensor = convert_to_tensor(tensor)
    return TensorInfo(name=tensor.name, dtype=dtype_to_enum(tensor.dtype), tensor_shape=shape_to_proto(tensor.shape))


def _sparse_shape(st) -> TensorShape:
    rank = st.dense_shape.shape[0] if st.dense_shape.shape.ndims == 1 else None
    return TensorShape(None) if rank is None else TensorShape([None] * rank)


def build_tensor_info_from_op(op) -> TensorInfo:
    """A TensorInfo naming an op (dtype DT_INVALID, unknown shape): TF's form of the init/train op signatures."""
    info = TensorInfo(name=op.name)
    info.tensor_shape.unknown_rank = True
    return info


def _scoped(name: str, import_scope) -> str:
    return f"{import_scope}/{name}" if import_scope else name


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """`tf.saved_model.utils.get_tensor_from_tensor_info`: the Tensor (or SparseTensor) a TensorInfo names in
    `graph` (default graph), its names prefixed with `import_scope`. KeyError when it is not there."""
    graph = graph or get_default_graph()
    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return graph.get_tensor_by_name(_scoped(tensor_info.name, import_scope))
    if encoding == "coo_sparse":
        cs = tensor_info.coo_sparse
        return SparseTensor(*(graph.get_tensor_by_name(_scoped(n, import_scope)) for n in
                              (cs.indices_tensor_name, cs.values_tensor_name, cs.dense_shape_tensor_name)))
    raise ValueError(f"Invalid TensorInfo.encoding: {encoding}")


def get_element_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The op or tensor a TensorInfo names (the init and train op signatures name ops)."""
    graph = graph or get_default_graph()
    return graph.as_graph_element(_scoped(tensor_info.name, import_scope))

