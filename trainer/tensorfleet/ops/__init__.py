"""Op definitions: Python wrappers with TF's names, shape functions and gradients.

Importing this package registers every op type in `op_registry`.
"""
from . import array_ops, control_flow_ops, math_ops, state_ops  # noqa: F401  (registration)
