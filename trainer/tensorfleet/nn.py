"""`tf.nn`: neural-network ops (TF 1.15 names).

Re-exported from ops/nn_ops, ops/nn_impl, ops/nn_composite and ops/conv_ops.
"""
from .ops.conv_ops import *  # noqa: F401,F403
from .ops.nn_impl import *  # noqa: F401,F403
from .ops.nn_composite import *  # noqa: F401,F403
from .ops.nn_ops import *  # noqa: F401,F403
from .ops.scan_sort_ops import top_k  # noqa: F401,E402
from .ops.rnn import (bidirectional_dynamic_rnn, dynamic_rnn, static_bidirectional_rnn,  # noqa: F401,E402
                      static_rnn)
from .rnn_namespaces import rnn_cell  # noqa: F401,E402  (tf.nn.rnn_cell)
