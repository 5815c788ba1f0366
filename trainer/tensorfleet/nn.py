"""`tf.nn`: neural-network ops (re-exported from ops/nn_ops)."""
from .ops.nn_ops import *  # noqa: F401,F403
