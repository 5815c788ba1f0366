"""Partitioned variables (ops/partitioned_variables.py, variable_scope, saver, optimizer slots) against TF 1.15's
documented semantics: TF's slicing rule and part names, the three partitioners' part counts, initializers
that see the full shape, conversion to the whole tensor, gradients per part (numpy oracle), parts spread over
ps tasks by replica_device_setter, and checkpoints that hold each variable (and its Adam slots) whole, so they
restore into a different number of partitions."""
import os

import numpy as np
import pytest

import tensorfleet as tf


def test_parts_follow_tfs_slicing_and_naming():
    pv = tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(3))
    assert [v.op.name for v in pv] == ["emb/part_0", "emb/part_1", "emb/part_2"]
    assert [v.shape.as_list() for v in pv] == [[4, 3], [3, 3], [3, 3]]  # 10 // 3 each, the first 10 % 3 one more
    assert pv.get_shape().as_list() == [10, 3] and len(pv) == 3 and pv._get_partitions() == [3, 1]
    assert [v.op.name for v in tf.trainable_variables()] == ["emb/part_0", "emb/part_1", "emb/part_2"]
    cols = tf.get_variable("cols", partitioner=tf.fixed_size_partitioner(2, axis=1),
                           initializer=np.arange(10, dtype=np.float32).reshape(2, 5))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(cols)), np.arange(10).reshape(2, 5))
        np.testing.assert_array_equal(sess.run(list(cols)[1]), [[3, 4], [8, 9]])  # a constant value is sliced
    with tf.variable_scope("", reuse=True):
        assert tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(3)) is pv
    tf.get_variable("plain", [4])
    with pytest.raises(ValueError, match="unpartitioned version of the variable was found: plain"):
        tf.get_variable("plain", [4], partitioner=tf.fixed_size_partitioner(2))


@pytest.mark.parametrize("make,dtype,shape,parts", [
    (lambda: tf.variable_axis_size_partitioner(max_shard_bytes=4 * 3 * 4), tf.float32, [10, 3], 3),  # 4 rows each
    (lambda: tf.variable_axis_size_partitioner(max_shard_bytes=1, max_shards=5), tf.float32, [10, 3], 5),
    (lambda: tf.min_max_variable_partitioner(max_partitions=8, min_slice_size=40), tf.float32, [10, 3], 3),
    (lambda: tf.min_max_variable_partitioner(max_partitions=2, min_slice_size=40), tf.float32, [10, 3], 2),
    (lambda: tf.fixed_size_partitioner(20), tf.float32, [10, 3], 10),  # never more parts than rows
])
def test_partitioners_choose_tfs_part_counts(make, dtype, shape, parts):
    assert make()(shape=tf.TensorShape(shape), dtype=dtype)[0] == parts


def test_initializers_see_the_full_shape():
    # glorot_uniform's limit comes from the full shape's fans, not the part's
    pv = tf.get_variable("w", [400, 100], partitioner=tf.fixed_size_partitioner(4),
                         initializer=tf.glorot_uniform_initializer(seed=3))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        whole = sess.run(tf.convert_to_tensor(pv))
    limit = np.sqrt(6.0 / (400 + 100))
    assert np.abs(whole).max() <= limit and np.abs(whole).max() > 0.95 * limit  # part-shaped fans: sqrt(6/200)


def test_gradients_flow_to_each_part():
    pv = tf.get_variable("emb", partitioner=tf.fixed_size_partitioner(2),
                         initializer=np.arange(10, dtype=np.float32).reshape(5, 2))
    x = np.array([[1.0, 0.0, 2.0, 0.0, 1.0]], np.float32)
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(x), pv)))
    grads = tf.gradients(loss, list(pv))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        g0, g1 = sess.run(grads)
    w = np.arange(10, dtype=np.float32).reshape(5, 2)
    full = x.T @ (2 * (x @ w))
    np.testing.assert_allclose(np.concatenate([g0, g1]), full)


def test_replica_device_setter_spreads_parts_over_ps_tasks():
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:1", "127.0.0.1:2"], "worker": ["127.0.0.1:3"]})
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        pv = tf.get_variable("emb", [9, 4], partitioner=tf.fixed_size_partitioner(3))
    assert [v.device for v in pv] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]


def _train(directory, partitions, steps, restore_from=None):
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [6, 2], partitioner=tf.fixed_size_partitioner(partitions),
                              initializer=tf.constant_initializer(0.5))
        x = tf.constant(np.eye(6, dtype=np.float32)[:3])
        loss = tf.reduce_sum(tf.square(tf.matmul(x, emb) - 1.0))
        train = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=[emb])
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            if restore_from:
                saver.restore(sess, restore_from)
            for _ in range(steps):
                sess.run(train)
            prefix = saver.save(sess, os.path.join(directory, f"m{partitions}"))
            return prefix, sess.run(tf.convert_to_tensor(emb)), sess.run(loss)


def test_checkpoints_hold_whole_variables_and_slots_and_restore_into_other_partitionings(tmp_path):
    prefix3, _, _ = _train(str(tmp_path), 3, steps=4)
    names = dict(tf.train.list_variables(prefix3))
    assert names["emb"] == [6, 2] and names["emb/Adam"] == [6, 2] and names["emb/Adam_1"] == [6, 2]
    assert not any("part_" in n for n in names)
    _, resumed_2, _ = _train(str(tmp_path), 2, steps=4, restore_from=prefix3)  # 3 parts -> 2 parts, 4 more steps
    _, straight, _ = _train(str(tmp_path), 1, steps=8)  # 8 steps unpartitioned
    np.testing.assert_allclose(resumed_2, straight, rtol=1e-6)  # values and Adam moments carried over whole


def test_embedding_lookup_treats_a_partitioned_variable_as_its_shards():
    """TF: embedding_lookup(PartitionedVariable) looks ids up in the parts by partition_strategy (default
    "mod": id i is row i // 3 of part i % 3), not in the concatenated table."""
    table = np.arange(20, dtype=np.float32).reshape(10, 2)
    pv = tf.get_variable("emb", partitioner=tf.fixed_size_partitioner(3), initializer=table)
    ids = np.array([0, 1, 5, 9], np.int32)
    mod = tf.nn.embedding_lookup(pv, ids)
    div = tf.nn.embedding_lookup(pv, ids, partition_strategy="div")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        parts = sess.run(list(pv))
        got_mod, got_div = sess.run([mod, div])
    np.testing.assert_array_equal(got_mod, [parts[i % 3][i // 3] for i in ids])
    np.testing.assert_array_equal(got_div, table[ids])  # div with TF's 4/3/3 split is the contiguous layout
