"""Writes, once, what the SavedModel tests compare against real TensorFlow: SavedModels that TF writes, and TF's
op definitions (tests/trainer/data/tf_saved_model/ and tests/trainer/data/tf_op_defs.json).

Run with the `tf1` extra (real TensorFlow; 1.15 or 2.x through `tf.compat.v1`), never in a test:
    /work/tfvenv/bin/python scripts/make_tf_saved_model_fixtures.py [--out DIR] [--op-defs OP ...]

SavedModels (each a directory TF's `simple_save` wrote, beside `expected.json`: the signature's input values and
the outputs TF's session gave for them, as float/int lists):
- `mlp_ref`: `tf.layers.dense` 4 -> 8 (relu) -> 3, softmax and argmax, TF1's ref variables (`disable_v2_behavior`),
  with an asset file (`vocab.txt`, in the `asset_filepaths` collection) and `legacy_init_op` (a `tf.group`);
- `mlp_resource`: the same model with resource variables (what TF 2.x's `compat.v1` makes by default).

`--op-defs` writes the TF op definitions (inputs, outputs, attributes with their defaults) of the op types
named (default: those already in the file), for the test that checks every exported node against TF's op
list. The op types tensorfleet's exporter can write:
    python -c "from tensorfleet import tf_graph; print(*tf_graph.tf_op_types())"
"""
from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "trainer" / "data"
INPUTS = np.array([[2.5, -1.0, 2.0, 0.25], [-3.75, 0.1, 0.0, 1.5], [3.0, -2.0, 1.0, -4.5], [0.0, 4.0, -2.5, 1.0]],
                  np.float32)


def _mlp_saved_model(tf, out: pathlib.Path, resource: bool) -> None:
    if out.exists():
        shutil.rmtree(out)
    work = out.parent / (out.name + "_work")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    vocab = work / "vocab.txt"
    vocab.write_text("zero\none\ntwo\n")
    with tf.Graph().as_default() as g, tf.Session(graph=g) as sess:
        tf.set_random_seed(2)
        with tf.variable_scope("", use_resource=resource):
            x = tf.placeholder(tf.float32, [None, 4], name="x")
            h = tf.layers.dense(x, 8, activation=tf.nn.relu, name="hidden")
            logits = tf.layers.dense(h, 3, name="logits")
            probabilities = tf.nn.softmax(logits, name="probabilities")
            classes = tf.argmax(logits, 1, name="classes")
        if not resource:
            asset = tf.constant(str(vocab), name="vocab_path")
            tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        sess.run(tf.global_variables_initializer())
        init = tf.group(tf.local_variables_initializer(), name="legacy_init_op")
        tf.saved_model.simple_save(sess, str(out), {"x": x}, {"probabilities": probabilities, "classes": classes},
                                   legacy_init_op=init)
        p, c = sess.run([probabilities, classes], {x: INPUTS})
    shutil.rmtree(work)
    expected = {"tensorflow_version": tf.__version__, "inputs": {"x": INPUTS.tolist()},
                "outputs": {"probabilities": p.astype(float).tolist(), "classes": c.astype(int).tolist()}}
    (out.parent / (out.name + ".json")).write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


def _arg(arg) -> dict:
    out = {"name": arg.name}
    for field in ("type_attr", "number_attr", "type_list_attr"):
        if getattr(arg, field):
            out[field] = getattr(arg, field)
    if arg.type:
        out["type"] = int(arg.type)
    if arg.is_ref:
        out["is_ref"] = True
    return out


def _op_def(op_def) -> dict:
    from google.protobuf import json_format
    attrs = {}
    for a in op_def.attr:
        entry = {"type": a.type}
        if a.HasField("default_value"):
            entry["default"] = json_format.MessageToDict(a.default_value)
        if a.type in ("type", "list(type)") and a.allowed_values.list.type:
            entry["allowed"] = [int(t) for t in a.allowed_values.list.type]
        attrs[a.name] = entry
    return {"inputs": [_arg(a) for a in op_def.input_arg], "outputs": [_arg(a) for a in op_def.output_arg],
            "attrs": attrs}


def write_op_defs(tf, names: list, path: pathlib.Path) -> None:
    from tensorflow.python.framework import op_def_registry
    doc = json.loads(path.read_text()) if path.exists() else {"ops": {}}
    wanted = sorted(set(names) | set(doc["ops"]))
    missing = [n for n in wanted if op_def_registry.get(n) is None]
    if missing:
        sys.exit(f"not TensorFlow op types: {', '.join(missing)}")
    lines = [f"{json.dumps(n)}: {json.dumps(_op_def(op_def_registry.get(n)), sort_keys=True)}" for n in wanted]
    path.write_text(f'{{"tensorflow_version": {json.dumps(tf.__version__)}, "ops": {{\n' + ",\n".join(lines) + "\n}}\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=DATA / "tf_saved_model")
    parser.add_argument("--op-defs", nargs="*", default=None, metavar="OP")
    args = parser.parse_args(argv)
    import tensorflow.compat.v1 as tf  # the tf1 extra; TF 2.x runs it through compat.v1
    tf.disable_v2_behavior()
    if args.op_defs is not None:
        write_op_defs(tf, args.op_defs, DATA / "tf_op_defs.json")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    _mlp_saved_model(tf, args.out / "mlp_ref", resource=False)
    _mlp_saved_model(tf, args.out / "mlp_resource", resource=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
