"""tf.summary ops (ops/summary_ops.py, kernels/summary_kernels.py, summary/summary_api.py) against independent
oracles: numpy histograms over TF's documented default buckets, Pillow's PNG decoder, Python's wave module,
and TF 1.15's documented naming rules (tags from name scopes, families, clean_tag)."""
import io
import math
import wave

import numpy as np
import pytest

import tensorfleet as tf

Image = pytest.importorskip("PIL.Image")

DBL_MAX = np.finfo(np.float64).max


def _run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


def _summary(blob) -> "tf.Summary":
    assert isinstance(blob, bytes)
    return tf.Summary.FromString(blob)


def _tf_default_limits():
    """TF's histogram.cc InitDefaultBuckets: 1e-12 growing by 10% below 1e20, DBL_MAX, mirrored, and 0."""
    pos, v = [], 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    pos.append(DBL_MAX)
    return [-x for x in reversed(pos)] + [0.0] + pos


def _expected_histogram(values):
    """numpy.histogram over [limit[i-1], limit[i]) bins (TF's upper_bound rule), then TF's collapse of runs
    of empty buckets into their last limit."""
    limits = np.array(_tf_default_limits())
    edges = np.concatenate([[-np.inf], limits])
    counts, _ = np.histogram(values, bins=edges)
    # np.histogram's last bin is closed; TF's upper_bound puts a value equal to DBL_MAX past it: none here
    out_limits, out_counts, i = [], [], 0
    while i < len(counts):
        end, count = limits[i], counts[i]
        i += 1
        if count <= 0:
            while i < len(counts) and counts[i] <= 0:
                end, count = limits[i], counts[i]
                i += 1
        out_limits.append(float(end))
        out_counts.append(float(count))
    return out_limits, out_counts


def test_scalar_value_tag_and_collection():
    x = tf.placeholder(tf.float32, [])
    s = tf.summary.scalar("loss", x * 2.0)
    assert s.dtype.name == "string" and s.shape.ndims == 0
    assert s.op.name == "loss"
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [s]
    summ = _summary(_run(s, {x: 0.1}))
    assert len(summ.value) == 1
    assert summ.value[0].tag == "loss"
    assert summ.value[0].simple_value == np.float32(np.float32(0.1) * np.float32(2.0))


def test_tags_follow_name_scopes_families_and_uniqueness():
    c = tf.constant(1.0)
    a = tf.summary.scalar("loss", c)
    b = tf.summary.scalar("loss", c)
    with tf.name_scope("train"):
        d = tf.summary.scalar("loss", c)
    e = tf.summary.scalar("acc", c, family="eval")
    f = tf.summary.scalar("bad name:1", c)
    g = tf.summary.scalar("/lead", c, collections=["mine"])
    tags = [_summary(v).value[0].tag for v in _run([a, b, d, e, f, g])]
    assert tags == ["loss", "loss_1", "train/loss", "eval/eval/acc", "bad_name_1", "lead"]
    assert e.op.name == "eval/acc"
    assert tf.get_collection("mine") == [g] and g not in tf.get_collection(tf.GraphKeys.SUMMARIES)


def test_scalar_needs_one_element():
    with pytest.raises(ValueError, match="tags and values not the same shape"):
        tf.summary.scalar("v", tf.constant([1.0, 2.0]))
    x = tf.placeholder(tf.float32)
    s = tf.summary.scalar("v", x)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"not the same shape: \[\] != \[2\]"):
        _run(s, {x: np.array([1.0, 2.0], np.float32)})
    assert _summary(_run(s, {x: np.array([[3.0]], np.float32)})).value[0].simple_value == 3.0


@pytest.mark.parametrize("values", [
    np.array([1.0, 2.0, 3.0, 4.0]),
    np.random.RandomState(0).normal(0, 3, size=1000),
    np.array([0.0, 0.0, -1e-13, 1e-13, 1e-12, 5e19, -7.5]),
    np.random.RandomState(1).randint(-50, 50, size=(10, 10)).astype(np.int32),
    np.array(_tf_default_limits()[1:-1:37] + [-v for v in _tf_default_limits()[1:-1:41]]),  # exactly on limits
    np.random.RandomState(2).normal(0, 100, size=500).astype(np.float16),
    np.random.RandomState(3).randint(-2**40, 2**40, size=300).astype(np.int64),
])
def test_histogram_buckets_and_moments_against_numpy(values):
    x = tf.placeholder(tf.as_dtype(values.dtype), values.shape)
    h = tf.summary.histogram("weights", x)
    v = _summary(_run(h, {x: values})).value[0]
    assert v.tag == "weights"
    flat = values.astype(np.float64).ravel()
    assert v.histo.min == flat.min() and v.histo.max == flat.max() and v.histo.num == flat.size
    total, squares = 0.0, 0.0
    for e in flat.tolist():  # sequential double accumulation, as TF's loop
        total += e
        squares += e * e
    # TF adds in order, we pairwise: equal up to the rounding of the two orders
    assert v.histo.sum == pytest.approx(total, rel=1e-12, abs=1e-300)
    assert v.histo.sum_squares == pytest.approx(squares, rel=1e-12)
    limits, counts = _expected_histogram(flat)
    assert list(v.histo.bucket_limit) == limits
    assert list(v.histo.bucket) == counts
    assert sum(v.histo.bucket) == flat.size


def test_histogram_of_nothing_and_of_nan():
    x = tf.placeholder(tf.float32, [None])
    h = tf.summary.histogram("h", x)
    v = _summary(_run(h, {x: np.zeros(0, np.float32)})).value[0]
    assert (v.histo.min, v.histo.max, v.histo.num) == (DBL_MAX, -DBL_MAX, 0)
    assert list(v.histo.bucket_limit) == [DBL_MAX] and list(v.histo.bucket) == [0.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Nan in summary histogram for: h"):
        _run(h, {x: np.array([1.0, np.nan, np.inf], np.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Infinity in summary histogram for: h"):
        _run(h, {x: np.array([1.0, -np.inf, np.nan], np.float32)})


def _decode_png(blob):
    img = Image.open(io.BytesIO(blob))
    img.load()
    return img.mode, np.array(img)


def test_uint8_images_round_trip_through_png():
    rng = np.random.RandomState(2)
    imgs = rng.randint(0, 256, size=(5, 4, 6, 3)).astype(np.uint8)
    s = tf.summary.image("pics", tf.constant(imgs))
    summ = _summary(_run(s))
    assert [v.tag for v in summ.value] == ["pics/image/0", "pics/image/1", "pics/image/2"]  # max_outputs=3
    for i, v in enumerate(summ.value):
        assert (v.image.height, v.image.width, v.image.colorspace) == (4, 6, 3)
        mode, arr = _decode_png(v.image.encoded_image_string)
        assert mode == "RGB"
        np.testing.assert_array_equal(arr, imgs[i])
    gray = rng.randint(0, 256, size=(1, 3, 2, 1)).astype(np.uint8)
    rgba = rng.randint(0, 256, size=(1, 2, 2, 4)).astype(np.uint8)
    one = _summary(_run(tf.summary.image("g", tf.constant(gray), max_outputs=1))).value
    assert [v.tag for v in one] == ["g/image"]
    mode, arr = _decode_png(one[0].image.encoded_image_string)
    assert mode == "L" and np.array_equal(arr, gray[0, :, :, 0])
    mode, arr = _decode_png(_summary(_run(tf.summary.image("c", tf.constant(rgba)))).value[0]
                            .image.encoded_image_string)
    assert mode == "RGBA" and np.array_equal(arr, rgba[0])


def test_float_images_are_scaled_per_image_as_tf():
    pos = np.array([[0.0, 0.5], [1.0, 2.0]], np.float32)[None, :, :, None]
    mixed = np.array([[-1.0, 0.0], [0.5, 2.0]], np.float32)[None, :, :, None]
    bad = np.array([[np.nan, 1.0], [0.25, np.inf]], np.float32)[None, :, :, None]
    batch = np.concatenate([pos, mixed, bad])
    values = _summary(_run(tf.summary.image("f", tf.constant(batch)))).value
    # TF: no negative value -> v * 255/max; some negative -> v * 127/max|v| + 128; truncated to uint8;
    # non-finite pixels get bad_color (255 for one channel)
    expected = [np.floor(pos[0, ..., 0] * (255.0 / 2.0)), np.floor(mixed[0, ..., 0] * (127.0 / 2.0) + 128.0),
                np.array([[255, 255], [63, 255]])]
    for v, want in zip(values, expected, strict=True):
        np.testing.assert_array_equal(_decode_png(v.image.encoded_image_string)[1], want.astype(np.uint8))


def test_image_shape_errors_name_the_summary():
    with pytest.raises(ValueError, match="4-D with last dim 1, 3, or 4.*'bad'"):
        tf.summary.image("bad", tf.zeros([2, 3, 3, 2]))
    x = tf.placeholder(tf.float32)
    s = tf.summary.image("later", x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="4-D with last dim 1, 3, or 4"):
        _run(s, {x: np.zeros((2, 2), np.float32)})


def test_audio_is_16_bit_wav():
    clip = np.array([[0.0, 0.5, -0.5, 1.0, -1.0, 1.5, 0.25]], np.float32)
    s = tf.summary.audio("sound", tf.constant(clip), 8000, max_outputs=1)
    v = _summary(_run(s)).value[0]
    assert v.tag == "sound/audio"
    assert (v.audio.sample_rate, v.audio.num_channels, v.audio.length_frames) == (8000.0, 1, 7)
    assert v.audio.content_type == "audio/wav"
    with wave.open(io.BytesIO(v.audio.encoded_audio_string)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()) == (1, 2, 8000, 7)
        pcm = np.frombuffer(w.readframes(7), "<i2")
    np.testing.assert_array_equal(pcm, [0, 16384, -16384, 32767, -32768, 32767, 8192])


def test_merge_and_merge_all():
    c = tf.constant(3.0)
    a = tf.summary.scalar("a", c)
    b = tf.summary.histogram("b", tf.constant([1.0, 2.0]))
    with tf.name_scope("tower"):
        t = tf.summary.scalar("t", c)
    m = tf.summary.merge_all()
    assert m.op.name == "Merge/MergeSummary"
    assert [v.tag for v in _summary(_run(m)).value] == ["a", "b", "tower/t"]
    scoped = tf.summary.merge_all(scope="tower")
    assert [v.tag for v in _summary(_run(scoped)).value] == ["tower/t"]
    explicit = tf.summary.merge([a, t], collections=["merged"], name="pair")
    assert explicit.op.name == "pair/pair" and tf.get_collection("merged") == [explicit]
    assert [v.tag for v in _summary(_run(explicit)).value] == ["a", "tower/t"]
    assert tf.summary.merge_all(key="no_such_collection") is None
    assert b is not None


def test_merge_rejects_duplicate_tags_and_non_strings():
    c = tf.constant(1.0)
    a = tf.summary.scalar("a", c)
    dup = tf.summary.merge([a, a])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag a found in summary inputs"):
        _run(dup)
    with pytest.raises(TypeError, match="MergeSummary"):
        tf.summary.merge([c])


def test_summaries_run_beside_training():
    w = tf.Variable(5.0)
    loss = tf.square(w - 2.0)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("w", w)
    merged = tf.summary.merge_all()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        seen = []
        for _ in range(3):
            blob, _ = sess.run([merged, train])
            seen.append(_summary(blob).value[0].simple_value)
    assert seen == [pytest.approx(9.0), pytest.approx(2.4 ** 2), pytest.approx(1.92 ** 2)]
    assert not math.isnan(seen[-1])
