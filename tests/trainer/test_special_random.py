"""tf.random_gamma / tf.random_poisson (ops/special_random_ops.py): shapes, dtypes, TF1's seed rule, sample
moments within 6 standard errors of the documented ones, the Gamma sample's gradient w.r.t. alpha against
central differences of scipy's inverse CDF at the drawn quantile (TF's implicit reparameterization) and w.r.t.
beta by finite differences in fresh seeded sessions; and the special functions on a (fake) GPU, equal to the CPU."""
import numpy as np
import pytest
import scipy.special as sp

import fake_cupy
import tensorfleet as tf
from gradcheck import numeric_grad
from tensorfleet.kernels import special_kernels

N = 100_000


def run(*fetches, feed=None):
    with tf.Session() as s:
        out = s.run(list(fetches), feed)
    return out[0] if len(out) == 1 else out


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_shapes_dtypes_and_names():
    g = tf.random_gamma([5, 2], [1.0, 2.0, 3.0], beta=[[1.0], [2.0], [3.0], [4.0]], seed=1)
    assert g.shape.as_list() == [5, 2, 4, 3] and g.dtype == tf.float32
    p = tf.random_poisson([1.0, 3.0], [4], dtype=tf.int64, seed=2)
    assert p.shape.as_list() == [4, 2] and p.dtype == tf.int64
    shape = tf.placeholder(tf.int32, [2])
    d = tf.random.gamma(shape, tf.constant([0.5, 2.0], tf.float64), dtype=tf.float64, seed=3)
    q = tf.random.poisson(tf.constant([[2, 5]], tf.int32), shape, seed=4)  # an int rate, float32 samples
    assert d.shape.as_list() == [None, None, 2] and q.shape.as_list() == [None, None, 1, 2]
    gv, pv, dv, qv = run(g, p, d, q, feed={shape: [3, 1]})
    assert gv.shape == (5, 2, 4, 3) and gv.dtype == np.float32 and (gv > 0).all()
    assert pv.dtype == np.int64 and (pv >= 0).all()
    assert dv.shape == (3, 1, 2) and dv.dtype == np.float64
    assert qv.shape == (3, 1, 1, 2) and qv.dtype == np.float32 and (qv == np.round(qv)).all()
    with pytest.raises(ValueError, match="random_gamma"):
        tf.random_gamma([2], 1.0, dtype=tf.int32)
    with pytest.raises(TypeError, match="random_poisson"):
        tf.random_poisson(1.0, [2], dtype=tf.bool)


def test_invalid_parameters():
    assert np.isnan(run(tf.random_gamma([3], [-1.0, 0.0], seed=1))).all()  # no Gamma distribution: NaN
    with pytest.raises(tf.errors.InvalidArgumentError, match="rate must be >= 0"):
        run(tf.random_poisson([1.0, -2.0], [3], seed=1))


def test_small_alpha_samples_are_clamped_to_the_smallest_normal_float():
    """TF 1.15: maximum(finfo(dtype).tiny, sample / beta) -- Gamma(0.01) underflows float32 about 42% of the time."""
    v = run(tf.random_gamma([2000], 0.01, seed=5))
    tiny = np.finfo(np.float32).tiny
    assert v.min() == tiny and (v == tiny).mean() > 0.3


def _draws(make, graph_seed, op_seed, runs=2):
    g = tf.Graph()
    with g.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        t = make(op_seed)
        with tf.Session(graph=g) as s:
            return [s.run(t) for _ in range(runs)]


@pytest.mark.parametrize("make", [lambda seed: tf.random_gamma([50], [0.7, 3.0], seed=seed),
                                  lambda seed: tf.random_poisson([0.7, 30.0], [50], seed=seed)],
                         ids=["gamma", "poisson"])
def test_seeds_reproduce_like_the_other_random_ops(make):
    a, b = _draws(make, 7, 11), _draws(make, 7, 11)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], a[1])  # each run draws fresh values
    assert not np.array_equal(a[0], _draws(make, 7, 12)[0])
    assert not np.array_equal(a[0], _draws(make, 8, 11)[0])
    np.testing.assert_array_equal(_draws(make, None, 11)[0], _draws(make, None, 11)[0])  # op seed alone fixes it
    assert not np.array_equal(_draws(make, None, None)[0], _draws(make, None, None)[0])


def test_gamma_moments():
    alpha, beta = np.array([0.5, 2.0, 9.0]), np.array([1.0, 2.0, 0.5])
    v = run(tf.random_gamma([N], alpha, beta, dtype=tf.float64, seed=21))
    mean, var = alpha / beta, alpha / beta ** 2
    # standard errors: of the mean sqrt(var / N); of the sample variance var * sqrt((2 + excess kurtosis) / N),
    # with the Gamma's excess kurtosis 6 / alpha
    assert (np.abs(v.mean(0) - mean) < 6 * np.sqrt(var / N)).all(), (v.mean(0), mean)
    assert (np.abs(v.var(0) - var) < 6 * var * np.sqrt((2 + 6 / alpha) / N)).all(), (v.var(0), var)


def test_poisson_moments():
    lam = np.array([0.5, 4.0, 30.0])
    v = run(tf.random_poisson(lam, [N], dtype=tf.float64, seed=22))
    assert (v == np.round(v)).all() and v.min() == 0
    assert (np.abs(v.mean(0) - lam) < 6 * np.sqrt(lam / N)).all(), (v.mean(0), lam)
    assert (np.abs(v.var(0) - lam) < 6 * lam * np.sqrt((2 + 1 / lam) / N)).all(), (v.var(0), lam)


def test_random_gamma_gradient_is_the_implicit_reparameterization():
    """d sample / d alpha at the sample's fixed CDF value u: central differences of scipy.special.gammaincinv(alpha,
    u); d/d beta by central differences of the seeded graph itself (each evaluation a fresh session)."""
    alpha0, beta0 = np.array([0.5, 1.5, 4.0]), np.array([[1.0], [2.5]])
    w = np.random.default_rng(0).standard_normal((5, 2, 3))
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(3)
        a, b = tf.placeholder(tf.float64, [3]), tf.placeholder(tf.float64, [2, 1])
        sample = tf.random_gamma([5], a, b, dtype=tf.float64, seed=4)
        loss = tf.reduce_sum(sample * w)
        ga, gb = tf.gradients(loss, [a, b])

    def fresh(fetch, av, bv):
        with tf.Session(graph=g) as s:
            return s.run(fetch, {a: av, b: bv})

    sv, gav, gbv = fresh([sample, ga, gb], alpha0, beta0)
    u = sp.gammainc(alpha0, sv * beta0)  # the quantile of each standard Gamma draw
    numeric_a = numeric_grad(lambda al: float(np.sum(w * sp.gammaincinv(al, u) / beta0)), alpha0)
    np.testing.assert_allclose(gav, numeric_a, rtol=1e-5, atol=1e-8)
    numeric_b = numeric_grad(lambda bv: float(fresh(loss, alpha0, bv)), beta0)
    np.testing.assert_allclose(gbv, numeric_b, rtol=1e-5, atol=1e-8)


def test_random_gamma_grad_kernel_in_the_tails():
    alpha = np.array([0.05, 0.5, 3.0, 50.0, 50.0])
    x = np.array([1e-6, 4.0, 0.2, 30.0, 75.0])
    got = special_kernels.random_gamma_grad_host(alpha, x)
    u = sp.gammainc(alpha, x)
    h = 1e-6 * alpha
    ref = (sp.gammaincinv(alpha + h, u) - sp.gammaincinv(alpha - h, u)) / (2 * h)
    np.testing.assert_allclose(got, ref, rtol=1e-5)


# -- on a (fake) GPU ------------------------------------------------------------
def _special_graph():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        x = tf.constant(np.linspace(0.2, 3.0, 8).reshape(2, 4))
        a = tf.constant([[0.5], [2.0]], tf.float64)
        outs = [tf.erf(x), tf.erfc(x), tf.lgamma(x), tf.digamma(x), tf.polygamma(a + 0.5, x),
                tf.igamma(a, x), tf.igammac(a, x), tf.zeta(a + 1.0, x), tf.betainc(x, x + 1.0, x / 4.0),
                tf.math.bessel_i0e(x), tf.math.bessel_i1(x), tf.lbeta(x), tf.math.nextafter(x, 0.0),
                tf.math.cumulative_logsumexp(x, axis=1, reverse=True),
                tf.random_gamma([3], a, dtype=tf.float64, seed=1), tf.random_poisson([2.0, 5.0], [3], seed=2)]
        loss = tf.add_n([tf.reduce_sum(o) for o in outs[:14]])
        outs += tf.gradients(loss, [x, a])
    return g, outs


def _run_special(gpu_on):
    g, outs = _special_graph()
    cfg = tf.ConfigProto() if gpu_on else tf.ConfigProto(device_count={"GPU": 0})
    with tf.Session(graph=g, config=cfg) as s:
        return s.run(outs), s.device_placement()


def _fake_cupyx_special(calls):
    """A stand-in for cupyx.scipy.special: scipy on the fake device arrays, results on the device."""
    class Mod:
        def __getattr__(self, name):
            if name not in ("erf", "gammaln", "gammainc"):  # as if cupyx lacked the others: they go to the host
                raise AttributeError(name)

            def fn(*args):
                calls.append(name)
                assert all(isinstance(v, fake_cupy.ndarray) for v in args)
                return fake_cupy.asarray(getattr(sp, name)(*[v.get() for v in args]))
            return fn
    return Mod()


@pytest.mark.parametrize("with_cupyx", [False, True])
def test_special_functions_and_gradients_on_a_fake_gpu_equal_the_cpu(monkeypatch, with_cupyx):
    fake_cupy.install(monkeypatch, devices=1)
    calls = []
    if with_cupyx:
        monkeypatch.setattr(special_kernels, "_device_special", lambda xp: _fake_cupyx_special(calls))
    cpu, _ = _run_special(False)
    gpu, placement = _run_special(True)
    on_gpu = {name.rsplit("/", 1)[-1] for name, dev in placement.items() if "GPU" in dev}
    assert {"Erf", "Igamma", "Betainc", "CumulativeLogsumexp", "IgammaGradA"} <= on_gpu
    for c, gv in zip(cpu, gpu):
        np.testing.assert_allclose(gv, c, rtol=1e-12, atol=1e-12)
    assert sorted(set(calls)) == (["erf", "gammainc", "gammaln"] if with_cupyx else [])


def test_ops_in_tensorflows_graphdef_form():
    """TF writes RandomGamma(shape, alpha) with the dtype in attr T and RandomPoissonV2(shape, rate), no `shape`
    attr: an imported GraphDef's nodes take that form (graph_def.import_graph_def creates ops from the attrs)."""
    g = tf.get_default_graph()
    shape = tf.constant([4000], tf.int32)
    alpha = tf.constant([2.0, 5.0], tf.float64)
    gamma = g.create_op("RandomGamma", [shape, alpha], {"T": tf.float64, "S": tf.int32, "seed": 1, "seed2": 2})
    poisson = g.create_op("RandomPoissonV2", [shape, alpha], {"dtype": tf.int32, "R": tf.float64, "S": tf.int32,
                                                              "seed": 1, "seed2": 3})
    assert gamma.outputs[0].shape.as_list() == [4000, 2] and poisson.outputs[0].dtype == tf.int32
    gv, pv = run(gamma.outputs[0], poisson.outputs[0])
    assert gv.dtype == np.float64 and pv.dtype == np.int32
    n = 4000  # means within 6 standard errors (variance alpha for both distributions)
    assert (np.abs(gv.mean(0) - [2.0, 5.0]) < 6 * np.sqrt(np.array([2.0, 5.0]) / n)).all()
    assert (np.abs(pv.mean(0) - [2.0, 5.0]) < 6 * np.sqrt(np.array([2.0, 5.0]) / n)).all()
