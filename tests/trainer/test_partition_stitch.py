"""tf.dynamic_partition / tf.dynamic_stitch / tf.parallel_dynamic_stitch and tf.nn.embedding_lookup over shards.

Oracles: the examples in TF 1.15's docs for these ops (exact values), numpy loops written from the documented
semantics, central finite differences (gradcheck) for the gradients, and TF's documented mod/div id assignment.
"""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients

RNG = np.random.default_rng(3)


def _np_partition(data, parts, n):
    flat_p = parts.reshape(-1)
    flat_d = data.reshape((flat_p.size,) + data.shape[parts.ndim:])
    return [np.array([flat_d[j] for j in range(flat_p.size) if flat_p[j] == i]).reshape(
        (-1,) + data.shape[parts.ndim:]) for i in range(n)]


def _np_stitch(indices, data):
    indices = [np.asarray(i) for i in indices]
    data = [np.asarray(d) for d in data]
    extra = data[0].shape[indices[0].ndim:]
    size = max((int(i.max()) for i in indices if i.size), default=-1) + 1
    out = np.zeros((size,) + extra, data[0].dtype)
    for idx, d in zip(indices, data):  # in order: a later write wins
        for j, row in zip(idx.reshape(-1), d.reshape((-1,) + extra)):
            out[j] = row
    return out


def test_dynamic_partition_matches_the_tf_doc_examples_and_numpy():
    scalar = tf.dynamic_partition([10, 20], 1, 2)  # "Scalar partitions"
    vector = tf.dynamic_partition([10, 20, 30, 40, 50], [0, 0, 1, 1, 0], 2)  # "Vector partitions"
    data = RNG.standard_normal((3, 4, 2))
    parts = RNG.integers(0, 4, (3, 4)).astype(np.int32)
    parts[parts == 2] = 1  # partition 2 stays empty
    matrix = tf.dynamic_partition(data, parts, 4)
    assert [o.shape.as_list() for o in matrix] == [[None, 2]] * 4
    with tf.Session() as sess:
        s0, s1 = sess.run(scalar)
        v0, v1 = sess.run(vector)
        got = sess.run(matrix)
    assert s0.shape == (0, 2) and s1.tolist() == [[10, 20]]
    assert v0.tolist() == [10, 20, 50] and v1.tolist() == [30, 40]
    for g, w in zip(got, _np_partition(data, parts, 4)):
        np.testing.assert_array_equal(g, w)
    assert got[2].shape == (0, 2)


def test_dynamic_stitch_matches_the_tf_doc_examples():
    indices = [6, [4, 1], [[5, 2], [0, 3]]]
    data = [[61, 62], [[41, 42], [11, 12]], [[[51, 52], [21, 22]], [[1, 2], [31, 32]]]]
    merged = tf.dynamic_stitch(indices, data)
    parallel = tf.parallel_dynamic_stitch(indices, data)
    assert merged.shape.as_list() == [7, 2]  # constant indices: TF's shape function knows max + 1
    # the docs' partition-then-stitch example: increment the entries that are not -1
    x = tf.constant([0.1, -1., 5.2, 4.3, -1., 7.4])
    condition_mask = tf.not_equal(x, tf.constant(-1.))
    partitioned_data = tf.dynamic_partition(x, tf.cast(condition_mask, tf.int32), 2)
    partitioned_data[1] = partitioned_data[1] + 1.0
    condition_indices = tf.dynamic_partition(tf.range(tf.shape(x)[0]), tf.cast(condition_mask, tf.int32), 2)
    stitched = tf.dynamic_stitch(condition_indices, partitioned_data)
    assert stitched.shape.as_list() == [None]
    with tf.Session() as sess:
        m, p, s = sess.run([merged, parallel, stitched])
    want = [[1, 2], [11, 12], [21, 22], [31, 32], [41, 42], [51, 52], [61, 62]]
    assert m.tolist() == want and p.tolist() == want
    np.testing.assert_allclose(s, [1.1, -1., 6.2, 5.3, -1, 8.4], rtol=1e-6)


def test_dynamic_stitch_later_writes_win_and_random_cases_match_numpy():
    dup = tf.dynamic_stitch([[0, 1, 1], [1, 3]], [[1., 2., 3.], [4., 5.]])
    idx = [RNG.permutation(12)[:5].reshape(5), RNG.integers(0, 12, (2, 3))]
    dat = [RNG.standard_normal((5, 2, 3)), RNG.standard_normal((2, 3, 2, 3))]
    ph = [tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int32, [None, 3])]
    rand = tf.dynamic_stitch(ph, dat)
    assert rand.shape.as_list() == [None, 2, 3]
    with tf.Session() as sess:
        got_dup = sess.run(dup)
        got = sess.run(rand, {ph[0]: idx[0], ph[1]: idx[1]})
    assert got_dup.tolist() == [1., 4., 0., 5.]  # 1 is written by 2. then 3. then 4.: the last wins; 2 is unset
    np.testing.assert_array_equal(got, _np_stitch(idx, dat))


def test_shape_functions_with_unknown_dims_and_static_errors():
    data = tf.placeholder(tf.float32, [None, 3, 5])
    parts = tf.placeholder(tf.int32, [None, 3])
    outs = tf.dynamic_partition(data, parts, 3)
    assert len(outs) == 3 and all(o.shape.as_list() == [None, 5] for o in outs)
    assert tf.dynamic_partition(tf.placeholder(tf.float32), parts, 2)[0].shape.ndims is None
    assert tf.dynamic_partition(data, tf.placeholder(tf.int32), 2)[1].shape.ndims is None
    st = tf.dynamic_stitch([tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int32, [2, 2])],
                           [tf.placeholder(tf.float32, [None, 4]), tf.placeholder(tf.float32, [2, 2, None])])
    assert st.shape.as_list() == [None, 4]
    with pytest.raises(ValueError, match="data.shape must start with partitions.shape"):
        tf.dynamic_partition(tf.zeros([4, 2]), tf.zeros([3], tf.int32), 2)
    with pytest.raises(ValueError, match="must be at least minimum 1"):
        tf.dynamic_partition(tf.zeros([4]), tf.zeros([4], tf.int32), 0)
    with pytest.raises(TypeError, match="'partitions' of 'DynamicPartition' has DataType int64"):
        tf.dynamic_partition(tf.zeros([4]), tf.zeros([4], tf.int64), 2)
    with pytest.raises(ValueError, match=r"DynamicStitch: data\[1\].shape = \(3, 2\) does not start with "
                                         r"indices\[1\].shape = \(2,\)"):
        tf.dynamic_stitch([[0, 1], [2, 3]], [tf.zeros([2, 2]), tf.zeros([3, 2])])
    with pytest.raises(ValueError, match=r"ParallelDynamicStitch: data\[1\].shape\[1:\] = \(3,\) does not match"):
        tf.parallel_dynamic_stitch([[0, 1], [2, 3]], [tf.zeros([2, 2]), tf.zeros([2, 3])])
    with pytest.raises(ValueError, match="must have the same length"):
        tf.dynamic_stitch([[0], [1]], [[1.0]])


def test_run_time_errors_name_the_op_and_node():
    data = tf.placeholder(tf.float32, None)
    parts = tf.placeholder(tf.int32, None)
    outs = tf.dynamic_partition(data, parts, 2, name="part")
    i0, i1 = tf.placeholder(tf.int32), tf.placeholder(tf.int32)
    d0, d1 = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    st = tf.dynamic_stitch([i0, i1], [d0, d1], name="stitch")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"DynamicPartition: partitions\[2\] = 2 is not in \[0, 2\)(.|\n)*node part"):
            sess.run(outs, {data: [1., 2., 3.], parts: [0, 1, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"partitions\[1,0\] = -1 is not in \[0, 2\)"):
            sess.run(outs, {data: np.zeros((2, 2)), parts: [[0, 1], [-1, 0]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="data.shape must start with partitions.shape"):
            sess.run(outs, {data: [1., 2., 3.], parts: [0, 1]})
        feed = {i0: [0, 1], i1: [2, -1], d0: [1., 2.], d1: [3., 4.]}
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"DynamicStitch: indices\[1\]\[1\] = -1 is out of range(.|\n)*node stitch"):
            sess.run(st, feed)
        feed.update({i1: [2, 3], d1: [3., 4., 5.]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"data\[1\].shape = \[3\] does not start with"):
            sess.run(st, feed)
        feed.update({d1: [[3.], [4.]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Need data\[0\].shape\[1:\] = data\[1\].shape"):
            sess.run(st, feed)


def test_dynamic_partition_gradient_by_finite_differences():
    parts = np.array([[2, 0, 1], [0, 2, 2], [1, 0, 0], [2, 2, 0]], np.int32)  # partition 3 stays empty

    def build(d):
        outs = tf.dynamic_partition(d, parts, 4)
        # output 1 is unused: its gradient is None, filled with zeros (as TF) before the stitch
        flat = tf.concat([tf.reshape(outs[0], [-1]) * 2.0, tf.reshape(tf.sin(outs[2]), [-1]),
                          tf.reshape(outs[3], [-1])], 0)
        return tf.reshape(flat, [int((parts != 1).sum()) * 2])

    analytic, _ = check_gradients(build, [RNG.standard_normal((4, 3, 2))])
    assert np.all(analytic[0][parts == 1] == 0)
    check_gradients(lambda d: tf.reshape(tf.dynamic_partition(d, np.int32(1), 2)[1], [3]),
                    [RNG.standard_normal(3)])  # scalar partitions: the whole tensor is one slice


@pytest.mark.parametrize("stitch", [tf.dynamic_stitch, tf.parallel_dynamic_stitch])
def test_dynamic_stitch_gradients_by_finite_differences(stitch):
    idx = [np.array([3, 0]), np.array([[5, 1], [2, 4]])]
    check_gradients(lambda a, b: stitch(idx, [a, b]) ** 2, [RNG.standard_normal((2, 3)),
                                                              RNG.standard_normal((2, 2, 3))])


def test_dynamic_stitch_gradient_is_tfs_gather_even_for_overwritten_values():
    a, b = tf.placeholder(tf.float64, [2]), tf.placeholder(tf.float64, [2])
    out = tf.dynamic_stitch([[0, 1], [1, 2]], [a, b])  # a[1] is overwritten by b[0]
    w = np.array([1.0, 10.0, 100.0])
    ga, gb = tf.gradients(tf.reduce_sum(out * w), [a, b])
    with tf.Session() as sess:
        got_a, got_b = sess.run([ga, gb], {a: [1., 2.], b: [3., 4.]})
    np.testing.assert_array_equal(got_a, w[[0, 1]])  # TF: gather(grad, indices[0]), not zero at the loser
    np.testing.assert_array_equal(got_b, w[[1, 2]])


# -- embedding_lookup over shards --------------------------------------------------------------------------------------
# TF's embedding_lookup doc: 13 ids over 5 partitions
_MOD = [[0, 5, 10], [1, 6, 11], [2, 7, 12], [3, 8], [4, 9]]
_DIV = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10], [11, 12]]


@pytest.mark.parametrize("strategy,layout", [("mod", _MOD), ("div", _DIV)])
@pytest.mark.parametrize("ids_dtype", [np.int32, np.int64])
def test_sharded_embedding_lookup_follows_tfs_mod_and_div_assignment(strategy, layout, ids_dtype):
    table = RNG.standard_normal((13, 4))
    shards = [tf.constant(table[rows]) for rows in layout]
    ids = RNG.integers(0, 13, (3, 5)).astype(ids_dtype)
    out = tf.nn.embedding_lookup(shards, tf.constant(ids), partition_strategy=strategy)
    assert out.shape.as_list() == [3, 5, 4]
    # shards of unknown size (div then reads their sizes at run time) and a fed ids of unknown shape
    phs = [tf.placeholder(tf.float64, [None, 4]) for _ in layout]
    ids_ph = tf.placeholder(tf.as_dtype(ids_dtype), None)
    out_dyn = tf.nn.embedding_lookup(phs, ids_ph, partition_strategy=strategy)
    assert out_dyn.shape.ndims is None
    loss = tf.reduce_sum(out * tf.constant(np.arange(60.0).reshape(3, 5, 4)))
    grads = [tf.convert_to_tensor(g) for g in tf.gradients(loss, shards)]  # IndexedSlices per shard, as TF
    feed = {ph: table[rows] for ph, rows in zip(phs, layout)}
    feed[ids_ph] = ids
    with tf.Session() as sess:
        got, got_dyn, got_grads = sess.run([out, out_dyn, grads], feed)
        np.testing.assert_array_equal(sess.run(out_dyn, {**feed, ids_ph: ids[0, 0]}), table[ids[0, 0]])
    np.testing.assert_array_equal(got, table[ids])
    np.testing.assert_array_equal(got_dyn, table[ids])
    dense = np.zeros_like(table)  # d loss / d table, rows routed back to their shards
    np.add.at(dense, ids.reshape(-1), np.arange(60.0).reshape(15, 4))
    for g, rows in zip(got_grads, layout):
        np.testing.assert_allclose(g, dense[rows])


def test_embedding_lookup_list_of_one_and_bad_strategy():
    table = RNG.standard_normal((6, 2))
    one = tf.nn.embedding_lookup([tf.constant(table)], [5, 0], partition_strategy="nonsense")  # ignored for one
    with pytest.raises(ValueError, match="Unrecognized partition strategy: nonsense"):
        tf.nn.embedding_lookup([tf.constant(table[:3]), tf.constant(table[3:])], [1], partition_strategy="nonsense")
    with pytest.raises(ValueError, match="Need at least one param"):
        tf.nn.embedding_lookup([], [1])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(one), table[[5, 0]])
