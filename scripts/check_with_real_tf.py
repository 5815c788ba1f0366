"""Checks tensorfleet's files against real TensorFlow, where it is installed (skipped otherwise).

    python scripts/check_with_real_tf.py checkpoints [--tf-python PATH]

`checkpoints`: tensorfleet (this interpreter, `trainer/` on its path) writes checkpoints with `tf.train.Saver`:
every dtype a variable may have, partitioned variables (fixed_size_partitioner over 3 parts), string variables,
a model trained 3 steps with Adam (kernel, bias, their slots, beta powers, global_step), a checkpoint saved
twice to one prefix (its data then lies in shard 0 of 2) and one of 5000 variables (an index of several table
blocks). Real TensorFlow (`tf.compat.v1`, in a subprocess: `--tf-python`, else $TF_PYTHON, else this
interpreter if it imports tensorflow) then reads each with `list_variables`, `load_checkpoint(...).get_tensor`
and `Saver.restore` into a graph of its own (the partitioned one into 3 and into 2 parts) and compares every
value exactly with what tensorfleet's session held. Finally TF writes the 5000-variable checkpoint itself and
the two index files must be byte-identical, and tensorfleet reads TF's. Exit status 0 when all hold.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
MANY = 5000


def _encode(value) -> dict:
    arr = np.asarray(value)
    if arr.dtype.kind in "OSU":
        return {"dtype": "string", "shape": list(arr.shape),
                "hex": [(v.encode() if isinstance(v, str) else bytes(v)).hex() for v in arr.reshape(-1)]}
    values = [[z.real, z.imag] for z in arr.reshape(-1).tolist()] if arr.dtype.kind == "c" else \
        arr.reshape(-1).tolist()
    return {"dtype": "bool" if arr.dtype == np.bool_ else arr.dtype.name, "shape": list(arr.shape), "values": values}


def _decode(e: dict) -> np.ndarray:
    if e["dtype"] == "string":
        return np.array([bytes.fromhex(h) for h in e["hex"]], dtype=object).reshape(e["shape"])
    values = [complex(*v) if isinstance(v, list) else v for v in e["values"]]
    return np.array(values, dtype=e["dtype"]).reshape(e["shape"])


def _same(got, want) -> bool:
    got = np.asarray(got)
    if want.dtype == object:
        return got.shape == want.shape and [bytes(x) for x in got.reshape(-1)] == list(want.reshape(-1))
    return got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)


def _many_name(i: int) -> str:
    """Names with little common prefix (so that the index outgrows TF's 256 KiB table block)."""
    return f"v{i:05d}/{hashlib.sha256(str(i).encode()).hexdigest()[:48]}"


# -- tensorfleet's side -------------------------------------------------------
def _adam_model(tf):
    """The same graph in tensorfleet and in TF: names dense/kernel, dense/bias, their Adam slots, beta powers."""
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
    y = np.cos(np.arange(16, dtype=np.float32)).reshape(8, 2)
    step = tf.train.get_or_create_global_step()
    pred = tf.layers.dense(tf.constant(x), 2, name="dense", kernel_initializer=tf.constant_initializer(
        np.arange(6, dtype=np.float32).reshape(3, 2) / 10))
    return tf.train.AdamOptimizer(0.1).minimize(tf.reduce_mean(tf.square(pred - y)), global_step=step)


def write_ours(out: pathlib.Path) -> dict:
    """Writes the checkpoints with tensorfleet; returns {case: {key: encoded value}}."""
    sys.path.insert(0, str(ROOT / "trainer"))
    import tensorfleet as tf

    cases: dict = {}

    def save(name, variables, twice=False):
        (out / name).mkdir()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            if name == "adam":
                train = variables["train"]
                for _ in range(3):
                    sess.run(train)
                variables = {v.op.name: v for v in tf.global_variables()}
            saver = tf.train.Saver()
            for _ in range(2 if twice else 1):
                saver.save(sess, str(out / name / "model.ckpt"), write_meta_graph=False)
            values = sess.run({k: tf.convert_to_tensor(v) for k, v in variables.items()})
        cases[name] = {k: _encode(v) for k, v in values.items()}

    rng = np.random.default_rng(0)
    dense = {"f32": rng.standard_normal((3, 4)).astype(np.float32), "f64": np.array([np.pi, -1e300]),
             "f16": np.array([1.5, 65504.0], np.float16), "i8": np.array([-128, 127], np.int8),
             "i16": np.array([-32768], np.int16), "i32": np.array(7, np.int32), "i64": np.array([-(2 ** 63)]),
             "u8": np.array([0, 255], np.uint8), "u16": np.array([65535], np.uint16),
             "u32": np.array([2 ** 32 - 1], np.uint32), "u64": np.array([2 ** 64 - 1], np.uint64),
             "flags": np.array([True, False]), "c64": np.array([1 + 2j], np.complex64),
             "c128": np.array([-1j], np.complex128), "empty": np.zeros((0, 3), np.float32)}
    for name, values, twice in (("dense", dense, False), ("resaved", {"w": np.arange(5.0)}, True)):
        with tf.Graph().as_default():
            save(name, {k: tf.Variable(v, name=k) for k, v in values.items()}, twice)
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(3))
        wide = tf.get_variable("wide", [3, 5], partitioner=tf.fixed_size_partitioner(2, axis=1))
        save("partitioned", {"emb": emb, "wide": wide})
    with tf.Graph().as_default():
        save("strings", {"s": tf.Variable([b"", b"a", b"\x00\xff", b"x" * 300], name="s"),
                         "scalar": tf.Variable(b"alone", name="scalar")})
    with tf.Graph().as_default():
        save("adam", {"train": _adam_model(tf)})
    with tf.Graph().as_default():
        save("many", {_many_name(i): tf.Variable(np.float32(i), name=_many_name(i)) for i in range(MANY)})
    return cases


def read_theirs(out: pathlib.Path) -> list:
    """tensorfleet reads the checkpoint TF wrote in tf_many; returns problems."""
    import tensorfleet as tf

    values = tf.train.NewCheckpointReader(str(out / "tf_many" / "model.ckpt"))
    problems = []
    for key, shape in tf.train.list_variables(str(out / "tf_many")):
        if shape != [] or float(values.get_tensor(key)) != float(key[1:6]):
            problems.append(f"tensorfleet read {key} of TF's checkpoint wrong")
    return problems


# -- TensorFlow's side (run by --tf-python) -----------------------------------
def tf_side(out: pathlib.Path) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow

    tf = tensorflow.compat.v1
    tf.disable_v2_behavior()
    cases = json.loads((out / "expected.json").read_text())
    failures = 0
    for name, encoded in cases.items():
        want = {k: _decode(e) for k, e in encoded.items()}
        prefix = str(out / name / "model.ckpt")
        reader = tf.train.load_checkpoint(prefix)
        bad = [k for k, e in want.items() if not _same(reader.get_tensor(k), e)]
        listed = dict(tf.train.list_variables(prefix))
        bad += [k for k in want if listed.get(k) != list(want[k].shape)]
        restored = 0
        for parts in ([3, 2], [2, 3]) if name == "partitioned" else [None]:
            with tf.Graph().as_default():
                if name == "adam":
                    _adam_model(tf)
                    variables = {v.op.name: v for v in tf.global_variables()}
                elif name == "partitioned":
                    variables = {"emb": tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(
                        parts[0])), "wide": tf.get_variable("wide", [3, 5], partitioner=tf.fixed_size_partitioner(
                            parts[1], axis=1))}
                else:
                    variables = {k: tf.Variable(np.zeros(v.shape, v.dtype) if v.dtype != object else
                                                np.full(v.shape, b"", dtype=object), name=k) for k, v in want.items()}
                with tf.Session() as sess:
                    tf.train.Saver().restore(sess, prefix)
                    got = sess.run({k: tf.convert_to_tensor(v) for k, v in variables.items()})
                bad += [f"{k} (Saver.restore)" for k, v in got.items() if not _same(v, want[k])]
                restored += len(got)
        failures += bool(bad)
        print(f"{name}: real TF {tensorflow.__version__} " + (f"MISMATCH {bad[:5]}" if bad else
              f"read {len(want)} tensors exactly (load_checkpoint, list_variables) and Saver.restore gave "
              f"{restored} values exactly"))
    with tf.Graph().as_default():
        for i in range(MANY):
            tf.Variable(np.float32(i), name=_many_name(i))
        (out / "tf_many").mkdir()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, str(out / "tf_many" / "model.ckpt"), write_meta_graph=False)
    return 1 if failures else 0


def _tf_python(arg) -> str | None:
    for candidate in (arg, os.environ.get("TF_PYTHON")):
        if candidate:
            return candidate
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        return None
    return sys.executable


def check_checkpoints(tf_python) -> int:
    python = _tf_python(tf_python)
    if python is None:
        print("skipped: TensorFlow is not installed (pass --tf-python or set TF_PYTHON)")
        return 0
    out = pathlib.Path(tempfile.mkdtemp(prefix="tf-check-"))
    try:
        (out / "expected.json").write_text(json.dumps(write_ours(out)))
        rc = subprocess.run([python, __file__, "tf-side-checkpoints", str(out)], timeout=900).returncode
        ours, theirs = (out / "many" / "model.ckpt.index").read_bytes(), \
            (out / "tf_many" / "model.ckpt.index").read_bytes()
        same = ours == theirs
        verdict = "byte-identical to" if same else "DIFFERENT from"
        print(f"many: the {MANY}-variable index ({len(ours)} bytes) is {verdict} TF's")
        problems = read_theirs(out)
        print(f"tensorfleet read TF's {MANY}-variable checkpoint: " + (str(problems[:3]) if problems else "exactly"))
        return 0 if rc == 0 and same and not problems else 1
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["checkpoints", "tf-side-checkpoints"])
    parser.add_argument("directory", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--tf-python", help="a Python interpreter that imports tensorflow")
    args = parser.parse_args(argv)
    if args.what == "tf-side-checkpoints":
        return tf_side(pathlib.Path(args.directory))
    return check_checkpoints(args.tf_python)


if __name__ == "__main__":
    sys.exit(main())
