"""Kernels: numpy/cupy implementations of every op, registered per device type and dtype."""
from . import (array_kernels, conv_kernels, core_kernels, math_kernels, nn_kernels, random_kernels,  # noqa: F401
               train_kernels)
from . import check_kernels, index_kernels, queue_kernels, scan_sort_kernels  # noqa: F401
from . import accumulator_kernels  # noqa: F401
from . import summary_kernels  # noqa: F401
from . import elementwise_math_kernels, host_kernels, parsing_kernels, sampling_kernels, set_kernels  # noqa: F401
from . import sequence_parsing_kernels  # noqa: F401
from . import indexed_slices_kernels  # noqa: F401  (IndexedSlices -> dense)
from . import scatter_kernels, search_histogram_kernels, segment_kernels  # noqa: F401
from . import string_kernels  # noqa: F401
from . import reader_kernels  # noqa: F401  (tf.TFRecordReader & co, tf.read_file)
from . import special_kernels  # noqa: F401  (special functions, Gamma/Poisson samplers)
from . import rnn_kernels  # noqa: F401
from . import linalg_kernels  # noqa: F401  (ops/matrix_decomposition_ops.py, ops/matrix_ops.py)
from . import loop_accumulator_kernels  # noqa: F401  (map_fn / scan accumulators)
from . import partition_stitch_kernels  # noqa: F401  (tf.dynamic_partition / dynamic_stitch)
from . import image_codec_kernels, image_kernels  # noqa: F401  (tf.image: decoding/encoding on Pillow, resizing)
from .registry import KernelContext, has_kernel, lookup, register_kernel  # noqa: F401
from .resources import ResourceStore  # noqa: F401
