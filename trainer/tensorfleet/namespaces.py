"""TF 1.15's API sub-namespaces that only re-export functions defined elsewhere: `tf.math`, `tf.random`,
`tf.debugging`, `tf.linalg` (a subset).

Top layer (it reads the package's already-imported functions); each namespace is a module registered in
`sys.modules` as `tensorfleet.<name>`, so `from tensorfleet.math import log` works too. A name is listed only when
tensorfleet has it.
"""
from __future__ import annotations

import sys
import types

from . import nn as _nn
from .ops import numerics as _nu
from .ops import array_ops as _a, check_ops as _c, math_ops as _m, random_ops as _r, scan_sort_ops as _s
from .ops import nn_impl as _ni, nn_ops as _no
from . import default_graph as _g
from . import dtypes

_MATH = {
    "abs": _m.abs, "add": _m.add, "add_n": _m.add_n, "accumulate_n": _m.accumulate_n, "argmax": _m.argmax,
    "argmin": _m.argmin, "ceil": _m.ceil, "cos": _m.cos, "count_nonzero": _m.count_nonzero, "cumprod": _s.cumprod,
    "cumsum": _s.cumsum, "divide": _m.divide, "divide_no_nan": _m.div_no_nan, "equal": _m.equal, "exp": _m.exp,
    "floor": _m.floor, "floordiv": _m.floordiv, "floormod": _m.floormod, "greater": _m.greater,
    "greater_equal": _m.greater_equal, "in_top_k": _ni.in_top_k, "is_finite": _m.is_finite, "is_inf": _m.is_inf,
    "is_nan": _m.is_nan, "less": _m.less, "less_equal": _m.less_equal, "log": _m.log, "log1p": _m.log1p,
    "log_softmax": _no.log_softmax, "logical_and": _m.logical_and, "logical_not": _m.logical_not,
    "logical_or": _m.logical_or, "logical_xor": _m.logical_xor, "maximum": _m.maximum, "minimum": _m.minimum,
    "mod": _m.mod, "multiply": _m.multiply, "negative": _m.negative, "not_equal": _m.not_equal, "pow": _m.pow,
    "reciprocal": _m.reciprocal, "reduce_all": _m.reduce_all, "reduce_any": _m.reduce_any,
    "reduce_logsumexp": _m.reduce_logsumexp, "reduce_max": _m.reduce_max, "reduce_mean": _m.reduce_mean,
    "reduce_min": _m.reduce_min, "reduce_prod": _m.reduce_prod, "reduce_sum": _m.reduce_sum, "round": _m.round,
    "rsqrt": _m.rsqrt, "sigmoid": _no.sigmoid, "sign": _m.sign, "sin": _m.sin, "softmax": _no.softmax,
    "softplus": _no.softplus, "sqrt": _m.sqrt, "square": _m.square, "squared_difference": _m.squared_difference,
    "subtract": _m.subtract, "tanh": _no.tanh, "top_k": _s.top_k, "truediv": _m.truediv, "l2_normalize":
    _nn.l2_normalize, "scalar_mul": _m.multiply,
}

_RANDOM = {
    "normal": _r.random_normal, "uniform": _r.random_uniform, "truncated_normal": _r.truncated_normal,
    "shuffle": _r.random_shuffle, "multinomial": _r.multinomial, "set_random_seed": _g.set_random_seed,
}

_DEBUGGING = {name: getattr(_c, name) for name in _c.__all__  # (tf.assert_variables_initialized: top level only)
              if name.startswith("assert_") and name != "assert_variables_initialized"}
_DEBUGGING.update({"Assert": _c.Assert, "is_finite": _m.is_finite, "is_inf": _m.is_inf, "is_nan": _m.is_nan})
_DEBUGGING.update({"check_numerics": _nu.check_numerics, "assert_all_finite": _nu.verify_tensor_all_finite})

_LINALG = {"matmul": _m.matmul, "tensordot": _a.tensordot, "einsum": _a.einsum, "eye": _a.eye,
           "trace": _a.trace, "tensor_diag": _a.diag, "tensor_diag_part": _a.diag_part}


def _categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """`tf.random.categorical`: tf.multinomial with an output dtype (int64 by default)."""
    return _r.multinomial(logits, num_samples, seed=seed, name=name,
                          output_dtype=dtypes.int64 if dtype is None else dtype)


_RANDOM["categorical"] = _categorical


def _module(name: str, members: dict, doc: str) -> types.ModuleType:
    mod = types.ModuleType(f"tensorfleet.{name}", doc)
    for k, v in members.items():
        setattr(mod, k, v)
    mod.__all__ = sorted(members)
    sys.modules[mod.__name__] = mod
    return mod


from .ops import string_ops as _str  # noqa: E402

_STRINGS = {"join": _str.string_join, "split": _str.strings_split, "as_string": _str.as_string,
            "to_number": _str.string_to_number, "strip": _str.string_strip, "substr": _str.substr,
            "length": _str.string_length, "regex_replace": _str.regex_replace, "reduce_join": _str.reduce_join}
_SPARSE = {"to_dense": _str.sparse_tensor_to_dense, "SparseTensor": _str.SparseTensor}
from .ops import parsing_ops as _parsing  # noqa: E402

_IO = {"decode_raw": _str.decode_raw, "decode_csv": _str.decode_csv, "parse_example": _parsing.parse_example,
       "parse_single_example": _parsing.parse_single_example, "FixedLenFeature": _parsing.FixedLenFeature,
       "VarLenFeature": _parsing.VarLenFeature}
from .ops import sequence_parsing_ops as _seq_parsing  # noqa: E402

_IO.update(FixedLenSequenceFeature=_seq_parsing.FixedLenSequenceFeature,
           parse_single_sequence_example=_seq_parsing.parse_single_sequence_example,
           parse_sequence_example=_seq_parsing.parse_sequence_example)
from .ops import image_codec_ops as _codecs  # noqa: E402

_IO.update({n: getattr(_codecs, n) for n in _codecs.__all__})  # tf.io.decode_jpeg & co, as TF 1.15's tf.io


def _extend_io(members: dict) -> types.ModuleType:
    """`tf.io`: the package tensorfleet.io (TFRecord files) when present, plus the string decoders."""
    try:
        import importlib
        mod = importlib.import_module("tensorfleet.io")
    except ImportError:
        return _module("io", members, "`tf.io`: TF 1.15's io namespace (decoders).")
    for k, v in members.items():
        if not hasattr(mod, k):
            setattr(mod, k, v)
    return mod


strings = _module("strings", _STRINGS, "`tf.strings`: TF 1.15's string namespace (ops/string_ops.py).")
sparse = _module("sparse", _SPARSE, "`tf.sparse`: SparseTensor and its dense form.")
from . import graph_io as _graph_io  # noqa: E402

_IO["write_graph"] = _graph_io.write_graph
from .ops import reader_ops as _rd  # noqa: E402

_IO.update({"read_file": _rd.read_file, "write_file": _rd.write_file, "matching_files": _rd.matching_files})
io = _extend_io(_IO)
graph_util = _module("graph_util", {
    "convert_variables_to_constants": _graph_io.convert_variables_to_constants,
    "extract_sub_graph": _graph_io.extract_sub_graph, "import_graph_def": _graph_io.import_graph_def},
    "`tf.graph_util`: freezing and subgraphs of GraphDefs (graph_io.py).")
from . import tf1_aliases as _al  # noqa: E402
from .ops import elementwise_math_ops as _em  # noqa: E402

_MATH.update({name: getattr(_em, name) for name in ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
                                                    "atanh", "expm1", "atan2", "rint", "log_sigmoid")})
_MATH.update(is_non_decreasing=_c.is_non_decreasing, is_strictly_increasing=_c.is_strictly_increasing)
_MATH.update(_al.MATH_EXTRAS)
from .ops import candidate_sampling_ops as _cs, conv_composite as _cc, nn_composite as _nc  # noqa: E402

for _name, _fn in (list(_al.NN_EXTRAS.items()) + [(n, getattr(_cc, n)) for n in _cc.__all__]
                   + [(n, getattr(_nc, n)) for n in _nc.__all__] + [(n, getattr(_cs, n)) for n in _cs.__all__]):
    setattr(_nn, _name, _fn)
from .ops import matrix_decomposition_ops as _md, matrix_ops as _mo  # noqa: E402

_LINALG["matrix_transpose"] = _LINALG["transpose"] = _mo.matrix_transpose  # tf.linalg.transpose: the last two dims
_LINALG.update({  # TF 1.15's tf.linalg names (diag / diag_part are the batched matrix_diag / matrix_diag_part)
    "inv": _md.matrix_inverse, "det": _md.matrix_determinant, "slogdet": _md.slogdet, "logdet": _md.logdet,
    "cholesky": _md.cholesky, "cholesky_solve": _md.cholesky_solve, "qr": _md.qr, "svd": _md.svd,
    "solve": _md.matrix_solve, "triangular_solve": _md.matrix_triangular_solve, "band_part": _mo.matrix_band_part,
    "diag": _mo.matrix_diag, "diag_part": _mo.matrix_diag_part, "set_diag": _mo.matrix_set_diag,
    "norm": _mo.norm, "cross": _mo.cross, "adjoint": _mo.adjoint, "eigh": _md.self_adjoint_eig,
    "eigvalsh": _md.self_adjoint_eigvals, "lstsq": _md.matrix_solve_ls,
    "matvec": _mo.matvec, "l2_normalize": _nn.l2_normalize})
from .ops.matrix_square_root_op import matrix_square_root as _sqrtm  # noqa: E402

_LINALG["sqrtm"] = _sqrtm
from .ops import index_ops as _ix, search_histogram_ops as _sh  # noqa: E402

_MATH.update(bincount=_sh.bincount, confusion_matrix=_sh.confusion_matrix, invert_permutation=_ix.invert_permutation)
from .ops import special_math_ops as _sm, special_random_ops as _sr  # noqa: E402

_MATH.update({name: getattr(_sm, name) for name in (
    "erf", "erfc", "lgamma", "digamma", "polygamma", "igamma", "igammac", "betainc", "lbeta", "zeta", "bessel_i0",
    "bessel_i0e", "bessel_i1", "bessel_i1e", "cumulative_logsumexp", "nextafter", "polyval")})
_RANDOM.update({"gamma": _sr.random_gamma, "poisson": _sr.random_poisson})
from .ops import segment_ops as _sx  # noqa: E402

_MATH.update({name: getattr(_sx, name) for name in _sx.__all__})
math = _module("math", _MATH, "`tf.math`: TF 1.15's math namespace (re-exported functions).")
random = _module("random", _RANDOM, "`tf.random`: TF 1.15's random namespace (re-exported functions).")
debugging = _module("debugging", _DEBUGGING, "`tf.debugging`: assertions (re-exported from ops/check_ops).")
linalg = _module("linalg", _LINALG, "`tf.linalg`: a subset (matmul, einsum, inv, det, cholesky, qr, svd, solve, ...).")
from .ops import data_flow_ops as _dfo  # noqa: E402

queue = _module("queue", {n: getattr(_dfo, n) for n in ("QueueBase", "FIFOQueue", "PaddingFIFOQueue",
                                                         "RandomShuffleQueue")},
                "`tf.queue`: TF 1.15's queue namespace (ops/data_flow_ops.py; no PriorityQueue).")
