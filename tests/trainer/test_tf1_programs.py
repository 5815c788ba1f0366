"""Real-world-style TF 1.15 programs, run with only the import changed.

Each test is a short program of the kind found in the TF1 guides/tutorials and
popular TF1 code. Expected values come from independent oracles: numpy
re-computations, TF 1.15's documented op/variable names and error types, or
convergence to a known solution -- never from tensorfleet's own output.
"""
import collections
import os

import numpy as np
import pytest

import tensorfleet as tf
from helpers import np_sigmoid, np_softmax


# 1. Linear regression: placeholders, GradientDescent, fetch loop ------------
def test_linear_regression_recovers_slope_and_intercept():
    rng = np.random.RandomState(0)
    x_data = rng.rand(100).astype(np.float32)
    y_data = 2.0 * x_data + 1.0 + rng.normal(0, 0.01, 100).astype(np.float32)

    X = tf.placeholder(tf.float32, name="X")
    Y = tf.placeholder(tf.float32, name="Y")
    W = tf.Variable(tf.random_uniform([1], -1.0, 1.0, seed=1), name="weight")
    b = tf.Variable(tf.zeros([1]), name="bias")
    y = W * X + b
    loss = tf.reduce_mean(tf.square(y - Y))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)

    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(400):
            _, l = sess.run([train, loss], feed_dict={X: x_data, Y: y_data})
            losses.append(l)
        w_val, b_val = sess.run([W, b])
    assert losses[-1] < losses[0]
    # Oracle: closed-form least squares on the same data.
    A = np.stack([x_data, np.ones_like(x_data)], axis=1).astype(np.float64)
    w_ls, b_ls = np.linalg.lstsq(A, y_data.astype(np.float64), rcond=None)[0]
    assert abs(w_ls - 2.0) < 0.02 and abs(b_ls - 1.0) < 0.02
    np.testing.assert_allclose(w_val, [w_ls], atol=2e-3)
    np.testing.assert_allclose(b_val, [b_ls], atol=2e-3)
    assert W.name == "weight:0" and b.name == "bias:0"


# 2. Logistic regression, step-by-step against a numpy implementation ---------
def test_logistic_regression_matches_numpy_gradient_descent():
    rng = np.random.RandomState(1)
    xs = rng.randn(64, 3).astype(np.float32)
    ys = (xs @ np.array([1.5, -2.0, 0.5]) > 0.2).astype(np.float32).reshape(-1, 1)

    x = tf.placeholder(tf.float32, [None, 3])
    y_ = tf.placeholder(tf.float32, [None, 1])
    W = tf.Variable(tf.zeros([3, 1]))
    b = tf.Variable(tf.zeros([1]))
    logits = tf.matmul(x, W) + b
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y_, logits=logits))
    train_op = tf.train.GradientDescentOptimizer(learning_rate=0.3).minimize(loss)
    pred = tf.cast(tf.sigmoid(logits) > 0.5, tf.float32)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(pred, y_), tf.float32))

    w_np = np.zeros((3, 1))
    b_np = np.zeros(1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(50):
            sess.run(train_op, feed_dict={x: xs, y_: ys})
            p = np_sigmoid(xs @ w_np + b_np)
            w_np -= 0.3 * xs.T @ (p - ys) / len(xs)
            b_np -= 0.3 * (p - ys).mean(axis=0)
        w_tf, b_tf, acc = sess.run([W, b, accuracy], feed_dict={x: xs, y_: ys})
    np.testing.assert_allclose(w_tf, w_np, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b_tf, b_np, rtol=1e-4, atol=1e-5)
    acc_np = np.mean(((np_sigmoid(xs @ w_np + b_np) > 0.5).astype(np.float32) == ys))
    assert acc == pytest.approx(acc_np) and acc > 0.85


# 3. MNIST-for-beginners softmax regression: tf.log, reduction_indices, argmax --
def test_softmax_regression_tutorial_with_interactive_session():
    rng = np.random.RandomState(2)
    centers = rng.randn(3, 5) * 3
    labels = rng.randint(0, 3, 90)
    xs = (centers[labels] + rng.randn(90, 5)).astype(np.float32)
    ys = np.eye(3, dtype=np.float32)[labels]

    sess = tf.InteractiveSession()
    try:
        x = tf.placeholder(tf.float32, [None, 5])
        W = tf.Variable(tf.zeros([5, 3]))
        b = tf.Variable(tf.zeros([3]))
        y = tf.nn.softmax(tf.matmul(x, W) + b)
        y_ = tf.placeholder(tf.float32, [None, 3])
        cross_entropy = tf.reduce_mean(-tf.reduce_sum(y_ * tf.log(y), reduction_indices=[1]))
        train_step = tf.train.GradientDescentOptimizer(0.1).minimize(cross_entropy)
        tf.global_variables_initializer().run()
        w_np, b_np = np.zeros((5, 3)), np.zeros(3)
        for _ in range(20):
            train_step.run(feed_dict={x: xs, y_: ys})
            p = np_softmax(xs @ w_np + b_np)
            w_np -= 0.1 * xs.T @ (p - ys) / len(xs)
            b_np -= 0.1 * (p - ys).mean(axis=0)
        correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
        accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
        acc = accuracy.eval(feed_dict={x: xs, y_: ys})
        np.testing.assert_allclose(W.eval(), w_np, rtol=1e-3, atol=1e-5)
        assert tf.get_default_session() is sess
    finally:
        sess.close()
    acc_np = np.mean(np.argmax(xs @ w_np + b_np, 1) == labels)
    assert acc == pytest.approx(acc_np) and acc > 0.9


# 4. 2-layer MLP with tf.layers.dense and a hand-written loss -----------------
def test_mlp_tf_layers_dense_names_forward_and_xor_training():
    xs = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], np.float32)
    ys = np.array([[0], [1], [1], [0]], np.float32)
    tf.set_random_seed(3)
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.variable_scope("layer"):
        h = tf.layers.dense(x, 16, activation=tf.nn.relu)
        out = tf.layers.dense(h, 1)
    named = tf.layers.dense(x, 4, activation=tf.nn.relu, name="hidden")
    loss = tf.reduce_mean(tf.square(out - y))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)

    assert [v.name for v in tf.trainable_variables()] == [
        "layer/dense/kernel:0", "layer/dense/bias:0", "layer/dense_1/kernel:0", "layer/dense_1/bias:0",
        "hidden/kernel:0", "hidden/bias:0"]
    assert tf.trainable_variables()[0].get_shape().as_list() == [2, 16]
    assert named.name == "hidden/Relu:0"
    slot_names = {v.op.name for v in tf.global_variables()} - {v.op.name for v in tf.trainable_variables()}
    assert {"beta1_power", "beta2_power", "layer/dense/kernel/Adam", "layer/dense/kernel/Adam_1"} <= slot_names
    assert out.get_shape().as_list() == [None, 1]

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        k1, b1, k2, b2 = sess.run(tf.trainable_variables()[:4])
        # Forward pass oracle: numpy with the initial weights.
        np.testing.assert_allclose(sess.run(out, {x: xs}), np.maximum(xs @ k1 + b1, 0) @ k2 + b2, rtol=1e-5,
                                   atol=1e-6)
        limit = np.sqrt(6.0 / (2 + 16))  # glorot-uniform default kernel initializer
        assert np.all(np.abs(k1) <= limit) and np.all(b1 == 0)
        for _ in range(300):
            sess.run(train, {x: xs, y: ys})
        final = sess.run(loss, {x: xs, y: ys})
    assert final < 0.02


# 5. name_scope / variable_scope naming --------------------------------------
def test_name_scope_and_variable_scope_naming_rules():
    c0 = tf.constant(1.0)
    c1 = tf.constant(2.0)
    assert (c0.name, c1.name) == ("Const:0", "Const_1:0")
    assert (c0 + c1).name == "add:0"
    assert tf.add(c0, c1).name == "Add_1:0"  # TF 1.15 unique names are case-insensitive ("add" ~ "Add")
    assert (c0 * c1).name == "mul:0"
    with tf.name_scope("a"):
        v = tf.Variable(0.0, name="v")
        gv = tf.get_variable("gv", shape=[2])  # get_variable ignores name_scope
        with tf.name_scope("b"):
            t = tf.identity(c0, name="t")
    with tf.name_scope("a"):
        t2 = tf.identity(c0, name="t")
    assert v.name == "a/v:0" and gv.name == "gv:0"
    assert t.name == "a/b/t:0" and t2.name == "a_1/t:0"
    with tf.variable_scope("vs"):
        w = tf.get_variable("w", [1])
        s = tf.square(w)
        assert tf.get_variable_scope().name == "vs"
    with tf.variable_scope("vs", reuse=True):
        w2 = tf.get_variable("w")
        s2 = tf.square(w2)
    assert w.name == "vs/w:0" and w2 is w
    assert s.name == "vs/Square:0" and s2.name == "vs_1/Square:0"
    assert tf.Variable(1.0).name == "Variable:0" and tf.Variable(1.0).name == "Variable_1:0"
    assert tf.placeholder(tf.float32).name == "Placeholder:0"
    assert tf.global_variables_initializer().name == "init"
    with tf.name_scope("scope") as scope:
        assert scope == "scope/"
        assert tf.constant(3, name="out").name == "scope/out:0"


# 6. Weight sharing between two towers: reuse=True and AUTO_REUSE -------------
def test_two_towers_share_weights_with_reuse_and_auto_reuse():
    rng = np.random.RandomState(4)
    a_np, b_np = rng.randn(2, 3).astype(np.float32), rng.randn(5, 3).astype(np.float32)
    w_init = rng.randn(3, 2).astype(np.float32)

    def tower(inp):
        with tf.variable_scope("siamese", reuse=tf.AUTO_REUSE):
            w = tf.get_variable("w", initializer=w_init)
            bias = tf.get_variable("b", [2], initializer=tf.constant_initializer(0.5))
            return tf.nn.relu(tf.matmul(inp, w) + bias)

    a = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [None, 3])
    out_a, out_b = tower(a), tower(b)
    assert [v.name for v in tf.global_variables()] == ["siamese/w:0", "siamese/b:0"]

    with tf.variable_scope("fc") as scope:
        fa = tf.layers.dense(a, 4, name="proj")
        scope.reuse_variables()
        fb = tf.layers.dense(b, 4, name="proj")
    with tf.variable_scope("fc", reuse=True):
        fc_w = tf.get_variable("proj/kernel")
    assert len(tf.trainable_variables()) == 4
    with pytest.raises(ValueError, match="already exists"):
        with tf.variable_scope("siamese"):
            tf.get_variable("w", [3, 2])
    with pytest.raises(ValueError, match="does not exist"):
        with tf.variable_scope("siamese", reuse=True):
            tf.get_variable("missing", [1])

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        oa, ob, pa, pb, k = sess.run([out_a, out_b, fa, fb, fc_w], {a: a_np, b: b_np})
    np.testing.assert_allclose(oa, np.maximum(a_np @ w_init + 0.5, 0), rtol=1e-5)
    np.testing.assert_allclose(ob, np.maximum(b_np @ w_init + 0.5, 0), rtol=1e-5)
    np.testing.assert_allclose(pa, a_np @ k, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pb, b_np @ k, rtol=1e-5, atol=1e-6)


# 7. GAN-style: per-scope var lists from collections --------------------------
def test_get_collection_by_scope_and_var_list_minimize():
    with tf.variable_scope("generator"):
        g_w = tf.get_variable("w", initializer=np.float32(1.0))
        g_b = tf.get_variable("b", initializer=np.float32(0.0))
    with tf.variable_scope("discriminator"):
        d_w = tf.get_variable("w", initializer=np.float32(1.0))
    counter = tf.Variable(0, trainable=False, name="counter")
    gen_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="generator")
    disc_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="discriminator")
    assert gen_vars == [g_w, g_b] and disc_vars == [d_w]
    assert counter not in tf.trainable_variables() and counter in tf.global_variables()
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="gen.*") == [g_w, g_b]

    loss = tf.square(g_w * d_w + g_b - 3.0)
    g_step = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=gen_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(g_step)
        gw, gb, dw = sess.run([g_w, g_b, d_w])
    # d loss/d g_w = 2*(1*1+0-3)*1 = -4; d/d g_b = -4; discriminator untouched.
    assert gw == pytest.approx(1.4) and gb == pytest.approx(0.4) and dw == 1.0


# 8. control_dependencies with an assign_add counter --------------------------
def test_control_dependencies_counter_and_group():
    x = tf.placeholder(tf.float32, [], name="x")
    counter = tf.Variable(0, name="counter")
    inc = tf.assign_add(counter, 1)
    with tf.control_dependencies([inc]):
        y = tf.identity(x * 2.0)
        y_no_dep = x  # TF1 gotcha: not an op created inside the block -> no dependency
    total = tf.Variable(0.0)
    acc = tf.assign_add(total, x)
    step = tf.group(acc, inc)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(3):
            assert sess.run(y, {x: float(i)}) == 2.0 * i
        assert sess.run(counter) == 3
        sess.run(y_no_dep, {x: 1.0})
        assert sess.run(counter) == 3
        assert sess.run(step, {x: 5.0}) is None
        assert sess.run(counter) == 4 and sess.run(total) == 5.0
    assert inc.op in y.op.control_inputs


# 9. Saver: save, then restore into a new graph -------------------------------
def test_saver_save_and_restore_into_new_graph(tmp_path):
    rng = np.random.RandomState(5)
    w_val = rng.randn(3, 4).astype(np.float32)
    prefix = os.path.join(str(tmp_path), "model.ckpt")
    g1 = tf.Graph()
    with g1.as_default():
        tf.Variable(w_val, name="w")
        step = tf.Variable(0, name="global_step", trainable=False)
        with tf.variable_scope("dense"):
            tf.get_variable("kernel", [2], initializer=tf.ones_initializer())
        inc = tf.assign_add(step, 7)
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(inc)
            path = saver.save(sess, prefix, global_step=step)
    assert path == prefix + "-7"
    assert tf.train.latest_checkpoint(str(tmp_path)) == path

    g2 = tf.Graph()
    with g2.as_default():
        w2 = tf.Variable(tf.zeros([3, 4]), name="w")
        step2 = tf.Variable(0, name="global_step", trainable=False)
        with tf.variable_scope("dense"):
            k2 = tf.get_variable("kernel", [2], initializer=tf.zeros_initializer())
        renamed = tf.Variable(tf.zeros([2]), name="other")
        saver2 = tf.train.Saver([w2, step2, k2])
        partial = tf.train.Saver({"dense/kernel": renamed})
        with tf.Session() as sess:
            saver2.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
            partial.restore(sess, path)
            got_w, got_step, got_k, got_r = sess.run([w2, step2, k2, renamed])
    np.testing.assert_array_equal(got_w, w_val)
    assert got_step == 7
    np.testing.assert_array_equal(got_k, [1.0, 1.0])
    np.testing.assert_array_equal(got_r, [1.0, 1.0])


# 10. InteractiveSession + .eval() / .run() -----------------------------------
def test_interactive_session_eval_and_run():
    sess = tf.InteractiveSession()
    try:
        a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        v = tf.Variable(tf.ones([2]))
        v.initializer.run()
        np.testing.assert_array_equal(tf.matmul(a, a).eval(), np.array([[7, 10], [15, 22]], np.float32))
        tf.assign(v, [5.0, 6.0]).op.run()
        np.testing.assert_array_equal(v.eval(), [5.0, 6.0])
        assert (tf.reduce_sum(v) * 2).eval() == 22.0
        p = tf.placeholder(tf.int32)
        assert (p + 1).eval(feed_dict={p: 41}) == 42
    finally:
        sess.close()


# 11. Nested fetches, string-name fetches and feeds ---------------------------
def test_session_run_nested_fetches_and_string_names():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.constant([[1.0], [2.0]], name="w")
    y = tf.matmul(x, w, name="y")
    s = tf.reduce_sum(y, name="s")
    init = tf.global_variables_initializer()
    Pair = collections.namedtuple("Pair", ["y", "s"])
    xv = np.array([[1, 1], [2, 3]], np.float32)
    with tf.Session() as sess:
        out = sess.run({"pair": (y, s), "list": [s, {"n": "y:0"}], "nt": Pair(y, s), "op": init},
                       feed_dict={"x:0": xv})
        assert isinstance(out, dict) and isinstance(out["pair"], tuple) and isinstance(out["list"], list)
        np.testing.assert_allclose(out["pair"][0], [[3], [8]])
        assert out["pair"][1] == 11.0 and out["list"][0] == 11.0
        np.testing.assert_allclose(out["list"][1]["n"], [[3], [8]])
        assert isinstance(out["nt"], Pair) and out["nt"].s == 11.0
        assert out["op"] is None
        assert sess.run("s:0", {x: xv}) == 11.0
        assert sess.run(tf.get_default_graph().get_tensor_by_name("s:0"), {"x:0": xv}) == 11.0
        # Feeding an intermediate tensor (not a placeholder) replaces its value.
        assert sess.run(s, {y: np.array([[1.0], [2.0]], np.float32)}) == 3.0
        assert sess.run([], {x: xv}) == []


# 12. tf.gradients with grad_ys and stop_gradient -----------------------------
def test_gradients_grad_ys_stop_gradient_and_unconnected():
    xv = np.array([1.0, -2.0, 3.0], np.float32)
    gv = np.array([0.5, 2.0, -1.0], np.float32)
    x = tf.placeholder(tf.float32, [3])
    g = tf.placeholder(tf.float32, [3])
    y = x * x
    dy = tf.gradients(y, x, grad_ys=g)[0]
    z = tf.stop_gradient(x) * x
    dz = tf.gradients(z, x)[0]
    u = tf.reduce_sum(tf.exp(x)) + tf.reduce_sum(3.0 * x)
    dsum = tf.gradients([u, tf.reduce_sum(y)], [x])[0]
    other = tf.placeholder(tf.float32, [3])
    assert tf.gradients(y, other) == [None]
    with tf.Session() as sess:
        a, b, c = sess.run([dy, dz, dsum], {x: xv, g: gv})
    np.testing.assert_allclose(a, 2 * xv * gv, rtol=1e-6)
    np.testing.assert_allclose(b, xv, rtol=1e-6)
    np.testing.assert_allclose(c, np.exp(xv) + 3 + 2 * xv, rtol=1e-5)


# 13. compute_gradients -> clip_by_global_norm -> apply_gradients -------------
def test_manual_gradient_clipping_pipeline():
    w0 = np.array([[3.0, -4.0]], np.float32)
    b0 = np.array([12.0], np.float32)
    w = tf.Variable(w0)
    b = tf.Variable(b0)
    loss = tf.reduce_sum(tf.square(w)) + tf.reduce_sum(tf.square(b))
    opt = tf.train.GradientDescentOptimizer(0.1)
    grads_and_vars = opt.compute_gradients(loss)
    assert [v for _, v in grads_and_vars] == [w, b]
    grads, variables = zip(*grads_and_vars)
    clipped, gnorm = tf.clip_by_global_norm(grads, 5.0)
    train_op = opt.apply_gradients(zip(clipped, variables))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        n, _ = sess.run([gnorm, train_op])
        w1, b1 = sess.run([w, b])
    g_w, g_b = 2 * w0, 2 * b0
    norm = np.sqrt((g_w ** 2).sum() + (g_b ** 2).sum())  # sqrt(36+64+576) = 26
    assert n == pytest.approx(norm)
    np.testing.assert_allclose(w1, w0 - 0.1 * g_w * 5.0 / norm, rtol=1e-5)
    np.testing.assert_allclose(b1, b0 - 0.1 * g_b * 5.0 / norm, rtol=1e-5)


# 14. placeholder_with_default, dynamic batch, tf.shape -----------------------
def test_placeholder_with_default_and_dynamic_batch_size():
    keep_prob = tf.placeholder_with_default(1.0, shape=[], name="keep_prob")
    x = tf.placeholder_with_default(np.zeros((2, 3), np.float32), shape=[None, 3])
    batch = tf.shape(x)[0]
    flat = tf.reshape(x, [-1, 3 * 1])
    scaled = flat * keep_prob
    with tf.Session() as sess:
        assert sess.run(keep_prob) == 1.0
        assert sess.run(batch) == 2
        assert sess.run(keep_prob, {"keep_prob:0": 0.5}) == 0.5
        xv = np.arange(15, dtype=np.float32).reshape(5, 3)
        got_batch, got = sess.run([batch, scaled], {x: xv, keep_prob: 0.5})
    assert got_batch == 5
    np.testing.assert_allclose(got, xv * 0.5)


# 15. Accuracy: cast / argmax / equal ---------------------------------------
def test_accuracy_metric_from_cast_argmax_equal():
    logits_v = np.array([[0.1, 2.0, 0.3], [1.0, 0.2, 0.1], [0.0, 0.0, 5.0], [3.0, 4.0, 1.0]], np.float32)
    labels_v = np.array([1, 0, 1, 0], np.int64)
    logits = tf.placeholder(tf.float32, [None, 3])
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.argmax(logits, axis=1)
    correct = tf.equal(predictions, labels)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    onehot = tf.one_hot(labels, 3)
    acc2 = tf.reduce_mean(tf.to_float(tf.equal(tf.argmax(logits, 1), tf.argmax(onehot, 1))))
    assert predictions.dtype == tf.int64 and correct.dtype == tf.bool
    with tf.Session() as sess:
        p, a, a2 = sess.run([predictions, accuracy, acc2], {logits: logits_v, labels: labels_v})
    np.testing.assert_array_equal(p, logits_v.argmax(1))
    assert a == pytest.approx(np.mean(logits_v.argmax(1) == labels_v)) == a2


# 16. global_step and tf.train.get_global_step() -----------------------------
def test_global_step_incremented_by_minimize():
    global_step = tf.train.get_or_create_global_step()
    assert global_step.name == "global_step:0"
    assert tf.train.get_global_step() is global_step
    assert global_step not in tf.trainable_variables()
    w = tf.Variable(5.0)
    loss = tf.square(w)
    train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, global_step=global_step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            sess.run(train_op)
        assert tf.train.global_step(sess, global_step) == 5
        w_tf = sess.run(w)
    w_np, acc = 5.0, 0.0
    for _ in range(5):
        acc = 0.9 * acc + 2 * w_np
        w_np -= 0.1 * acc
    assert w_tf == pytest.approx(w_np, rel=1e-5)

    g = tf.Graph()
    with g.as_default():
        manual = tf.Variable(0, name="global_step", trainable=False)
        assert tf.train.get_global_step() is not None
        assert tf.train.get_global_step().name == manual.name


# 17. Two independent graphs and sessions -------------------------------------
def test_two_independent_graphs_and_sessions():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        a = tf.Variable(1.0, name="v")
        inc_a = tf.assign_add(a, 1.0)
        init1 = tf.global_variables_initializer()
        assert tf.get_default_graph() is g1
    with g2.as_default():
        b = tf.Variable(10.0, name="v")
        init2 = tf.global_variables_initializer()
        with pytest.raises(ValueError):
            tf.add(a, 1.0)  # a belongs to g1
    assert a.graph is g1 and b.graph is g2 and tf.get_default_graph() not in (g1, g2)
    assert a.name == b.name == "v:0"
    s1, s2 = tf.Session(graph=g1), tf.Session(graph=g2)
    try:
        s1.run(init1)
        s2.run(init2)
        s1.run(inc_a)
        s1.run(inc_a)
        assert s1.run(a) == 3.0 and s2.run(b) == 10.0
        with pytest.raises(ValueError):
            s2.run(a)  # fetch from another graph
    finally:
        s1.close()
        s2.close()
    with pytest.raises(RuntimeError):
        s1.run(a)


# 18. set_random_seed reproducibility -----------------------------------------
def test_set_random_seed_reproducible_across_sessions_and_graphs():
    def build():
        tf.set_random_seed(1234)
        return tf.random_normal([4]), tf.random_uniform([3], seed=7)

    a, u = build()
    with tf.Session() as s1:
        a1, a2, u1 = s1.run(a), s1.run(a), s1.run(u)
    with tf.Session() as s2:
        b1, b2, v1 = s2.run(a), s2.run(a), s2.run(u)
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    np.testing.assert_array_equal(u1, v1)
    assert not np.array_equal(a1, a2)  # successive runs of one op differ
    with tf.Graph().as_default():
        c, _ = build()
        with tf.Session() as s3:
            np.testing.assert_array_equal(s3.run(c), a1)
    assert abs(a1.mean()) < 3 and np.all((u1 >= 0) & (u1 < 1))


# 19. Embedding lookup + sparse-style SGD update ------------------------------
def test_embedding_lookup_forward_and_sgd_update():
    rng = np.random.RandomState(6)
    table = rng.randn(10, 4).astype(np.float32)
    ids_v = np.array([[1, 3], [3, 7]], np.int32)
    embeddings = tf.Variable(table, name="embeddings")
    ids = tf.placeholder(tf.int32, [None, 2])
    embed = tf.nn.embedding_lookup(embeddings, ids)
    assert embed.get_shape().as_list() == [None, 2, 4]
    loss = tf.reduce_sum(embed)
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(embed, {ids: ids_v}), table[ids_v])
        sess.run(train_op, {ids: ids_v})
        new = sess.run(embeddings)
    expected = table.copy()
    np.add.at(expected, ids_v.ravel(), -0.5)  # row 3 appears twice: gradients accumulate
    np.testing.assert_allclose(new, expected, rtol=1e-6)


# 20. Batch-norm by hand with tf.nn.moments -----------------------------------
def test_batch_norm_by_hand_with_moments_and_running_average():
    rng = np.random.RandomState(7)
    xv = (rng.randn(8, 3) * 2 + 5).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3])
    gamma = tf.Variable(tf.ones([3]))
    beta = tf.Variable(tf.zeros([3]))
    pop_mean = tf.Variable(tf.zeros([3]), trainable=False)
    batch_mean, batch_var = tf.nn.moments(x, [0])
    update_mean = tf.assign(pop_mean, pop_mean * 0.9 + batch_mean * 0.1)
    with tf.control_dependencies([update_mean]):
        normed = (x - batch_mean) / tf.sqrt(batch_var + 1e-3) * gamma + beta
    mean4, var4 = tf.nn.moments(tf.reshape(x, [2, 2, 2, 3]), axes=[0, 1, 2], keep_dims=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, pm, m4, v4 = sess.run([normed, pop_mean, mean4, var4], {x: xv})
        pm = sess.run(pop_mean)
    expect = (xv - xv.mean(0)) / np.sqrt(xv.var(0) + 1e-3)
    np.testing.assert_allclose(out, expect, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pm, 0.1 * xv.mean(0), rtol=1e-5)
    assert m4.shape == (1, 1, 1, 3)
    np.testing.assert_allclose(m4.ravel(), xv.mean(0), rtol=1e-5)
    np.testing.assert_allclose(v4.ravel(), xv.var(0), rtol=1e-4)


def test_layers_batch_normalization_with_update_ops_training_loop():
    rng = np.random.RandomState(8)
    xs = (rng.randn(32, 4) * 3 + 2).astype(np.float32)
    ys = (xs.sum(1, keepdims=True) > 8).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 1])
    is_training = tf.placeholder(tf.bool, [], name="is_training")
    h = tf.layers.batch_normalization(x, training=is_training, momentum=0.5)
    logits = tf.layers.dense(h, 1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    moving_mean = [v for v in tf.global_variables() if v.name == "batch_normalization/moving_mean:0"][0]
    assert moving_mean not in tf.trainable_variables()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train_op, {x: xs, y: ys, is_training: True})
        mm = sess.run(moving_mean)
        sess.run(loss, {x: xs, y: ys, is_training: False})  # inference leaves the statistics alone
        np.testing.assert_array_equal(sess.run(moving_mean), mm)
    # Oracle: three momentum-0.5 updates towards the (constant) batch mean.
    np.testing.assert_allclose(mm, xs.mean(0) * (1 - 0.5 ** 3), rtol=1e-5)


# 21. Error paths -------------------------------------------------------------
def test_error_paths_have_tf_types_and_messages():
    v = tf.Variable(tf.zeros([2]), name="v")
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = x * 2.0
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value v"):
            sess.run(v)
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\)"):
            sess.run(y, {x: np.zeros(3, np.float32)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value for placeholder tensor 'x'"):
            sess.run(y)
        with pytest.raises(ValueError, match="cannot be interpreted as a Tensor"):
            sess.run("nope:0")
        with pytest.raises(TypeError):
            sess.run(None)
    assert issubclass(tf.errors.FailedPreconditionError, tf.errors.OpError)
    g = tf.get_default_graph()
    with pytest.raises(KeyError):
        g.get_operation_by_name("nope")
    with pytest.raises(KeyError):
        g.get_tensor_by_name("nope:0")
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.matmul(tf.zeros([2, 3]), tf.zeros([4, 5]))
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(x, {x: np.zeros((1, 2))})


# 22. tf.losses + regularization + get_total_loss -----------------------------
def test_tf_losses_module_values():
    rng = np.random.RandomState(9)
    logits_v = rng.randn(5, 3).astype(np.float32)
    labels_v = np.array([0, 2, 1, 1, 0])
    onehot_v = np.eye(3, dtype=np.float32)[labels_v]
    pred_v, target_v = rng.randn(5, 2).astype(np.float32), rng.randn(5, 2).astype(np.float32)

    mse = tf.losses.mean_squared_error(labels=tf.constant(target_v), predictions=tf.constant(pred_v))
    xent = tf.losses.softmax_cross_entropy(onehot_labels=tf.constant(onehot_v), logits=tf.constant(logits_v))
    sparse = tf.losses.sparse_softmax_cross_entropy(labels=tf.constant(labels_v), logits=tf.constant(logits_v))
    w = tf.Variable(np.ones((2, 2), np.float32))
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, 0.01 * tf.nn.l2_loss(w))
    total = tf.losses.get_total_loss()
    assert len(tf.losses.get_losses()) == 3
    assert len(tf.losses.get_regularization_losses()) == 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        m, xe, sp, tot = sess.run([mse, xent, sparse, total])
    m_np = np.mean((pred_v - target_v) ** 2)
    xe_np = np.mean(-np.log(np_softmax(logits_v.astype(np.float64))[np.arange(5), labels_v]))
    assert m == pytest.approx(m_np, rel=1e-5)
    assert xe == pytest.approx(xe_np, rel=1e-5) and sp == pytest.approx(xe_np, rel=1e-5)
    assert tot == pytest.approx(m_np + 2 * xe_np + 0.01 * 2.0, rel=1e-5)


# 23. Learning-rate schedule with exponential_decay ---------------------------
def test_exponential_decay_learning_rate_schedule():
    global_step = tf.Variable(0, trainable=False, name="global_step")
    lr = tf.train.exponential_decay(0.1, global_step, decay_steps=10, decay_rate=0.5, staircase=True)
    smooth = tf.train.exponential_decay(0.1, global_step, 10, 0.5)
    w = tf.Variable(1.0)
    train_op = tf.train.GradientDescentOptimizer(lr).minimize(w * 1.0, global_step=global_step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w_np, seen = 1.0, []
        for step in range(25):
            seen.append(sess.run([lr, smooth]))
            sess.run(train_op)
            w_np -= 0.1 * 0.5 ** (step // 10)
        w_tf = sess.run(w)
    for step, (a, b) in enumerate(seen):
        assert a == pytest.approx(0.1 * 0.5 ** (step // 10), rel=1e-6)
        assert b == pytest.approx(0.1 * 0.5 ** (step / 10), rel=1e-5)
    assert w_tf == pytest.approx(w_np, rel=1e-5)


# 24. ExponentialMovingAverage after the train op (TF's documented pattern) -----
def test_exponential_moving_average_after_train_op():
    w = tf.Variable([1.0, -2.0], name="w")
    loss = tf.reduce_sum(tf.square(w))
    opt = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    ema = tf.train.ExponentialMovingAverage(decay=0.9)
    with tf.control_dependencies([opt]):
        training_op = ema.apply([w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(training_op)
        shadow = sess.run(ema.average(w))
    wv = np.array([1.0, -2.0])
    sw = wv.copy()
    for _ in range(3):
        wv = wv * (1 - 0.2)
        sw = 0.9 * sw + 0.1 * wv
    np.testing.assert_allclose(shadow, sw, rtol=1e-6)
