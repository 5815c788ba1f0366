"""Tensorfleet: a TensorFlow-1 graph/session runtime on numpy (and cupy).

Use it as `import tensorfleet as tf` (or `tf.compat.v1`). Layers, bottom up:
dtypes, tensor_shape, device_spec, op_registry -> graph -> ops (+ kernels) ->
autodiff / placement -> executor -> session -> distributed -> train.
The public TF names come from each module's `__all__`.
"""
import sys as _sys
import types as _types

from . import dtypes, errors
from .platform import app, flags, gfile, tf_logging  # noqa: F401  (tf.app, tf.flags, tf.gfile; bound first:
#                                                      modules of this package import `from .. import tf_logging`)
from .errors import OpError  # noqa: F401  (tf.OpError)
from .dtypes import (DType, as_dtype, bool_ as bool, complex64, complex128, double, float16, float32, float64, half,
                     int8, int16, int32, int64, string, uint8, uint16, uint32, uint64)
from .tensor_shape import Dimension, TensorShape
from .device_spec import DeviceSpec
from .graph import Graph, GraphKeys, Operation, Tensor
from .default_graph import (add_to_collection, add_to_collections, colocate_with, control_dependencies,
                            convert_to_tensor, device, get_collection, get_collection_ref, get_default_graph,
                            get_default_session, name_scope, register_tensor_conversion_function,
                            reset_default_graph, set_random_seed)
from . import kernels as _kernels  # noqa: F401  (kernel registration)
from .ops.array_ops import *  # noqa: F401,F403
from .ops.math_ops import *  # noqa: F401,F403
from .ops.control_flow_ops import *  # noqa: F401,F403
from .ops.control_flow_ops import tuple_ as tuple  # noqa: A001
from .ops.state_ops import *  # noqa: F401,F403
from .ops.random_ops import *  # noqa: F401,F403
from .ops.init_ops import *  # noqa: F401,F403
from .ops.variable_scope import *  # noqa: F401,F403
from .ops.scan_sort_ops import *  # noqa: F401,F403
from .ops.index_ops import *  # noqa: F401,F403
from .ops.scatter_ops import *  # noqa: F401,F403
from .ops.check_ops import *  # noqa: F401,F403
from .ops.data_flow_ops import *  # noqa: F401,F403  (tf.FIFOQueue & co, tf.ConditionalAccumulator)
from .ops.reader_ops import *  # noqa: F401,F403  (tf.TFRecordReader & co, tf.read_file, tf.matching_files)
from .ops.string_ops import *  # noqa: F401,F403
from .ops.string_ops import print_v2 as print  # noqa: A001  (tf.print)
from .tf1_aliases import *  # noqa: F401,F403
from .ops.elementwise_math_ops import *  # noqa: F401,F403  (tf.tan, tf.atan2, tf.expm1, tf.rint, ...)
from .ops.host_ops import *  # noqa: F401,F403  (tf.py_func, tf.numpy_function)
from .ops.shape_ops import *  # noqa: F401,F403  (tf.broadcast_to, ...)
from .ops.special_math_ops import *  # noqa: F401,F403  (tf.erf, tf.lgamma, ...)
from .ops.special_random_ops import *  # noqa: F401,F403  (tf.random_gamma, tf.random_poisson)
from .ops.set_ops import *  # noqa: F401,F403  (tf.unique, tf.unique_with_counts, tf.setdiff1d)
from .ops.matrix_ops import *  # noqa: F401,F403  (tf.matrix_band_part, tf.matrix_diag, tf.norm, tf.cross, ...)
from .ops.matrix_decomposition_ops import *  # noqa: F401,F403  (tf.matrix_inverse, tf.cholesky, tf.qr, tf.svd...)
from .ops.matrix_square_root_op import matrix_square_root  # noqa: F401
from .ops.partition_stitch_ops import *  # noqa: F401,F403  (tf.dynamic_partition, tf.dynamic_stitch, ...)
from .ops.segment_ops import *  # noqa: F401,F403  (tf.segment_sum/mean/max/min/prod and the unsorted ones)
from .ops.search_histogram_ops import *  # noqa: F401,F403  (tf.searchsorted, unravel_index, histograms, ...)
from .ops.parsing_ops import *  # noqa: F401,F403  (tf.parse_example, tf.FixedLenFeature, ...)
from .ops.sequence_parsing_ops import FixedLenSequenceFeature, parse_single_sequence_example  # noqa: F401
from .ops.numerics import *  # noqa: F401,F403  (tf.check_numerics, tf.verify_tensor_all_finite, ...)
from .ops.nn_ops import sigmoid, tanh  # noqa: F401  (tf.sigmoid / tf.tanh; the rest of nn stays in tf.nn)
from .op_registry import NotDifferentiable, RegisterGradient
from .autodiff import gradients
from .ops.identity_n_op import identity_n  # noqa: F401
from .ops.indexed_slices_ops import IndexedSlices, convert_to_tensor_or_indexed_slices  # noqa: F401
from .indexed_slices import IndexedSlicesValue  # noqa: F401
from .ops.template import make_template  # noqa: F401
from .ops.partitioned_variables import (fixed_size_partitioner, min_max_variable_partitioner,  # noqa: F401
                                        variable_axis_size_partitioner)
from .custom_gradients import custom_gradient, hessians  # noqa: F401  (also Graph.gradient_override_map)
from .ops.cond_ops import case, cond, switch_case  # noqa: F401  (functional control flow: docs/control-flow.md)
from .ops.while_ops import while_loop  # noqa: F401
from .ops.functional_map_ops import foldl, foldr, map_fn, scan  # noqa: F401
from .ops.tensor_array_ops import TensorArray  # noqa: F401
from . import control_flow_grad as _control_flow_grad  # noqa: F401  (If/While gradients)
from .config import *  # noqa: F401,F403
from .placement import *  # noqa: F401,F403
from .session import InteractiveSession, Session
from . import distributed as _distributed  # noqa: E402  (registers the grpc:// session factory)
from . import nn, layers, losses, train  # noqa: E402
from . import datasets  # noqa: E402
from .platform import tf_logging as logging  # noqa: E402  (tf.logging)
from .namespaces import debugging, linalg, math, random  # noqa: E402  (tf.math, tf.random, ...)
from .namespaces import sparse, strings  # noqa: E402
from .namespaces import queue  # noqa: E402  (tf.queue.FIFOQueue & co)
from .ops.reverse_sequence_op import reverse_sequence  # noqa: E402
from .distributed.namespace import distribute  # noqa: E402  (tf.distribute.Server, .cluster_resolver)
from . import io  # noqa: E402  (tf.io: TFRecord files)
from .io import python_io  # noqa: E402
from . import summary  # noqa: E402  (tf.summary)
from .protos.event_pb2 import Event, LogMessage, SessionLog  # noqa: E402  (TF 1.15's top-level protos)
from .protos.summary_pb2 import HistogramProto, Summary, SummaryMetadata  # noqa: E402
from . import data  # noqa: E402  (tf.data)
from . import image  # noqa: E402  (tf.image: adjustments, resizing, decoding and encoding)
from .namespaces import io  # noqa: E402,F811  (after the tensorfleet.io package: it adds the decoders to it)
from . import version  # noqa: E402,F401  (tf.version; the choice of version string: version.py)
from .version import (VERSION, COMPILER_VERSION, CXX11_ABI_FLAG, MONOLITHIC_BUILD, GRAPH_DEF_VERSION,  # noqa: E402
                      GRAPH_DEF_VERSION_MIN_CONSUMER, GRAPH_DEF_VERSION_MIN_PRODUCER)
from . import metrics as _prometheus_metrics  # noqa: E402  (the Prometheus exporter; `tf.metrics` below is TF's)
from .ops import metrics_ops as _metrics_ops  # noqa: E402
from .graph_io import AttrValue, GraphDef, NameAttrList, import_graph_def  # noqa: E402  (graph import/export)
from .namespaces import graph_util  # noqa: E402
from .protos.meta_graph_pb2 import MetaGraphDef  # noqa: E402
# Namespaces imported on first use (as TF's own lazy loaders do): most processes (every ps, most workers) never
# touch them, and together they cost a third of `import tensorfleet`.
_LAZY = {
    "feature_column": "tf.feature_column",
    "saved_model": "tf.saved_model",
    "estimator": "tf.estimator",
    "keras": "tf.keras, graph mode: the top layer; docs/keras.md",
    "contrib": "tf.contrib: layers, framework, rnn",
}

__version__ = VERSION
__compiler_version__ = COMPILER_VERSION
__cxx11_abi_flag__ = CXX11_ABI_FLAG
__monolithic_build__ = MONOLITHIC_BUILD


def __getattr__(name):
    """The lazy namespaces (`_LAZY`), imported on first use; `tf.GIT_VERSION` / `tf.__git_version__`, read from the
    package metadata on first use (version.py)."""
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    if name in ("GIT_VERSION", "__git_version__"):
        return version.git_version()
    raise AttributeError(f"module 'tensorflow' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

newaxis = None
AUTO_REUSE = _sys.modules[__name__].__dict__.get("AUTO_REUSE", "auto_reuse")


def disable_eager_execution():
    """Graph mode is the only mode: accepted for TF1 scripts that call it."""


disable_v2_behavior = disable_eager_execution
enable_resource_variables = disable_eager_execution



class _TFMetrics(_types.ModuleType):
    """`tf.metrics` (TF's streaming metrics, `ops/metrics_ops.py`). The package attribute `metrics` used to be
    the Prometheus exporter module `tensorfleet.metrics`; its names stay reachable through this one."""

    def __getattr__(self, name):
        return getattr(_prometheus_metrics, name)


metrics = _TFMetrics("tensorfleet.tf_metrics", _metrics_ops.__doc__)
metrics.__dict__.update({_n: getattr(_metrics_ops, _n) for _n in _metrics_ops.__all__})
metrics.__all__ = list(_metrics_ops.__all__)

compat = _types.SimpleNamespace(v1=_sys.modules[__name__])
