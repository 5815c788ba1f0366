"""tf.IndexedSlices (indexed_slices.py, ops/indexed_slices_ops.py, the optimizers' sparse paths in
train/sparse_updates.py) against TF 1.15's documented semantics: the gradient of a gather is an IndexedSlices
naming only the looked-up rows, several add up by concatenation, fetching one gives an IndexedSlicesValue, and
each optimizer's sparse update equals a numpy implementation of TF's SparseApply* kernel (rows not in the
gradient unchanged; duplicate indices summed first), Adam being TF's non-lazy sparse Adam (= its dense update)."""
import numpy as np
import pytest

import tensorfleet as tf

TABLE = np.arange(12, dtype=np.float64).reshape(6, 2) / 10
IDS = np.array([0, 3, 3, 5])  # row 3 twice: its gradient rows add up
LOOKUP_WEIGHTS = np.array([[1.0, -2.0], [0.5, 1.0], [0.25, 3.0], [-1.0, 0.5]])  # d loss / d each looked-up row


def test_the_gradient_of_a_gather_is_an_indexed_slices_of_its_rows():
    v = tf.Variable(TABLE)
    a = tf.nn.embedding_lookup(v, IDS)
    b = tf.gather(v, [1, 5])
    (g,) = tf.gradients(tf.reduce_sum(a) + tf.reduce_sum(b * 3.0), [v])
    assert isinstance(g, tf.IndexedSlices) and g.dense_shape is not None
    (mixed,) = tf.gradients(tf.reduce_sum(a) + tf.reduce_sum(v), [v])  # also used densely: a dense Tensor
    assert isinstance(mixed, tf.Tensor)
    with tf.Session() as sess:
        sess.run(v.initializer)
        value = sess.run(g)
        dense, mixed_value = sess.run([tf.convert_to_tensor(g), mixed])
    assert isinstance(value, tf.IndexedSlicesValue)
    np.testing.assert_array_equal(np.sort(value.indices), [0, 1, 3, 3, 5, 5])
    np.testing.assert_array_equal(value.dense_shape, [6, 2])
    want = np.zeros_like(TABLE)
    np.add.at(want, IDS, 1.0)
    np.add.at(want, [1, 5], 3.0)
    np.testing.assert_array_equal(dense, want)
    want_mixed = np.ones_like(TABLE)
    np.add.at(want_mixed, IDS, 1.0)
    np.testing.assert_array_equal(mixed_value, want_mixed)


def test_clip_by_global_norm_keeps_indexed_slices_and_uses_their_values():
    v = tf.Variable(TABLE)
    (g,) = tf.gradients(tf.reduce_sum(tf.nn.embedding_lookup(v, IDS) * 4.0), [v])
    (clipped,), norm = tf.clip_by_global_norm([g], 1.0)
    assert isinstance(clipped, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(v.initializer)
        got_norm, got = sess.run([norm, tf.convert_to_tensor(clipped)])
    assert got_norm == pytest.approx(np.sqrt(len(IDS) * 2 * 16.0))  # TF: the norm of the values as they are
    want = np.zeros_like(TABLE)
    np.add.at(want, IDS, 4.0 / got_norm)
    np.testing.assert_allclose(got, want)


def _sparse_oracle(name, var, slots, rows, grad_rows, hp):
    """numpy of TF's SparseApply* kernels (training_ops.cc) on deduplicated rows."""
    lr = hp["lr"]
    for r, g in zip(rows, grad_rows):
        if name == "momentum":
            slots["accum"][r] = slots["accum"][r] * hp["mu"] + g
            var[r] -= lr * slots["accum"][r]
        elif name == "adagrad":
            slots["accum"][r] += g * g
            var[r] -= lr * g / np.sqrt(slots["accum"][r])
        elif name == "rmsprop":
            slots["ms"][r] = hp["rho"] * slots["ms"][r] + (1 - hp["rho"]) * g * g
            slots["mom"][r] = hp["mu"] * slots["mom"][r] + lr * g / np.sqrt(slots["ms"][r] + hp["eps"])
            var[r] -= slots["mom"][r]
        elif name == "ftrl":
            acc_new = slots["accum"][r] + g * g
            slots["linear"][r] += g - (np.sqrt(acc_new) - np.sqrt(slots["accum"][r])) / lr * var[r]
            quadratic = np.sqrt(acc_new) / lr
            lin = slots["linear"][r]
            var[r] = np.where(np.abs(lin) > hp["l1"], (np.clip(lin, -hp["l1"], hp["l1"]) - lin) / quadratic, 0.0)
            slots["accum"][r] = acc_new
        elif name == "sgd":
            var[r] -= lr * g
        elif name == "adadelta":
            slots["accum"][r] = hp["rho"] * slots["accum"][r] + (1 - hp["rho"]) * g * g
            update = np.sqrt(slots["accum_update"][r] + hp["eps"]) / np.sqrt(slots["accum"][r] + hp["eps"]) * g
            var[r] -= lr * update
            slots["accum_update"][r] = hp["rho"] * slots["accum_update"][r] + (1 - hp["rho"]) * update * update
        elif name in ("proximal_gd", "proximal_adagrad"):
            step = lr
            if name == "proximal_adagrad":
                slots["accum"][r] += g * g
                step = lr / np.sqrt(slots["accum"][r])
            prox = var[r] - step * g
            var[r] = np.sign(prox) * np.maximum(np.abs(prox) - step * hp["l1"], 0) / (1 + step * hp["l2"])


OPTIMIZERS = {
    "sgd": (lambda: tf.train.GradientDescentOptimizer(0.1), {}, {"lr": 0.1}),
    "momentum": (lambda: tf.train.MomentumOptimizer(0.1, 0.9), {"accum": 0.0}, {"lr": 0.1, "mu": 0.9}),
    "adagrad": (lambda: tf.train.AdagradOptimizer(0.1), {"accum": 0.1}, {"lr": 0.1}),
    "rmsprop": (lambda: tf.train.RMSPropOptimizer(0.1, decay=0.9, momentum=0.5, epsilon=1e-10),
                {"ms": 1.0, "mom": 0.0}, {"lr": 0.1, "rho": 0.9, "mu": 0.5, "eps": 1e-10}),
    "ftrl": (lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.001),
             {"accum": 0.1, "linear": 0.0}, {"lr": 0.1, "l1": 0.001}),
    "adadelta": (lambda: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
                 {"accum": 0.0, "accum_update": 0.0}, {"lr": 1.0, "rho": 0.9, "eps": 1e-6}),
    "proximal_gd": (lambda: tf.train.ProximalGradientDescentOptimizer(0.1, l1_regularization_strength=0.05,
                                                                      l2_regularization_strength=0.1),
                    {}, {"lr": 0.1, "l1": 0.05, "l2": 0.1}),
    "proximal_adagrad": (lambda: tf.train.ProximalAdagradOptimizer(0.1, l1_regularization_strength=0.05,
                                                                   l2_regularization_strength=0.1),
                         {"accum": 0.1}, {"lr": 0.1, "l1": 0.05, "l2": 0.1}),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_sparse_updates_touch_only_the_gradients_rows_as_tfs_kernels(name):
    make, slot_init, hp = OPTIMIZERS[name]
    v = tf.Variable(TABLE)
    weights = tf.constant(LOOKUP_WEIGHTS)
    loss = tf.reduce_sum(tf.nn.embedding_lookup(v, IDS) * weights)
    train = make().minimize(loss)
    var = TABLE.copy()
    slots = {k: np.full_like(TABLE, x) for k, x in slot_init.items()}
    rows = np.unique(IDS)
    grad_rows = [LOOKUP_WEIGHTS[IDS == r].sum(0) for r in rows]  # each row's gradient: its lookups' weights
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
            _sparse_oracle(name, var, slots, rows, grad_rows, hp)
        got = sess.run(v)
    np.testing.assert_allclose(got, var, rtol=1e-6, atol=1e-9)
    untouched = [r for r in range(6) if r not in rows]
    np.testing.assert_array_equal(got[untouched], TABLE[untouched])


def test_sparse_adam_is_tfs_non_lazy_adam_equal_to_the_dense_update():
    def run(sparse):
        with tf.Graph().as_default():
            v = tf.Variable(TABLE)
            read = tf.nn.embedding_lookup(v, IDS) if sparse else tf.matmul(tf.one_hot(IDS, 6, dtype=tf.float64), v)
            train = tf.train.AdamOptimizer(0.05).minimize(tf.reduce_sum(tf.square(read - 1.0)))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(4):
                    sess.run(train)
                return sess.run(v)

    sparse, dense = run(True), run(False)
    np.testing.assert_allclose(sparse, dense, rtol=1e-10)
    np.testing.assert_allclose(sparse[[1, 2, 4]], TABLE[[1, 2, 4]])  # zero gradient rows: m stays 0, no move
    assert not np.allclose(sparse[[0, 3, 5]], TABLE[[0, 3, 5]])


def test_sync_replicas_aggregates_indexed_slices_in_a_sparse_accumulator():
    gs = tf.train.get_or_create_global_step()
    v = tf.Variable(TABLE)
    loss = tf.reduce_sum(tf.nn.embedding_lookup(v, IDS))
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), replicas_to_aggregate=1)
    train = opt.minimize(loss, global_step=gs)
    assert any(type(a).__name__ == "SparseConditionalAccumulator" for a, _ in opt._accumulator_list)
    final = tf.train.FinalOpsHook(v.value())
    with tf.train.MonitoredTrainingSession(hooks=[opt.make_session_run_hook(is_chief=True), final,
                                                  tf.train.StopAtStepHook(last_step=2)],
                                           log_step_count_steps=None) as sess:
        while not sess.should_stop():
            sess.run(train)
    # one replica: each step's mean is that replica's gradient, row 3 summed (looked up twice)
    want = TABLE.copy()
    want[[0, 3, 5]] -= 2 * 0.5 * np.array([1.0, 2.0, 1.0])[:, None]
    np.testing.assert_allclose(final.final_ops_values, want)


def test_embedding_lookup_runs_where_its_table_lives():
    """TF colocates the lookup with the table, so a worker reads only the rows it asked for from the ps."""
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]})
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        table = tf.get_variable("table", [100, 4])
        rows = tf.nn.embedding_lookup(table, [1, 2])
    assert table.device == "/job:ps/task:0"
    assert rows.op.device == table.device == "/job:ps/task:0"
    assert rows.op.colocation_groups() == [b"loc:@table"]
