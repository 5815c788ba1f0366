"""tf.parse_single_sequence_example / tf.io.parse_sequence_example with tf.FixedLenSequenceFeature and
VarLenFeature (ops/sequence_parsing_ops.py), against SequenceExample protos built in the test with the
generated classes (the oracle is the values put in) and TF 1.15's documented output forms and errors."""
import numpy as np
import pytest

import tensorfleet as tf


def _feature(values):
    if isinstance(values[0], bytes):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    if isinstance(values[0], float):
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _sequence_example(length, tokens, frames):
    ex = tf.train.SequenceExample()
    ex.context.feature["length"].CopyFrom(_feature([length]))
    ex.feature_lists.feature_list["tokens"].feature.extend(_feature(t) for t in tokens)
    ex.feature_lists.feature_list["frames"].feature.extend(_feature(f) for f in frames)
    return ex.SerializeToString()


CONTEXT = {"length": tf.FixedLenFeature([], tf.int64)}
SEQUENCE = {"frames": tf.FixedLenSequenceFeature([2], tf.float32), "tokens": tf.VarLenFeature(tf.int64)}


def test_single_sequence_example():
    raw = _sequence_example(3, [[4], [5, 6], [7]], [[0.5, 1.0], [1.5, 2.0], [2.5, 3.0]])
    context, seq = tf.parse_single_sequence_example(raw, CONTEXT, SEQUENCE)
    assert seq["frames"].shape.as_list() == [None, 2]
    with tf.Session() as sess:
        length, frames, tokens = sess.run([context["length"], seq["frames"], seq["tokens"]])
    assert length == 3
    np.testing.assert_array_equal(frames, [[0.5, 1.0], [1.5, 2.0], [2.5, 3.0]])
    np.testing.assert_array_equal(tokens.indices, [[0, 0], [1, 0], [1, 1], [2, 0]])  # (step, position)
    np.testing.assert_array_equal(tokens.values, [4, 5, 6, 7])
    np.testing.assert_array_equal(tokens.dense_shape, [3, 2])


def test_batched_sequence_examples_are_padded_with_lengths():
    raws = [_sequence_example(2, [[1], [2]], [[1.0, 1.0], [2.0, 2.0]]),
            _sequence_example(1, [[3, 4, 5]], [[9.0, 9.0]])]
    sequence = {"frames": tf.FixedLenSequenceFeature([2], tf.float32, default_value=-1.0),
                "tokens": tf.VarLenFeature(tf.int64)}
    context, seq, lengths = tf.io.parse_sequence_example(raws, CONTEXT, sequence)
    with tf.Session() as sess:
        got_len, frames, tokens, frame_lengths = sess.run([context["length"], seq["frames"], seq["tokens"],
                                                           lengths["frames"]])
    np.testing.assert_array_equal(got_len, [2, 1])
    np.testing.assert_array_equal(frames, [[[1.0, 1.0], [2.0, 2.0]], [[9.0, 9.0], [-1.0, -1.0]]])
    np.testing.assert_array_equal(frame_lengths, [2, 1])
    np.testing.assert_array_equal(tokens.indices, [[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 0, 2]])
    np.testing.assert_array_equal(tokens.dense_shape, [2, 2, 3])


def test_missing_lists_wrong_kinds_and_sizes_are_errors_naming_the_feature():
    ex = tf.train.SequenceExample()
    ex.context.feature["length"].CopyFrom(_feature([1]))
    raw = ex.SerializeToString()
    _, seq = tf.parse_single_sequence_example(raw, CONTEXT, {"frames": tf.FixedLenSequenceFeature([2], tf.float32)})
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="Feature list 'frames' is required"):
        sess.run(seq["frames"])
    _, seq = tf.parse_single_sequence_example(
        raw, CONTEXT, {"frames": tf.FixedLenSequenceFeature([2], tf.float32, allow_missing=True)})
    with tf.Session() as sess:
        assert sess.run(seq["frames"]).shape == (0, 2)
    bad = _sequence_example(1, [[1]], [[1.0, 2.0, 3.0]])
    _, seq = tf.parse_single_sequence_example(bad, CONTEXT, {"frames": tf.FixedLenSequenceFeature([2], tf.float32)})
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="Key: frames.*values size: 3"):
        sess.run(seq["frames"])
    _, seq = tf.parse_single_sequence_example(bad, CONTEXT, {"tokens": tf.FixedLenSequenceFeature([1], tf.float32)})
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="tokens.*Data types don't match"):
        sess.run(seq["tokens"])
    with pytest.raises(ValueError, match="Missing features"):
        tf.parse_single_sequence_example(raw)
