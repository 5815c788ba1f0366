"""Sparse variable updates (ops/scatter_ops.py): tf.scatter_update / add / sub, tf.scatter_mul / div / min / max and
tf.scatter_nd_update / add / sub.

Oracles: numpy's fancy assignment and unbuffered ufunc.at (np.add.at, np.multiply.at, ...: every repeated index
combines, which is TF's documented duplicate rule), Python's integer division truncated toward zero (C's, TF's
ScatterDiv on integers), TF 1.15's docstring examples verbatim for scatter_nd_*, and the same graphs on fake_cupy's
GPU compared with numpy.
"""
import numpy as np
import pytest

import fake_cupy
import tensorfleet as tf
from tensorfleet import op_registry

RNG = np.random.default_rng(5)
UFUNC = {"mul": np.multiply, "div": np.divide, "min": np.minimum, "max": np.maximum}
OPS = {"mul": tf.scatter_mul, "div": tf.scatter_div, "min": tf.scatter_min, "max": tf.scatter_max}


def _apply(init, build, steps=1):
    """Runs build(var) `steps` times in one session; returns (each result, the variable after)."""
    v = tf.Variable(init)
    op = build(v)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        outs = [s.run(op) for _ in range(steps)]
        return outs, s.run(v)


@pytest.mark.parametrize("kind", ["mul", "div", "min", "max"])
def test_scatter_combine_ops_match_numpy_ufunc_at_with_repeated_indices(kind):
    init = RNG.uniform(0.5, 2.0, (5, 3)).astype(np.float32)
    idx = np.array([[3, 0], [3, 3]])  # 3 three times, 0 once: every contribution combines
    upd = RNG.uniform(0.5, 2.0, (2, 2, 3)).astype(np.float32)
    want = init.copy()
    UFUNC[kind].at(want, idx, upd)
    (out,), after = _apply(init, lambda v: OPS[kind](v, idx, upd))
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_allclose(after, want, rtol=1e-6)
    assert out.dtype == np.float32
    # a scalar update applies to every indexed row
    want = init.copy()
    UFUNC[kind].at(want, [1, 1], np.full((2, 3), 1.25, np.float32))
    (out,), _ = _apply(init, lambda v: OPS[kind](v, tf.constant([1, 1], tf.int64), 1.25))
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_scatter_on_integers_and_division_truncates_toward_zero():
    init = np.array([[7, -7], [9, 100]], np.int32)
    (out,), _ = _apply(init, lambda v: tf.scatter_div(v, [0, 0], [[2, 2], [-1, 2]]))
    want = [[int(int(7 / 2) / -1), int(int(-7 / 2) / 2)], [9, 100]]  # C division, applied in turn
    assert out.tolist() == want and out.dtype == np.int32
    (out,), _ = _apply(init.astype(np.int64), lambda v: tf.scatter_max(v, [1, 0, 1], [[0, 0], [8, -8], [10, 3]]))
    assert out.tolist() == [[8, -7], [10, 100]] and out.dtype == np.int64
    (out,), _ = _apply(init, lambda v: tf.scatter_mul(v, [1], [[2, 3]]))
    assert out.tolist() == [[7, -7], [18, 300]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        _apply(init, lambda v: tf.scatter_div(v, [1], [[0, 1]]))


def test_scatter_combine_names_registry_and_errors():
    v = tf.Variable(np.ones((4, 2), np.float32), name="v")
    for fn, op_type in ((tf.scatter_mul, "ScatterMul"), (tf.scatter_div, "ScatterDiv"),
                        (tf.scatter_min, "ScatterMin"), (tf.scatter_max, "ScatterMax")):
        t = fn(v, [0], [[1.0, 2.0]])
        assert t.op.type == op_type and t.op.name == op_type and t.shape.as_list() == [4, 2]
        assert t.op.colocation_groups() == v.op.colocation_groups()
        assert t.op.get_attr("use_locking") is False and t.op.get_attr("var") is v.op
        assert op_registry.get_op_def(op_type).updates_variables == ("var",)
        assert fn(v, [0], [[1.0, 2.0]], use_locking=True, name="named").op.get_attr("use_locking") is True
    with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal, but are 3 and 2"):
        tf.scatter_mul(v, [0], [[1.0, 2.0, 3.0]])
    with pytest.raises(TypeError, match="parameter 'indices' has DataType float32"):
        tf.scatter_max(v, [0.0], [[1.0, 2.0]])
    with pytest.raises(TypeError, match="parameter 'ref' has DataType bool"):
        tf.scatter_min(tf.Variable([True, False]), [0], [True])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[1\] = 4 is not in \[0, 4\)(.|\n)*node bad_mul"):
            s.run(tf.scatter_mul(v, [0, 4], [[1.0, 2.0], [3.0, 4.0]], name="bad_mul"))
        np.testing.assert_array_equal(s.run(v), np.ones((4, 2)))  # the failed update wrote nothing


# -- scatter_nd_* -----------------------------------------------------------------------------------------------
def test_scatter_nd_ops_match_tf_docs():
    indices, updates = tf.constant([[4], [3], [1], [7]]), tf.constant([9, 10, 11, 12])
    init = np.array([1, 2, 3, 4, 5, 6, 7, 8], np.int32)
    for fn, want in ((tf.scatter_nd_update, [1, 11, 3, 10, 9, 6, 7, 12]),
                     (tf.scatter_nd_add, [1, 13, 3, 14, 14, 6, 7, 20]),
                     (tf.scatter_nd_sub, [1, -9, 3, -6, -4, 6, 7, -4])):
        (out,), after = _apply(init, lambda v, fn=fn: fn(v, indices, updates))
        assert out.tolist() == want and after.tolist() == want


@pytest.mark.parametrize("k", [1, 2, 3])
def test_scatter_nd_ops_match_numpy_on_slices_with_repeated_indices(k):
    init = RNG.standard_normal((4, 3, 2))
    idx = np.stack([RNG.integers(0, d, (2, 3)) for d in init.shape[:k]], axis=-1)
    idx[1, 2] = idx[0, 0]  # a repeated index tuple
    upd = RNG.standard_normal((2, 3) + init.shape[k:])
    cols = tuple(idx[..., j] for j in range(k))
    add, sub = init.copy(), init.copy()
    np.add.at(add, cols, upd)
    np.subtract.at(sub, cols, upd)
    (got,), after = _apply(init, lambda v: tf.scatter_nd_add(v, idx, upd))
    np.testing.assert_allclose(got, add)
    np.testing.assert_allclose(after, add)
    # unique indices for update (TF leaves repeated ones unspecified)
    uidx = idx.reshape(-1, k)[:1]
    (got,), _ = _apply(init, lambda v: tf.scatter_nd_update(v, uidx, upd.reshape((-1,) + init.shape[k:])[:1]))
    want = init.copy()
    want[tuple(uidx[:, j] for j in range(k))] = upd.reshape((-1,) + init.shape[k:])[:1]
    np.testing.assert_allclose(got, want)
    (got,), _ = _apply(init, lambda v: tf.scatter_nd_sub(v, idx, upd))
    np.testing.assert_allclose(got, sub)


def test_scatter_nd_names_shapes_and_errors():
    v = tf.Variable(np.zeros((4, 3), np.float32))
    for fn, op_type, locking in ((tf.scatter_nd_update, "ScatterNdUpdate", True),
                                 (tf.scatter_nd_add, "ScatterNdAdd", False),
                                 (tf.scatter_nd_sub, "ScatterNdSub", False)):
        t = fn(v, [[1, 2]], [5.0])
        assert (t.op.type, t.op.name, t.op.get_attr("use_locking")) == (op_type, op_type, locking)
        assert t.shape.as_list() == [4, 3] and t.op.colocation_groups() == v.op.colocation_groups()
        assert op_registry.get_op_def(op_type).updates_variables == ("var",)
    with pytest.raises(ValueError, match=r"The outer 1 dimensions of indices.shape=\[2,1\] must match the outer 1 "
                                         r"dimensions of updates.shape=\[3,3\]"):
        tf.scatter_nd_add(v, [[0], [1]], np.ones((3, 3), np.float32))
    with pytest.raises(ValueError, match=r"The inner 1 dimensions of input.shape=\[4,3\] must match the inner 1 "
                                         r"dimensions of updates.shape=\[2,2\]"):
        tf.scatter_nd_update(v, [[0], [1]], np.ones((2, 2), np.float32))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[1\] = \[4, 0\] does not index into shape \[4,3\](.|\n)*node bad_nd"):
            s.run(tf.scatter_nd_add(v, [[0, 0], [4, 0]], [1.0, 2.0], name="bad_nd"))


# -- the GPU path (fake_cupy) -------------------------------------------------------------------------------------
def test_scatter_kernels_on_the_fake_gpu_match_numpy(monkeypatch):
    fake_cupy.install(monkeypatch, devices=1)
    init = RNG.uniform(0.5, 2.0, (4, 3)).astype(np.float32)
    idx = np.array([2, 0, 2])
    upd = RNG.uniform(0.5, 2.0, (3, 3)).astype(np.float32)
    nd_idx = np.array([[0, 1], [3, 2], [0, 1]])
    nd_upd = np.array([1.5, -2.0, 4.0], np.float32)
    v = tf.Variable(init, name="v")
    ops = [OPS[k](v, idx, upd) for k in ("mul", "div", "min", "max")]
    ops += [tf.scatter_nd_add(v, nd_idx, nd_upd), tf.scatter_nd_sub(v, nd_idx, nd_upd),
            tf.scatter_nd_update(v, nd_idx[:2], nd_upd[:2])]
    want, outs = init.copy(), []
    for k in ("mul", "div", "min", "max"):
        UFUNC[k].at(want, idx, upd)
        outs.append(want.copy())
    cols = (nd_idx[:, 0], nd_idx[:, 1])
    np.add.at(want, cols, nd_upd)
    outs.append(want.copy())
    np.subtract.at(want, cols, nd_upd)
    outs.append(want.copy())
    want[cols[0][:2], cols[1][:2]] = nd_upd[:2]
    outs.append(want.copy())
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got = [s.run(op) for op in ops]
        placement = s.device_placement()
        stored = s._resources.variables["v"]
    assert all(placement[op.op.name].endswith("GPU:0") for op in ops) and placement["v"].endswith("GPU:0")
    assert isinstance(stored, fake_cupy.ndarray)
    for g, w in zip(got, outs):
        assert isinstance(g, np.ndarray)
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_scatter_steps_under_cuda_graph_replay_fall_back_cleanly_and_match_numpy(monkeypatch):
    """The scatter ops declare the variable they write (updates_variables), so a plan of them is eligible for
    CUDA-graph replay; their kernels read the indices on the host, so capture fails and every step runs the
    normal way -- with the right values."""
    fake_cupy.install(monkeypatch, devices=1)
    init = RNG.uniform(0.5, 2.0, (4, 3)).astype(np.float32)
    v = tf.Variable(init, name="v")
    idx = tf.placeholder(tf.int64, [None], name="idx")
    upd = tf.placeholder(tf.float32, [None, 3], name="upd")
    step = tf.scatter_max(v, idx, upd)
    cfg = tf.ConfigProto()
    cfg.experimental.cuda_graph_replay = True
    want = init.copy()
    with tf.Session(config=cfg) as s:
        s.run(tf.global_variables_initializer())
        for _ in range(4):
            i, u = RNG.integers(0, 4, 3), RNG.uniform(0.0, 3.0, (3, 3)).astype(np.float32)
            np.maximum.at(want, i, u)
            np.testing.assert_allclose(s.run(step, {idx: i, upd: u}), want)
        replay = next(p.replay for k, p in s._plans.items() if step in k[0])
    assert replay is not None and replay.disabled and replay.captures == 0


# -- scatter_update / scatter_add / scatter_sub -------------------------------
def test_scatter_ops_update_the_variable_like_numpy():
    init = np.arange(12, dtype=np.float32).reshape(4, 3)
    v = tf.Variable(init)
    upd = np.ones((2, 3), np.float32) * [[10], [20]]
    su = tf.scatter_update(v, [3, 1], upd)
    sa = tf.scatter_add(v, tf.constant([0, 0], tf.int64), upd)
    ss = tf.scatter_sub(v, [2], [[1, 2, 3]])
    assert su.op.colocation_groups() == v.op.colocation_groups() and su.shape.as_list() == [4, 3]
    want = init.copy()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        want[[3, 1]] = upd
        np.testing.assert_array_equal(sess.run(su), want)
        np.add.at(want, [0, 0], upd)
        np.testing.assert_array_equal(sess.run(sa), want)
        want[2] -= [1, 2, 3]
        np.testing.assert_array_equal(sess.run(ss), want)
        np.testing.assert_array_equal(sess.run(v), want)
        assert sess.run(v).dtype == np.float32
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 4 is not in \[0, 4\)"):
            sess.run(tf.scatter_add(v, [0, 4], upd))
    with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal, but are 2 and 3"):
        tf.scatter_update(v, [0], [[1.0, 2.0]])
