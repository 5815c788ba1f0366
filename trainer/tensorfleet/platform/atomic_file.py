"""Files that appear whole or not at all: a new temporary beside the final name, fsynced, then renamed.

Platform helper under everything that writes files a reader may see mid-write: checkpoints
(train/checkpoint_io.py), `.meta` files (train/meta_graph.py) and `tf.train.write_graph` (graph_io.py).
Temporaries are `<final name>.tempstate<digits>` (what `checkpoint_io.remove_stale_files` sweeps) and are
created 0666 less the umask, as open(2) creates any file.
"""
from __future__ import annotations

import os
import secrets


def create_new(final_name: str):
    """Opens a new `final_name.tempstate<random>` file for writing; returns (fd, its path)."""
    while True:
        tmp = f"{final_name}.tempstate{secrets.randbelow(10 ** 18)}"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666), tmp
        except FileExistsError:
            continue


def fsync_dir(path: str) -> None:
    try:
        fd = os.open(path or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomically(path: str, data: bytes) -> None:
    """Writes `data` to `path`: readers see the old file or the whole new one, never a part."""
    fd, tmp = create_new(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(os.path.dirname(path))
