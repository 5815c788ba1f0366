"""Op definitions: Python wrappers with TF's names, shape functions and gradients.

Importing this package registers every op type in `op_registry`. Each module
lists its public TF names in `__all__`; the package root re-exports them.
"""
from . import (array_ops, control_flow_ops, conv_ops, init_ops, math_ops, nn_composite, nn_impl, nn_ops,  # noqa: F401
               random_ops, state_ops, variable_scope)
from . import check_ops, data_flow_ops, index_ops, scan_sort_ops, scatter_ops  # noqa: F401
from . import summary_ops  # noqa: F401
from . import autopacking  # noqa: F401  (convert_to_tensor packs lists holding tensors)
from . import image_codec_ops, image_resize_ops  # noqa: F401  (tf.image's ops)
from . import reader_ops  # noqa: F401
from . import search_histogram_ops, segment_ops  # noqa: F401
