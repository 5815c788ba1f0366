"""Optimizers vs. their update rules written out in numpy (an independent oracle), slots, minimize semantics."""
import numpy as np
import pytest

import tensorfleet as tf

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 3)).astype(np.float32)
Y = RNG.standard_normal((8, 2)).astype(np.float32)
W0 = RNG.standard_normal((3, 2)).astype(np.float32)
B0 = np.array([0.1, -0.2], np.float32)
STEPS = 5


def _grads(w, b):
    """d/dw, d/db of 0.5 * sum((X @ w + b - Y)^2), in float64."""
    r = X.astype(np.float64) @ w + b - Y
    return X.T.astype(np.float64) @ r, r.sum(0)


def _model(dtype=tf.float32):
    x = tf.constant(X.astype(dtype.np_dtype))
    y = tf.constant(Y.astype(dtype.np_dtype))
    w = tf.Variable(W0.astype(dtype.np_dtype), name="w")
    b = tf.Variable(B0.astype(dtype.np_dtype), name="b")
    r = tf.matmul(x, w) + b - y
    loss = tf.reduce_sum(r * r) * 0.5
    return w, b, loss


def _run(opt, steps=STEPS, feeds=None, dtype=tf.float32):
    w, b, loss = _model(dtype)
    train = opt.minimize(loss)
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(steps):
            sess.run(train, feeds(i) if feeds else None)
            out.append(sess.run([w, b]))
    return out


def _oracle(step_fn, state_init, steps=STEPS, lrs=None):
    params = [W0.astype(np.float64), B0.astype(np.float64)]
    states = [state_init(p) for p in params]
    out = []
    for t in range(1, steps + 1):
        grads = _grads(*params)
        for i, g in enumerate(grads):
            params[i], states[i] = step_fn(params[i], g, states[i], t, lrs[t - 1] if lrs else None)
        out.append([p.copy() for p in params])
    return out


def _assert_close(got, want, rtol=2e-5, atol=2e-6):
    assert len(got) == len(want)
    for (gw, gb), (ww, wb) in zip(got, want):
        np.testing.assert_allclose(gw, ww, rtol=rtol, atol=atol)
        np.testing.assert_allclose(gb, wb, rtol=rtol, atol=atol)


def test_gradient_descent_matches_numpy():
    lr = 0.05
    want = _oracle(lambda p, g, s, t, _: (p - lr * g, s), lambda p: None)
    _assert_close(_run(tf.train.GradientDescentOptimizer(lr)), want)


def test_gradient_descent_float64_variables():
    lr = float(np.float32(0.05))  # like TF, a Python learning rate becomes a float32 tensor, then cast
    want = _oracle(lambda p, g, s, t, _: (p - lr * g, s), lambda p: None)
    got = _run(tf.train.GradientDescentOptimizer(lr), dtype=tf.float64)
    assert got[0][0].dtype == np.float64
    _assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_tensor_learning_rate_fed_per_step():
    lrs = [0.1, 0.05, 0.0, 0.02, 0.01]
    lr_t = tf.placeholder(tf.float32, [], name="lr")
    want = _oracle(lambda p, g, s, t, lr: (p - lr * g, s), lambda p: None, lrs=lrs)
    _assert_close(_run(tf.train.GradientDescentOptimizer(lr_t), feeds=lambda i: {lr_t: lrs[i]}), want)


def test_callable_learning_rate():
    want = _oracle(lambda p, g, s, t, _: (p - 0.05 * g, s), lambda p: None)
    _assert_close(_run(tf.train.GradientDescentOptimizer(lambda: 0.05)), want)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_matches_numpy(nesterov):
    lr, mu = 0.05, 0.9

    def step(p, g, accum, t, _):
        accum = accum * mu + g
        if nesterov:
            return p - (lr * g + lr * mu * accum), accum
        return p - lr * accum, accum

    want = _oracle(step, np.zeros_like)
    _assert_close(_run(tf.train.MomentumOptimizer(lr, mu, use_nesterov=nesterov)), want)


def test_adam_matches_numpy_and_beta_powers():
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8

    def step(p, g, s, t, _):
        m, v = s
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        return p - lr_t * m / (np.sqrt(v) + eps), (m, v)

    want = _oracle(step, lambda p: (np.zeros_like(p), np.zeros_like(p)))
    opt = tf.train.AdamOptimizer(lr, b1, b2, eps)
    w, b, loss = _model()
    train = opt.minimize(loss)
    got = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(STEPS):
            sess.run(train)
            got.append(sess.run([w, b]))
        b1p, b2p = sess.run(opt._get_beta_accumulators())
    _assert_close(got, want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose([b1p, b2p], [b1 ** (STEPS + 1), b2 ** (STEPS + 1)], rtol=1e-6)


def test_adam_with_tensor_learning_rate():
    lrs = [0.01, 0.02, 0.005, 0.01, 0.03]
    b1, b2, eps = 0.9, 0.999, 1e-8

    def step(p, g, s, t, lr):
        m, v = s
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        return p - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps), (m, v)

    lr_t = tf.placeholder(tf.float32, [])
    want = _oracle(step, lambda p: (np.zeros_like(p), np.zeros_like(p)), lrs=lrs)
    _assert_close(_run(tf.train.AdamOptimizer(lr_t), feeds=lambda i: {lr_t: lrs[i]}), want, rtol=1e-4, atol=1e-6)


def test_adagrad_matches_numpy():
    lr = 0.1

    def step(p, g, accum, t, _):
        accum = accum + g * g
        return p - lr * g / np.sqrt(accum), accum

    want = _oracle(step, lambda p: np.full_like(p, 0.1))
    _assert_close(_run(tf.train.AdagradOptimizer(lr)), want)


def test_adagrad_rejects_nonpositive_accumulator():
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive: 0.0"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_matches_numpy(centered):
    lr, decay, mu, eps = 0.01, 0.9, 0.5, 1e-10

    def step(p, g, s, t, _):
        ms, mg, mom = s
        ms = decay * ms + (1 - decay) * g * g
        if centered:
            mg = decay * mg + (1 - decay) * g
            denom = ms - mg * mg + eps
        else:
            denom = ms + eps
        mom = mu * mom + lr * g / np.sqrt(denom)
        return p - mom, (ms, mg, mom)

    want = _oracle(step, lambda p: (np.ones_like(p), np.zeros_like(p), np.zeros_like(p)))
    got = _run(tf.train.RMSPropOptimizer(lr, decay=decay, momentum=mu, epsilon=eps, centered=centered))
    _assert_close(got, want, rtol=1e-4, atol=1e-6)


def test_slot_names_and_collections_follow_tf():
    w, b, loss = _model()
    cases = [(tf.train.MomentumOptimizer(0.1, 0.9), ["momentum"], ["w/Momentum"]),
             (tf.train.AdamOptimizer(), ["m", "v"], ["w/Adam", "w/Adam_1"]),
             (tf.train.AdagradOptimizer(0.1), ["accumulator"], ["w/Adagrad"]),
             (tf.train.RMSPropOptimizer(0.1), ["momentum", "rms"], ["w/RMSProp", "w/RMSProp_1"]),
             (tf.train.RMSPropOptimizer(0.1, centered=True, name="C"), ["mg", "momentum", "rms"],
              ["w/C", "w/C_1", "w/C_2"])]
    for opt, slot_names, var_names in cases:
        opt.minimize(loss)
        assert opt.get_slot_names() == slot_names
        assert sorted(opt.get_slot(w, s).op.name for s in slot_names) == var_names
    rms = cases[4][0]
    assert (rms.get_slot(w, "rms").op.name, rms.get_slot(w, "mg").op.name,
            rms.get_slot(w, "momentum").op.name) == ("w/C", "w/C_1", "w/C_2")
    assert cases[0][0].get_slot(w, "nope") is None
    adam = cases[1][0]
    assert [v.op.name for v in adam.variables()] == ["b/Adam", "b/Adam_1", "beta1_power", "beta2_power",
                                                     "w/Adam", "w/Adam_1"]
    trainable = set(tf.trainable_variables())
    assert trainable == {w, b}
    glob = tf.global_variables()
    for v in adam.variables():
        assert v in glob and not v.trainable
    slot = adam.get_slot(w, "m")
    assert slot.shape.as_list() == [3, 2] and slot.dtype == tf.float32
    assert slot.op.colocation_groups() == w.op.colocation_groups()


def test_minimize_with_global_step_increments_after_update():
    w, b, loss = _model()
    gs = tf.train.get_or_create_global_step()
    opt = tf.train.GradientDescentOptimizer(0.05)
    train = opt.minimize(loss, global_step=gs)
    assert isinstance(train, tf.Operation)
    assert (train.name, train.type) == ("GradientDescent", "AssignAdd")
    update = train.control_inputs
    assert [c.name for c in update] == ["GradientDescent/update"]
    applies = sorted(c.name for c in update[0].control_inputs)
    assert applies == ["GradientDescent/update_b/ApplyGradientDescent",
                       "GradientDescent/update_w/ApplyGradientDescent"]
    assert train in tf.get_collection(tf.GraphKeys.TRAIN_OP)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        assert tf.train.global_step(sess, gs) == 3
        assert sess.run(gs).dtype == np.int64


def test_minimize_without_global_step_is_named_group():
    w, b, loss = _model()
    train = tf.train.AdamOptimizer().minimize(loss)
    assert (train.name, train.type) == ("Adam", "NoOp")
    train2 = tf.train.AdamOptimizer(name="Adam").minimize(loss, name="custom")
    assert train2.name == "custom"
    assert tf.get_default_graph().get_operation_by_name("beta1_power_1")


def test_var_list_restricts_updates_and_none_gradients_are_skipped():
    w, b, loss = _model()
    unused = tf.Variable(np.ones(2, np.float32), name="unused")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[w, unused])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        wv, bv, uv = sess.run([w, b, unused])
    gw, _ = _grads(W0.astype(np.float64), B0.astype(np.float64))
    np.testing.assert_allclose(wv, W0 - 0.1 * gw, rtol=1e-5)
    np.testing.assert_array_equal(bv, B0)
    np.testing.assert_array_equal(uv, np.ones(2))


def test_no_gradients_for_any_variable_raises():
    w, b, loss = _model()
    other = tf.Variable(np.ones(2, np.float32), name="other")
    with pytest.raises(ValueError, match="No gradients provided for any variable, check your graph for ops "
                                         "that do not support gradients"):
        tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[other])
    with pytest.raises(ValueError, match="No gradients provided for any variable: "):
        tf.train.GradientDescentOptimizer(0.1).apply_gradients([(None, other)])
    with pytest.raises(ValueError, match="No variables provided."):
        tf.train.GradientDescentOptimizer(0.1).apply_gradients([])


def test_compute_gradients_and_apply_gradients():
    w, b, loss = _model()
    opt = tf.train.GradientDescentOptimizer(0.1)
    gv = opt.compute_gradients(loss)
    assert [v for _, v in gv] == [w, b]
    assert all(isinstance(g, tf.Tensor) for g, _ in gv)
    scaled = [(g * 2.0, v) for g, v in gv]
    train = opt.apply_gradients(scaled, name="scaled")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        wv = sess.run(w)
    gw, _ = _grads(W0.astype(np.float64), B0.astype(np.float64))
    np.testing.assert_allclose(wv, W0 - 0.2 * gw, rtol=1e-5)


def test_integer_loss_is_rejected():
    v = tf.Variable(np.ones(2, np.int32), name="iv")
    with pytest.raises(ValueError, match="Invalid type"):
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(v))


@pytest.mark.parametrize("make_opt", [lambda: tf.train.GradientDescentOptimizer(0.05),
                                      lambda: tf.train.MomentumOptimizer(0.02, 0.9),
                                      lambda: tf.train.AdamOptimizer(0.05),
                                      lambda: tf.train.AdagradOptimizer(0.3),
                                      lambda: tf.train.RMSPropOptimizer(0.01)])
def test_training_reduces_loss(make_opt):
    w, b, loss = _model()
    train = make_opt().minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(60):
            sess.run(train)
        last = sess.run(loss)
    assert last < 0.5 * first


def test_gradient_descent_step_is_one_fused_op_and_never_writes_in_place():
    x = tf.placeholder(tf.float32, [None, 784])
    w = tf.Variable(np.full((784, 256), 0.5, np.float32), name="w")
    loss = tf.reduce_sum(tf.matmul(x, w))
    before = {op.name for op in tf.get_default_graph().get_operations()}
    gv = tf.train.GradientDescentOptimizer(0.1).compute_gradients(loss)
    mid = {op.name for op in tf.get_default_graph().get_operations()}
    train = tf.train.GradientDescentOptimizer(0.1).apply_gradients(gv)
    added = [op for op in tf.get_default_graph().get_operations() if op.name not in mid]
    assert before <= mid
    assert sorted(op.type for op in added) == ["ApplyGradientDescent", "Const", "NoOp"]
    apply = [op for op in added if op.type == "ApplyGradientDescent"][0]
    assert apply.get_attr("var") is w.op and len(apply.inputs) == 2
    assert apply.colocation_groups() == [b"loc:@w"]
    xv = np.ones((2, 784), np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        old = sess._resources.variables["w"]
        old_copy = old.copy()
        sess.run(train, {x: xv})
        new = sess._resources.variables["w"]
        assert new is not old
        np.testing.assert_array_equal(old, old_copy)  # the previous snapshot is untouched
        assert new.dtype == np.float32
        np.testing.assert_allclose(new, 0.5 - 0.1 * 2.0, rtol=1e-6)


def test_constraint_is_applied_after_update():
    w = tf.get_variable("cw", initializer=np.array([1.0, -1.0], np.float32),
                        constraint=lambda v: v * 0.0 + 0.25)
    loss = tf.reduce_sum(w * w)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), [0.25, 0.25])


def test_scalar_variable_and_two_adam_instances():
    s = tf.Variable(3.0, name="s")
    loss = s * s
    t1 = tf.train.AdamOptimizer(0.1).minimize(loss)
    t2 = tf.train.AdamOptimizer(0.1).minimize(loss)
    names = {op.name for op in tf.get_default_graph().get_operations()}
    assert {"beta1_power", "beta1_power_1", "s/Adam", "s/Adam_1", "s/Adam_2", "s/Adam_3"} <= names
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(t1)
        v1 = sess.run(s)
        sess.run(t2)
        v2 = sess.run(s)
    assert v1.shape == () and v1 == pytest.approx(2.9, abs=1e-5) and v2 == pytest.approx(2.8, abs=1e-5)
