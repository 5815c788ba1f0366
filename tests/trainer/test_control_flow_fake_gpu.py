"""Control flow in a session whose default device is a GPU (`fake_cupy`, a strict numpy-backed cupy): the
If/While ops run on the CPU (their bodies are host sub-plans), the GPU ops around them exchange values with them
through copy nodes, and the results match a CPU-only session (the oracle)."""
import numpy as np
import pytest

import fake_cupy
import tensorfleet as tf

@pytest.fixture
def gpu(monkeypatch):
    fake_cupy.install(monkeypatch, devices=1)
    return fake_cupy


def _model():
    rs = np.random.RandomState(0)
    x = tf.placeholder(tf.float32, [3, 3])
    w = tf.Variable(rs.randn(3, 3).astype(np.float32) * 0.5)
    h = tf.nn.relu(tf.matmul(x, w))  # on the GPU
    y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.tanh(tf.matmul(y, w))), [0, h])[1]
    z = tf.cond(tf.reduce_sum(y) > 0, lambda: y * 2.0, lambda: y - 1.0)
    loss = tf.reduce_sum(tf.square(z))
    return x, loss, tf.gradients(loss, w)[0], rs.randn(3, 3).astype(np.float32)


def _run(config):
    g = tf.Graph()
    with g.as_default():
        x, loss, grad, xv = _model()
        with tf.Session(config=config) as s:
            s.run(tf.global_variables_initializer())
            return s.run([loss, grad], {x: xv})


def test_control_flow_ops_run_on_the_cpu_beside_gpu_ops_and_match_the_cpu_session(gpu):
    gl, gg = _run(tf.ConfigProto())
    cl, cg = _run(tf.ConfigProto(device_count={"GPU": 0}))
    assert isinstance(gl, (np.ndarray, np.generic)) and isinstance(gg, np.ndarray)
    np.testing.assert_allclose(gl, cl, rtol=1e-5)
    np.testing.assert_allclose(gg, cg, rtol=1e-4, atol=1e-6)


def test_control_flow_pinned_to_the_gpu_needs_soft_placement(gpu):
    x = tf.placeholder(tf.float32, [2])
    with tf.device("/gpu:0"):
        y = tf.while_loop(lambda v: tf.reduce_sum(v) < 10.0, lambda v: v * 2.0, [x])
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as s:
        np.testing.assert_allclose(s.run(y, {x: [1.0, 1.0]}), [8.0, 8.0])
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="operation .while.*no supported kernel for GPU"):
            s.run(y, {x: [1.0, 1.0]})
