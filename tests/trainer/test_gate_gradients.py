"""`Optimizer.compute_gradients(gate_gradients=GATE_OP)` (minimize's default) gates each op's input gradients
as TF does, so no variable update runs before every gradient that reads the variable.

This was the cause of the variational autoencoder's disagreement with TF (issue 30: final loss 207.9 against
TF's 174.5-181.3): without the gate, from a plan's second run on, the executor ran the decoder's update before
the encoder's gradient `d(z @ W_dec)/dz` read `W_dec`, so the encoder learned through already-updated decoder
weights. Oracles: numpy backprop of the same steps; TF 1.15's graph names for the gate; a VAE's losses under
real TensorFlow (a committed fixture, `scripts/gen_vae_fixture.py`).
"""
import importlib.util
import os

import numpy as np
import pytest

import tensorfleet as tf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "vae_tf_losses.npz")


def _two_layer_sgd_numpy(x, t, w1, w2, lr, steps):
    """Plain SGD on mean((tanh(x @ w1) @ w2 - t)^2): every gradient from the weights before the step."""
    for _ in range(steps):
        h = np.tanh(x @ w1)
        y = h @ w2
        dy = 2.0 * (y - t) / y.size
        dw2 = h.T @ dy
        dw1 = x.T @ ((dy @ w2.T) * (1 - h * h))
        w1, w2 = w1 - lr * dw1, w2 - lr * dw2
    return w1, w2


@pytest.mark.parametrize("steps", [1, 2, 5])
def test_minimize_updates_from_the_weights_before_the_step(steps):
    rng = np.random.RandomState(0)
    x0, t0 = rng.randn(8, 5).astype(np.float32), rng.randn(8, 3).astype(np.float32)
    w1_0, w2_0 = rng.randn(5, 4).astype(np.float32), rng.randn(4, 3).astype(np.float32)
    x, t = tf.constant(x0), tf.constant(t0)
    w1, w2 = tf.Variable(w1_0), tf.Variable(w2_0)
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.tanh(tf.matmul(x, w1)), w2) - t))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):  # the second run on takes the executor's fast path (reads folded into consumers)
            sess.run(train)
        got1, got2 = sess.run([w1, w2])
    want1, want2 = _two_layer_sgd_numpy(x0.astype(np.float64), t0, w1_0.astype(np.float64), w2_0, 0.5, steps)
    np.testing.assert_allclose(got1, want1, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got2, want2, rtol=1e-4, atol=1e-5)


def test_gate_op_builds_tf_tuple_names_and_gate_none_builds_none():
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(tf.ones([3, 2]), name="w")
    v = tf.Variable(tf.ones([2, 1]), name="v")
    loss = tf.reduce_sum(tf.matmul(tf.matmul(x, w), v))
    opt = tf.train.GradientDescentOptimizer(0.1)
    grads = opt.compute_gradients(loss)
    g = tf.get_default_graph()
    # the second matmul's gradients (wrt its input and wrt v), TF's names
    gate = g.get_operation_by_name("gradients/MatMul_1_grad/tuple/group_deps")
    assert gate.type == "NoOp"
    dep = g.get_operation_by_name("gradients/MatMul_1_grad/tuple/control_dependency")
    dep1 = g.get_operation_by_name("gradients/MatMul_1_grad/tuple/control_dependency_1")
    assert dep.type == dep1.type == "Identity" and gate in dep.control_inputs and gate in dep1.control_inputs
    assert grads[1][0].name == "gradients/MatMul_1_grad/tuple/control_dependency_1:0"
    assert grads[0][0].name == "gradients/MatMul_grad/tuple/control_dependency_1:0"

    g2 = tf.Graph()
    with g2.as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        w = tf.Variable(tf.ones([3, 2]))
        loss = tf.reduce_sum(tf.matmul(x, w))
        (grad, _), = tf.train.GradientDescentOptimizer(0.1).compute_gradients(
            loss, gate_gradients=tf.train.Optimizer.GATE_NONE)
        assert not any("tuple" in op.name for op in g2.get_operations())
        assert grad.op.type == "MatMul"


def _ancestors(op) -> set:
    seen, stack = set(), [op]
    while stack:
        o = stack.pop()
        for parent in [t.op for t in o.inputs] + list(o.control_inputs):
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen


@pytest.mark.parametrize("optimizer", [tf.train.GradientDescentOptimizer(0.1), tf.train.AdamOptimizer(),
                                       tf.train.RMSPropOptimizer(0.01)], ids=["sgd", "adam", "rmsprop"])
def test_every_gradient_reading_a_variable_runs_before_its_update(optimizer):
    """TF's GATE_OP guarantee, whatever order an executor picks: each update op depends on every op of the
    step's gradient computation that reads its variable (here `d(h @ W2)/dh` reads W2)."""
    x = tf.placeholder(tf.float32, [None, 4])
    h = x
    weights = []
    for i in range(3):
        w = tf.Variable(tf.ones([4, 4]), name=f"w{i}")
        weights.append(w)
        h = tf.nn.softplus(tf.matmul(h, w))
    train = optimizer.minimize(tf.reduce_sum(h))
    step = _ancestors(train)  # what a training step runs (a gradient nothing uses, e.g. d/dx, is not run)
    updates = [op for op in step if op.type.startswith("Apply")]
    assert len(updates) == 3
    checked = 0
    for update in updates:
        var_op = update.attrs["var"]  # the variable the fused update writes
        readers = {c for t in var_op.outputs for c in t.consumers() if c.name.startswith("gradients/") and c in step}
        checked += bool(readers)
        assert readers <= _ancestors(update), (update.name, readers - _ancestors(update))
    assert checked == 2  # w1 and w2 (w0 is read only by d/dx, which the step does not run)


def test_tf_gradients_gate_gradients_and_tuple_semantics():
    a = tf.constant([[1.0, 2.0]])
    b = tf.constant([[3.0], [4.0]])
    da, db = tf.gradients(tf.matmul(a, b), [a, b], gate_gradients=True)
    assert da.op.type == db.op.type == "Identity"
    with tf.Session() as sess:
        got_a, got_b = sess.run([da, db])
    np.testing.assert_array_equal(got_a, [[3.0, 4.0]])
    np.testing.assert_array_equal(got_b, [[1.0], [2.0]])
    t1, t2, none = tf.tuple([a, b, None])
    assert none is None and t1.op.name == "tuple/control_dependency" and t2.op.name == "tuple/control_dependency_1"
    assert tf.get_default_graph().get_operation_by_name("tuple/group_deps").type == "NoOp"


def _vae_script():
    spec = importlib.util.spec_from_file_location("gen_vae_fixture", os.path.join(ROOT, "scripts",
                                                                                  "gen_vae_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _digits():
    from tensorfleet.datasets import samples

    images, _ = samples.load_digits_arrays()
    return (images.astype(np.float32) / 16.0).astype(np.float32)


@pytest.mark.parametrize("optimizer", ["rmsprop", "adam"])
def test_vae_losses_step_by_step_as_tensorflow(optimizer):
    """Same weights, batches and noise: every step's loss as real TF's (until float rounding compounds)."""
    want = np.load(FIXTURE)[f"det_{optimizer}"]
    got = _vae_script().train(tf, _digits(), len(want), deterministic=True, optimizer=optimizer)
    np.testing.assert_allclose(got, want, rtol=2e-5)


@pytest.mark.slow
def test_vae_trains_to_tensorflows_loss():
    """Seeded runs (random initial weights and noise): the final loss within TF's three runs' spread."""
    script = _vae_script()
    tf_finals = np.load(FIXTURE)["seeded_adam"]
    got = script.train(tf, _digits(), script.SEEDED_STEPS, deterministic=False, seed=1)[-script.SEEDED_TAIL:].mean()
    spread = max(tf_finals.max() - tf_finals.min(), 0.1)
    assert tf_finals.min() - spread <= got <= tf_finals.max() + spread, (got, tf_finals)
