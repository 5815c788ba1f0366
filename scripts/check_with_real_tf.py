"""Checks what tensorfleet writes against real TensorFlow, where TensorFlow is installed (skipped otherwise).

Run with the `tf1` extra (real TensorFlow, 1.15 or 2.x through `tf.compat.v1`), never in a test:
    python scripts/check_with_real_tf.py savedmodel [--tensorfleet-python PY] [--cases NAME ...] [--keep DIR]
    python scripts/check_with_real_tf.py checkpoints [--tensorfleet-python PY] [--keep DIR]
    python scripts/check_with_real_tf.py training [--tensorfleet-python PY]

`savedmodel`: tensorfleet, in its own interpreter (`--tensorfleet-python`, default $TENSORFLEET_PYTHON, else
.venv/bin/python), trains and exports SavedModels (scripts/real_tf_savedmodel_cases.py: a softmax regression,
an MLP, a CNN, the launcher's `--export-dir` CNN, canned DNNClassifier and DNNLinearCombinedClassifier
exports, and the op zoo of every TF form) and records what its own loader computes from each. Real
TensorFlow then loads each SavedModel with `tf.compat.v1.saved_model.loader.load` and runs every recorded
signature on the same inputs: floats must agree within 1e-5 (absolute, or relative to the value when it is
larger than 1), integers, booleans and strings exactly, and the zoo's random draws in dtype and shape.

`checkpoints`: tensorfleet, in its own interpreter, saves checkpoints with `tf.train.Saver`
(scripts/real_tf_checkpoint_cases.py: every dtype, a prefix saved twice (data in shard 0 of 2), partitioned
variables, strings, an Adam-trained model with its slots, 5000 variables) and records its session's values. Real
TensorFlow reads each with `list_variables` and `load_checkpoint(...).get_tensor`, and restores it with
`Saver.restore` into a graph of its own (the partitioned one into 3 and into 2 parts): every value must be
exactly tensorfleet's. TF then saves the 5000 variables itself: its index must be byte-identical to
tensorfleet's, and tensorfleet must read TF's checkpoint exactly.

`training`: the same job (scripts/real_tf_training_case.py: dist-mnist's MLP and Adam from fixed initial
values and fixed batches) runs in both runtimes, in one session and on 2 ps + 1 worker: the loss every 25 steps
and the final cross entropy must agree within 1e-4 (relative), the global step exactly. One worker, so no
interleaving: what it checks is the arithmetic and the distributed step, not async dynamics.

Prints one line per case (and signature) and exits 0 when everything agrees (or TensorFlow is not importable:
"skipped"), 1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOLERANCE = 1e-5


def decode(e: dict) -> np.ndarray:
    if e["dtype"] == "string":
        arr = np.empty(len(e["hex"]), dtype=object)
        arr[:] = [bytes.fromhex(h) for h in e["hex"]]
        return arr.reshape(e["shape"])
    return np.asarray(e["values"], dtype=e["dtype"]).reshape(e["shape"])


def compare(want: np.ndarray, got: np.ndarray, shape_only: bool) -> tuple:
    """(ok, what): TF's output `got` against tensorfleet's `want`."""
    got = np.asarray(got)
    if want.shape != got.shape:
        return False, f"shape {got.shape} != {want.shape}"
    if want.dtype.kind == "O":
        same = all(bytes(a) == bytes(b) for a, b in zip(want.reshape(-1), got.reshape(-1)))
        return same, "strings equal" if same else "strings differ"
    if want.dtype != got.dtype:
        return False, f"dtype {got.dtype} != {want.dtype}"
    if shape_only:
        return True, "random: shape and dtype"
    if want.dtype.kind != "f":
        same = np.array_equal(want, got)
        return same, "equal" if same else f"{int((want != got).sum())} elements differ"
    err = np.abs(want.astype(np.float64) - got) / np.maximum(1.0, np.abs(want.astype(np.float64)))
    worst = float(np.nanmax(err)) if err.size else 0.0
    nan_same = np.array_equal(np.isnan(want), np.isnan(got))
    return bool(nan_same and worst <= TOLERANCE), f"max error {worst:.2e}"


def check_savedmodel(tf, args) -> int:
    work = args.keep or tempfile.mkdtemp(prefix="tensorfleet-real-tf-")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "trainer"), env.get("PYTHONPATH", "")])
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    subprocess.run([args.tensorfleet_python, os.path.join(REPO, "scripts", "real_tf_savedmodel_cases.py"), work,
                    *args.cases], check=True, env=env, timeout=3600)
    failures = 0
    for case in args.cases or sorted(os.listdir(work)):
        with open(os.path.join(work, case, "io.json")) as f:
            io = json.load(f)
        random = set(io["random"])
        with tf.Session(graph=tf.Graph()) as sess:
            mg = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], io["export_dir"])
            for key, rec in sorted(io["signatures"].items()):
                sig = mg.signature_def[key]
                outputs = sorted(rec["outputs"])
                got = sess.run([sig.outputs[k].name for k in outputs],
                               {sig.inputs[k].name: decode(v) for k, v in rec["inputs"].items()})
                results = [(k, *compare(decode(rec["outputs"][k]), g, k in random)) for k, g in zip(outputs, got)]
                bad = [(k, what) for k, ok, what in results if not ok]
                floats = [what for k, ok, what in results if what.startswith("max error")]
                worst = max((float(w.split()[-1]) for w in floats), default=0.0)
                status = "ok" if not bad else "MISMATCH"
                print(f"{case:15s} {key:22s} {len(outputs):3d} outputs  {status}  (worst float error {worst:.1e})")
                for k, what in bad:
                    print(f"    {k}: {what}")
                failures += len(bad)
    print(f"real TensorFlow {tf.__version__}: {'all outputs agree' if not failures else f'{failures} mismatches'}"
          f" (exports in {work})")
    return 1 if failures else 0


def _exact(want: np.ndarray, got) -> bool:
    """Same shape, dtype and every element (a checkpoint holds the bits: no tolerance)."""
    got = np.asarray(got)
    return compare(want, got, True)[0] and (want.dtype.kind == "O" or np.array_equal(want, got))


def _tensorfleet(args, *argv) -> int:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "trainer"), env.get("PYTHONPATH", "")])
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return subprocess.run([args.tensorfleet_python, os.path.join(REPO, "scripts", "real_tf_checkpoint_cases.py"),
                           *argv], env=env, timeout=3600).returncode


def _restore_graph(tf, cases, name: str, want: dict, parts) -> dict:
    """The variables of case `name` built with TF (zeros; the partitioned ones in `parts` parts)."""
    if name == "adam":
        cases.adam_model(tf)
        return {v.op.name: v for v in tf.global_variables()}
    if name == "partitioned":
        return {"emb": tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(parts[0])),
                "wide": tf.get_variable("wide", [3, 5], partitioner=tf.fixed_size_partitioner(parts[1], axis=1))}
    return {k: tf.Variable(np.full(v.shape, b"", dtype=object) if v.dtype == object else np.zeros(v.shape, v.dtype),
                           name=k) for k, v in want.items()}


def check_checkpoints(tf, args) -> int:
    sys.path.insert(0, os.path.join(REPO, "scripts"))
    import real_tf_checkpoint_cases as cases

    work = args.keep or tempfile.mkdtemp(prefix="tensorfleet-real-tf-")
    if _tensorfleet(args, "write", work):
        return 1
    with open(os.path.join(work, "expected.json")) as f:
        expected = json.load(f)
    failures = 0
    for name, encoded in expected.items():
        want = {k: decode({**e, "values": [complex(*v) if isinstance(v, list) else v for v in e.get("values", [])]})
                for k, e in encoded.items()}
        prefix = os.path.join(work, name, "model.ckpt")
        reader = tf.train.load_checkpoint(prefix)
        listed = dict(tf.train.list_variables(prefix))
        bad = [k for k, v in want.items() if listed.get(k) != list(v.shape) or not _exact(v, reader.get_tensor(k))]
        restored = 0
        for parts in ([3, 2], [2, 3]) if name == "partitioned" else [None]:
            with tf.Graph().as_default():
                variables = _restore_graph(tf, cases, name, want, parts)
                with tf.Session() as sess:
                    tf.train.Saver().restore(sess, prefix)
                    got = sess.run({k: tf.convert_to_tensor(v) for k, v in variables.items()})
            bad += [f"{k} (Saver.restore)" for k, v in got.items() if not _exact(want[k], v)]
            restored += len(got)
        failures += bool(bad)
        print(f"{name}: real TF {tf.__version__} " + (f"MISMATCH {bad[:5]}" if bad else
              f"read {len(want)} tensors exactly (load_checkpoint, list_variables); Saver.restore gave {restored} "
              f"values exactly"))
    with tf.Graph().as_default():
        for i in range(cases.MANY):
            tf.Variable(np.float32(i), name=cases.many_name(i))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, os.path.join(work, "tf_many", "model.ckpt"), write_meta_graph=False)
    with open(os.path.join(work, "many", "model.ckpt.index"), "rb") as f:
        ours = f.read()
    with open(os.path.join(work, "tf_many", "model.ckpt.index"), "rb") as f:
        same = f.read() == ours
    print(f"many: the {cases.MANY}-variable index ({len(ours)} bytes) is "
          f"{'byte-identical to' if same else 'DIFFERENT from'} TF's")
    failures += (not same) + bool(_tensorfleet(args, "read-tf", work))
    print(f"real TensorFlow {tf.__version__}: {'all checkpoints agree' if not failures else f'{failures} failures'}"
          f" (files in {work})")
    return 1 if failures else 0


def check_training(tf, args) -> int:
    failures = 0
    case = os.path.join(REPO, "scripts", "real_tf_training_case.py")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "trainer"), env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as work:
        for mode in ("local", "distributed"):
            got = {}
            for impl, python in (("tensorfleet", args.tensorfleet_python), ("tensorflow", sys.executable)):
                out = os.path.join(work, f"{impl}-{mode}.json")
                if subprocess.run([python, case, impl, mode, out], env=env, timeout=600).returncode:
                    print(f"{mode}: {impl} failed")
                    return 1
                with open(out) as f:
                    got[impl] = json.load(f)
            ours, theirs = got["tensorfleet"], got["tensorflow"]
            a = np.array(ours["curve"] + [ours["final"]])
            b = np.array(theirs["curve"] + [theirs["final"]])
            worst = float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1.0)))
            ok = worst <= 1e-4 and ours["global_step"] == theirs["global_step"]
            failures += not ok
            print(f"{mode}: final cross entropy {ours['final']:.4f} here, {theirs['final']:.4f} in real TF "
                  f"{tf.__version__}; worst relative difference over the curve {worst:.1e}; global step "
                  f"{ours['global_step']} / {theirs['global_step']}: {'agree' if ok else 'DIFFERENT'}")
    return 1 if failures else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sm = sub.add_parser("savedmodel", help="real TF loads SavedModels exported here and gives the same outputs")
    default_py = os.environ.get("TENSORFLEET_PYTHON") or os.path.join(REPO, ".venv", "bin", "python")
    sm.add_argument("--tensorfleet-python", default=default_py, help="the interpreter tensorfleet is installed in")
    sm.add_argument("--cases", nargs="*", default=[], help="default: all (softmax mlp cnn launcher_cnn "
                                                           "dnn_classifier wide_deep zoo)")
    sm.add_argument("--keep", default=None, metavar="DIR", help="export into DIR (default: a temporary directory)")
    ck = sub.add_parser("checkpoints", help="real TF restores checkpoints written here; TF's bytes are ours")
    ck.add_argument("--tensorfleet-python", default=default_py, help="the interpreter tensorfleet is installed in")
    ck.add_argument("--keep", default=None, metavar="DIR", help="write into DIR (default: a temporary directory)")
    tr = sub.add_parser("training", help="the same Adam job trains to the same losses here and in real TF")
    tr.add_argument("--tensorfleet-python", default=default_py, help="the interpreter tensorfleet is installed in")
    args = parser.parse_args(argv)
    try:
        import tensorflow.compat.v1 as tf
    except ImportError as e:
        print(f"skipped: TensorFlow is not importable here ({e}); run with the tf1 extra")
        return 0
    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)
    checks = {"savedmodel": check_savedmodel, "checkpoints": check_checkpoints, "training": check_training}
    return checks[args.what](tf, args)


if __name__ == "__main__":
    sys.exit(main())
