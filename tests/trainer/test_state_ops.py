"""The variables' state ops (ops/state_ops.py): tf.count_up_to.

Oracle: TF's documented count_up_to contract (the value before each increment, OutOfRangeError at the limit).
"""
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet import op_registry


def test_count_up_to_counts_then_raises_out_of_range():
    c = tf.Variable(1, name="counter")
    t = tf.count_up_to(c, 3)
    c64 = tf.Variable(np.int64(0))
    t64 = c64.count_up_to(1)
    assert (t.op.type, t.op.name, t.dtype, t.shape.as_list()) == ("CountUpTo", "CountUpTo", tf.int32, [])
    assert t64.dtype == tf.int64 and op_registry.get_op_def("CountUpTo").updates_variables == ("var",)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert [s.run(t), s.run(t)] == [1, 2]  # the value before each increment
        assert s.run(c) == 3
        with pytest.raises(tf.errors.OutOfRangeError, match=r"Reached limit of 3(.|\n)*node CountUpTo"):
            s.run(t)
        assert s.run(c) == 3
        assert s.run(t64) == 0
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 1"):
            s.run(t64)
    with pytest.raises(TypeError, match="parameter 'ref' has DataType float32"):
        tf.count_up_to(tf.Variable(0.0), 3)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.count_up_to(tf.Variable([0]), 3)
