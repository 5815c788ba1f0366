"""TF 1.15's special functions (ops/special_math_ops.py): forward against scipy.special evaluated here, TF's
documented values and edge cases; every gradient against central finite differences in float64 (TF registers
Polygamma/Zeta/Betainc gradients only w.r.t. x / q / x: check_gradients skips the inputs with None); a GELU built
with tf.erf trains."""
import math

import numpy as np
import pytest
import scipy.special as sp

import tensorfleet as tf
from gradcheck import check_gradients
from tensorfleet.kernels import special_kernels
from tensorfleet.ops import special_math_ops

EULER_GAMMA = 0.5772156649015329
POS = np.array([[0.3, 1.2, 2.5], [4.0, 0.75, 7.5]])
SIGNED = np.array([[-2.3, -0.6, 0.4], [1.1, 2.7, -3.4]])


def run(t, feed=None):
    with tf.Session() as s:
        return s.run(t, feed)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


UNARY = [(tf.erf, sp.erf, SIGNED), (tf.erfc, sp.erfc, SIGNED), (tf.lgamma, sp.gammaln, SIGNED),
         (tf.digamma, sp.digamma, SIGNED), (tf.math.bessel_i0e, sp.i0e, SIGNED), (tf.math.bessel_i1e, sp.i1e, SIGNED),
         (tf.math.bessel_i0, sp.i0, SIGNED), (tf.math.bessel_i1, sp.i1, SIGNED)]


@pytest.mark.parametrize("fn,ref,x", UNARY, ids=lambda v: getattr(v, "__name__", ""))
def test_unary_forward_float32_float64_and_finite_difference_gradients(fn, ref, x):
    np.testing.assert_allclose(run(fn(tf.constant(x))), ref(x), rtol=1e-12, atol=1e-15)
    got32 = run(fn(tf.constant(x, tf.float32)))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, ref(x.astype(np.float32).astype(np.float64)), rtol=2e-6, atol=1e-6)
    check_gradients(fn, [x], rtol=1e-6, atol=1e-8)


def test_documented_values_and_edge_cases():
    assert run(tf.erf(0.0)) == 0.0 and run(tf.erfc(0.0)) == 1.0
    assert run(tf.lgamma(tf.constant(0.5, tf.float64))) == pytest.approx(math.log(math.sqrt(math.pi)), rel=1e-15)
    assert run(tf.digamma(tf.constant(1.0, tf.float64))) == pytest.approx(-EULER_GAMMA, rel=1e-15)
    np.testing.assert_array_equal(run(tf.lgamma([0.0, -1.0, -2.0, -7.0])), [np.inf] * 4)  # TF: inf at 0, -1, ...
    np.testing.assert_allclose(run(tf.erf([-np.inf, np.inf])), [-1.0, 1.0])
    assert run(tf.math.bessel_i0e(0.0)) == 1.0 and run(tf.math.bessel_i1e(0.0)) == 0.0
    # polygamma(0, x) = digamma(x); NaN for a negative or fractional order (TF's kernel)
    np.testing.assert_allclose(run(tf.polygamma(0.0, tf.constant(POS))), sp.digamma(POS), rtol=1e-12)
    assert np.isnan(run(tf.polygamma([-1.0, 1.5], [2.0, 2.0]))).all()
    assert np.isnan(run(tf.igamma([-1.0, 0.0, 1.0], [1.0, 1.0, -1.0]))).all()
    assert np.isnan(run(tf.zeta(0.5, 2.0)))
    assert np.isnan(run(tf.betainc(1.0, 2.0, [1.5, -0.1]))).all()
    assert run(tf.zeta(2.0, 1.0)) == pytest.approx(math.pi ** 2 / 6, rel=1e-6)  # zeta(2) = pi^2/6
    with pytest.raises(TypeError, match="Erf"):
        tf.erf(tf.constant([1, 2]))
    with pytest.raises(TypeError, match="Igamma"):
        tf.igamma(tf.constant(1.0, tf.float32), tf.constant(1.0, tf.float64))


def test_binary_forward_with_broadcasting():
    n = np.array([[0.0], [1.0], [3.0]])
    a = np.array([[0.5], [2.0], [9.0]])
    x = np.array([0.1, 1.0, 4.5, 12.0])
    q = np.array([0.5, 1.0, 3.25])
    zx = np.array([[1.5], [2.0], [4.0]])
    np.testing.assert_allclose(run(tf.polygamma(n, x)), sp.polygamma(n.astype(int), x), rtol=1e-12)
    np.testing.assert_allclose(run(tf.igamma(a, x)), sp.gammainc(a, x), rtol=1e-12)
    np.testing.assert_allclose(run(tf.igammac(a, x)), sp.gammaincc(a, x), rtol=1e-12)
    np.testing.assert_allclose(run(tf.math.zeta(zx, q)), sp.zeta(zx, q), rtol=1e-12)
    bx = np.array([0.05, 0.4, 0.9])
    np.testing.assert_allclose(run(tf.betainc(0.7, 2.5, tf.constant(bx))), sp.betainc(0.7, 2.5, bx), rtol=1e-12)
    ab = np.array([1.0, 2.0, 5.0])
    np.testing.assert_allclose(run(tf.math.betainc(tf.constant(ab), ab[::-1], 0.3)), sp.betainc(ab, ab[::-1], 0.3),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="Betainc"):
        tf.betainc(np.ones(2), np.ones(3), 0.5)
    x32 = np.array([1.0, -0.0, 3.5], np.float32)
    got = run(tf.math.nextafter(x32, np.array([2.0, 1.0, -np.inf], np.float32)))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.nextafter(x32, np.array([2.0, 1.0, -np.inf], np.float32)))
    assert got[0] - 1.0 == np.finfo(np.float32).eps


def test_lbeta_polyval_and_cumulative_logsumexp_forward():
    ab = np.array([[0.5, 2.0], [3.0, 1.5]])
    np.testing.assert_allclose(run(tf.lbeta(ab)), sp.betaln(ab[:, 0], ab[:, 1]), rtol=1e-12)
    three = np.array([1.0, 2.0, 3.0])  # log B(1, 2, 3) = log(Gamma(1) Gamma(2) Gamma(3) / Gamma(6)) = log(2 / 120)
    assert run(tf.math.lbeta(three)) == pytest.approx(math.log(2 / 120), rel=1e-12)
    assert run(tf.lbeta(np.zeros((2, 0)))).tolist() == [-np.inf, -np.inf]
    coeffs = [2.0, -1.0, 0.5, 3.0]
    np.testing.assert_allclose(run(tf.math.polyval(coeffs, tf.constant(SIGNED))), np.polyval(coeffs, SIGNED))
    np.testing.assert_array_equal(run(tf.math.polyval([], tf.constant(SIGNED))), np.zeros_like(SIGNED))
    with pytest.raises(ValueError, match="list"):
        tf.math.polyval((1.0, 2.0), 1.0)
    x = np.array([[0.5, -1.0, 2.0, 0.0], [3.0, 1.0, -2.0, 4.0]])
    for axis in (0, 1, -1):
        for exclusive in (False, True):
            for reverse in (False, True):
                e = np.exp(np.flip(x, axis) if reverse else x)
                c = np.cumsum(e, axis=axis) - (e if exclusive else 0)
                with np.errstate(divide="ignore"):
                    ref = np.log(np.flip(c, axis) if reverse else c)
                got = run(tf.math.cumulative_logsumexp(tf.constant(x), axis, exclusive, reverse))
                np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    big = run(tf.math.cumulative_logsumexp(tf.constant([1000.0, 1000.0, -1000.0], tf.float32)))
    np.testing.assert_allclose(big, [1000.0, 1000.0 + math.log(2), 1000.0 + math.log(2)], rtol=1e-6)


def test_special_unary_gradients_match_tf_formulas_at_documented_points():
    x = tf.constant([1.0, 2.0, 0.0], tf.float64)
    g_lgamma, g_erf, g_i1e = run([tf.gradients(tf.reduce_sum(f), x)[0]
                                  for f in (tf.lgamma(x[:2]), tf.erf(x), tf.math.bessel_i1e(x))])
    # d/dx lgamma(x) = digamma(x): -gamma at 1, 1 - gamma at 2; d erf/dx(0) = 2/sqrt(pi); I1e'(0) = 1/2
    np.testing.assert_allclose(g_lgamma[:2], [-EULER_GAMMA, 1 - EULER_GAMMA], rtol=1e-14)
    assert g_erf[2] == pytest.approx(2 / math.sqrt(math.pi), rel=1e-15)
    assert g_i1e[2] == 0.5


def test_polygamma_gradient_wrt_x_with_broadcasting():
    n = np.array([[0.0], [1.0], [2.0]])
    check_gradients(tf.polygamma, [n, np.array([0.6, 1.7, 3.2, 5.0])], rtol=1e-6, atol=1e-8)
    p = tf.placeholder(tf.float64, [3, 1])
    assert tf.gradients(tf.reduce_sum(tf.polygamma(p, tf.constant([1.0, 2.0], tf.float64))), p) == [None]


@pytest.mark.parametrize("fn", [tf.igamma, tf.igammac], ids=["igamma", "igammac"])
def test_igamma_gradients_wrt_a_and_x_with_broadcasting(fn):
    a = np.array([[0.3], [1.5], [6.0]])
    x = np.array([0.2, 1.1, 4.0, 9.5])
    analytic, _ = check_gradients(fn, [a, x], rtol=1e-6, atol=1e-9)
    assert analytic[0].shape == (3, 1) and analytic[1].shape == (4,)


def test_igamma_grad_a_matches_finite_differences_of_scipy_across_regimes():
    """The series of IgammaGradA against central differences of scipy's gammainc in a (h relative to a)."""
    a = np.array([0.05, 0.3, 1.0, 2.5, 10.0, 40.0, 40.0, 150.0, 3.0, 0.7])
    x = np.array([0.01, 2.0, 1.0, 30.0, 9.0, 38.0, 55.0, 160.0, 1e-4, 300.0])
    got = run(special_math_ops._igamma_grad_a(tf.constant(a), tf.constant(x)))  # the op IgammaGradA
    h = 1e-5 * a
    ref = (sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) / (2 * h)
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-12)
    assert special_kernels.igamma_grad_a_host(np.array([1.0]), np.array([0.0]))[0] == 0.0
    # x far above a: P(a, x) = 1 to the last bit, the derivative below 1e-300 (the series would need ~x terms)
    assert special_kernels.igamma_grad_a_host(np.array([2.0]), np.array([1e7]))[0] == 0.0
    big_a, big_x = np.array([1e6]), np.array([1e6 + 3e3])  # 3 standard deviations: sizeable, ~1e4 terms
    h = 1e-7 * big_a  # the tail's P changes fast: a step of 0.1 in a = 1e6
    ref = (sp.gammainc(big_a + h, big_x) - sp.gammainc(big_a - h, big_x)) / (2 * h)
    np.testing.assert_allclose(special_kernels.igamma_grad_a_host(big_a, big_x), ref, rtol=1e-5)


def test_zeta_gradient_wrt_q_and_betainc_gradient_wrt_x():
    zx = np.array([[1.5], [2.0], [4.5]])
    check_gradients(tf.zeta, [zx, np.array([0.4, 1.0, 2.5])], rtol=1e-6, atol=1e-8)
    p = tf.placeholder(tf.float64, [3, 1])
    assert tf.gradients(tf.reduce_sum(tf.zeta(p, tf.constant([1.0], tf.float64))), p) == [None]
    ab = np.array([0.8, 2.0, 4.5])
    check_gradients(tf.betainc, [ab, ab[::-1].copy(), np.array([0.2, 0.55, 0.9])], rtol=1e-6, atol=1e-8)
    check_gradients(tf.betainc, [ab, ab[::-1].copy(), np.array(0.35)], rtol=1e-6, atol=1e-8)  # x scalar: summed


def test_nextafter_gradient_is_one_and_zero():
    analytic, _ = check_gradients(tf.math.nextafter, [SIGNED, np.array([10.0, -10.0, 10.0])], rtol=1e-6, atol=1e-8)
    assert analytic[1].shape == (3,) and not analytic[1].any()  # d/dx2 = 0 (d/dx1 = 1: the weights themselves)


COMPOSITE_GRADS = [
    ("bessel_i0", tf.math.bessel_i0, [SIGNED]),
    ("bessel_i1", tf.math.bessel_i1, [SIGNED]),
    ("lbeta", tf.lbeta, [POS]),
    ("polyval", lambda x: tf.math.polyval([2.0, -1.0, 0.5], x), [SIGNED]),
    ("polyval_tensor_coeffs", lambda c, x: tf.math.polyval([c, tf.constant(1.0, tf.float64)], x),
     [np.array([0.5, 2.0, -1.0]), SIGNED]),
]


@pytest.mark.parametrize("name,fn,inputs", COMPOSITE_GRADS, ids=[c[0] for c in COMPOSITE_GRADS])
def test_composite_gradients(name, fn, inputs):
    check_gradients(fn, inputs, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("axis", [0, 1])
def test_cumulative_logsumexp_gradient(axis, exclusive, reverse):
    x = np.array([[0.5, -1.0, 2.0, 0.3], [3.0, 1.0, -2.0, 0.8], [0.1, 0.2, 0.3, -0.4]])
    def build(t):
        out = tf.math.cumulative_logsumexp(t, axis=axis, exclusive=exclusive, reverse=reverse)
        if not exclusive:
            return out
        keep = slice(None, -1) if reverse else slice(1, None)  # leave out the -inf of the empty sum
        return out[keep] if axis == 0 else out[:, keep]

    check_gradients(build, [x], rtol=1e-6, atol=1e-8)


def _gelu(x):
    return 0.5 * x * (1.0 + tf.erf(x / math.sqrt(2.0)))


def test_gelu_with_erf_matches_the_normal_cdf_and_trains():
    check_gradients(_gelu, [SIGNED], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(run(_gelu(tf.constant(SIGNED))), SIGNED * sp.ndtr(SIGNED), rtol=1e-12)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((64, 3)).astype(np.float32)
    ys = (np.sin(xs[:, :1]) + xs[:, 1:2] * xs[:, 2:3]).astype(np.float32)
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    h = _gelu(tf.layers.dense(x, 16))
    loss = tf.reduce_mean(tf.square(tf.layers.dense(h, 1) - y))
    train = tf.train.AdamOptimizer(0.02).minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        first = s.run(loss, {x: xs, y: ys})
        for _ in range(300):
            s.run(train, {x: xs, y: ys})
        last = s.run(loss, {x: xs, y: ys})
    assert np.isfinite(last) and last < 0.2 * first
