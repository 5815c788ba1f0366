"""Random ops: distributions, shapes/dtypes, TF1 seed rule (reproducible across sessions and processes,
fresh values per run), truncation, shuffle, multinomial."""
import subprocess
import sys

import numpy as np
import pytest

import tensorfleet as tf
from helpers import run

N = 20000


def test_distributions_shapes_dtypes_and_moments():
    n = tf.random_normal([N], mean=2.0, stddev=3.0, seed=1)
    t = tf.truncated_normal([N], mean=-1.0, stddev=2.0, seed=2)
    u = tf.random_uniform([N], -2.0, 4.0, seed=3)
    i = tf.random_uniform([N], 3, 7, dtype=tf.int32, seed=4)
    d = tf.random_normal([2, 3], dtype=tf.float64)
    assert (n.op.name, t.op.name, u.op.name) == ("random_normal", "truncated_normal", "random_uniform")
    assert n.shape.as_list() == [N] and i.dtype == tf.int32 and d.dtype == tf.float64
    nv, tv, uv, iv, dv = run(n, t, u, i, d)
    assert nv.dtype == np.float32 and tv.dtype == np.float32 and iv.dtype == np.int32 and dv.dtype == np.float64
    assert abs(nv.mean() - 2) < 0.1 and abs(nv.std() - 3) < 0.1
    assert np.all(np.abs(tv + 1) <= 4.0) and abs(tv.mean() + 1) < 0.05
    assert abs(tv.std() - 2 * 0.8796) < 0.05  # truncation at 2 std shrinks the std to 0.88
    assert uv.min() >= -2 and uv.max() < 4 and abs(uv.mean() - 1) < 0.1
    assert iv.min() == 3 and iv.max() == 6


def test_invalid_arguments():
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random_uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="dtype"):
        tf.random_normal([2], dtype=tf.int32)


def _draw(graph_seed, op_seed, runs=2):
    g = tf.Graph()
    with g.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        tf.constant(0)  # op counts matter only when the op seed is derived
        r = tf.random_normal([4], seed=op_seed)
        with tf.Session(graph=g) as sess:
            return [sess.run(r) for _ in range(runs)]


def test_seed_rule_reproducible_across_sessions_fresh_per_run():
    a1, a2 = _draw(5, None)
    b1, b2 = _draw(5, None)
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a1, a2)  # each run draws fresh values
    np.testing.assert_array_equal(_draw(None, 7)[0], _draw(None, 7)[0])
    np.testing.assert_array_equal(_draw(3, 7)[0], _draw(3, 7)[0])
    assert not np.array_equal(_draw(3, 7)[0], _draw(4, 7)[0])
    assert not np.array_equal(_draw(None, None)[0], _draw(None, None)[0])


def test_graph_seed_gives_distinct_ops_distinct_streams():
    tf.set_random_seed(1)
    a, b = tf.random_uniform([5]), tf.random_uniform([5])
    av, bv = run(a, b)
    assert not np.array_equal(av, bv)


def test_reproducible_across_processes():
    code = ("import tensorfleet as tf; tf.set_random_seed(11); r = tf.truncated_normal([3], seed=2); "
            "print(tf.Session().run(r).tolist())")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            for _ in range(2)]
    assert outs[0] == outs[1] and outs[0].startswith("[")
    tf.set_random_seed(11)
    assert str(run(tf.truncated_normal([3], seed=2)).tolist()) == outs[0].strip()


def test_dynamic_shape_random():
    x = tf.placeholder(tf.float32, [None, 3])
    noise = tf.random_normal(tf.shape(x))
    assert noise.shape.as_list() == [None, 3]
    assert run(noise, feed={x: np.zeros((5, 3))}).shape == (5, 3)


def test_shuffle_multinomial_crop():
    v = np.arange(10)
    s = run(tf.random_shuffle(tf.constant(v), seed=1))
    assert sorted(s.tolist()) == v.tolist() and s.dtype == v.dtype
    m = tf.multinomial(tf.constant(np.log([[0.1, 1e-30, 0.9], [1.0, 1e-30, 1e-30]]), tf.float32), 2000, seed=3)
    assert m.dtype == tf.int64 and m.shape.as_list() == [2, 2000]
    mv = run(m)
    assert set(mv[1].tolist()) == {0} and 1 not in mv[0] and abs((mv[0] == 2).mean() - 0.9) < 0.03
    c = tf.random_crop(tf.constant(np.arange(20).reshape(4, 5)), [2, 3], seed=1)
    cv = run(c)
    assert cv.shape == (2, 3) and np.all(np.diff(cv, axis=1) == 1) and np.all(np.diff(cv, axis=0) == 5)
