"""Elementwise math ops, Python operators and casts: forward vs numpy, dtypes, names, shapes, gradients."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import run

RNG = np.random.default_rng(0)


A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4,))
POS = RNG.uniform(0.5, 2.0, (3, 4))

BINARY = [
    (tf.add, np.add), (tf.subtract, np.subtract), (tf.multiply, np.multiply), (tf.divide, np.divide),
    (tf.truediv, np.divide), (tf.realdiv, np.divide), (tf.maximum, np.maximum), (tf.minimum, np.minimum),
    (tf.squared_difference, lambda x, y: (x - y) ** 2), (tf.floordiv, np.floor_divide), (tf.mod, np.mod),
    (tf.div, np.divide), (tf.div_no_nan, np.divide),
]


@pytest.mark.parametrize("tf_fn,np_fn", BINARY, ids=lambda f: getattr(f, "__name__", "f"))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_forward_broadcasting_matches_numpy(tf_fn, np_fn, dtype):
    a, b = A.astype(dtype), (B + 3).astype(dtype)
    out = tf_fn(tf.constant(a), tf.constant(b))
    assert out.dtype == tf.as_dtype(dtype) and out.shape == (3, 4)
    res = run(out)
    assert res.dtype == dtype
    np.testing.assert_allclose(res, np_fn(a, b), rtol=1e-6)


UNARY = [
    (tf.negative, np.negative, A), (tf.abs, np.abs, A), (tf.sign, np.sign, A), (tf.exp, np.exp, A),
    (tf.log, np.log, POS), (tf.log1p, np.log1p, POS), (tf.sqrt, np.sqrt, POS),
    (tf.rsqrt, lambda x: 1 / np.sqrt(x), POS),
    (tf.square, np.square, A), (tf.reciprocal, np.reciprocal, POS), (tf.floor, np.floor, A), (tf.ceil, np.ceil, A),
    (tf.round, np.round, np.array([0.5, 1.5, 2.5, -0.5, 1.2])), (tf.sin, np.sin, A), (tf.cos, np.cos, A),
]


@pytest.mark.parametrize("tf_fn,np_fn,x", UNARY, ids=lambda f: getattr(f, "__name__", "x"))
def test_unary_forward_matches_numpy(tf_fn, np_fn, x):
    res = run(tf_fn(tf.constant(x.astype(np.float32))))
    assert res.dtype == np.float32
    np.testing.assert_allclose(res, np_fn(x.astype(np.float32)), rtol=1e-6)


@pytest.mark.parametrize("fn", [tf.exp, tf.log, tf.sqrt, tf.rsqrt, tf.square, tf.reciprocal, tf.abs, tf.negative,
                                tf.log1p, tf.sin, tf.cos], ids=lambda f: f.__name__)
def test_unary_gradients(fn):
    check_gradients(fn, [POS])


@pytest.mark.parametrize("fn", [tf.add, tf.subtract, tf.multiply, tf.divide, tf.realdiv, tf.squared_difference,
                                tf.maximum, tf.minimum, tf.pow, tf.mod, tf.div_no_nan], ids=lambda f: f.__name__)
@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((3, 1), (1, 4)), ((), (3, 4)), ((2, 3, 4), (3, 1)),
                                    ((2, 3, 2, 4), (4,))])  # the last: a conv bias, leading axes summed
def test_binary_gradients_with_broadcasting(fn, shapes):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 2.0, shapes[0])
    y = rng.uniform(0.6, 1.9, shapes[1]) + (0.013 if fn in (tf.maximum, tf.minimum) else 0)
    check_gradients(fn, [x, y], rtol=1e-4, atol=1e-6)


def test_add_v2_from_tensorflow_graphs_matches_numpy_and_finite_differences():
    """AddV2 (what TF 1.15's `x + y` writes; only imported GraphDefs create it here) is Add."""
    def add_v2(x, y):
        return tf.get_default_graph().create_op("AddV2", [x, y], {}).outputs[0]

    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    with tf.Graph().as_default():
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(add_v2(tf.constant(x), tf.constant(y))), x + y)
    check_gradients(add_v2, [x, y])


# (static shape of x, static shape of y, runtime shape of x, runtime shape of y, no reduction node for x?)
PARTIAL_SHAPES = [
    ((None, 4), (4,), (3, 4), (4,), True),           # a dense layer's bias add: provably nothing to sum for x
    ((None, 4), (1, 4), (5, 4), (1, 4), True),
    ((None, None), (4,), (3, 1), (4,), False),       # x may be [3, 1]: it broadcasts up, must be summed
    ((None, 1), (None, 4), (3, 1), (3, 4), False),
    (None, (4,), (2, 4), (4,), False),               # unknown rank
]


@pytest.mark.parametrize("fn", [tf.add, tf.subtract, tf.multiply, tf.maximum], ids=lambda f: f.__name__)
@pytest.mark.parametrize("xs,ys,xr,yr,identity", PARTIAL_SHAPES)
def test_binary_gradients_with_partially_known_shapes(fn, xs, ys, xr, yr, identity):
    """The static no-reduction proof (Grappler's job in TF) fires only when it holds; gradients match numpy."""
    rng = np.random.default_rng(4)
    xv, yv = rng.uniform(0.5, 2.0, xr), rng.uniform(0.6, 1.9, yr) + 0.013
    gv = rng.standard_normal(np.broadcast_shapes(xr, yr))
    x = tf.placeholder(tf.float64, xs)
    y = tf.placeholder(tf.float64, ys)
    g = tf.placeholder(tf.float64)
    gx, gy = tf.gradients(fn(x, y), [x, y], grad_ys=g)
    reduces_x = any(op.type == "SumToShapeOf" for op in _ancestors(gx.op))
    assert reduces_x is not identity
    with tf.Session() as sess:
        gxv, gyv = sess.run([gx, gy], {x: xv, y: yv, g: gv})
    dx, dy = {tf.add: (gv, gv), tf.subtract: (gv, -gv), tf.multiply: (gv * yv, gv * xv),
              tf.maximum: (gv * (xv >= yv), gv * (xv < yv))}[fn]
    np.testing.assert_allclose(gxv, _sum_to(dx, xr))
    np.testing.assert_allclose(gyv, _sum_to(dy, yr))


def _sum_to(a, shape):
    a = np.asarray(a)
    a = a.sum(axis=tuple(range(a.ndim - len(shape)))) if a.ndim > len(shape) else a
    return a.sum(axis=tuple(i for i, d in enumerate(shape) if d == 1), keepdims=True).reshape(shape)


def _ancestors(op):
    seen, todo = set(), [op]
    while todo:
        o = todo.pop()
        if o not in seen:
            seen.add(o)
            todo.extend(t.op for t in o.inputs)
    return seen


def test_pow_gradient_wrt_exponent_is_zero_for_nonpositive_base():
    x = tf.constant([0.0, -2.0, 3.0], tf.float64)
    y = tf.constant([2.0, 2.0, 2.0], tf.float64)
    gx, gy = tf.gradients(tf.reduce_sum(tf.pow(x, y)), [x, y])
    gxv, gyv = run(gx, gy)
    np.testing.assert_allclose(gxv, [0.0, -4.0, 6.0])
    np.testing.assert_allclose(gyv, [0.0, 0.0, 9 * np.log(3)])


def test_maximum_minimum_ties_send_gradient_to_x():
    x = tf.constant([1.0, 2.0, 3.0])
    y = tf.constant([1.0, 1.0, 4.0])
    gx, gy = tf.gradients(tf.reduce_sum(tf.maximum(x, y)), [x, y])
    np.testing.assert_array_equal(run(gx, gy), [[1, 1, 0], [0, 0, 1]])
    gx, gy = tf.gradients(tf.reduce_sum(tf.minimum(x, y)), [x, y])
    np.testing.assert_array_equal(run(gx, gy), [[1, 0, 1], [0, 1, 0]])


def test_integer_ops_stay_integer_and_floor_semantics():
    a = tf.constant([7, -7, 6], tf.int32)
    b = tf.constant([2, 2, -4], tf.int32)
    outs = [a + b, a - b, a * b, a // b, a % b, tf.maximum(a, b), tf.abs(a), -a, tf.square(a), a ** 2]
    for t in outs:
        assert t.dtype == tf.int32
    res = run(*outs)
    av, bv = np.array([7, -7, 6]), np.array([2, 2, -4])
    for r, ref in zip(res, [av + bv, av - bv, av * bv, av // bv, av % bv, np.maximum(av, bv), np.abs(av), -av,
                            av * av, av ** 2]):
        assert r.dtype == np.int32
        np.testing.assert_array_equal(r, ref)


def test_int_division_by_zero_is_an_error():
    a = tf.constant([1, 2], tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        run(a // tf.constant([1, 0]))


@pytest.mark.parametrize("dtype,out", [(tf.int32, tf.float64), (tf.int64, tf.float64), (tf.int16, tf.float32),
                                       (tf.float32, tf.float32)])
def test_truediv_casts_integers_like_tf(dtype, out):
    a = tf.constant([1, 2, 3], dtype)
    t = a / 2
    assert t.dtype == out and t.op.type == "RealDiv" and t.name == "truediv:0"
    np.testing.assert_allclose(run(t), [0.5, 1.0, 1.5])
    assert tf.div(a, 2).dtype == dtype  # TF1 div: floor for ints


def test_operator_overloads_values_and_names():
    x = tf.constant([[1.0, -2.0], [3.0, 4.0]])
    y = tf.constant([[2.0, 2.0], [2.0, 2.0]])
    cases = [(x + y, "add"), (x - y, "sub"), (x * y, "mul"), (x / y, "truediv"), (x // y, "floordiv"),
             (x % y, "mod"), (x ** y, "pow"), (x @ y, "matmul"), (-x, "Neg"), (abs(x), "Abs"), (2.0 - x, "sub_1"),
             (1.0 / y, "truediv_1"), (x < y, "Less"), (x <= y, "LessEqual"), (x > y, "Greater"),
             (x >= y, "GreaterEqual")]
    for t, name in cases:
        assert t.op.name == name
    xv, yv = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32), np.full((2, 2), 2.0, np.float32)
    refs = [xv + yv, xv - yv, xv * yv, xv / yv, xv // yv, xv % yv, xv ** yv, xv @ yv, -xv, abs(xv), 2 - xv, 1 / yv,
            xv < yv, xv <= yv, xv > yv, xv >= yv]
    for r, ref in zip(run(*[c[0] for c in cases]), refs):
        np.testing.assert_allclose(r, ref)
    assert (x == y) is False and x != y  # identity semantics, as TF1


def test_logical_operators_on_bool():
    a = tf.constant([True, True, False, False])
    b = tf.constant([True, False, True, False])
    outs = run(a & b, a | b, a ^ b, ~a, tf.logical_xor(a, b), tf.logical_and(a, b))
    np.testing.assert_array_equal(outs[0], [1, 0, 0, 0])
    np.testing.assert_array_equal(outs[1], [1, 1, 1, 0])
    np.testing.assert_array_equal(outs[2], [0, 1, 1, 0])
    np.testing.assert_array_equal(outs[3], [0, 0, 1, 1])
    np.testing.assert_array_equal(outs[4], outs[2])
    assert outs and tf.get_default_graph().get_operation_by_name("and").type == "LogicalAnd"
    with pytest.raises(TypeError, match="bool"):
        tf.logical_and(tf.constant([1]), tf.constant([1]))


def test_dtype_mismatch_and_shape_errors_at_build_time():
    with pytest.raises(TypeError, match="float64 that does not match type float32"):
        tf.add(tf.constant([1.0]), tf.constant([1.0], tf.float64))
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 3 and 4 for 'Add' \(op: 'Add'\)"):
        tf.add(tf.zeros([2, 3]), tf.zeros([2, 4]))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.placeholder(tf.float32, [None, 3]) * tf.zeros([5])
    assert (tf.placeholder(tf.float32, [None, 1]) + tf.zeros([4])).shape.as_list() == [None, 4]
    with pytest.raises(TypeError, match="float"):
        tf.exp(tf.constant([1, 2]))


def test_cast_and_to_helpers():
    x = tf.constant([1.7, -1.7, 0.0])
    outs = [tf.cast(x, tf.int32), tf.to_int64(x), tf.cast(x, tf.bool), tf.to_double(x),
            tf.to_float(tf.constant([1, 2])), tf.saturate_cast(tf.constant([300.0, -5.0]), tf.uint8)]
    res = run(*outs)
    np.testing.assert_array_equal(res[0], [1, -1, 0])
    assert res[0].dtype == np.int32 and res[1].dtype == np.int64 and res[3].dtype == np.float64
    np.testing.assert_array_equal(res[2], [True, True, False])
    assert res[4].dtype == np.float32
    np.testing.assert_array_equal(res[5], [255, 0])
    a = tf.constant(A)
    g, = tf.gradients(tf.reduce_sum(tf.cast(tf.cast(a, tf.float32), tf.float64) * 3.0), [a])
    np.testing.assert_array_equal(run(g), np.full(A.shape, 3.0))
    assert tf.gradients(tf.reduce_sum(tf.cast(tf.cast(a, tf.int32), tf.float64)), [a]) == [None]


def test_add_n_accumulate_n_and_matmul_transposes():
    a, b = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2))
    np.testing.assert_allclose(run(tf.accumulate_n([tf.constant(a), tf.constant(b), tf.constant(a)])), 2 * a + b)
    for ta in (False, True):
        for tb in (False, True):
            check_gradients(lambda x, y, ta=ta, tb=tb: tf.matmul(x, y, transpose_a=ta, transpose_b=tb),
                            [a.T if ta else a, b if tb else b.T])


def test_float32_scalars_do_not_upcast():
    x = tf.placeholder(tf.float32, [2])
    for t in (x * 2.5, x + np.float64(1.0), 2 ** x, x / 3, tf.maximum(x, 0.1)):
        assert t.dtype == tf.float32
        assert run(t, feed={x: [1.0, 2.0]}).dtype == np.float32


@pytest.mark.parametrize("x", [np.float32(3.0), np.arange(6, dtype=np.float32).reshape(2, 3)])
def test_div_no_nan_by_a_scalar_is_x_over_y_and_zero_where_y_is_zero(x):
    # TF's rule: 0 where the divisor is 0 (even for 0/0 and x/0), else x / y; Keras divides by a count every step
    for y in (np.float32(2.0), np.float32(0.0), np.float32(-0.5)):
        got = run(tf.div_no_nan(tf.constant(x), tf.constant(y)))
        want = np.zeros_like(x) if y == 0 else x / y
        assert got.dtype == np.float32 and got.shape == np.shape(x)
        np.testing.assert_array_equal(got, want)
