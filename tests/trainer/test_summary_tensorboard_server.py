"""End to end: event files written by tensorfleet's FileWriter, served by a real TensorBoard process (PyPI's
`tensorboard`, no TensorFlow) on 127.0.0.1, queried through its HTTP data API the way its web UI does."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

import tensorfleet as tf

pytest.importorskip("tensorboard")
pytestmark = pytest.mark.slow


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_run(logdir):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.Variable(np.full((4, 1), 0.5, np.float32), name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("weights", w)
    tf.summary.image("inputs", tf.reshape(x, [-1, 2, 2, 1]), max_outputs=1)
    merged = tf.summary.merge_all()
    rng = np.random.RandomState(5)
    losses = []
    with tf.Session() as sess, tf.summary.FileWriter(logdir, sess.graph) as writer:
        sess.run(tf.global_variables_initializer())
        for step in range(5):
            blob, value, _ = sess.run([merged, loss, train], {x: rng.rand(8, 4).astype(np.float32)})
            writer.add_summary(blob, step * 10)
            losses.append(float(np.float32(value)))
    return losses


def _get(base, path, timeout=10):
    with urllib.request.urlopen(base + path, timeout=timeout) as resp:
        return resp.read()


@pytest.fixture
def tensorboard(tmp_path):
    logdir = tmp_path / "logs"
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host", "127.0.0.1", "--port",
         str(port), "--load_fast=false", "--reload_interval", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        yield logdir, f"http://127.0.0.1:{port}", proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def _poll(base, proc, path, ready, deadline_s=120):
    """GETs `path` until `ready(json)` holds (TensorBoard loads event files in a background thread)."""
    deadline = time.monotonic() + deadline_s
    last = None
    while time.monotonic() < deadline:
        assert proc.poll() is None, "tensorboard exited"
        try:
            last = json.loads(_get(base, path))
            if ready(last):
                return last
        except (urllib.error.URLError, ConnectionError, socket.timeout, ValueError):
            pass
        time.sleep(0.5)
    pytest.fail(f"TensorBoard did not serve {path} as expected within {deadline_s} s (last answer: {last!r:.300})")


def test_a_tensorboard_server_shows_scalars_histograms_images_and_the_graph(tensorboard):
    logdir, base, proc = tensorboard
    losses = _write_run(str(logdir / "run1"))
    steps = [0, 10, 20, 30, 40]
    tags = _poll(base, proc, "/data/plugin/scalars/tags", lambda t: "run1" in t)
    assert set(tags["run1"]) == {"loss"}
    scalars = _poll(base, proc, "/data/plugin/scalars/scalars?run=run1&tag=loss", lambda v: len(v) == 5)
    assert [s[1] for s in scalars] == steps
    assert [s[2] for s in scalars] == losses  # float32 values, exact
    hist = _poll(base, proc, "/data/plugin/histograms/histograms?run=run1&tag=weights", lambda v: len(v) == 5)
    assert [h[1] for h in hist] == steps
    assert sum(bucket[2] for bucket in hist[0][2]) == 4  # the four weights
    images = _poll(base, proc, "/data/plugin/images/images?run=run1&tag=inputs/image", lambda v: len(v) == 5)
    assert [i["step"] for i in images] == steps
    png = _get(base, "/data/plugin/images/individualImage?" + images[0]["query"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    graph = _get(base, "/data/plugin/graphs/graph?run=run1").decode()
    assert 'name: "MatMul"' in graph and 'op: "ApplyGradientDescent"' in graph
