"""Checks what tensorfleet writes against real TensorFlow, where TensorFlow is installed (skipped otherwise).

Run with the `tf1` extra (real TensorFlow, 1.15 or 2.x through `tf.compat.v1`), never in a test:
    python scripts/check_with_real_tf.py savedmodel [--tensorfleet-python PY] [--cases NAME ...] [--keep DIR]

`savedmodel`: tensorfleet, in its own interpreter (`--tensorfleet-python`, default $TENSORFLEET_PYTHON, else
.venv/bin/python), trains and exports SavedModels (scripts/real_tf_savedmodel_cases.py: a softmax regression,
an MLP, a CNN, the launcher's `--export-dir` CNN, canned DNNClassifier and DNNLinearCombinedClassifier
exports, and the op zoo of every TF form) and records what its own loader computes from each. Real
TensorFlow then loads each SavedModel with `tf.compat.v1.saved_model.loader.load` and runs every recorded
signature on the same inputs: floats must agree within 1e-5 (absolute, or relative to the value when it is
larger than 1), integers, booleans and strings exactly, and the zoo's random draws in dtype and shape.

Prints one line per case and signature and exits 0 when everything agrees (or TensorFlow is not importable:
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sm = sub.add_parser("savedmodel", help="real TF loads SavedModels exported here and gives the same outputs")
    default_py = os.environ.get("TENSORFLEET_PYTHON") or os.path.join(REPO, ".venv", "bin", "python")
    sm.add_argument("--tensorfleet-python", default=default_py, help="the interpreter tensorfleet is installed in")
    sm.add_argument("--cases", nargs="*", default=[], help="default: all (softmax mlp cnn launcher_cnn "
                                                           "dnn_classifier wide_deep zoo)")
    sm.add_argument("--keep", default=None, metavar="DIR", help="export into DIR (default: a temporary directory)")
    args = parser.parse_args(argv)
    try:
        import tensorflow.compat.v1 as tf
    except ImportError as e:
        print(f"skipped: TensorFlow is not importable here ({e}); run with the tf1 extra")
        return 0
    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)
    return {"savedmodel": check_savedmodel}[args.what](tf, args)


if __name__ == "__main__":
    sys.exit(main())
