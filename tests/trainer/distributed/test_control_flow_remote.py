"""Control flow over the distributed runtime: a while_loop and a cond placed on another task (a real process
on 127.0.0.1), their gradients, a variable assigned inside a remote branch, and the GraphDef round trip of
functional ops. Oracle: numpy recurrences."""
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet.graph_def import as_graph_def, import_graph_def


def _loop(x, w, n):
    return tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, tf.tanh(tf.matmul(y, w))), [0, x])[1]


def _np_loop(x, w, n):
    for _ in range(n):
        x = np.tanh(x @ w)
    return x


def test_function_attrs_round_trip_through_graph_def():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 2], name="x")
        w = tf.constant([[0.5, 0.1], [-0.3, 0.8]], name="w")
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: _loop(x, w, 3), lambda: x * 2.0, name="pick")
    g2 = tf.Graph()
    import_graph_def(as_graph_def(g), g2)
    xv = np.array([[1.0, 0.5], [0.2, -0.1]], np.float32)
    with tf.Session(graph=g2) as s:
        out = s.run(g2.get_tensor_by_name(y.name), {g2.get_tensor_by_name("x:0"): xv})
    np.testing.assert_allclose(out, _np_loop(xv, np.array([[0.5, 0.1], [-0.3, 0.8]], np.float32), 3), rtol=1e-5)


def test_while_loop_and_gradient_on_a_remote_task(cluster_procs, local_servers):
    c = cluster_procs({"worker": 2})
    c.start("worker", 1)
    w0 = tf.train.Server(c.spec, job_name="worker", task_index=0)
    local_servers.append(w0)
    rs = np.random.RandomState(0)
    xv, wv = rs.randn(3, 3).astype(np.float32) * 0.5, rs.randn(3, 3).astype(np.float32) * 0.5
    x = tf.placeholder(tf.float32, [3, 3])
    with tf.device("/job:worker/task:1"):
        w = tf.Variable(wv, name="w")
        y = _loop(x, w, 5)
        dw = tf.gradients(tf.reduce_sum(y), w)[0]
    loss = tf.reduce_sum(y)
    with tf.Session(w0.target, config=tf.ConfigProto(log_device_placement=False)) as s:
        s.run(w.initializer)
        yv, gv, lv = s.run([y, dw, loss], {x: xv})
    np.testing.assert_allclose(yv, _np_loop(xv, wv, 5), rtol=1e-5)
    assert np.isclose(lv, _np_loop(xv, wv, 5).sum(), rtol=1e-5)
    eps, num = 1e-3, np.zeros_like(wv, dtype=np.float64)
    for idx in np.ndindex(*wv.shape):
        wp, wm = wv.astype(np.float64), wv.astype(np.float64)
        wp[idx] += eps
        wm[idx] -= eps
        x64 = xv.astype(np.float64)
        num[idx] = (_np_loop(x64, wp, 5).sum() - _np_loop(x64, wm, 5).sum()) / (2 * eps)
    np.testing.assert_allclose(gv, num, rtol=2e-3, atol=2e-4)


def test_cond_assigns_remote_variable_only_when_taken(cluster_procs, local_servers):
    c = cluster_procs({"worker": 2})
    c.start("worker", 1)
    w0 = tf.train.Server(c.spec, job_name="worker", task_index=0)
    local_servers.append(w0)
    p = tf.placeholder(tf.bool, [])
    with tf.device("/job:worker/task:1"):
        v = tf.Variable(0.0, name="counter")

        def bump(k):
            def fn():
                with tf.control_dependencies([tf.assign_add(v, k)]):
                    return tf.constant(k)
            return fn
        out = tf.cond(p, bump(1.0), bump(100.0))
    with tf.Session(w0.target) as s:
        s.run(v.initializer)
        assert s.run(out, {p: True}) == 1.0
        assert s.run(out, {p: True}) == 1.0
        assert s.run(v) == 2.0
        assert s.run(out, {p: False}) == 100.0
        assert s.run(v) == 102.0


def test_while_loop_through_a_local_grpc_server(local_servers):
    server = tf.train.Server.create_local_server()
    local_servers.append(server)
    assert server.target.startswith("grpc://")
    x = tf.placeholder(tf.float32, [2])
    out = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * 2.0 + 1.0), [0, x])[1]
    grad = tf.gradients(tf.reduce_sum(out), x)[0]
    with tf.Session(server.target) as s:
        yv, gv = s.run([out, grad], {x: [1.0, -1.0]})
    np.testing.assert_allclose(yv, [31.0, -1.0])  # y <- 2y + 1 four times
    np.testing.assert_allclose(gv, [16.0, 16.0])


def test_gradients_of_a_remote_cond_and_loop_use_the_forward_random_values(cluster_procs, local_servers):
    """The gradient If (fed the forward If's exported values) and WhileGrad (fed the recorded masks) shipped
    to another task: d sum(y) / dx = y / x with the masks of the same run."""
    c = cluster_procs({"worker": 2})
    c.start("worker", 1)
    w0 = tf.train.Server(c.spec, job_name="worker", task_index=0)
    local_servers.append(w0)
    x = tf.placeholder(tf.float32, [4, 6])
    with tf.device("/job:worker/task:1"):
        y = tf.cond(tf.constant(True), lambda: tf.nn.dropout(x, rate=0.5), lambda: x)
        y = tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, tf.nn.dropout(v, rate=0.3)), [0, y])[1]
        g = tf.gradients(tf.reduce_sum(y), x)[0]
    xv = np.arange(1, 25, dtype=np.float32).reshape(4, 6)
    with tf.Session(w0.target) as s:
        yv, gv = s.run([y, g], {x: xv})
    np.testing.assert_allclose(gv, yv / xv, rtol=1e-5)
    assert np.any(yv == 0)


def _cond_graph_def():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x, name="pick")
    return as_graph_def(g)


def test_a_malformed_function_body_is_rejected_naming_the_node():
    gd = _cond_graph_def()
    node = next(n for n in gd.node if n.op == "If")
    node.attr["then_branch"].func.attr["graph"].s = b"\xff\x00not a graph"
    with pytest.raises(tf.errors.InvalidArgumentError, match="pick.*then_branch.*bad function body"):
        import_graph_def(gd, tf.Graph())
    gd = _cond_graph_def()
    node = next(n for n in gd.node if n.op == "If")
    node.attr["else_branch"].func.attr["outputs"].list.s[0] = b"nosuch:0"
    with pytest.raises(tf.errors.InvalidArgumentError, match="else_branch.*function input/output"):
        import_graph_def(gd, tf.Graph())


def test_function_nesting_depth_is_bounded_on_import(monkeypatch):
    from tensorfleet import func_graph
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        y = x
        for _ in range(3):
            y = tf.cond(y > 0, lambda y=y: tf.cond(y > 1, lambda: y * 2.0, lambda: y), lambda y=y: y)
    gd = as_graph_def(g)
    monkeypatch.setattr(func_graph, "MAX_NESTING", 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="nested more than 1 levels"):
        import_graph_def(gd, tf.Graph())
