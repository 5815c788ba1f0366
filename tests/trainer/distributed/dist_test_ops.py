"""Test-only ops for distributed tests, loaded by the test process and by task processes.

`TestHandshake(x, mine=PATH, theirs=PATH, timeout=S)`: creates file `mine`, then waits
(bounded) for file `theirs`; returns x + 1. Two of them on different tasks finish only
if both run at the same time: a handshake that proves overlap without timing.
`TestFail(x, message=...)`: raises InvalidArgumentError with the message.
"""
import os
import time

import numpy as np

from tensorfleet import dtypes, errors
from tensorfleet.kernels import register_kernel
from tensorfleet.ops.common import make_tensor
from tensorfleet.op_registry import _REGISTRY, register_op
from tensorfleet.tensor_shape import TensorShape


def _scalar(op):
    return [(dtypes.float32, TensorShape([]))]


if "TestHandshake" not in _REGISTRY:
    register_op("TestHandshake", _scalar, stateful=True)
    register_op("TestFail", _scalar, stateful=True)

    @register_kernel("TestHandshake")
    def _handshake(ctx, x):
        mine, theirs, timeout = ctx.attrs["mine"], ctx.attrs["theirs"], ctx.attrs["timeout"]
        with open(mine, "w") as f:
            f.write(str(os.getpid()))
        deadline = time.monotonic() + timeout
        while not os.path.exists(theirs):
            if time.monotonic() > deadline:
                raise errors.DeadlineExceededError(None, None, f"{ctx.op.name}: no handshake from {theirs}")
            time.sleep(0.005)
        return np.float32(x + 1)

    @register_kernel("TestFail")
    def _fail(ctx, x):
        raise errors.InvalidArgumentError(None, None, f"{ctx.op.name}: {ctx.attrs['message']}")


def handshake(x, mine, theirs, timeout=20.0, name=None):
    return make_tensor("TestHandshake", [x], {"mine": str(mine), "theirs": str(theirs), "timeout": float(timeout)},
                       name=name)


def fail(x, message, name=None):
    return make_tensor("TestFail", [x], {"message": message}, name=name)
