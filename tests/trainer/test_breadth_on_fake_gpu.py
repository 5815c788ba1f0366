"""String tensors and tf.data in a session with a (fake) GPU: string ops stay on the host, numeric work may go
to the GPU, and the results equal the CPU-only session's."""
import numpy as np
import pytest

import fake_cupy
import tensorfleet as tf


@pytest.fixture
def gpu(monkeypatch):
    fake_cupy.install(monkeypatch, devices=1)
    return fake_cupy


def _graph():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        words = tf.placeholder(tf.string, [None])
        joined = tf.string_join([words, tf.as_string(tf.range(2))], separator="#")
        raw = tf.decode_raw(tf.constant([np.arange(4, dtype=np.float32).tobytes()]), tf.float32)
        ds = tf.data.Dataset.from_tensor_slices((np.arange(12, dtype=np.float32).reshape(6, 2), np.arange(6)))
        x, y = ds.map(lambda a, b: (a * 2.0, b)).batch(3).prefetch(1).make_one_shot_iterator().get_next()
        w = tf.Variable(tf.ones([2, 1]))
        out = tf.matmul(x, w) + tf.cast(tf.reshape(y, [-1, 1]), tf.float32) + tf.reduce_sum(raw)
    return g, words, joined, out


@pytest.mark.parametrize("gpu_on", [True, False])
def test_strings_and_datasets_with_a_gpu(gpu, gpu_on):
    g, words, joined, out = _graph()
    cfg = tf.ConfigProto() if gpu_on else tf.ConfigProto(device_count={"GPU": 0})
    with tf.Session(graph=g, config=cfg) as s:
        s.run(tf.global_variables_initializer())
        j = s.run(joined, {words: ["a", "b"]})
        first, second = s.run(out), s.run(out)
        placement = s.device_placement()
    assert j.tolist() == [b"a#0", b"b#1"]
    x = np.arange(12, dtype=np.float32).reshape(6, 2) * 2
    expected = x.sum(1, keepdims=True) + np.arange(6).reshape(-1, 1) + 6.0
    np.testing.assert_allclose(np.concatenate([first, second]), expected)
    on_gpu = {name for name, dev in placement.items() if "GPU" in dev}
    assert not any(n.startswith(("StringJoin", "AsString", "DecodeRaw", "IteratorGetNext")) for n in on_gpu)
    assert ("MatMul" in on_gpu) == gpu_on
