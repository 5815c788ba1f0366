"""tf.train.AdadeltaOptimizer, ProximalGradientDescentOptimizer, ProximalAdagradOptimizer, AdagradDAOptimizer.

Oracles: TF 1.15's kernel formulas (training_ops.cc: ApplyAdadelta, ApplyProximalGradientDescent,
ApplyProximalAdagrad, ApplyAdagradDA) written out in float64 numpy below, and the values TF's own optimizer tests
publish (proximal_gradient_descent_test, proximal_adagrad_test, adagrad_da_test: two variables, constant gradients).
"""
import os

import numpy as np
import pytest

import fake_cupy
import tensorfleet as tf
from tensorfleet.train.checkpoint_io import read_checkpoint

RNG = np.random.default_rng(1)
X = RNG.standard_normal((8, 3))
Y = RNG.standard_normal((8, 2))
W0 = RNG.standard_normal((3, 2))
B0 = np.array([0.1, -0.2])
STEPS = 6


# -- the oracle: TF's kernels, one step on one variable, in float64 -------------------------------------------------
def _shrink(prox, lr, l1, l2):
    if l1 > 0:
        return np.sign(prox) * np.maximum(np.abs(prox) - lr * l1, 0.0) / (1.0 + lr * l2)
    return prox / (1.0 + lr * l2)


def adadelta_step(var, g, state, lr, rho, eps):
    accum, accum_update = state
    accum = rho * accum + (1 - rho) * g * g
    update = np.sqrt(accum_update + eps) / np.sqrt(accum + eps) * g
    accum_update = rho * accum_update + (1 - rho) * update * update
    return var - lr * update, (accum, accum_update)


def proximal_gd_step(var, g, state, lr, l1, l2):
    return _shrink(var - lr * g, lr, l1, l2), state


def proximal_adagrad_step(var, g, accum, lr, l1, l2):
    accum = accum + g * g
    lr_t = lr / np.sqrt(accum)
    return _shrink(var - lr_t * g, lr_t, l1, l2), accum


def adagrad_da_step(var, g, state, lr, l1, l2, t):
    g_acc, gg_acc = state
    g_acc, gg_acc = g_acc + g, gg_acc + g * g
    num = np.sign(g_acc) * np.maximum(np.abs(g_acc) - l1 * t, 0.0) if l1 > 0 else g_acc
    return -lr * num / (l2 * t * lr + np.sqrt(gg_acc)), (g_acc, gg_acc)


# -- a small least-squares problem ------------------------------------------------------------------------------------
def _grads(w, b):
    r = X @ w + b - Y
    return X.T @ r, r.sum(0)


def _model(dtype):
    w = tf.Variable(W0.astype(dtype.np_dtype), name="w")
    b = tf.Variable(B0.astype(dtype.np_dtype), name="b")
    r = tf.matmul(tf.constant(X.astype(dtype.np_dtype)), w) + b - tf.constant(Y.astype(dtype.np_dtype))
    return w, b, tf.reduce_sum(r * r) * 0.5


def _oracle(step, init, steps=STEPS):
    params = [W0.copy(), B0.copy()]
    states = [init(p) for p in params]
    out = []
    for t in range(1, steps + 1):
        for i, g in enumerate(_grads(*params)):
            params[i], states[i] = step(params[i], g, states[i], t)
        out.append([p.copy() for p in params])
    return out


def _train(make_opt, dtype, steps=STEPS, with_global_step=False):
    w, b, loss = _model(dtype)
    gs = tf.train.get_or_create_global_step() if with_global_step else None
    opt = make_opt(gs) if with_global_step else make_opt()
    train = opt.minimize(loss, global_step=gs)
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
            out.append(sess.run([w, b]))
        if with_global_step:
            assert sess.run(gs) == steps
    return out


def _assert_close(got, want, dtype):
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == tf.float64 else dict(rtol=3e-5, atol=3e-6)
    assert len(got) == len(want)
    for (gw, gb), (ww, wb) in zip(got, want):
        assert gw.dtype == dtype.np_dtype
        np.testing.assert_allclose(gw, ww, **tol)
        np.testing.assert_allclose(gb, wb, **tol)


def _f32(x):
    """A Python hyper-parameter becomes a float32 tensor (TF), then is cast to a float64 variable's dtype."""
    return float(np.float32(x))


CASES = {
    "adadelta": (lambda: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-4),
                 lambda p, g, s, t: adadelta_step(p, g, s, _f32(1.0), _f32(0.9), _f32(1e-4)),
                 lambda p: (np.zeros_like(p), np.zeros_like(p))),
    "proximal_gd_l1_l2": (lambda: tf.train.ProximalGradientDescentOptimizer(0.02, 0.5, 0.3),
                          lambda p, g, s, t: proximal_gd_step(p, g, s, _f32(0.02), _f32(0.5), _f32(0.3)),
                          lambda p: None),
    "proximal_gd_l2_only": (lambda: tf.train.ProximalGradientDescentOptimizer(0.02, 0.0, 0.3),
                            lambda p, g, s, t: proximal_gd_step(p, g, s, _f32(0.02), 0.0, _f32(0.3)),
                            lambda p: None),
    "proximal_adagrad_l1_l2": (lambda: tf.train.ProximalAdagradOptimizer(0.3, 0.2, 0.4, 0.1),
                               lambda p, g, s, t: proximal_adagrad_step(p, g, s, _f32(0.3), _f32(0.4), _f32(0.1)),
                               lambda p: np.full_like(p, 0.2)),
    "proximal_adagrad_plain": (lambda: tf.train.ProximalAdagradOptimizer(0.3),
                               lambda p, g, s, t: proximal_adagrad_step(p, g, s, _f32(0.3), 0.0, 0.0),
                               lambda p: np.full_like(p, 0.1)),
}


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_dense_updates_match_tf_kernel_formulas(case, dtype):
    make_opt, step, init = CASES[case]
    _assert_close(_train(make_opt, dtype), _oracle(step, init), dtype)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("l1,l2", [(0.0, 0.0), (0.05, 0.2)])
def test_adagrad_da_matches_tf_kernel_formula_with_the_global_step(l1, l2, dtype):
    lr = 0.5
    want = _oracle(lambda p, g, s, t: adagrad_da_step(p, g, s, _f32(lr), _f32(l1), _f32(l2), t),
                   lambda p: (np.zeros_like(p), np.full_like(p, 0.1)))
    got = _train(lambda gs: tf.train.AdagradDAOptimizer(lr, gs, l1_regularization_strength=l1,
                                                        l2_regularization_strength=l2), dtype, with_global_step=True)
    _assert_close(got, want, dtype)


def _two_vars_constant_grads(opt_fn, steps, global_step=False):
    """TF's optimizer-test setup: var0=[1,2], var1=[4,3], constant gradients [.1,.2] and [.01,.02]."""
    var0 = tf.Variable([1.0, 2.0])
    var1 = tf.Variable([4.0, 3.0])
    gs = tf.Variable(0, dtype=tf.int64, name="global_step") if global_step else None
    opt = opt_fn(gs) if global_step else opt_fn()
    update = opt.apply_gradients(zip([tf.constant([0.1, 0.2]), tf.constant([0.01, 0.02])], [var0, var1]),
                                 global_step=gs)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(update)
        return sess.run([var0, var1])


def test_values_published_by_tf_optimizer_tests():
    # proximal_gradient_descent_test.testProximalGradientDescentWithL1_L2
    v0, v1 = _two_vars_constant_grads(lambda: tf.train.ProximalGradientDescentOptimizer(3.0, 0.001, 2.0), 10)
    np.testing.assert_allclose(v0, [-0.0495, -0.0995], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v1, [-0.0045, -0.0095], rtol=1e-5, atol=1e-6)
    # proximal_adagrad_test.testProximalAdagradWithL1
    v0, v1 = _two_vars_constant_grads(lambda: tf.train.ProximalAdagradOptimizer(
        3.0, initial_accumulator_value=0.1, l1_regularization_strength=0.001), 10)
    np.testing.assert_allclose(v0, [-6.663634, -9.190331], rtol=1e-5)
    np.testing.assert_allclose(v1, [2.959304, 1.029232], rtol=1e-5)
    # adagrad_da_test.testAdagradDAWithoutRegularizationBasic1 (one step, global step 0 -> T = 1)
    v0, v1 = _two_vars_constant_grads(lambda gs: tf.train.AdagradDAOptimizer(3.0, gs), 1, global_step=True)
    np.testing.assert_allclose(v0, [-0.904534, -1.603567], rtol=1e-5)
    np.testing.assert_allclose(v1, [-0.094821, -0.189358], rtol=1e-5)


def _rows_only(new, old, rows):
    """`old` with `rows` taken from `new` (arrays, or tuples of arrays, or None)."""
    if new is None:
        return None
    if isinstance(new, tuple):
        return tuple(_rows_only(n, o, rows) for n, o in zip(new, old))
    out = old.copy()
    out[rows] = new[rows]
    return out


def test_gathered_gradient_updates_only_the_looked_up_rows_as_tfs_sparse_kernels():
    """d/dw of a loss through tf.gather(w, ids) is an IndexedSlices (repeated ids summed): TF's SparseApply*
    kernels, i.e. the dense step on the looked-up rows only; the other rows and their slots stay as they were."""
    ids = np.array([0, 2, 2, 3])
    c = RNG.standard_normal((4, 2))
    w_init = RNG.standard_normal((5, 2))

    def grad(w):
        d = np.zeros_like(w)
        np.add.at(d, ids, 2.0 * (w[ids] - c))
        return d

    makers = {
        "adadelta": (lambda: tf.train.AdadeltaOptimizer(1.0, 0.9, 1e-4),
                     lambda p, g, s: adadelta_step(p, g, s, 1.0, _f32(0.9), _f32(1e-4)),
                     (np.zeros((5, 2)), np.zeros((5, 2)))),
        "proximal_gd": (lambda: tf.train.ProximalGradientDescentOptimizer(0.05, 0.2, 0.1),
                        lambda p, g, s: proximal_gd_step(p, g, s, _f32(0.05), _f32(0.2), _f32(0.1)), None),
        "proximal_adagrad": (lambda: tf.train.ProximalAdagradOptimizer(0.2, 0.1, 0.05, 0.1),
                             lambda p, g, s: proximal_adagrad_step(p, g, s, _f32(0.2), _f32(0.05), _f32(0.1)),
                             np.full((5, 2), 0.1)),
    }
    for name, (make, step, state) in makers.items():
        with tf.Graph().as_default():
            w = tf.Variable(w_init, name="emb")
            loss = tf.reduce_sum(tf.square(tf.gather(w, ids) - c))
            train = make().minimize(loss)
            want = w_init.copy()
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                touched = np.unique(ids)
                for _ in range(4):
                    sess.run(train)
                    new_w, new_state = step(want, grad(want), state)
                    want, state = _rows_only(new_w, want, touched), _rows_only(new_state, state, touched)
                    np.testing.assert_allclose(sess.run(w), want, rtol=1e-10, atol=1e-12, err_msg=name)
                np.testing.assert_array_equal(sess.run(w)[[1, 4]], w_init[[1, 4]])


def test_slot_names_get_slot_and_variables_follow_tf():
    w, b, loss = _model(tf.float32)
    gs = tf.train.get_or_create_global_step()
    cases = [(tf.train.AdadeltaOptimizer(), ["accum", "accum_update"], ["w/Adadelta", "w/Adadelta_1"]),
             (tf.train.ProximalAdagradOptimizer(0.1), ["accumulator"], ["w/ProximalAdagrad"]),
             (tf.train.AdagradDAOptimizer(0.1, gs), ["gradient_accumulator", "gradient_squared_accumulator"],
              ["w/AdagradDA", "w/AdagradDA_1"]),
             (tf.train.ProximalGradientDescentOptimizer(0.1), [], [])]
    for opt, slot_names, var_names in cases:
        opt.minimize(loss)
        assert opt.get_slot_names() == slot_names
        assert [opt.get_slot(w, s).op.name for s in slot_names] == var_names
        for s in slot_names:
            slot = opt.get_slot(w, s)
            assert slot.shape.as_list() == [3, 2] and slot.dtype == tf.float32 and not slot.trainable
            assert slot.op.colocation_groups() == w.op.colocation_groups()
            assert slot in tf.global_variables()
    assert [v.op.name for v in cases[0][0].variables()] == ["b/Adadelta", "b/Adadelta_1", "w/Adadelta",
                                                            "w/Adadelta_1"]
    assert cases[3][0].variables() == []
    assert cases[0][0].get_slot(w, "accumulator") is None
    assert cases[0][0].get_name() == "Adadelta" and cases[3][0].get_name() == "ProximalGradientDescent"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(cases[1][0].get_slot(b, "accumulator")), np.float32([0.1, 0.1]))
        np.testing.assert_array_equal(sess.run(cases[2][0].get_slot(b, "gradient_squared_accumulator")),
                                      np.float32([0.1, 0.1]))
        np.testing.assert_array_equal(sess.run(cases[2][0].get_slot(b, "gradient_accumulator")), [0, 0])


def _saved_and_resumed(tmp_path, make_opt, steps_before=3, steps_after=3):
    """Trains, saves, restores into a fresh graph, trains on; returns (checkpoint dict, resumed, uninterrupted)."""
    prefix = os.path.join(str(tmp_path), "model.ckpt")

    def build():
        w, b, loss = _model(tf.float64)
        gs = tf.train.get_or_create_global_step()
        opt = make_opt(gs)
        return w, b, opt, opt.minimize(loss, global_step=gs)

    with tf.Graph().as_default():
        w, b, opt, train = build()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps_before):
                sess.run(train)
            saver.save(sess, prefix)
            for _ in range(steps_after):
                sess.run(train)
            uninterrupted = sess.run([w, b])
    with tf.Graph().as_default():
        w, b, opt, train = build()
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            for _ in range(steps_after):
                sess.run(train)
            resumed = sess.run([w, b])
    return read_checkpoint(prefix), resumed, uninterrupted


@pytest.mark.parametrize("name,make_opt,slots", [
    ("Adadelta", lambda gs: tf.train.AdadeltaOptimizer(1.0, 0.9, 1e-4), ["Adadelta", "Adadelta_1"]),
    ("ProximalAdagrad", lambda gs: tf.train.ProximalAdagradOptimizer(0.3, 0.1, 0.01, 0.1), ["ProximalAdagrad"]),
    ("AdagradDA", lambda gs: tf.train.AdagradDAOptimizer(0.5, gs, 0.1, 0.01, 0.1), ["AdagradDA", "AdagradDA_1"]),
    ("ProximalGradientDescent", lambda gs: tf.train.ProximalGradientDescentOptimizer(0.02, 0.01, 0.1), []),
])
def test_checkpoint_holds_slots_under_tf_names_and_resumes_exactly(tmp_path, name, make_opt, slots):
    ckpt, resumed, uninterrupted = _saved_and_resumed(tmp_path, make_opt)
    want = {"w", "b", "global_step"} | {f"{v}/{s}" for v in ("w", "b") for s in slots}
    assert set(ckpt) == want
    assert int(ckpt["global_step"]) == 3
    for got, exp in zip(resumed, uninterrupted):
        np.testing.assert_array_equal(got, exp)  # the restored slots (and the step, for AdagradDA) carry on exactly


@pytest.mark.parametrize("make_opt", [
    lambda gs: tf.train.AdadeltaOptimizer(0.5, epsilon=1e-3),
    lambda gs: tf.train.ProximalGradientDescentOptimizer(0.01, l2_regularization_strength=0.001),
    lambda gs: tf.train.ProximalAdagradOptimizer(0.5, l1_regularization_strength=0.001),
    lambda gs: tf.train.AdagradDAOptimizer(1.0, gs, l2_regularization_strength=0.0),
], ids=["adadelta", "proximal_gd", "proximal_adagrad", "adagrad_da"])
def test_training_converges_on_a_small_linear_regression(make_opt):
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((64, 4))
    true_w = np.array([[1.5], [-2.0], [0.5], [3.0]])
    ys = xs @ true_w + 0.7
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.Variable(tf.zeros([4, 1]))
    b = tf.Variable(tf.zeros([1]))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    gs = tf.train.get_or_create_global_step()
    train = make_opt(gs).minimize(loss, global_step=gs)
    feed = {x: xs.astype(np.float32), y: ys.astype(np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        start = sess.run(loss, feed)
        for _ in range(500):
            sess.run(train, feed)
        end, w_val, b_val = sess.run([loss, w, b], feed)
    assert start > 5.0 and end < 0.01 * start
    np.testing.assert_allclose(w_val, true_w, atol=0.1)
    np.testing.assert_allclose(b_val, [0.7], atol=0.1)


def test_constructor_checks_and_op_shape_errors():
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive: 0.0"):
        tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match="initial_gradient_squared_accumulator_value must be positive: -1"):
        tf.train.AdagradDAOptimizer(0.1, tf.train.get_or_create_global_step(),
                                    initial_gradient_squared_accumulator_value=-1)
    from tensorfleet.train import training_ops
    v = tf.Variable(tf.zeros([2, 3]))
    with pytest.raises(ValueError, match=r"var and grad do not have the same shape: \[2,3\] \[3\]"):
        training_ops.apply_proximal_gradient_descent(v, 0.1, 0.0, 0.0, tf.zeros([3]))
    with pytest.raises(TypeError, match="global_step must be an integer tensor"):
        acc = tf.Variable(tf.zeros([2, 3]))
        training_ops.apply_adagrad_da(v, acc, acc, tf.zeros([2, 3]), 0.1, 0.0, 0.0, 1.5)
    # AdagradDA reads the global step it was given; an int32 one is cast to TF's int64 input
    gs32 = tf.Variable(0, dtype=tf.int32)
    op = training_ops.apply_adagrad_da(v, acc, tf.Variable(tf.ones([2, 3])), tf.ones([2, 3]), 0.1, 0.0, 0.0, gs32)
    assert op.op.inputs[3].dtype == tf.int64


def test_on_a_fake_gpu_the_updates_run_on_the_device_and_match_the_cpu(monkeypatch):
    """fake_cupy (a strict numpy-backed cupy, see test_gpu_paths_on_fake_cupy.py): the four kernels run on GPU:0
    with device arrays and give the CPU's values; the sharded lookup's partition/stitch run on the host."""
    fake_cupy.install(monkeypatch, devices=1)
    outs, placements = {}, {}
    for gpu_on in (True, False):
        with tf.Graph().as_default():
            w = tf.Variable(np.arange(12.0).reshape(6, 2).astype(np.float32), name="w")
            gs = tf.train.get_or_create_global_step()
            emb = tf.nn.embedding_lookup([w[:3], w[3:]], [0, 4, 5, 4], partition_strategy="div")
            loss = tf.reduce_sum(tf.square(emb - 1.0)) + tf.reduce_sum(tf.square(w)) * 0.01
            ops = [o.minimize(loss, global_step=gs) for o in (
                tf.train.AdadeltaOptimizer(1.0, 0.9, 1e-4),
                tf.train.ProximalGradientDescentOptimizer(0.05, 0.01, 0.1),
                tf.train.ProximalAdagradOptimizer(0.1, 0.1, 0.01, 0.1),
                tf.train.AdagradDAOptimizer(0.1, gs, 0.1, 0.01))]
            cfg = tf.ConfigProto() if gpu_on else tf.ConfigProto(device_count={"GPU": 0}, allow_soft_placement=True)
            with tf.Session(config=cfg) as sess:
                sess.run(tf.global_variables_initializer())
                vals = []
                for _ in range(3):
                    for op in ops:
                        sess.run(op)
                    vals.append(sess.run(w))
                assert isinstance(vals[-1], np.ndarray)
                placements[gpu_on] = sess.device_placement()
            outs[gpu_on] = vals
    np.testing.assert_allclose(outs[True], outs[False], rtol=1e-5, atol=1e-6)
    gpu = placements[True]
    for op in ("Adadelta/update_w/ApplyAdadelta", "AdagradDA/update_w/ApplyAdagradDA",
               "ProximalAdagrad/update_w/ApplyProximalAdagrad",
               "ProximalGradientDescent/update_w/ApplyProximalGradientDescent"):
        assert gpu[op].endswith("GPU:0"), op
    assert gpu["embedding_lookup/ParallelDynamicStitch"].endswith("CPU:0")
