"""String ops (`tf.string` tensors): as_string, string_join, string_split, decode_raw, decode_csv, tf.print,
plus `tf.SparseTensor` (what string_split returns) and its dense form, and `report_uninitialized_variables`.

Sits in `ops/`: wrappers + shape functions; the kernels are in `kernels/string_kernels.py` (CPU only: a
string tensor is a numpy object array of `bytes` kept on the host, as TF keeps strings in host memory).
None of these ops has a gradient (strings are not differentiable; as in TF).
"""
from __future__ import annotations

__all__ = ["as_string", "string_join", "string_split", "string_to_number", "string_strip", "substr", "decode_raw",
           "decode_csv", "print_v2", "SparseTensor", "SparseTensorValue", "sparse_tensor_to_dense",
           "report_uninitialized_variables", "regex_replace", "reduce_join"]

import collections
import sys

import numpy as np

from .. import dtypes as _dtypes
from ..graph import GraphKeys, Tensor
from ..default_graph import get_collection, name_scope
from .common import NotDifferentiable, TensorShape, convert_to_tensor, make_op, make_tensor, register_op
from .shape_util import constant_value

_STRING_OUT_OPS = ("AsString", "StringJoin", "StringStrip", "Substr", "RegexReplace")
for _op_type in _STRING_OUT_OPS:
    register_op(_op_type, lambda op: [(_dtypes.string, op.inputs[0].shape if op.type != "StringJoin"
                                       else _join_shape(op))])



def _string_input(x, what: str) -> Tensor:
    t = convert_to_tensor(x, dtype=_dtypes.string) if not isinstance(x, Tensor) else x
    if t.dtype is not _dtypes.string:
        raise TypeError(f"{what}: expected a tf.string tensor, got {t.dtype.name} ({t.name})")
    return t


# -- AsString -----------------------------------------------------------------
def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):
    """`tf.as_string`: numbers and bools to strings (printf-style, as TF's AsString kernel)."""
    x = convert_to_tensor(input)
    if x.dtype.is_string or not (x.dtype.is_numeric or x.dtype.is_bool):
        raise TypeError(f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values for AsString")
    if len(fill) > 1:
        raise ValueError(f"Fill string must be one or fewer characters: '{fill}'")
    if scientific and shortest:
        raise ValueError("Cannot select both scientific and shortest notation")
    return make_tensor("AsString", [x], {"precision": int(precision), "scientific": bool(scientific),
                                         "shortest": bool(shortest), "width": int(width), "fill": fill},
                       name=name, default_name="AsString")


# -- StringJoin ---------------------------------------------------------------
def _join_shape(op):
    shapes = [t.shape for t in op.inputs if t.shape.ndims != 0]
    if not shapes:
        return TensorShape([])
    out = shapes[0]
    for s in shapes[1:]:
        if not out.is_compatible_with(s):
            raise ValueError(f"StringJoin ({op.name}): input shapes must be equal or scalars: {out} vs {s}")
        out = out.merge_with(s)
    return out


def string_join(inputs, separator="", name=None):
    """`tf.string_join` / `tf.strings.join`: element-wise concatenation; scalars broadcast."""
    ts = [_string_input(x, "string_join") for x in inputs]
    if not ts:
        raise ValueError("string_join needs at least one input")
    return make_tensor("StringJoin", ts, {"separator": separator}, name=name, default_name="StringJoin")


# -- SparseTensor and its dense form -------------------------------------------
SparseTensorValue = collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])


class SparseTensor(collections.namedtuple("SparseTensor", ["indices", "values", "dense_shape"])):
    """`tf.SparseTensor`: int64 indices [N, rank], values [N], int64 dense_shape [rank].

    Fetching one gives a tuple of the same three fields as numpy arrays (like TF's SparseTensorValue).
    """

    def __new__(cls, indices, values, dense_shape):
        if isinstance(indices, Tensor) or not isinstance(indices, np.ndarray):
            indices = convert_to_tensor(indices, dtype=_dtypes.int64)
            values = convert_to_tensor(values)
            dense_shape = convert_to_tensor(dense_shape, dtype=_dtypes.int64)
        return super().__new__(cls, indices, values, dense_shape)

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def op(self):
        return self.values.op

    @property
    def graph(self):
        return self.values.graph


register_op("SparseToDense", lambda op: [(op.inputs[2].dtype, _dense_shape(op))])


def _dense_shape(op):
    v = constant_value(op.inputs[1])
    if v is not None:
        return TensorShape([int(d) for d in v])
    n = op.inputs[1].shape.as_tuple()
    return TensorShape([None] * n[0]) if n and n[0] is not None else TensorShape(None)


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """`tf.sparse_tensor_to_dense` / `tf.sparse.to_dense`: default_value fills the gaps (0, or b'' for strings)."""
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}")
    if default_value is None:
        default_value = b"" if sp_input.dtype.is_string else 0
    default = convert_to_tensor(default_value, dtype=sp_input.dtype)
    return make_tensor("SparseToDense", [sp_input.indices, sp_input.dense_shape, sp_input.values, default],
                       {"validate_indices": bool(validate_indices)}, name=name, default_name="SparseToDense")


# -- StringSplit (v1) and StringSplitV2 (tf.strings.split) ---------------------
def _split_outputs(op):
    return [(_dtypes.int64, TensorShape([None, 2])), (_dtypes.string, TensorShape([None])),
            (_dtypes.int64, TensorShape([2]))]


register_op("StringSplit", _split_outputs)
register_op("StringSplitV2", _split_outputs)


def _vector_input(source, what):
    t = _string_input(source, what)
    if t.shape.ndims not in (None, 1):
        raise ValueError(f"{what}: input must be a vector, got shape {t.shape}")
    return t


def string_split(source, sep=None, skip_empty=True, delimiter=None, result_type="SparseTensor", name=None):
    """`tf.string_split` (TF 1.15's signature; `sep` is the newer name of `delimiter`, default ' '): each
    character of the delimiter splits ('' splits into characters); returns a SparseTensor
    [len(source), max tokens]."""
    if result_type != "SparseTensor":
        raise ValueError(f"string_split: result_type {result_type!r} is not supported (only 'SparseTensor': "
                         f"tensorfleet has no RaggedTensor)")
    src = _vector_input(source, "string_split")
    delimiter = sep if sep is not None else (delimiter if delimiter is not None else " ")
    if isinstance(delimiter, str):
        delimiter = delimiter.encode("utf-8")
    op = make_op("StringSplit", [src], {"delimiter": bytes(delimiter), "skip_empty": bool(skip_empty)}, name=name,
                 default_name="StringSplit")
    return SparseTensor(*op.outputs)


def strings_split(source, sep=None, maxsplit=-1, result_type="SparseTensor", name=None, input=None):
    """`tf.strings.split` (TF 1.15 v1): Python's str.split semantics per element (sep None: runs of whitespace)."""
    if result_type != "SparseTensor":
        raise ValueError(f"tf.strings.split: result_type {result_type!r} is not supported (only 'SparseTensor': "
                         f"tensorfleet has no RaggedTensor)")
    src = _vector_input(source if input is None else input, "strings.split")
    if isinstance(sep, str):
        sep = sep.encode("utf-8")
    if sep == b"":
        raise ValueError("tf.strings.split: sep must not be empty")
    op = make_op("StringSplitV2", [src], {"sep": sep, "maxsplit": int(maxsplit)}, name=name,
                 default_name="StringSplit")
    return SparseTensor(*op.outputs)


# -- elementwise string helpers ------------------------------------------------
register_op("StringToNumber", lambda op: [(op.get_attr("out_type"), op.inputs[0].shape)])
register_op("StringLength", lambda op: [(_dtypes.int32, op.inputs[0].shape)])


def string_to_number(string_tensor, out_type=_dtypes.float32, name=None):
    """`tf.string_to_number` / `tf.strings.to_number`: InvalidArgumentError for text that is not a number."""
    out_type = _dtypes.as_dtype(out_type)
    if out_type not in (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64):
        raise TypeError(f"string_to_number: out_type must be float32, float64, int32 or int64, got {out_type.name}")
    return make_tensor("StringToNumber", [_string_input(string_tensor, "string_to_number")], {"out_type": out_type},
                       name=name, default_name="StringToNumber")


def string_length(input, name=None, unit="BYTE"):
    """`tf.strings.length`: bytes per element (unit='UTF8_CHAR': characters)."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"strings.length: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    return make_tensor("StringLength", [_string_input(input, "strings.length")], {"unit": unit}, name=name,
                       default_name="StringLength")


def string_strip(input, name=None):
    """`tf.string_strip` / `tf.strings.strip`: leading and trailing whitespace removed."""
    return make_tensor("StringStrip", [_string_input(input, "string_strip")], {}, name=name,
                       default_name="StringStrip")


def substr(input, pos, len, name=None, unit="BYTE"):
    """`tf.substr` / `tf.strings.substr` with scalar pos/len (bytes)."""
    if unit != "BYTE":
        raise ValueError("substr: only unit='BYTE' is supported")
    return make_tensor("Substr", [_string_input(input, "substr")], {"pos": int(pos), "len": int(len)}, name=name,
                       default_name="Substr")


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """`tf.strings.regex_replace` / `tf.regex_replace` (Python `re` syntax; RE2's common subset agrees)."""
    return make_tensor("RegexReplace", [_string_input(input, "regex_replace")],
                       {"pattern": pattern, "rewrite": rewrite, "replace_global": bool(replace_global)}, name=name,
                       default_name="RegexReplace")


# -- ReduceJoin ---------------------------------------------------------------
def _reduce_join_shape(op):
    shape, axes, keep = op.inputs[0].shape, op.get_attr("axes"), op.get_attr("keep_dims")
    if shape.ndims is None:
        return [(_dtypes.string, TensorShape(None))]
    dims = shape.as_list()
    return [(_dtypes.string, TensorShape([1 if i in axes else d for i, d in enumerate(dims)] if keep else
                                         [d for i, d in enumerate(dims) if i not in axes]))]


register_op("ReduceJoin", _reduce_join_shape)


def reduce_join(inputs, axis=None, keep_dims=False, separator="", name=None, reduction_indices=None,
                keepdims=None):
    """`tf.reduce_join` / `tf.strings.reduce_join`: joins the strings along `axis` (all axes if None)."""
    x = _string_input(inputs, "reduce_join")
    axis = reduction_indices if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    n = x.shape.ndims
    if n is None:
        raise ValueError("reduce_join needs an input of known rank")
    axes = list(reversed(range(n))) if axis is None else [int(a) for a in np.atleast_1d(axis)]
    if any(not -n <= a < n for a in axes):
        raise ValueError(f"reduce_join: axis {axis} out of range for rank {n}")
    axes = tuple(dict.fromkeys(a % n for a in axes))  # reduction order matters: the first axis varies fastest
    return make_tensor("ReduceJoin", [x], {"axes": axes, "keep_dims": keep, "separator": separator}, name=name,
                       default_name="ReduceJoin")


# -- DecodeRaw ----------------------------------------------------------------
def _decode_raw_shape(op):
    return [(op.get_attr("out_type"), op.inputs[0].shape.concatenate(TensorShape([None])))]


register_op("DecodeRaw", _decode_raw_shape)


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):
    """`tf.decode_raw` / `tf.io.decode_raw`: each string's bytes reinterpreted as a vector of `out_type`."""
    src = _string_input(input_bytes if input_bytes is not None else bytes, "decode_raw")
    if out_type is None:
        raise TypeError("decode_raw: out_type is required")
    out_type = _dtypes.as_dtype(out_type)
    if not (out_type.is_numeric or out_type.is_bool):
        raise TypeError(f"decode_raw: out_type {out_type.name} is not a numeric type")
    return make_tensor("DecodeRaw", [src], {"out_type": out_type, "little_endian": bool(little_endian)},
                       name=name, default_name="DecodeRaw")


# -- DecodeCSV ----------------------------------------------------------------
_CSV_TYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64, _dtypes.string)


def _csv_shapes(op):
    return [(t.dtype, op.inputs[0].shape) for t in op.inputs[1:]]


register_op("DecodeCSV", _csv_shapes)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """`tf.decode_csv` / `tf.io.decode_csv`: one output per column, typed by `record_defaults` (an empty default
    makes the column required)."""
    recs = _string_input(records, "decode_csv")
    if len(field_delim) != 1:
        raise ValueError("decode_csv: field_delim must be a single character")
    defaults = []
    for i, d in enumerate(record_defaults):
        if isinstance(d, Tensor):
            t = d
        else:
            arr = np.asarray(d if not isinstance(d, (list, tuple)) or len(d) else [], dtype=None)
            if arr.size == 0:
                raise ValueError(f"decode_csv: record_defaults[{i}] is empty; give a typed empty default such as "
                                 f"tf.constant([], tf.float32) for a required column")
            t = convert_to_tensor(d)
        if t.dtype not in _CSV_TYPES:
            raise TypeError(f"decode_csv: record_defaults[{i}] has dtype {t.dtype.name}; allowed: float32, "
                            f"float64, int32, int64, string")
        defaults.append(t)
    if select_cols is not None:
        select_cols = [int(c) for c in select_cols]
        if sorted(set(select_cols)) != select_cols:
            raise ValueError("decode_csv: select_cols must be strictly increasing")
        if len(select_cols) != len(defaults):
            raise ValueError("decode_csv: len(select_cols) must equal len(record_defaults)")
    op = make_op("DecodeCSV", [recs] + defaults, {"field_delim": field_delim, "use_quote_delim": bool(
        use_quote_delim), "na_value": na_value, "select_cols": tuple(select_cols) if select_cols else None},
        name=name, default_name="DecodeCSV")
    return list(op.outputs)


# -- tf.print (PrintV2) -------------------------------------------------------
register_op("PrintV2", lambda op: [], stateful=True)
for _op_type in _STRING_OUT_OPS + ("ReduceJoin", "StringSplit", "StringSplitV2", "SparseToDense", "DecodeRaw",
                                   "DecodeCSV", "StringToNumber", "StringLength", "PrintV2"):
    NotDifferentiable(_op_type)


def print_v2(*inputs, **kwargs):
    """`tf.print`: an op that prints its inputs (tensors in numpy style, strings as they are) joined by `sep`.

    `output_stream` is sys.stderr (default) or sys.stdout, looked up when the op runs.
    """
    output_stream = kwargs.pop("output_stream", sys.stderr)
    summarize = kwargs.pop("summarize", 3)
    sep, end, name = kwargs.pop("sep", " "), kwargs.pop("end", "\n"), kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"tf.print got unexpected keyword arguments {sorted(kwargs)}")
    if output_stream is sys.stderr:
        stream = "stderr"
    elif output_stream is sys.stdout:
        stream = "stdout"
    else:
        raise ValueError(f"tf.print: output_stream must be sys.stderr or sys.stdout, got {output_stream!r}")
    template, tensors = [], []
    for x in inputs:
        if isinstance(x, str):
            template.append(("s", x))
        else:
            template.append(("t", len(tensors)))
            tensors.append(convert_to_tensor(x))
    return make_op("PrintV2", tensors, {"template": tuple(template), "stream": stream, "sep": sep, "end": end,
                                        "summarize": -1 if summarize is None else int(summarize)},
                   name=name, default_name="PrintV2")


# -- report_uninitialized_variables -------------------------------------------
def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """`tf.report_uninitialized_variables`: a 1-D tf.string tensor of the names (b'scope/v') of the variables in
    `var_list` (default: global and local variables) not yet initialized in the session."""
    from . import comparison_ops, join_ops, slicing_ops, state_ops  # (siblings; imported late to keep this light)
    if var_list is None:
        var_list = get_collection(GraphKeys.GLOBAL_VARIABLES) + get_collection(GraphKeys.LOCAL_VARIABLES)
    var_list = list(var_list)
    with name_scope(name):
        if not var_list:
            return convert_to_tensor(np.array([], dtype=object), dtype=_dtypes.string, name="Const")
        names = np.array([v.op.name.encode("utf-8") for v in var_list], dtype=object)
        flags = join_ops.stack([state_ops.is_variable_initialized(v) for v in var_list])
        return slicing_ops.boolean_mask(convert_to_tensor(names, dtype=_dtypes.string),
                                        comparison_ops.logical_not(flags))
