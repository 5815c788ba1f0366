"""tf.keras.optimizers (TF 1.15's OptimizerV2 classes): each update rule against a numpy transcription of TF's
formulas over several steps, variable and slot names, decay, clipping, constraints, lookup by name."""
import numpy as np
import pytest

import tensorfleet as tf

K = tf.keras.backend
O = tf.keras.optimizers
W0 = np.array([[0.5, -1.0], [2.0, 0.25]])
TARGET = np.array([[1.0, 0.0], [-1.0, 3.0]])
STEPS = 4


def run_steps(opt, steps=STEPS, constraint=None):
    """Minimises 0.5 * |w - TARGET|^2 (gradient w - TARGET) for `steps` steps; returns w after each."""
    w = tf.Variable(W0, dtype=tf.float64, name="w", constraint=constraint)
    loss = 0.5 * tf.reduce_sum(tf.square(w - TARGET))
    step = opt.get_updates(loss, [w])
    sess = K.get_session()
    sess.run(w.initializer)
    out = []
    for _ in range(steps):
        sess.run(step)
        out.append(sess.run(w))
    return out, w


def numpy_steps(update, state, steps=STEPS):
    w = W0.copy()
    out = []
    for t in range(1, steps + 1):
        g = w - TARGET
        w = update(w, g, t, state)
        out.append(w.copy())
    return out


def sgd_ref(lr, momentum=0.0, nesterov=False, decay=0.0):
    def update(w, g, t, s):
        lr_t = lr / (1 + decay * (t - 1))
        if not momentum:
            return w - lr_t * g
        s["a"] = momentum * s.get("a", 0.0) - lr_t * g
        return w + (momentum * s["a"] - lr_t * g if nesterov else s["a"])
    return update


def adam_ref(lr=0.001, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False):
    def update(w, g, t, s):
        s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        if amsgrad:
            s["vhat"] = np.maximum(s.get("vhat", 0.0), s["v"])
            return w - lr_t * s["m"] / (np.sqrt(s["vhat"]) + eps)
        return w - lr_t * s["m"] / (np.sqrt(s["v"]) + eps)
    return update


def adamax_ref(lr=0.001, b1=0.9, b2=0.999, eps=1e-7):
    def update(w, g, t, s):
        s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        s["u"] = np.maximum(b2 * s.get("u", 0.0), np.abs(g))
        return w - lr / (1 - b1 ** t) * s["m"] / (s["u"] + eps)
    return update


def nadam_ref(lr=0.001, b1=0.9, b2=0.999, eps=1e-7, decay=0.004):
    def update(w, g, t, s):
        mu_t = b1 * (1 - 0.5 * 0.96 ** (decay * t))
        mu_next = b1 * (1 - 0.5 * 0.96 ** (decay * (t + 1)))
        s["sched"] = s.get("sched", 1.0) * mu_t
        s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g * g
        m_bar = (1 - mu_t) * g / (1 - s["sched"]) + mu_next * s["m"] / (1 - s["sched"] * mu_next)
        return w - lr * m_bar / (np.sqrt(s["v"] / (1 - b2 ** t)) + eps)
    return update


def rmsprop_ref(lr=0.001, rho=0.9, momentum=0.0, eps=1e-7, centered=False):
    def update(w, g, t, s):
        s["ms"] = rho * s.get("ms", 0.0) + (1 - rho) * g * g
        denom = s["ms"]
        if centered:
            s["mg"] = rho * s.get("mg", 0.0) + (1 - rho) * g
            denom = s["ms"] - s["mg"] ** 2
        if momentum:  # TF's ApplyRMSProp kernels: epsilon inside the square root
            s["mom"] = momentum * s.get("mom", 0.0) + lr * g / np.sqrt(denom + eps)
            return w - s["mom"]
        return w - lr * g / (np.sqrt(denom) + eps)
    return update


def adagrad_ref(lr=0.001, init=0.1, eps=1e-7):
    def update(w, g, t, s):
        s["acc"] = s.get("acc", init) + g * g
        return w - lr * g / (np.sqrt(s["acc"]) + eps)
    return update


def adadelta_ref(lr=0.001, rho=0.95, eps=1e-7):
    def update(w, g, t, s):
        s["acc"] = rho * s.get("acc", 0.0) + (1 - rho) * g * g
        upd = np.sqrt(s.get("upd", 0.0) + eps) / np.sqrt(s["acc"] + eps) * g
        s["upd"] = rho * s.get("upd", 0.0) + (1 - rho) * upd * upd
        return w - lr * upd
    return update


def f32(v):
    """Hyper-parameters live in float32 variables (as in TF), so a float64 model sees them rounded."""
    return float(np.float32(v))


CASES = [
    (lambda: O.SGD(0.1), sgd_ref(f32(0.1))),
    (lambda: O.SGD(0.1, momentum=0.9), sgd_ref(f32(0.1), f32(0.9))),
    (lambda: O.SGD(0.1, momentum=0.5, nesterov=True), sgd_ref(f32(0.1), 0.5, True)),
    (lambda: O.SGD(0.2, decay=0.5), sgd_ref(f32(0.2), decay=0.5)),
    (lambda: O.Adam(0.1), adam_ref(f32(0.1), f32(0.9), f32(0.999))),
    (lambda: O.Adam(0.1, beta_1=0.5, amsgrad=True), adam_ref(f32(0.1), 0.5, f32(0.999), amsgrad=True)),
    (lambda: O.Adamax(0.1), adamax_ref(f32(0.1), f32(0.9), f32(0.999))),
    (lambda: O.RMSprop(0.1), rmsprop_ref(f32(0.1), f32(0.9))),
    (lambda: O.RMSprop(0.1, momentum=0.5), rmsprop_ref(f32(0.1), f32(0.9), momentum=0.5)),
    (lambda: O.RMSprop(0.1, centered=True), rmsprop_ref(f32(0.1), f32(0.9), centered=True)),
    (lambda: O.Adagrad(0.1), adagrad_ref(f32(0.1))),
    (lambda: O.Adadelta(1.0), adadelta_ref(1.0, f32(0.95))),
]


@pytest.mark.parametrize("make,ref", CASES)
def test_update_rules_match_tf_formulas(make, ref):
    got, _ = run_steps(make())
    want = numpy_steps(ref, {})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def test_nadam_in_float32():
    """Nadam's momentum cache is a float32 variable that only float32 models advance (as in TF)."""
    w = tf.Variable(W0.astype(np.float32), name="w")
    step = O.Nadam(0.1).get_updates(0.5 * tf.reduce_sum(tf.square(w - TARGET.astype(np.float32))), [w])
    sess = K.get_session()
    sess.run(w.initializer)
    want = numpy_steps(nadam_ref(0.1), {})
    for expected in want:
        sess.run(step)
        np.testing.assert_allclose(sess.run(w), expected, rtol=2e-5, atol=1e-6)


def test_defaults_are_keras_1_15s():
    assert O.SGD().get_config() == {"name": "SGD", "learning_rate": 0.01, "decay": 0.0, "momentum": 0.0,
                                    "nesterov": False}
    adam = O.Adam().get_config()
    assert (adam["learning_rate"], adam["beta_1"], adam["beta_2"], adam["epsilon"], adam["amsgrad"]) == \
        (0.001, 0.9, 0.999, 1e-7, False)
    rms = O.RMSprop().get_config()
    assert (rms["learning_rate"], rms["rho"], rms["momentum"], rms["epsilon"]) == (0.001, 0.9, 0.0, 1e-7)
    assert O.Adagrad().get_config()["initial_accumulator_value"] == 0.1
    assert O.Adadelta().get_config()["rho"] == 0.95


def test_variable_and_slot_names():
    opt = O.Adam()
    w = tf.Variable(W0, name="w")
    with tf.name_scope("training"):
        step = opt.get_updates(tf.reduce_sum(w * w), [w])
    K.get_session().run(w.initializer)
    K.get_session().run(step)
    assert [v.name for v in opt.weights] == ["training/Adam/iter:0", "training/Adam/w/m:0", "training/Adam/w/v:0"]
    names = {v.name for v in tf.global_variables()}
    assert {"training/Adam/learning_rate:0", "training/Adam/beta_1:0", "training/Adam/beta_2:0",
            "training/Adam/decay:0"} <= names
    assert K.get_value(opt.iterations) == 1


def test_learning_rate_is_a_settable_hyper_parameter():
    opt = O.SGD(learning_rate=0.5)
    assert K.get_value(opt.lr) == 0.5  # reading it creates the hyper-parameter variables, as in TF
    opt.lr = 0.1  # assigned to the variable
    got, _ = run_steps(opt, steps=1)
    np.testing.assert_allclose(got[0], W0 - f32(0.1) * (W0 - TARGET))
    assert K.get_value(opt.learning_rate) == pytest.approx(0.1)
    opt.learning_rate = 0.25  # afterwards: assigned to the variable
    assert K.get_value(opt.lr) == 0.25
    assert O.SGD(lr=0.3).get_config()["learning_rate"] == 0.3


def test_clipnorm_clipvalue_and_constraints():
    g = W0 - TARGET
    got, _ = run_steps(O.SGD(1.0, clipvalue=0.5), steps=1)
    np.testing.assert_allclose(got[0], W0 - np.clip(g, -0.5, 0.5))
    got, _ = run_steps(O.SGD(1.0, clipnorm=1.0), steps=1)
    np.testing.assert_allclose(got[0], W0 - g / np.linalg.norm(g))
    got, _ = run_steps(O.SGD(0.1), steps=1, constraint=lambda w: tf.clip_by_value(w, 0.0, 1.0))
    np.testing.assert_allclose(got[0], np.clip(W0 - 0.1 * g, 0, 1))


def test_lookup_serialize_and_errors():
    assert isinstance(O.get("adam"), O.Adam) and isinstance(O.get("RMSprop"), O.RMSprop)
    assert isinstance(O.get({"class_name": "SGD", "config": {"learning_rate": 0.3}}), O.SGD)
    assert O.serialize(O.SGD(0.3))["config"]["learning_rate"] == 0.3
    wrapped = O.get(tf.train.GradientDescentOptimizer(0.1))
    assert isinstance(wrapped, O.TFOptimizer)
    with pytest.raises(ValueError, match="Unknown optimizer"):
        O.get("adamw")
    with pytest.raises(TypeError, match="Unexpected keyword argument"):
        O.SGD(beta=1)
    with pytest.raises(ValueError, match="`momentum` must be between"):
        O.SGD(momentum=2.0)
    w = tf.Variable(1.0)
    with pytest.raises(ValueError, match="has `None` for gradient"):
        O.SGD().get_updates(tf.constant(1.0) + 0 * tf.stop_gradient(w), [w])


def test_gathered_rows_indexed_slices_gradients_are_summed():
    table = tf.Variable(np.ones((5, 2), np.float32), name="emb")
    step = O.SGD(0.5).get_updates(tf.reduce_sum(tf.gather(table, [0, 2, 2])), [table])
    sess = K.get_session()
    sess.run(table.initializer)
    sess.run(step)
    np.testing.assert_array_equal(sess.run(table), [[0.5, 0.5], [1, 1], [0, 0], [1, 1], [1, 1]])
