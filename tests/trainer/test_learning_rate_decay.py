"""tf.train learning-rate schedules against TF 1.15's formulas evaluated in numpy."""
import math

import numpy as np
import pytest

import tensorfleet as tf

STEPS = [0, 1, 5, 10, 11, 19, 20, 25, 40]


def _values(make):
    step = tf.placeholder(tf.int64, [])
    lr = make(step)
    with tf.Session() as sess:
        return lr, [float(sess.run(lr, {step: s})) for s in STEPS]


@pytest.mark.parametrize("make,formula", [
    (lambda s: tf.train.exponential_decay(0.1, s, 10, 0.5), lambda s: 0.1 * 0.5 ** (s / 10)),
    (lambda s: tf.train.exponential_decay(0.1, s, 10, 0.5, staircase=True), lambda s: 0.1 * 0.5 ** (s // 10)),
    (lambda s: tf.train.natural_exp_decay(0.1, s, 10, 0.5), lambda s: 0.1 * math.exp(-0.5 * s / 10)),
    (lambda s: tf.train.inverse_time_decay(0.1, s, 10, 0.5, staircase=True), lambda s: 0.1 / (1 + 0.5 * (s // 10))),
    (lambda s: tf.train.polynomial_decay(0.1, s, 20, 0.01, power=2.0),
     lambda s: (0.1 - 0.01) * (1 - min(s, 20) / 20) ** 2 + 0.01),
    (lambda s: tf.train.polynomial_decay(0.1, s, 20, 0.01, cycle=True),
     lambda s: (0.1 - 0.01) * (1 - s / (20 * max(1, math.ceil(s / 20)))) + 0.01),
    (lambda s: tf.train.cosine_decay(0.1, s, 20, alpha=0.1),
     lambda s: 0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(s, 20) / 20)) + 0.1)),
    (lambda s: tf.train.piecewise_constant(s, [10, 20], [1.0, 0.5, 0.1]),
     lambda s: 1.0 if s <= 10 else 0.5 if s <= 20 else 0.1),
])
def test_schedule_matches_formula(make, formula):
    _, got = _values(make)
    np.testing.assert_allclose(got, [formula(s) for s in STEPS], rtol=1e-5)


def test_names_and_errors():
    step = tf.train.get_or_create_global_step()
    assert tf.train.exponential_decay(0.1, step, 10, 0.9).name == "ExponentialDecay:0"
    assert tf.train.exponential_decay(0.1, step, 10, 0.9, name="lr").name == "lr:0"
    with pytest.raises(ValueError, match="global_step is required"):
        tf.train.exponential_decay(0.1, None, 10, 0.9)
    with pytest.raises(ValueError, match="1 less than"):
        tf.train.piecewise_constant(step, [10], [1.0])


def test_optimizer_uses_decayed_rate_each_step():
    step = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(1.0, step, 2, 0.5, staircase=True)
    w = tf.Variable(0.0)
    train = tf.train.GradientDescentOptimizer(lr).minimize(-w, global_step=step)  # d(-w)/dw = -1: w += lr
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(6):
            sess.run(train)
        assert sess.run(w) == pytest.approx(2 * (1.0 + 0.5 + 0.25))
