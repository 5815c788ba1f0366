"""Elementwise math: the ops of ops/elementwise_math_ops.py (trigonometric and hyperbolic functions, expm1, atan2,
rint) and the composite tf.math / tf.nn functions of elementwise_math_ops and tf1_aliases.py (log_sigmoid,
scalar_mul, truncatediv, truncatemod, softsign, selu, swish, xlogy, *_no_nan, reduce_variance/std/euclidean_norm,
weighted cross-entropy), with a few small top-level names (tf.broadcast_to, tf.matrix_transpose,
tf.math.is_non_decreasing, ...): forward against numpy and TF's documented formulas, gradients by finite
differences."""
import math

import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import run

X = np.array([[0.1, -0.4, 0.7], [0.3, 0.55, -0.8]])  # inside (-1, 1): every inverse function is defined
BIG = np.array([[1.2, 1.7, 2.5], [3.1, 1.05, 4.0]])  # > 1: acosh


UNARY = [(tf.tan, np.tan, X), (tf.asin, np.arcsin, X), (tf.acos, np.arccos, X), (tf.atan, np.arctan, X),
         (tf.sinh, np.sinh, X), (tf.cosh, np.cosh, X), (tf.asinh, np.arcsinh, X), (tf.acosh, np.arccosh, BIG),
         (tf.atanh, np.arctanh, X), (tf.expm1, np.expm1, X)]


@pytest.mark.parametrize("fn,ref,x", UNARY, ids=lambda v: getattr(v, "__name__", ""))
def test_unary_forward_and_finite_difference_gradients(fn, ref, x):
    np.testing.assert_allclose(run(fn(tf.constant(x))), ref(x), rtol=1e-12)
    check_gradients(fn, [x], rtol=1e-6, atol=1e-8)


def test_atan2_broadcasts_and_its_gradient():
    y, x = X, np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(run(tf.atan2(tf.constant(y), tf.constant(x))), np.arctan2(y, x), rtol=1e-12)
    check_gradients(tf.atan2, [y, x], rtol=1e-6, atol=1e-8)


def test_rint_rounds_half_to_even_and_has_no_gradient():
    v = np.array([0.5, 1.5, 2.5, -0.5, 2.4])
    np.testing.assert_array_equal(run(tf.rint(tf.constant(v))), np.rint(v))
    p = tf.placeholder(tf.float64, [5])
    assert tf.gradients(tf.reduce_sum(tf.rint(p)), [p]) == [None]


COMPOSITES = [
    (tf.math.log_sigmoid, lambda x: -np.log1p(np.exp(-x))),
    (tf.nn.softsign, lambda x: x / (1 + np.abs(x))),
    (tf.nn.swish, lambda x: x / (1 + np.exp(-x))),
    (tf.nn.selu, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
    (tf.math.reduce_variance, lambda x: np.var(x)),
    (tf.math.reduce_std, lambda x: np.std(x)),
    (tf.math.reduce_euclidean_norm, lambda x: np.sqrt(np.sum(x * x))),
]


@pytest.mark.parametrize("fn,ref", COMPOSITES, ids=lambda v: getattr(v, "__name__", ""))
def test_composites_match_numpy_and_differentiate(fn, ref):
    np.testing.assert_allclose(run(fn(tf.constant(X))), ref(X), rtol=1e-12)
    check_gradients(fn, [X], rtol=1e-5, atol=1e-7)


def test_no_nan_family_and_xlogy():
    x, y = np.array([0.0, 2.0, 3.0]), np.array([0.0, 4.0, 0.5])
    np.testing.assert_allclose(run(tf.math.xlogy(x, y)), [0.0, 2 * math.log(4.0), 3 * math.log(0.5)])
    np.testing.assert_allclose(run(tf.math.xdivy(x, y)), [0.0, 0.5, 6.0])
    np.testing.assert_allclose(run(tf.math.reciprocal_no_nan(np.array([0.0, 4.0]))), [0.0, 0.25])
    np.testing.assert_allclose(run(tf.math.multiply_no_nan(np.array([np.inf, 2.0]), np.array([0.0, 3.0]))),
                               [0.0, 6.0])
    check_gradients(lambda a: tf.math.xlogy(a, tf.constant(BIG)), [X + 1.0], rtol=1e-6, atol=1e-8)


def test_weighted_cross_entropy_matches_tf_formula():
    z = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.3]])
    q = 2.5
    expected = q * z * -np.log(1 / (1 + np.exp(-X))) + (1 - z) * -np.log(1 - 1 / (1 + np.exp(-X)))
    got = run(tf.nn.weighted_cross_entropy_with_logits(labels=z, logits=X, pos_weight=q))
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    check_gradients(lambda lg: tf.nn.weighted_cross_entropy_with_logits(labels=z, logits=lg, pos_weight=q), [X])


def test_misc_top_level_names():
    assert run(tf.math.zero_fraction(tf.constant([0.0, 1.0, 0.0, 2.0]))) == pytest.approx(0.5)
    assert run(tf.math.is_non_decreasing([1, 1, 2])) and not run(tf.math.is_strictly_increasing([1, 1, 2]))
    assert run(tf.math.is_strictly_increasing([1, 2, 5]))
    np.testing.assert_array_equal(run(tf.broadcast_to(tf.constant([1, 2, 3]), [2, 3])), [[1, 2, 3]] * 2)
    np.testing.assert_array_equal(run(tf.matrix_transpose(tf.zeros([2, 3, 4]))).shape, (2, 4, 3))
    np.testing.assert_allclose(run(tf.scalar_mul(2.0, tf.constant([1.5]))), [3.0])
    assert tf.is_tensor(tf.constant(1)) and not tf.is_tensor(np.ones(2)) and tf.executing_eagerly() is False
    assert tf.dimension_value(tf.TensorShape([3, None])[0]) == 3 and tf.dimension_value(5) == 5
    np.testing.assert_allclose(run(tf.nn.relu_layer(tf.constant([[1.0, -2.0]]), tf.constant([[1.0], [1.0]]),
                                                     tf.constant([0.5]))), [[0.0]])


def test_truncatediv_and_truncatemod_round_toward_zero():
    x, y = np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2])
    np.testing.assert_array_equal(run(tf.truncatediv(x, y)), np.trunc(x / y).astype(int))
    np.testing.assert_array_equal(run(tf.truncatemod(x, y)), np.fmod(x, y))
