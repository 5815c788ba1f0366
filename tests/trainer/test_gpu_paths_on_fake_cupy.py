"""The real-GPU code paths (cupy arrays, copy nodes, pinned transfers, device contexts, CUDA-graph replay)
run on `fake_cupy`, a strict numpy-backed cupy, and compared with the same graphs on the CPU.

Simulated GPUs compute with numpy, so they cannot catch the cupy-specific bugs: host numpy arrays reaching
device kernels, implicit device->host conversions, missing `.get()`, ufunc methods cupy lacks, arrays used
on the wrong device, host syncs inside a CUDA-graph capture. `fake_cupy` raises for those like cupy does
(its docstring lists what it models and what it does not). Every graph is run twice, in a Session whose
default device is the fake GPU:0 and in a CPU-only Session (plain numpy: the oracle), and every fetched value
must match. Fetches must come back as host numpy values.
"""
import numpy as np
import pytest

import fake_cupy
import tensorfleet as tf

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
GPU1 = "/job:localhost/replica:0/task:0/device:GPU:1"
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU_ONLY = {"GPU": 0}


@pytest.fixture
def gpu(monkeypatch):
    fake_cupy.install(monkeypatch, devices=1)
    return fake_cupy


def _config(gpu_on, **kw):
    """The GPU session's config, or the CPU oracle's: no GPU, ops pinned to a GPU fall back to the CPU."""
    if gpu_on:
        return tf.ConfigProto(**kw)
    return tf.ConfigProto(device_count=CPU_ONLY, allow_soft_placement=True, **kw)


def _host(value):
    """Asserts a fetched value is a host value (numpy array or numpy scalar), recursively."""
    if isinstance(value, (list, tuple)):
        return [_host(v) for v in value]
    if value is None:
        return None
    assert isinstance(value, (np.ndarray, np.generic)), type(value)
    return value


def _run_steps(steps, gpu_on, init=True, config=None, session_hook=None):
    """Runs [(fetches, feed_dict)] in one fresh session; returns the fetched values (and the placement)."""
    cfg = config if config is not None else _config(gpu_on)
    with tf.Session(config=cfg) as s:
        if init:
            s.run(tf.global_variables_initializer())
        out = [_host(s.run(f, fd)) for f, fd in steps]
        placement = s.device_placement()
        if session_hook is not None:
            session_hook(s)
    return out, placement


def _assert_same(gpu_out, cpu_out, rtol=1e-5, atol=1e-6):
    assert len(gpu_out) == len(cpu_out)
    for g, c in zip(gpu_out, cpu_out):
        if isinstance(c, list):
            _assert_same(g, c, rtol, atol)
        elif c is not None:
            assert np.asarray(g).dtype == np.asarray(c).dtype
            np.testing.assert_allclose(g, c, rtol=rtol, atol=atol)


def _on_gpu_vs_cpu(steps, **kw):
    """Runs `steps` on the fake GPU and on the CPU: same values; GPU variables hold device arrays."""
    stored = {}
    gpu_out, placement = _run_steps(steps, True, session_hook=lambda s: stored.update(s._resources.variables),
                                    **kw)
    cpu_out, cpu_placement = _run_steps(steps, False, **kw)
    assert set(cpu_placement.values()) == {CPU0}
    _assert_same(gpu_out, cpu_out)
    for name, value in stored.items():
        assert isinstance(value, fake_cupy.ndarray) == (placement[name] != CPU0), name
    return gpu_out, placement


# -- the fake itself: the cupy rules it enforces -------------------------------------------------------
def test_fake_cupy_rejects_host_arrays_like_cupy(gpu):
    cp = gpu
    a = cp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert not isinstance(a, np.ndarray) and hasattr(type(a), "__cuda_array_interface__")
    for bad in (lambda: a + np.ones(3, np.float32), lambda: np.ones(3, np.float32) * a, lambda: a - np.array(1.0),
                lambda: cp.matmul(a, np.ones((3, 1), np.float32)), lambda: cp.concatenate([a, np.ones((2, 3))]),
                lambda: cp.where(a > 1, np.zeros((2, 3)), a)):
        with pytest.raises(TypeError, match="Unsupported type <class 'numpy.ndarray'>"):
            bad()
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(a)
    with pytest.raises(TypeError, match="Output arguments type must be cupy.ndarray"):
        np.multiply(a, 2, out=np.empty((2, 3), np.float32))
    with pytest.raises(ValueError, match="non-scalar numpy.ndarray cannot be used for fill"):
        a[0] = np.ones(3, np.float32)
    with pytest.raises(NotImplementedError, match="cupy_maximum.reduce"):
        cp.maximum.reduce(a, axis=1)
    # what cupy accepts: scalars, numpy scalars, explicit uploads, host index arrays, advanced-index uploads
    np.testing.assert_array_equal((a * np.float32(2) + 1).get(), np.arange(6).reshape(2, 3) * 2 + 1)
    a[np.array([0])] = np.ones((1, 3), np.float32)
    np.testing.assert_array_equal(a[np.array([1, 0])].get(), [[3, 4, 5], [1, 1, 1]])
    assert type(np.concatenate([a, a])) is cp.ndarray and int(a.sum()) == 15


def test_fake_cupy_devices_and_capture_rules(monkeypatch):
    fake_cupy.install(monkeypatch, devices=2)
    cp = fake_cupy
    with cp.cuda.Device(1):
        b = cp.ones(3, cp.float32)
    a = cp.ones(3, cp.float32)
    with pytest.raises(ValueError, match="Peer access is unavailable"):
        a + b
    assert cp.array(b).device.id == 0 and (a + cp.asarray(b)).get().tolist() == [2, 2, 2]
    s = cp.cuda.Stream()
    with s:
        s.begin_capture()
        c = a * 2
        a += c  # captured, not run
        for sync in (c.get, c.sum().item, lambda: bool(c[0]), lambda: cp.asarray(np.ones(3, np.float32))):
            with pytest.raises(RuntimeError, match="capturing"):
                sync()
        g = s.end_capture()
    assert a.get().tolist() == [1, 1, 1]
    a[...] = cp.full((3,), 5, cp.float32)
    g.launch(s)  # the captured kernels again, on the same buffers
    assert c.get().tolist() == [10, 10, 10] and a.get().tolist() == [15, 15, 15]


# -- training graphs -----------------------------------------------------------------------------------
def _mlp(optimizer, sparse):
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, 12], name="x")
    keep = tf.placeholder_with_default(1.0, [], name="keep_prob")
    w1 = tf.Variable(tf.truncated_normal([12, 16], stddev=0.3), name="w1")
    b1 = tf.Variable(tf.zeros([16]), name="b1")
    w2 = tf.Variable(tf.random_normal([16, 5], stddev=0.3), name="w2")
    b2 = tf.Variable(tf.constant(0.1, shape=[5]), name="b2")
    h = tf.nn.dropout(tf.nn.relu(tf.matmul(x, w1) + b1), keep_prob=keep)
    logits = tf.nn.xw_plus_b(h, w2, b2)
    if sparse:
        labels = tf.placeholder(tf.int64, [None], name="labels")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        truth = labels
    else:
        labels = tf.placeholder(tf.float32, [None, 5], name="labels")
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits))
        truth = tf.argmax(labels, 1)
    step = optimizer.minimize(loss, global_step=tf.train.get_or_create_global_step())
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), truth), tf.float32))
    rng = np.random.default_rng(0)
    steps = []
    for i in range(4):
        xs = rng.standard_normal((8 + i, 12)).astype(np.float32)  # the batch size changes: runtime shapes
        ys = rng.integers(0, 5, 8 + i)
        feed = {x: xs, labels: ys if sparse else np.eye(5, dtype=np.float32)[ys], keep: 0.75}
        steps.append(([loss, step], feed))
        steps.append(([accuracy, logits, w1, b2], {x: xs, labels: feed[labels]}))
    return steps


@pytest.mark.parametrize("opt,sparse", [("sgd", True), ("momentum", False), ("adam", False), ("adam", True)])
def test_mlp_training_matches_cpu(gpu, opt, sparse):
    optimizer = {"sgd": lambda: tf.train.GradientDescentOptimizer(0.1),
                 "momentum": lambda: tf.train.MomentumOptimizer(0.05, 0.9),
                 "adam": lambda: tf.train.AdamOptimizer(0.01)}[opt]()
    _, placement = _on_gpu_vs_cpu(_mlp(optimizer, sparse))
    assert placement["w1"] == placement["MatMul"] == GPU0


def test_cnn_training_matches_cpu(gpu):
    tf.set_random_seed(2)
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    y_ = tf.placeholder(tf.float32, [None, 3], name="y_")
    keep = tf.placeholder(tf.float32, name="keep_prob")
    img = tf.reshape(x, [-1, 8, 8, 1])
    w1 = tf.Variable(tf.truncated_normal([3, 3, 1, 4], stddev=0.2), name="w1")
    b1 = tf.Variable(tf.constant(0.1, shape=[4]), name="b1")
    h1 = tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(img, w1, [1, 1, 1, 1], "SAME") + b1), [1, 2, 2, 1], [1, 2, 2, 1],
                        "SAME")
    w2 = tf.Variable(tf.truncated_normal([3, 3, 4, 6], stddev=0.2), name="w2")
    b2 = tf.Variable(tf.constant(0.1, shape=[6]), name="b2")
    h2 = tf.nn.avg_pool(tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h1, w2, [1, 1, 1, 1], "SAME"), b2)), [1, 3, 3, 1],
                        [1, 2, 2, 1], "SAME")
    flat = tf.reshape(h2, [-1, 2 * 2 * 6])
    w3 = tf.Variable(tf.truncated_normal([24, 3], stddev=0.2), name="w3")
    logits = tf.matmul(tf.nn.dropout(flat, keep), w3)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=logits))
    step = tf.train.AdamOptimizer(0.01).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(y_, 1)), tf.float32))
    rng = np.random.default_rng(1)
    steps = []
    for _ in range(3):
        xs = rng.random((6, 64), dtype=np.float32)
        ys = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 6)]
        steps += [([loss, step], {x: xs, y_: ys, keep: 0.5}), ([accuracy, w1, b2], {x: xs, y_: ys, keep: 1.0})]
    _, placement = _on_gpu_vs_cpu(steps)
    assert placement["Conv2D"] == placement["MaxPool"] == GPU0


# -- more ops: reductions, scatter updates, pads --------------------------------------------------------
def test_reductions_and_their_gradients_match_cpu(gpu):
    x = tf.placeholder(tf.float32, [None, 3, 4], name="x")
    outs = [tf.reduce_sum(x, [0, 2]), tf.reduce_mean(x, 1, keepdims=True), tf.reduce_max(x, -1),
            tf.reduce_min(x), tf.reduce_prod(x, 2), tf.reduce_logsumexp(x, 1), tf.nn.l2_loss(x),
            tf.reduce_mean(tf.nn.softmax(x)), tf.reduce_sum(tf.nn.log_softmax(x), 1),
            tf.reduce_sum(tf.sigmoid(x) * tf.tanh(x)), tf.argmax(x, 2), tf.argmin(x, 1)]
    loss = tf.add_n([tf.reduce_sum(o) for o in outs if o.dtype == tf.float32])
    feed = {x: np.random.default_rng(4).standard_normal((2, 3, 4)).astype(np.float32)}
    _on_gpu_vs_cpu([(outs + tf.gradients(loss, [x]), feed)], init=False)


def test_scatter_updates_and_pads_match_cpu(gpu):
    v = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="v")
    idx = tf.placeholder(tf.int64, [None], name="idx")
    upd = tf.placeholder(tf.float32, [None, 3], name="upd")
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    padded = tf.pad(x, [[1, 0], [0, 2]], constant_values=-1.5)
    mirrored = tf.pad(x, [[1, 1], [2, 2]], mode="REFLECT")
    pads = [padded, mirrored] + tf.gradients(tf.reduce_sum(padded * padded) + tf.reduce_sum(mirrored * 2), [x])
    feed = {idx: [0, 2, 0], upd: np.full((3, 3), 0.5, np.float32), x: np.arange(6, dtype=np.float32).reshape(2, 3)}
    # repeated indices accumulate (add, sub); cupy's ufunc.at has add only
    _on_gpu_vs_cpu([(op, feed) for op in (tf.scatter_sub(v, idx, upd), tf.scatter_add(v, idx, upd * 3),
                                          tf.scatter_update(v, idx[1:], upd[1:]), pads)])


# -- runtime shapes: Shape/Size/Rank tensors feeding device ops -----------------------------------------
def test_runtime_shape_tensors_and_broadcasting_gradients_match_cpu(gpu):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1, 3], name="y")
    idx = tf.placeholder(tf.int32, [None], name="idx")
    w = tf.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), name="w")
    z = x * y + (x - tf.reduce_mean(x, 0)) / tf.cast(tf.shape(x)[0], tf.float32)  # [n, m, 3] broadcast
    flat = tf.reshape(z, tf.stack([-1, tf.shape(x)[1]]))
    twice = tf.reshape(tf.concat([x, x], axis=1), tf.shape(x) * [1, 2])
    filled = tf.fill(tf.shape(x), 2.0) * x
    tiled = tf.tile(x, [2, 1])
    hot = tf.one_hot(idx, 4, on_value=1.5, off_value=-0.5)
    rows = tf.gather(w, idx)
    sizes = tf.cast(tf.size(x), tf.float32) + tf.cast(tf.rank(y), tf.float32)
    ones = tf.ones(tf.shape(x)) + tf.zeros_like(x)
    total = (tf.reduce_sum(flat * flat) + tf.reduce_sum(twice) + tf.reduce_sum(filled) * tf.reduce_sum(tiled)
             + tf.reduce_sum(tf.matmul(hot, w) * rows) + sizes + tf.reduce_sum(ones * x))
    grads = tf.gradients(total, [x, y, w])
    rng = np.random.default_rng(3)
    steps = []
    for n, m in ((2, 1), (3, 4)):
        feed = {x: rng.standard_normal((n, 3)).astype(np.float32),
                y: rng.standard_normal((m, 1, 3)).astype(np.float32), idx: rng.integers(0, 4, n).astype(np.int32)}
        steps.append(([total, z, flat, twice, filled, tiled, hot, rows, sizes] + grads, feed))
    _, placement = _on_gpu_vs_cpu(steps)
    assert placement["Reshape_1"] == placement["Fill"] == GPU0


# -- feeds, fetches, variables, saver ------------------------------------------------------------------
def test_feeds_and_fetches_are_host_values(gpu):
    s_ = tf.placeholder(tf.float32, [], name="s")
    v = tf.placeholder(tf.float32, [None], name="v")
    i = tf.placeholder(tf.int64, [2], name="i")
    big = tf.placeholder(tf.float32, [None, 64], name="big")
    outs = [v * s_, s_ * 2.0, tf.reduce_sum(v), i + 1, big * 3.0, tf.transpose(big)]
    steps = [(outs + [v, s_], {s_: 2.0, v: [1.0, 2.0, 3.0], i: [4, 5], big: np.ones((40, 64), np.float32)}),
             (outs, {s_: np.float32(3), v: np.arange(2, dtype=np.float32), i: np.array([1, 2]),
                     big: np.arange(128 * 64, dtype=np.float32).reshape(128, 64)})]
    out, placement = _on_gpu_vs_cpu(steps, init=False)
    assert placement["mul"] == GPU0
    assert isinstance(out[0][1], np.float32) and isinstance(out[0][4], np.ndarray)


def test_saver_round_trip_from_gpu_model(gpu, tmp_path):
    steps = _mlp(tf.train.MomentumOptimizer(0.05, 0.9), sparse=True)[:2]
    saver = tf.train.Saver()
    variables = tf.global_variables()
    saved = {}

    def save(sess):
        saved["values"] = sess.run(variables)
        saver.save(sess, str(tmp_path / "model"))

    _run_steps(steps, True, session_hook=save)
    for gpu_on in (True, False):
        with tf.Session(config=_config(gpu_on)) as s:
            saver.restore(s, str(tmp_path / "model"))
            _assert_same(_host(s.run(variables)), saved["values"], rtol=0, atol=0)
            assert s.device_placement()[variables[0].op.name] == (GPU0 if gpu_on else CPU0)
            assert isinstance(s._resources.variables[variables[0].op.name], fake_cupy.ndarray) == gpu_on


# -- placement: copy nodes between CPU and GPU, log_device_placement, two GPUs --------------------------
def test_cpu_gpu_copy_nodes_and_log_device_placement(gpu, capfd):
    with tf.device("/cpu:0"):
        a = tf.placeholder(tf.float32, [None, 3], name="a")
        a2 = tf.square(a, name="a2")
        n = tf.shape(a, name="n")
    with tf.device("/gpu:0"):
        b = tf.matmul(a2, a2, transpose_b=True, name="b")
        m = tf.reshape(b, tf.stack([n[0] * n[0]]), name="m")
        v = tf.Variable(tf.ones([3]), name="v")
        upd = tf.assign_add(v, tf.reduce_sum(a2, 0), name="upd")
    with tf.device("/cpu:0"):
        c = tf.add(tf.reduce_sum(m), tf.reduce_sum(upd), name="c")
    g = tf.gradients(c, [a])[0]
    feed = {a: np.arange(6, dtype=np.float32).reshape(2, 3)}
    _, placement = _on_gpu_vs_cpu([([c, b, m, g], feed), ([c, g], feed)])
    assert placement["b"] == placement["upd"] == GPU0 and placement["c"] == placement["a2"] == CPU0
    capfd.readouterr()
    with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as s:
        s.run(v.initializer)
        s.run(c, feed)
    err = capfd.readouterr().err
    for line in (f"b: (MatMul): {GPU0}", f"c: (Add): {CPU0}", f"a2/_copy_0_to_GPU_0: (_Copy): {GPU0}",
                 f"m/_copy_0_to_CPU_0: (_Copy): {CPU0}", f"n/_copy_0_to_GPU_0: (_Copy): {GPU0}"):
        assert line in err.splitlines(), line


def test_two_gpus_peer_copies_match_cpu(monkeypatch):
    fake_cupy.install(monkeypatch, devices=2)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.device("/gpu:0"):
        w0 = tf.Variable(np.eye(4, dtype=np.float32) * 2, name="w0")
        h0 = tf.nn.relu(tf.matmul(x, w0), name="h0")
    with tf.device("/gpu:1"):
        w1 = tf.Variable(np.full((4, 2), 0.5, np.float32), name="w1")
        h1 = tf.matmul(h0, w1, name="h1") + tf.reduce_mean(h0)
    loss = tf.reduce_sum(h1 * h1)
    step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    rng = np.random.default_rng(5)
    steps = [([loss, step, h1], {x: rng.standard_normal((3, 4)).astype(np.float32)}) for _ in range(3)]
    _, placement = _on_gpu_vs_cpu(steps)
    assert placement["h0"] == GPU0 and placement["h1"] == GPU1


# -- per-step host traffic: no hidden syncs ------------------------------------------------------------
def _steady_state_traffic(fetches, feed):
    """fake_cupy's host<->device transfers of one run of an already warm plan."""
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(fetches, feed)
        fake_cupy.transfers.clear()
        s.run(fetches, feed)
    return dict(fake_cupy.transfers)


def test_an_mlp_training_step_has_no_hidden_host_syncs(gpu):
    steps = _mlp(tf.train.AdamOptimizer(0.01), sparse=True)
    (loss, step), feed = steps[0]
    # three feeds up, the dropout mask's host-drawn random numbers up, the loss down: nothing else
    assert _steady_state_traffic([loss, step], feed) == {("h2d", "set"): 3, ("d2h", "get"): 1,
                                                         ("h2d", "cupy.array/asarray of host data"): 1}


def test_a_cnn_training_step_has_no_hidden_host_syncs(gpu):
    _, steps = _replay_model("cnn")
    fetches, feed = steps[0]
    # the conv gradients read their static filter/input sizes on the host: two feeds up, the loss down
    assert _steady_state_traffic(fetches, feed) == {("h2d", "set"): 2, ("d2h", "get"): 1}


def test_runtime_shapes_are_read_without_device_syncs(gpu):
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    n = tf.shape(x)[0]
    y = tf.reshape(x, tf.stack([n * 2, -1])) * tf.fill(tf.shape(x) * [2, 1] // [1, 2], 3.0)
    w = tf.Variable(tf.ones([3]), name="w")
    loss = tf.reduce_sum(y * w) / tf.cast(n, tf.float32)
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    feed = {x: np.ones((4, 6), np.float32)}
    # Shape arithmetic stays on the host (TF's int32 rule): only Cast(n) uploads; no device->host sync
    assert _steady_state_traffic([loss, step], feed) == {("h2d", "set"): 1, ("d2h", "get"): 1,
                                                         ("h2d", "cupy.array/asarray of host data"): 1}
    _on_gpu_vs_cpu([([loss, step, y], feed), ([loss, step], {x: np.arange(12, dtype=np.float32).reshape(2, 6)})])


def test_sparse_xent_out_of_range_labels_give_nan_rows_on_gpu_like_tf(gpu):
    logits = tf.placeholder(tf.float32, [3, 4], name="logits")
    labels = tf.placeholder(tf.int64, [3], name="labels")
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    (grad,) = tf.gradients(loss, [logits])
    feed = {logits: np.zeros((3, 4), np.float32), labels: [1, 7, -1]}
    with tf.Session() as s:  # TF's GPU kernel does not check (that would sync every step): NaN rows instead
        lv, gv = s.run([loss, grad], feed)
    np.testing.assert_allclose(lv, [np.log(4), np.nan, np.nan])
    assert np.isfinite(gv[0]).all() and np.isnan(gv[1:]).all()
    with tf.Session(config=_config(False)) as s, pytest.raises(tf.errors.InvalidArgumentError, match="label value"):
        s.run(loss, feed)


# -- CUDA-graph replay ---------------------------------------------------------------------------------
def _replay_model(kind):
    tf.set_random_seed(3)
    if kind == "cnn":
        x = tf.placeholder(tf.float32, [4, 6, 6, 2], name="x")
        f = tf.Variable(tf.truncated_normal([3, 3, 2, 3], stddev=0.5), name="f")
        h = tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME")), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        logits = tf.reshape(h, [4, 27])[:, :5]
    else:
        x = tf.placeholder(tf.float32, [16, 8], name="x")
        w = tf.Variable(tf.truncated_normal([8, 5], stddev=0.5), name="w")
        logits = tf.matmul(x, w) + tf.Variable(tf.zeros([5]), name="b")
    rng = np.random.default_rng(6)
    ys = [rng.integers(0, 5, x.shape.as_list()[0]) for _ in range(5)]
    if kind == "mlp-sparse-sgd":
        labels = tf.placeholder(tf.int64, [16], name="labels")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        opt = tf.train.GradientDescentOptimizer(0.1)
    else:
        labels = tf.placeholder(tf.float32, [len(ys[0]), 5], name="labels")
        ys = [np.eye(5, dtype=np.float32)[y] for y in ys]
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits))
        opt = tf.train.AdamOptimizer(0.05) if kind == "mlp-adam" else tf.train.MomentumOptimizer(0.05, 0.9)
    step = opt.minimize(loss)
    xs = [rng.standard_normal(x.shape.as_list()).astype(np.float32) for _ in ys]
    return step, [([loss, step], {x: xv, labels: yv}) for xv, yv in zip(xs, ys)]


@pytest.mark.parametrize("kind", ["mlp-adam", "mlp-sparse-sgd", "cnn"])
def test_cuda_graph_replay_captures_and_matches_cpu(gpu, kind):
    step, steps = _replay_model(kind)
    replays = {}

    def keep_replay(sess):
        replays["r"] = next(p.replay for k, p in sess._plans.items() if step in k[2])

    cfg = tf.ConfigProto()
    cfg.experimental.cuda_graph_replay = True
    gpu_out, _ = _run_steps(steps, True, config=cfg, session_hook=keep_replay)
    cpu_out, _ = _run_steps(steps, False)
    _assert_same(gpu_out, cpu_out)
    r = replays["r"]
    # captured once (no host sync or upload inside the step), then replayed: every step matches the CPU
    assert r is not None and r.last_error is None, r.last_error
    assert r.captures == 1 and r.replays == len(steps) - 1


def test_cuda_graph_replay_falls_back_cleanly_when_capture_fails(gpu):
    """A kernel that syncs with the host cannot be captured: the plan runs normally, with the same results."""
    x = tf.placeholder(tf.float32, [8, 4], name="x")
    w = tf.Variable(np.eye(4, 3, dtype=np.float32), name="w")
    lengths = tf.placeholder(tf.int32, [8], name="lengths")
    mask = tf.cast(tf.sequence_mask(lengths), tf.float32)  # no maxlen: its width is read back from the device
    loss = tf.reduce_sum(tf.matmul(x, w) * mask)
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    rng = np.random.default_rng(7)
    steps = [([loss, step], {x: rng.standard_normal((8, 4)).astype(np.float32),
                             lengths: np.r_[3, rng.integers(0, 4, 7)].astype(np.int32)})
             for _ in range(4)]
    replays = {}
    cfg = tf.ConfigProto()
    cfg.experimental.cuda_graph_replay = True
    gpu_out, _ = _run_steps(steps, True, config=cfg, session_hook=lambda s: replays.setdefault(
        "r", next(p.replay for k, p in s._plans.items() if step in k[2])))
    _assert_same(gpu_out, _run_steps(steps, False)[0])
    r = replays["r"]
    assert r.disabled and r.captures == 0 and "capturing" in str(r.last_error)


@pytest.mark.parametrize("kind", ["gather", "gather-axis1", "embedding"])
def test_gather_on_gpu_needs_no_host_sync_and_gives_zeros_for_bad_indices_like_tf(gpu, kind):
    """TF's GPU gather does not check indices (a device->host sync per step): out-of-range ones give zeros."""
    params = tf.Variable(np.arange(24, dtype=np.float32).reshape(4, 6) / 10, name="params")
    ids = tf.placeholder(tf.int32, [None], name="ids")
    if kind == "embedding":
        out = tf.nn.embedding_lookup(params, ids)
    else:
        out = tf.gather(params, ids, axis=1 if kind == "gather-axis1" else 0)
    loss = tf.reduce_sum(out * out)
    (grad,) = tf.gradients(loss, [params])
    grad = tf.convert_to_tensor(grad)  # an IndexedSlices along axis 0, as TF's: its dense form, built on the GPU
    good = {ids: np.array([3, 0, 3, 1], np.int32)}
    _on_gpu_vs_cpu([([out, grad], good)])
    assert _steady_state_traffic([loss, grad], good) == {("h2d", "set"): 1, ("d2h", "get"): 2}
    bad = np.array([1, -1, 9, 2], np.int32)
    with tf.Session() as s:
        s.run(params.initializer)
        ov, gv = s.run([out, grad], {ids: bad})
    pv = np.arange(24, dtype=np.float32).reshape(4, 6) / 10
    axis = 1 if kind == "gather-axis1" else 0
    ok = (bad >= 0) & (bad < pv.shape[axis])
    expect = np.take(pv, np.where(ok, bad, 0), axis=axis)
    expect = np.where(ok[None, :] if axis else ok[:, None], expect, 0)
    np.testing.assert_array_equal(ov, expect)
    expect_grad = np.zeros_like(pv)
    for k, i in enumerate(bad):
        if ok[k]:
            if axis:
                expect_grad[:, i] += 2 * expect[:, k]
            else:
                expect_grad[i] += 2 * expect[k]
    np.testing.assert_allclose(gv, expect_grad, rtol=1e-6)
    with tf.Session(config=_config(False)) as s, pytest.raises(tf.errors.InvalidArgumentError, match="not in"):
        s.run(params.initializer)
        s.run(out, {ids: bad})  # the CPU checks, as TF's CPU kernel does


def test_gather_nd_on_gpu_needs_no_host_sync_and_gives_zeros_for_bad_rows_like_tf(gpu):
    params = tf.Variable(np.arange(24, dtype=np.float32).reshape(4, 3, 2) / 10, name="params")
    idx = tf.placeholder(tf.int32, [None, 2], name="idx")
    out = tf.gather_nd(params, idx)
    loss = tf.reduce_sum(out * out)
    (grad,) = tf.gradients(loss, [params])
    good = {idx: np.array([[3, 2], [0, 0], [3, 2]], np.int32)}
    _on_gpu_vs_cpu([([out, grad], good)])
    assert _steady_state_traffic([loss, grad], good) == {("h2d", "set"): 1, ("d2h", "get"): 2}
    bad = np.array([[1, 2], [4, 0], [0, -1], [2, 1]], np.int32)
    with tf.Session() as s:
        s.run(params.initializer)
        ov, gv = s.run([out, grad], {idx: bad})
    pv = np.arange(24, dtype=np.float32).reshape(4, 3, 2) / 10
    ok = np.array([True, False, False, True])
    expect = np.where(ok[:, None], pv[np.where(ok, bad[:, 0], 0), np.where(ok, bad[:, 1], 0)], 0)
    np.testing.assert_array_equal(ov, expect)
    expect_grad = np.zeros_like(pv)
    for k in np.nonzero(ok)[0]:
        expect_grad[bad[k, 0], bad[k, 1]] += 2 * expect[k]
    np.testing.assert_allclose(gv, expect_grad, rtol=1e-6)
    with tf.Session(config=_config(False)) as s, pytest.raises(tf.errors.InvalidArgumentError, match="does not index"):
        s.run(params.initializer)
        s.run(out, {idx: bad})  # the CPU checks, as TF's CPU kernel does
