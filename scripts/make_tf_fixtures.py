"""Writes the checkpoints that real TensorFlow makes, once, as test data (tests/trainer/data/tf_checkpoints/).

Run with the `tf1` extra (real TensorFlow; 1.15 or 2.x through `tf.compat.v1`), never in a test:
    /work/tfvenv/bin/python scripts/make_tf_fixtures.py [--out DIR]

Each fixture is a directory with TF's own files (`model.ckpt.index`, `model.ckpt.data-*`, and the `checkpoint`
state file TF writes beside them) and `expected.json`: for every checkpoint key, the value TF's session held
when it saved (dtype name, shape, and the elements in C order; floats as Python floats, which are exact for
float16/32/64; strings as hex of their bytes; partitioned variables as the whole tensor, assembled from the
parts TF's session returned). Tests restore the files with tensorfleet and compare with these values exactly.

Fixtures: `dense` (every dtype a variable may have, scalars, an empty tensor), `partitioned` (fixed_size_partitioner
over 3 parts on axis 0 and 2 parts on axis 1, plus a one-part "partitioned" variable TF saves whole), `strings`
(a scalar, a vector with empty, NUL and 0xff bytes, a 2-D tensor and a 200-byte element, whose varint length
takes two bytes), `adam` (a dense layer trained 3 steps with Adam: kernel, bias, their `Adam`/`Adam_1` slots,
`beta1_power`, `beta2_power`, global_step), `sharded` (Saver(sharded=True) over two CPU devices: two data files).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "trainer" / "data" / "tf_checkpoints"


def _encode(value) -> dict:
    arr = np.asarray(value)
    if arr.dtype.kind in "OSU":
        flat = [(v.encode() if isinstance(v, str) else bytes(v)).hex() for v in arr.reshape(-1)]
        return {"dtype": "string", "shape": list(arr.shape), "hex": flat}
    name = "bool" if arr.dtype == np.bool_ else arr.dtype.name
    return {"dtype": name, "shape": list(arr.shape), "values": arr.reshape(-1).tolist()}


def _save(tf, sess, out_dir: pathlib.Path, expected: dict, saver=None) -> None:
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    saver = saver or tf.train.Saver()
    cwd = os.getcwd()
    os.chdir(out_dir)  # a relative prefix: the state file names "model.ckpt", wherever the fixture lies
    try:
        saver.save(sess, "model.ckpt", write_meta_graph=False)
    finally:
        os.chdir(cwd)
    (out_dir / "expected.json").write_text(json.dumps({k: _encode(v) for k, v in sorted(expected.items())},
                                                      indent=1, sort_keys=True) + "\n")


def _values(sess, variables) -> dict:
    return dict(zip([v.op.name for v in variables], sess.run(list(variables)), strict=True))


def dense(tf, out: pathlib.Path) -> None:
    rng = np.random.default_rng(1)
    with tf.Graph().as_default():
        init = {
            "dense/kernel": rng.standard_normal((3, 4)).astype(np.float32),
            "dense/bias": np.array([0.5, -1.25, 3.0, 1e-30], np.float32),
            "f64": np.array([np.pi, -1e300, 5e-324]),
            "f16": np.array([[1.5, -0.0009765625], [65504.0, 0.1]], np.float16),
            "i32": np.array([-(2 ** 31), 2 ** 31 - 1, 7], np.int32),
            "i64": np.array([[-(2 ** 63), 2 ** 63 - 1]], np.int64),
            "i16": np.array([-32768, 32767], np.int16),
            "i8": np.array([-128, 127, 0], np.int8),
            "u8": np.array([0, 1, 255], np.uint8),
            "flags": np.array([True, False, True]),
            "scalar": np.float32(2.5),
            "empty": np.zeros((0, 3), np.float32),
            "scope/with.dots-and_dashes/v": np.arange(5, dtype=np.float32),
        }
        variables = [tf.Variable(v, name=k) for k, v in init.items()]
        variables.append(tf.train.get_or_create_global_step())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign(variables[-1], 123))
            _save(tf, sess, out / "dense", _values(sess, variables))


def partitioned(tf, out: pathlib.Path) -> None:
    with tf.Graph().as_default():
        specs = {"emb": ((10, 4), 0, 3), "wide": ((3, 5), 1, 2), "single": ((4,), 0, 1)}
        expected, created = {}, []
        for name, (shape, axis, parts) in specs.items():
            v = tf.get_variable(name, shape, initializer=tf.random_uniform_initializer(-1.0, 1.0, seed=5),
                                partitioner=tf.fixed_size_partitioner(parts, axis=axis))
            created.append((name, v))
        dense_var = tf.get_variable("plain", [2], initializer=tf.constant_initializer([1.0, 2.0]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for name, v in created:
                expected[name] = sess.run(tf.convert_to_tensor(v))
            expected["plain"] = sess.run(dense_var)
            _save(tf, sess, out / "partitioned", expected)


def strings(tf, out: pathlib.Path) -> None:
    with tf.Graph().as_default():
        init = {
            "s_scalar": b"hello",
            "s_vec": [b"", b"a", b"\x00nul", b"\xff\xfe", "h\u00e9".encode()],
            "s_mat": [[b"ab", b"c"], [b"", b"defg"]],
            "s_long": [b"x" * 200, b"y"],
            "count": np.int32(3),
        }
        variables = [tf.Variable(v, name=k) for k, v in init.items()]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            _save(tf, sess, out / "strings", _values(sess, variables))


def adam(tf, out: pathlib.Path) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = rng.standard_normal((8, 2)).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        step = tf.train.get_or_create_global_step()
        pred = tf.layers.dense(tf.constant(x), 2, name="dense",
                               kernel_initializer=tf.constant_initializer(rng.standard_normal((3, 2))))
        loss = tf.reduce_mean(tf.square(pred - y))
        train = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            _save(tf, sess, out / "adam", _values(sess, tf.global_variables()))


def sharded(tf, out: pathlib.Path) -> None:
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            a = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="a")
            s = tf.Variable([b"on", b"cpu0"], name="s")
        with tf.device("/cpu:1"):
            b = tf.Variable(np.array([7, 8, 9], np.int64), name="b")
        config = tf.ConfigProto(device_count={"CPU": 2})
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            _save(tf, sess, out / "sharded", _values(sess, [a, s, b]), tf.train.Saver(sharded=True))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow
    except ImportError:
        print("TensorFlow is not installed (the `tf1` extra): nothing written", file=sys.stderr)
        return 1
    tf = tensorflow.compat.v1
    tf.disable_v2_behavior()
    for make in (dense, partitioned, strings, adam, sharded):
        make(tf, args.out)
    print(f"wrote {sorted(p.name for p in args.out.iterdir())} under {args.out} with TensorFlow "
          f"{tensorflow.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
