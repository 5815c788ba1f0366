"""tf.custom_gradient, Graph.gradient_override_map / tf.RegisterGradient by name, tf.hessians and
tf.identity_n (custom_gradients.py), against TF 1.15's documented examples and analytic or
finite-difference oracles."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients


def _run(*fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches))


def test_custom_gradient_docs_example_is_numerically_stable():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return tf.log(1 + e), grad

    x = tf.constant([100.0, 0.0, -3.0])
    (dx,) = tf.gradients(log1pexp(x), x)
    naive = tf.gradients(tf.log(1 + tf.exp(x)), x)[0]
    got, bad = _run(dx, naive)
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-np.array([100.0, 0.0, -3.0]))), rtol=1e-6)  # sigmoid
    assert np.isnan(bad[0])  # what TF's docs warn the plain composition gives at 100


def test_custom_gradient_with_two_inputs_and_an_upstream_gradient():
    @tf.custom_gradient
    def scaled_reverse(x, y):
        def grad(dz):
            return -dz * y, -dz * x  # not the true gradient (that would be +): the custom one must be used
        return x * y, grad

    x, y = tf.constant([1.0, 2.0]), tf.constant([3.0, -4.0])
    z = scaled_reverse(x, y)
    gx, gy = tf.gradients(z * tf.constant([10.0, 100.0]), [x, y])
    got_z, got_gx, got_gy = _run(z, gx, gy)
    np.testing.assert_array_equal(got_z, [3.0, -8.0])
    np.testing.assert_array_equal(got_gx, [-30.0, 400.0])
    np.testing.assert_array_equal(got_gy, [-10.0, -200.0])


def test_custom_gradient_for_a_function_that_creates_variables():
    @tf.custom_gradient
    def dense(x):
        w = tf.Variable(2.0, name="w")

        def grad(dy, variables=None):
            (var,) = variables
            return dy * var, [tf.reduce_sum(dy * x) * 0.5]  # a halved variable gradient: visibly custom
        return x * w, grad

    x = tf.constant([1.0, 3.0])
    y = dense(x)
    (w,) = tf.trainable_variables()
    gx, gw = tf.gradients(y, [x, w])
    np.testing.assert_array_equal(_run(gx)[0], [2.0, 2.0])
    assert _run(gw)[0] == pytest.approx(2.0)

    @tf.custom_gradient
    def needs_variables(x):
        v = tf.Variable(1.0, name="v2")
        return x * v, lambda dy: dy

    with pytest.raises(TypeError, match="variables"):
        needs_variables(x)


def test_gradient_override_map_uses_the_named_gradient_inside_the_block_only():
    g = tf.get_default_graph()

    @tf.RegisterGradient("ClipTo0.1")
    def _clip(op, grad):
        return [tf.clip_by_value(grad, -0.1, 0.1)]

    a = tf.constant([1.0, -2.0])
    with g.gradient_override_map({"Square": "ClipTo0.1", "Round": "Identity", "StopGradient": "Identity"}):
        sq = tf.square(a)
        rounded = tf.round(a * 1.3)            # straight-through estimator
        passed = tf.stop_gradient(a * 2.0)     # an op with no gradient of its own gets one
    outside = tf.square(a)
    grads = _run(tf.gradients(sq * tf.constant([5.0, -5.0]), a)[0], tf.gradients(rounded, a)[0],
                 tf.gradients(passed, a)[0], tf.gradients(outside, a)[0])
    for got, want in zip(grads, ([0.1, -0.1], [1.3, 1.3], [2.0, 2.0], [2.0, -4.0]), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    with g.gradient_override_map({"Exp": "NoSuchGradient"}):
        e = tf.exp(a, name="overridden_exp")
    with pytest.raises(LookupError, match="overridden_exp.*NoSuchGradient"):
        tf.gradients(e, a)
    with pytest.raises(TypeError, match="strings"):
        with g.gradient_override_map({"Exp": 3}):
            pass
    with pytest.raises(KeyError, match="Registering two gradient with name 'ClipTo0.1'"):
        tf.RegisterGradient("ClipTo0.1")(_clip)


def test_hessians_match_analytic_second_derivatives():
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((3, 3))
    x0 = rng.standard_normal(3)
    x = tf.constant(x0)
    a = tf.constant(a_np)
    quad = tf.reduce_sum(x * tf.linalg.matvec(a, x)) if hasattr(tf.linalg, "matvec") else \
        tf.reduce_sum(x * tf.squeeze(tf.matmul(a, tf.expand_dims(x, 1)), 1))
    xm = tf.constant(rng.standard_normal((2, 2)))
    elementwise = tf.reduce_sum(tf.sin(xm) * xm ** 2)
    (h_quad,) = tf.hessians(quad, x)
    (h_elem,) = tf.hessians(elementwise, xm)
    got_quad, got_elem, xm_np = _run(h_quad, h_elem, xm)
    np.testing.assert_allclose(got_quad, a_np + a_np.T, rtol=1e-10)
    second = 2 * np.sin(xm_np) + 4 * xm_np * np.cos(xm_np) - xm_np ** 2 * np.sin(xm_np)
    expected = np.zeros((2, 2, 2, 2))
    for i in range(2):
        for j in range(2):
            expected[i, j, i, j] = second[i, j]
    assert got_elem.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(got_elem, expected, rtol=1e-10, atol=1e-12)
    unknown = tf.placeholder(tf.float64, [None])
    with pytest.raises(ValueError, match="shape of .*Placeholder"):
        tf.hessians(tf.reduce_sum(unknown ** 2), unknown)


def test_identity_n_values_and_finite_difference_gradient():
    a, b = tf.identity_n([tf.constant([1.0, 2.0]), tf.constant(3, tf.int32)])
    assert a.op is b.op and a.op.type == "IdentityN" and b.dtype == tf.int32
    np.testing.assert_array_equal(_run(a)[0], [1.0, 2.0])
    check_gradients(lambda x, y: tf.identity_n([x * 2.0, y])[0] * tf.identity_n([x, y * y])[1],
                    [np.array([1.0, -2.0]), np.array([0.5, 3.0])])
