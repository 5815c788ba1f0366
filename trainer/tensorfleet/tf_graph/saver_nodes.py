"""The save/restore nodes of a TF 1.15 `Saver(sharded=True, write_version=V2)`, as NodeDefs, and its SaverDef.

A SavedModel's meta graph carries them so that TF's loader (`saver_def.restore_op_name` run with
`saver_def.filename_tensor_name` fed with `variables/variables`) and TF Serving restore the variables
from the checkpoint this project's Saver wrote beside it. The layout is TF's for one shard: a filename
PlaceholderWithDefault `<scope>/Const`, SaveV2 into a temporary sharded prefix merged by
MergeV2Checkpoints (`<scope>/Identity` is the save tensor), and one RestoreV2 whose outputs feed an
Assign per variable (`<scope>/restore_shard`, `<scope>/restore_all`). A partitioned variable is saved
and restored part by part under its full name with TF's slice spec (`"<full shape> <offset>,<length>:..."`).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dtypes
from ..protos.graph_pb2 import GraphDef
from ..protos.meta_graph_pb2 import SaverDef
from ..tensor_shape import TensorShape
from .registry import tf_attr

__all__ = ["SavedTensor", "add_saver_nodes", "slice_spec", "SAVER_OP_TYPES"]
#: the TF op types of the saver nodes (some have no reader: the loader leaves checkpoint I/O out)
SAVER_OP_TYPES = ("Const", "PlaceholderWithDefault", "StaticRegexFullMatch", "Select", "StringJoin", "ShardedFilename",
                  "SaveV2", "Identity", "Pack", "MergeV2Checkpoints", "RestoreV2", "Assign", "NoOp")


@dataclass(frozen=True)
class SavedTensor:
    """One checkpoint entry: its key, the variable node (TF name) it restores into, dtype, shape and slice."""
    key: str
    variable: str
    dtype: object
    shape: TensorShape
    slice_spec: str = ""


def slice_spec(full_shape, offset, shape) -> str:
    """TF's shape-and-slice string of a part: the full shape, then `offset,length` per dimension."""
    dims = " ".join(str(int(d)) for d in full_shape)
    return dims + " " + ":".join(f"{int(o)},{int(n)}" for o, n in zip(offset, shape))


def _strings(values) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = [v.encode() for v in values]
    return arr


class _Nodes:
    def __init__(self, gd: GraphDef, scope: str):
        self.gd, self.scope = gd, scope

    def add(self, name: str, op: str, inputs=(), **attrs) -> str:
        nd = self.gd.node.add(name=f"{self.scope}/{name}", op=op)
        nd.input.extend(inputs)
        for key, value in attrs.items():
            nd.attr[key].CopyFrom(tf_attr(value))
        return nd.name

    def const(self, name: str, value, dtype) -> str:
        arr = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=dtype.as_numpy_dtype)
        return self.add(name, "Const", value=arr, dtype=dtype)


def free_scope(gd: GraphDef, base: str = "save") -> str:
    """`base`, or `base_1`, `base_2`, ... : the first scope no node of `gd` is in (as TF uniquifies `save`)."""
    taken = {nd.name for nd in gd.node}
    prefixes = {name.split("/")[0] for name in taken}
    scope, i = base, 0
    while scope in prefixes:
        i += 1
        scope = f"{base}_{i}"
    return scope


def add_saver_nodes(gd: GraphDef, tensors: list, max_to_keep: int = 5,
                    keep_checkpoint_every_n_hours: float = 10000.0) -> SaverDef:
    """Appends the saver nodes for `tensors` (SavedTensor) to `gd` under a free scope; returns the SaverDef."""
    n = _Nodes(gd, free_scope(gd))
    string, int32 = _dtypes.string, _dtypes.int32
    scalar = TensorShape([])
    model = n.const("filename/input", np.asarray(b"model", dtype=object), string)
    filename = n.add("filename", "PlaceholderWithDefault", [model], dtype=string, shape=scalar)
    prefix = n.add("Const", "PlaceholderWithDefault", [filename], dtype=string, shape=scalar)
    is_s3 = n.add("StaticRegexFullMatch", "StaticRegexFullMatch", [prefix], pattern="^s3://.*")
    part = n.const("Const_1", np.asarray(b".part", dtype=object), string)
    temp = n.const("Const_2", np.asarray(f"_temp_{uuid.uuid4().hex}/part".encode(), dtype=object), string)
    suffix = n.add("Select", "Select", [is_s3, part, temp], T=string)
    tmp_prefix = n.add("StringJoin", "StringJoin", [prefix, suffix], N=2, separator="")
    num_shards = n.const("num_shards", np.int32(1), int32)
    shard = n.const("ShardedFilename/shard", np.int32(0), int32)
    sharded = n.add("ShardedFilename", "ShardedFilename", [tmp_prefix, shard, num_shards])
    keys = _strings([t.key for t in tensors])
    slices = _strings([t.slice_spec for t in tensors])
    dtypes = [t.dtype for t in tensors]
    names = n.const("SaveV2/tensor_names", keys, string)
    specs = n.const("SaveV2/shape_and_slices", slices, string)
    save = n.add("SaveV2", "SaveV2", [sharded, names, specs] + [t.variable for t in tensors], dtypes=dtypes)
    dep = n.add("control_dependency", "Identity", [sharded, "^" + save], T=string,
                _class=[f"loc:@{sharded}"])
    prefixes = n.add("MergeV2Checkpoints/checkpoint_prefixes", "Pack", [sharded, "^" + dep], N=1, T=string, axis=0)
    merge = n.add("MergeV2Checkpoints", "MergeV2Checkpoints", [prefixes, prefix], delete_old_dirs=True)
    save_tensor = n.add("Identity", "Identity", [prefix, "^" + merge, "^" + dep], T=string)
    r_names = n.const("RestoreV2/tensor_names", keys, string)
    r_specs = n.const("RestoreV2/shape_and_slices", slices, string)
    restore = n.add("RestoreV2", "RestoreV2", [prefix, r_names, r_specs], dtypes=dtypes)
    assigns = []
    for i, t in enumerate(tensors):
        name = "Assign" if i == 0 else f"Assign_{i}"
        assigns.append(n.add(name, "Assign", [t.variable, f"{restore}:{i}" if i else restore], T=t.dtype,
                             validate_shape=t.shape.is_fully_defined(),
                             use_locking=True, _class=[f"loc:@{t.variable}"]))
    shard_op = n.add("restore_shard", "NoOp", ["^" + a for a in assigns])
    restore_all = n.add("restore_all", "NoOp", ["^" + shard_op])
    return SaverDef(filename_tensor_name=prefix + ":0", save_tensor_name=save_tensor + ":0",
                    restore_op_name=restore_all, max_to_keep=max_to_keep, sharded=True,
                    keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours, version=SaverDef.V2)
