"""`tf.identity_n`: the IdentityN op, each output its input.

Sits in `ops/`; `custom_gradients.py` builds `tf.custom_gradient` on it (an IdentityN whose gradient is
overridden), as TF does. The kernel is in `kernels/core_kernels.py`.
"""
from __future__ import annotations

from .common import convert_to_tensor, make_op, register_gradient, register_op

__all__ = ["identity_n"]

register_op("IdentityN", lambda op: [(t.dtype, t.shape) for t in op.inputs])


def identity_n(input, name=None) -> list:
    """`tf.identity_n(input)`: a list of tensors with the same values as `input`'s, from one op."""
    tensors = [convert_to_tensor(t) for t in input]
    if not tensors:
        raise ValueError("identity_n needs at least one tensor")
    return list(make_op("IdentityN", tensors, name=name, default_name="IdentityN").outputs)


@register_gradient("IdentityN")
def _identity_n_grad(op, *grads):
    return list(grads)
