"""tf.segment_sum / mean / max / min / prod and tf.unsorted_segment_sum / mean / sqrt_n / max / min / prod
(ops/segment_ops.py).

Oracles: loops over the segments in numpy written here, TF 1.15's docstring examples verbatim, TF's documented
empty-segment values (sorted: 0 for max/min, 1 for prod; unsorted: the dtype's lowest / highest value, 1),
central finite differences (gradcheck) for every gradient on tie-free inputs -- the product also with zeros in
a segment, where TF's gradient handles one zero and two zeros apart -- and TF's documented tie rule (the
gradient of a max/min is split equally among the elements equal to it) computed by hand.
"""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import run

RNG = np.random.default_rng(11)
SORTED = {"max": tf.segment_max, "min": tf.segment_min, "prod": tf.segment_prod}
UNSORTED = {"max": tf.unsorted_segment_max, "min": tf.unsorted_segment_min, "prod": tf.unsorted_segment_prod}
REDUCE = {"max": np.max, "min": np.min, "prod": np.prod}


def np_sorted(kind, data, ids):
    n = int(ids[-1]) + 1 if len(ids) else 0
    out = np.full((n,) + data.shape[1:], 1 if kind == "prod" else 0, dtype=data.dtype)
    for s in range(n):
        rows = data[ids == s]
        if len(rows):
            out[s] = REDUCE[kind](rows, axis=0)
    return out


def np_unsorted(kind, data, ids, n):
    inner = data.shape[ids.ndim:]
    if kind == "prod":
        empty = 1
    else:
        info = np.finfo(data.dtype) if data.dtype.kind == "f" else np.iinfo(data.dtype)
        empty = info.min if kind == "max" else info.max
    out = np.full((n,) + inner, empty, dtype=data.dtype)
    flat_ids, flat = ids.reshape(-1), data.reshape((-1,) + inner)
    for s in range(n):
        rows = flat[flat_ids == s]
        if len(rows):
            out[s] = REDUCE[kind](rows, axis=0)
    return out


def test_segment_sums_match_numpy_and_gradient():
    data = np.random.RandomState(0).randn(6, 3)
    ids = np.array([0, 2, 0, 1, 2, -1])
    ref = np.zeros((4, 3))
    for i, s in enumerate(ids):
        if s >= 0:
            ref[s] += data[i]
    np.testing.assert_allclose(run(tf.unsorted_segment_sum(data, ids, 4)), ref)
    counts = np.maximum(np.bincount(ids[ids >= 0], minlength=4), 1)[:, None]
    np.testing.assert_allclose(run(tf.math.unsorted_segment_mean(data, ids, 4)), ref / counts)
    np.testing.assert_allclose(run(tf.math.unsorted_segment_sqrt_n(data, ids, 4)), ref / np.sqrt(counts))
    np.testing.assert_allclose(run(tf.segment_sum(data[:4], [0, 0, 1, 1])), [data[:2].sum(0), data[2:4].sum(0)])
    np.testing.assert_allclose(run(tf.segment_mean(data[:3], [0, 1, 1])), [data[0], data[1:3].mean(0)])
    check_gradients(lambda d: tf.unsorted_segment_sum(d, ids, 4), [data])


def test_tf_docs_examples():
    c = tf.constant([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]])
    assert run(tf.segment_max(c, tf.constant([0, 0, 1]))).tolist() == [[4, 3, 3, 4], [5, 6, 7, 8]]
    assert run(tf.segment_min(c, tf.constant([0, 0, 1]))).tolist() == [[1, 2, 2, 1], [5, 6, 7, 8]]
    assert run(tf.segment_prod(c, tf.constant([0, 0, 1]))).tolist() == [[4, 6, 6, 4], [5, 6, 7, 8]]
    c = tf.constant([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]])
    assert run(tf.unsorted_segment_max(c, tf.constant([0, 1, 0]), num_segments=2)).tolist() == [[4, 3, 3, 4],
                                                                                              [5, 6, 7, 8]]
    assert run(tf.unsorted_segment_min(c, tf.constant([0, 1, 0]), num_segments=2)).tolist() == [[1, 2, 2, 1],
                                                                                              [5, 6, 7, 8]]
    assert run(tf.unsorted_segment_prod(c, tf.constant([0, 1, 0]), num_segments=2)).tolist() == [[4, 6, 6, 4],
                                                                                               [5, 6, 7, 8]]


@pytest.mark.parametrize("kind", ["max", "min", "prod"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_sorted_segments_match_numpy_with_gaps(kind, dtype):
    data = (RNG.standard_normal((7, 3)) * 5).astype(dtype)
    ids = np.array([0, 0, 2, 2, 2, 5, 6])  # segments 1, 3 and 4 are empty
    t = SORTED[kind](data, ids)
    got = run(t)
    assert got.dtype == dtype and t.dtype == tf.as_dtype(dtype) and t.shape.as_list() == [None, 3]
    np.testing.assert_array_equal(got, np_sorted(kind, data, ids))
    assert got[1].tolist() == [1 if kind == "prod" else 0] * 3  # TF: an empty segment gives 0 (1 for prod)
    got64 = run(SORTED[kind](data, tf.constant(ids, tf.int64)))
    np.testing.assert_array_equal(got64, np_sorted(kind, data, ids))


@pytest.mark.parametrize("kind", ["max", "min", "prod"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_unsorted_segments_match_numpy_with_empty_and_negative_ids(kind, dtype):
    data = (RNG.standard_normal((6, 2)) * 5).astype(dtype)
    ids = np.array([3, 0, -1, 3, 0, 1])  # segments 2 and 4 empty; the -1 row is dropped
    t = UNSORTED[kind](data, ids, 5)
    got = run(t)
    assert got.dtype == dtype and t.shape.as_list() == [5, 2]
    np.testing.assert_array_equal(got, np_unsorted(kind, data, ids, 5))
    if kind != "prod":  # TF: numeric_limits<T>::lowest() for max, max() for min
        info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
        assert got[2].tolist() == [info.min if kind == "max" else info.max] * 2
    # ids of rank 2 prefixing data's shape; an int64 num_segments
    data3 = RNG.standard_normal((2, 3, 4)).astype(dtype)
    ids2 = np.array([[0, 2, 0], [-1, 2, 1]])
    t = UNSORTED[kind](data3, ids2, tf.constant(3, tf.int64))
    assert t.shape.as_list() == [3, 4]
    np.testing.assert_array_equal(run(t), np_unsorted(kind, data3, ids2, 3))


def test_default_names_math_aliases_and_unknown_num_segments():
    data = tf.constant(np.ones((3, 2), np.float32))
    for fn, name in ((tf.math.segment_max, "SegmentMax"), (tf.math.segment_min, "SegmentMin"),
                     (tf.math.segment_prod, "SegmentProd")):
        assert fn(data, [0, 1, 1]).op.name == name and fn(data, [0, 1, 1]).op.type == name
    for fn, name in ((tf.math.unsorted_segment_max, "UnsortedSegmentMax"),
                     (tf.math.unsorted_segment_min, "UnsortedSegmentMin"),
                     (tf.math.unsorted_segment_prod, "UnsortedSegmentProd")):
        assert fn(data, [0, 1, 1], 2).op.type == name and fn(data, [0, 1, 1], 2, name="s" + name).op.name == "s" + name
    n = tf.placeholder(tf.int32, [])
    t = tf.unsorted_segment_max(data, [0, 1, 1], n)
    assert t.shape.as_list() == [None, 2]
    with tf.Session() as s:
        assert s.run(t, {n: 4}).shape == (4, 2)


def test_run_time_errors_name_the_node():
    data = np.arange(8, dtype=np.float32).reshape(4, 2)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"segment_ids\[1\] = 5 is out of range \[0, 3\)(.|\n)*node bad_unsorted"):
        run(tf.unsorted_segment_max(data, [0, 5, 1, 0], 3, name="bad_unsorted"))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[1,0\] = 3 is out of range \[0, 3\)"):
        run(tf.unsorted_segment_prod(data, [[0, 1], [3, 0], [1, 1], [0, 0]], 3))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment ids are not increasing(.|\n)*node bad_sort"):
        run(tf.segment_min(data, [0, 2, 1, 3], name="bad_sort"))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Segment id -1 out of range \[0, 2\), possibly because 'segment_ids' input is not "
                             r"sorted"):
        run(tf.segment_max(data, [-1, 0, 1, 1]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids must be >= 0"):
        run(tf.segment_prod(data, [-3, -3, -3, -2]))
    ids = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="segment_ids should be the same size as dimension 0 of input"):
        with tf.Session() as s:
            s.run(tf.segment_max(data, ids), {ids: [0, 0, 1]})


def test_graph_build_errors_name_the_argument():
    data = np.ones((3, 2), np.float32)
    with pytest.raises(TypeError, match="parameter 'segment_ids' has DataType float32 not in list of allowed"):
        tf.segment_max(data, [0.0, 1.0, 1.0])
    with pytest.raises(TypeError, match="parameter 'data' has DataType bool"):
        tf.unsorted_segment_min(np.ones((3,), bool), [0, 1, 1], 2)
    with pytest.raises(TypeError, match="parameter 'num_segments' has DataType float32"):
        tf.unsorted_segment_prod(data, [0, 1, 1], 2.0)
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2 for 'SegmentMax'"):
        tf.segment_max(data, [[0, 1, 1]])
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are 3 and 4"):
        tf.unsorted_segment_max(data, [0, 1, 1, 0], 2)
    with pytest.raises(ValueError, match="must be non-negative but is -1"):
        tf.unsorted_segment_min(data, [0, 1, 1], -1)


# -- gradients -------------------------------------------------------------------------------------------------
def _rows(t, n):
    """t with its first dimension set to n (a sorted segment op's static first dimension is unknown, as in TF)."""
    t.set_shape([n] + t.shape.as_list()[1:])
    return t


def test_gradients_match_finite_differences():
    data = RNG.permutation(24).reshape(8, 3).astype(np.float64) / 7 + 0.5  # distinct values: no ties
    ids = np.array([0, 0, 0, 1, 3, 3, 4, 4])  # segment 2 empty
    for kind in ("max", "min", "prod"):
        check_gradients(lambda d, k=kind: _rows(SORTED[k](d, ids), 5), [data])
    uids = np.array([2, 0, -1, 2, 0, 2, 4, -1])  # negative ids dropped, segments 1 and 3 empty
    for kind in ("max", "min", "prod"):
        check_gradients(lambda d, k=kind: UNSORTED[k](d, uids, 5) * tf.constant(
            [[1.0], [0.0], [1.0], [0.0], [1.0]], tf.float64), [data])  # (mask the huge empty values)
    uids2 = np.array([[1, 0, 1, -1], [0, 0, 2, 1]])  # rank-2 ids
    data3 = RNG.permutation(24).reshape(2, 4, 3).astype(np.float64) / 5 - 2
    for kind in ("max", "min", "prod"):
        check_gradients(lambda d, k=kind: UNSORTED[k](d, uids2, 3), [data3])


def test_prod_gradients_with_one_and_two_zeros_in_a_segment():
    # rows 0-2: one zero in column 0, two zeros in column 1; rows 3-4: none
    data = np.array([[0.0, 0.0, 1.5], [2.0, 0.0, -0.5], [3.0, 1.0, 2.0], [1.5, -2.0, 0.7], [0.5, 1.3, 2.2]])
    check_gradients(lambda d: _rows(tf.segment_prod(d, [0, 0, 0, 1, 1]), 2), [data])
    check_gradients(lambda d: tf.unsorted_segment_prod(d, [1, 1, 1, 0, -1], 2), [data])
    # by hand: with one zero the zero's gradient is the product of the others, every other element's is 0
    x = tf.constant(data)
    g = run(tf.gradients(tf.reduce_sum(tf.segment_prod(x, [0, 0, 0, 1, 1])), [x])[0])
    assert g[:3, 0].tolist() == [2.0 * 3.0, 0.0, 0.0] and g[:3, 1].tolist() == [0.0, 0.0, 0.0]


def test_max_min_gradient_splits_equally_among_ties_as_tf():
    data = np.array([[3.0, 1.0], [3.0, 5.0], [3.0, 5.0], [2.0, -1.0], [7.0, -1.0]])
    ids = [0, 0, 0, 1, 1]
    upstream = np.array([[6.0, 10.0], [4.0, 8.0]])
    x = tf.constant(data)
    for fn, pick in ((tf.segment_max, np.max), (tf.segment_min, np.min)):
        got = run(tf.gradients(fn(x, ids), [x], grad_ys=tf.constant(upstream))[0])
        want = np.zeros_like(data)
        for s, rows in enumerate((slice(0, 3), slice(3, 5))):
            seg = data[rows]
            hit = seg == pick(seg, axis=0)
            want[rows] = hit * upstream[s] / hit.sum(axis=0)  # equal shares among the ties
        np.testing.assert_allclose(got, want)
    got = run(tf.gradients(tf.unsorted_segment_max(x, [1, 1, -1, 0, 1], 2), [x], grad_ys=tf.constant(upstream))[0])
    # segment 1 = rows 0, 1, 4 -> max 7 (col 0, row 4 alone), 5 (col 1, row 1 alone); row 2 dropped;
    # segment 0 = row 3 alone
    np.testing.assert_allclose(got, np.array([[0, 0], [0, 8.0], [0, 0], [6.0, 10.0], [4.0, 0]]))
    got = run(tf.gradients(tf.unsorted_segment_min(x, [0, 0, 0, 1, 1], 2), [x], grad_ys=tf.constant(upstream))[0])
    # segment 0 col 0: three ties at 3 -> 6/3 each; col 1: min 1 at row 0; segment 1 col 1: two ties at -1
    np.testing.assert_allclose(got, [[2.0, 10.0], [2.0, 0], [2.0, 0], [4.0, 4.0], [0, 4.0]])
