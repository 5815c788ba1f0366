"""The tensorfleet side of `scripts/check_with_real_tf.py checkpoints`. Runs in tensorfleet's interpreter:
    python scripts/real_tf_checkpoint_cases.py write OUT_DIR      # the checkpoints + OUT_DIR/expected.json
    python scripts/real_tf_checkpoint_cases.py read-tf OUT_DIR    # reads what TF wrote in OUT_DIR/tf_many

`write` saves with tensorfleet's `tf.train.Saver`, one directory per case: `dense` (every dtype a variable may
have, a scalar, an empty tensor), `resaved` (saved twice to one prefix: its data then lies in shard 0 of 2),
`partitioned` (fixed_size_partitioner over 3 parts on axis 0 and 2 on axis 1), `strings`, `adam` (the graph of
`adam_model`, trained 3 steps: kernel, bias, their Adam slots, beta powers, global_step) and `many` (MANY
variables named by `many_name`: an index of several table blocks). expected.json holds, per case, every
tensor's value as tensorfleet's session held it ({"dtype", "shape", "values"}; complex as [re, im] pairs,
strings as hex). `read-tf` reads the checkpoint TF wrote of the `many` variables and exits 1 on a wrong value.

`adam_model(tf)` and `many_name` are shared with the TF side (this module imports tensorfleet only in `main`).
"""
from __future__ import annotations

import hashlib
import json
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANY = 5000


def many_name(i: int) -> str:
    """Names with little common prefix (so that the index outgrows TF's 256 KiB table block)."""
    return f"v{i:05d}/{hashlib.sha256(str(i).encode()).hexdigest()[:48]}"


def adam_model(tf):
    """The same graph in tensorfleet and in TF: dense/kernel, dense/bias, their Adam slots, beta powers."""
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
    y = np.cos(np.arange(16, dtype=np.float32)).reshape(8, 2)
    step = tf.train.get_or_create_global_step()
    pred = tf.layers.dense(tf.constant(x), 2, name="dense", kernel_initializer=tf.constant_initializer(
        np.arange(6, dtype=np.float32).reshape(3, 2) / 10))
    return tf.train.AdamOptimizer(0.1).minimize(tf.reduce_mean(tf.square(pred - y)), global_step=step)


def encode(value) -> dict:
    arr = np.asarray(value)
    if arr.dtype.kind in "OSU":
        return {"dtype": "string", "shape": list(arr.shape),
                "hex": [(v.encode() if isinstance(v, str) else bytes(v)).hex() for v in arr.reshape(-1)]}
    values = [[z.real, z.imag] for z in arr.reshape(-1).tolist()] if arr.dtype.kind == "c" else \
        arr.reshape(-1).tolist()
    return {"dtype": "bool" if arr.dtype == np.bool_ else arr.dtype.name, "shape": list(arr.shape), "values": values}


def write(tf, out: str) -> dict:
    cases: dict = {}

    def save(name, variables, train=None, twice=False):
        os.mkdir(os.path.join(out, name))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3 if train is not None else 0):
                sess.run(train)
            saver = tf.train.Saver()
            for _ in range(2 if twice else 1):
                saver.save(sess, os.path.join(out, name, "model.ckpt"), write_meta_graph=False)
            values = sess.run({k: tf.convert_to_tensor(v) for k, v in variables.items()})
        cases[name] = {k: encode(v) for k, v in values.items()}

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
            save(name, {k: tf.Variable(v, name=k) for k, v in values.items()}, twice=twice)
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(3))
        wide = tf.get_variable("wide", [3, 5], partitioner=tf.fixed_size_partitioner(2, axis=1))
        save("partitioned", {"emb": emb, "wide": wide})
    with tf.Graph().as_default():
        save("strings", {"s": tf.Variable([b"", b"a", b"\x00\xff", b"x" * 300], name="s"),
                         "scalar": tf.Variable(b"alone", name="scalar")})
    with tf.Graph().as_default():
        train = adam_model(tf)
        save("adam", {v.op.name: v for v in tf.global_variables()}, train=train)
    with tf.Graph().as_default():
        save("many", {many_name(i): tf.Variable(np.float32(i), name=many_name(i)) for i in range(MANY)})
    return cases


def read_tf(tf, out: str) -> int:
    directory = os.path.join(out, "tf_many")
    reader = tf.train.load_checkpoint(directory)
    listed = tf.train.list_variables(directory)
    wrong = [k for k, shape in listed if shape != [] or float(reader.get_tensor(k)) != float(k[1:6])]
    ok = len(listed) == MANY and not wrong
    print(f"many: tensorfleet read TF's {MANY}-variable checkpoint " + ("exactly" if ok else f"WRONG {wrong[:3]}"))
    return 0 if ok else 1


def main(argv) -> int:
    sys.path.insert(0, os.path.join(REPO, "trainer"))
    import tensorfleet as tf

    what, out = argv
    if what == "write":
        with open(os.path.join(out, "expected.json"), "w") as f:
            json.dump(write(tf, out), f)
        return 0
    return read_tf(tf, out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
