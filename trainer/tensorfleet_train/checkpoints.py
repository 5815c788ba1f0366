"""Checkpoints of the built-in models and the chief's "training is complete" marker.

Used by the chief (training.py) to save every N steps, on SIGTERM and at the end, and by the evaluator
(evaluator.py) to know when to stop. Checkpoints are `tf.train.Saver`'s (`<dir>/model.ckpt-<step>`,
listed in `<dir>/checkpoint`, written atomically by the Saver).

The marker `<dir>/training_complete.json` (`{"checkpoint": "model.ckpt-<step>", "global_step": <step>}`)
is written by the chief, atomically (temporary file, fsync, rename), after the final checkpoint of a
run that reached `--steps`; never after a SIGTERM or an error. The evaluator exits once it has
evaluated a checkpoint at or past the marker's step. A chief that starts training again (a new run in
the same directory) removes a marker of a lower step first.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Optional

from . import runlog

CHECKPOINT_BASENAME = "model.ckpt"
MARKER_NAME = "training_complete.json"


def save(saver, sess, checkpoint_dir: str, global_step: int, telemetry, reason: str) -> str:
    """Writes one checkpoint; logs and reports its duration. Returns the checkpoint path."""
    os.makedirs(checkpoint_dir, exist_ok=True)
    start = time.monotonic()
    path = saver.save(sess, os.path.join(checkpoint_dir, CHECKPOINT_BASENAME), global_step=global_step)
    seconds = time.monotonic() - start
    telemetry.checkpoint(seconds, time.time())
    runlog.log("checkpoint", f"saved {path} ({reason})", global_step=global_step, seconds=round(seconds, 4),
               path=path)
    return path


def marker_path(checkpoint_dir: str) -> str:
    return os.path.join(checkpoint_dir, MARKER_NAME)


def write_marker(checkpoint_dir: str, checkpoint_path: str, global_step: int) -> None:
    doc = {"checkpoint": os.path.basename(checkpoint_path), "global_step": int(global_step)}
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + MARKER_NAME, dir=checkpoint_dir)
    try:
        os.fchmod(fd, 0o644)   # the evaluator may run as another user
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, marker_path(checkpoint_dir))
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    runlog.log("training_complete", f"wrote {marker_path(checkpoint_dir)}", global_step=global_step)


def read_marker(checkpoint_dir: str) -> Optional[dict]:
    """The marker's content, or None when absent or unreadable (a half-visible file cannot happen:
    it is renamed into place)."""
    try:
        with open(marker_path(checkpoint_dir)) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("global_step"), int):
        return None
    return doc


def clear_stale_marker(checkpoint_dir: str, target_step: int) -> None:
    """A chief about to train towards `target_step` removes a marker of an earlier, shorter run."""
    doc = read_marker(checkpoint_dir)
    if doc is not None and doc["global_step"] < target_step:
        os.unlink(marker_path(checkpoint_dir))
