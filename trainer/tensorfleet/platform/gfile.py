"""`tf.gfile`: TF 1.15's file API (`Exists`, `GFile`, `Glob`, ...) on the LOCAL filesystem only.

Beside the runtime (uses only `errors`). TF's names, signatures and error classes: a missing path raises
`tf.errors.NotFoundError`, an existing target `AlreadyExistsError`, a permission problem
`PermissionDeniedError`, a directory where a file is expected (or the reverse) `FailedPreconditionError`.
Paths with a scheme other than `file://` (`gs://`, `hdfs://`, `s3://`, ...) raise `UnimplementedError`
("File system scheme 'gs' not implemented"), as TF built without that file system does.
`GFile` (also `Open` / `FastGFile`) opens lazily, like TF's, on the first read/write/seek; 'r' reads text,
'rb' bytes.
"""
from __future__ import annotations

import errno as _errno
import glob as _glob
import os as _os
import shutil as _shutil

from .. import errors

__all__ = ["Copy", "DeleteRecursively", "Exists", "FastGFile", "GFile", "Glob", "IsDirectory", "ListDirectory",
           "MakeDirs", "MkDir", "Open", "Remove", "Rename", "Stat", "Walk"]


def _path(p) -> str:
    p = _os.fspath(p)
    if isinstance(p, bytes):
        p = p.decode()
    scheme, sep, rest = p.partition("://")
    if sep and "/" not in scheme:
        if scheme != "file":
            raise errors.UnimplementedError(None, None, f"File system scheme '{scheme}' not implemented "
                                                        f"(file: '{p}')")
        return rest
    return p


_BY_ERRNO = {_errno.ENOENT: errors.NotFoundError, _errno.EEXIST: errors.AlreadyExistsError,
             _errno.EACCES: errors.PermissionDeniedError, _errno.EPERM: errors.PermissionDeniedError,
             _errno.EISDIR: errors.FailedPreconditionError, _errno.ENOTDIR: errors.FailedPreconditionError,
             _errno.ENOTEMPTY: errors.FailedPreconditionError}


def _op_error(e: OSError, path) -> errors.OpError:
    cls = _BY_ERRNO.get(e.errno, errors.UnknownError)
    return cls(None, None, f"{e.filename or path}; {e.strerror or e}")


class _Mapped:
    """Turns OSErrors raised inside the block into TF's OpErrors."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is not None and isinstance(exc, OSError):
            raise _op_error(exc, self.path) from exc
        return False


def Exists(filename) -> bool:
    """True when the path exists (file or directory)."""
    return _os.path.exists(_path(filename))


def IsDirectory(dirname) -> bool:
    return _os.path.isdir(_path(dirname))


def MakeDirs(dirname) -> None:
    """Creates the directory and its parents; fine if it exists already."""
    p = _path(dirname)
    with _Mapped(p):
        _os.makedirs(p, exist_ok=True)


def MkDir(dirname) -> None:
    """Creates one directory; AlreadyExistsError if it exists, NotFoundError if the parent does not."""
    p = _path(dirname)
    with _Mapped(p):
        _os.mkdir(p)


def ListDirectory(dirname) -> list:
    """The entries' names (not paths), without '.' and '..'; NotFoundError when not a directory."""
    p = _path(dirname)
    if not _os.path.isdir(p):
        raise errors.NotFoundError(None, None, f"Could not find directory {dirname}")
    with _Mapped(p):
        return _os.listdir(p)


def Remove(filename) -> None:
    """Deletes a file; NotFoundError if it does not exist."""
    p = _path(filename)
    with _Mapped(p):
        _os.remove(p)


def DeleteRecursively(dirname) -> None:
    """Deletes a directory tree (or a single file); NotFoundError if nothing is there."""
    p = _path(dirname)
    with _Mapped(p):
        if _os.path.isdir(p) and not _os.path.islink(p):
            _shutil.rmtree(p)
        else:
            _os.remove(p)


def Glob(filename) -> list:
    """Paths matching a pattern (or any of a list of patterns); [] when none match."""
    patterns = [filename] if isinstance(filename, (str, bytes, _os.PathLike)) else list(filename)
    out = []
    for pat in patterns:
        out.extend(sorted(_glob.glob(_path(pat))))
    return out


def Copy(oldpath, newpath, overwrite=False) -> None:
    """Copies a file; AlreadyExistsError when `newpath` exists and not `overwrite`."""
    src, dst = _path(oldpath), _path(newpath)
    if not overwrite and _os.path.exists(dst):
        raise errors.AlreadyExistsError(None, None, "file already exists")
    if not _os.path.exists(src):
        raise errors.NotFoundError(None, None, f"{oldpath}; No such file or directory")
    with _Mapped(src):
        _shutil.copyfile(src, dst)


def Rename(oldname, newname, overwrite=False) -> None:
    """Renames a file or directory; AlreadyExistsError when `newname` exists and not `overwrite`."""
    src, dst = _path(oldname), _path(newname)
    if not overwrite and _os.path.exists(dst):
        raise errors.AlreadyExistsError(None, None, f"file {newname} already exists")
    with _Mapped(src):
        _os.replace(src, dst)


class FileStatistics:
    """`tf.gfile.Stat`'s result: `length` (bytes), `mtime_nsec`, `is_directory`."""

    def __init__(self, length, mtime_nsec, is_directory):
        self.length, self.mtime_nsec, self.is_directory = length, mtime_nsec, is_directory


def Stat(filename) -> FileStatistics:
    p = _path(filename)
    with _Mapped(p):
        st = _os.stat(p)
    return FileStatistics(st.st_size, st.st_mtime_ns, _os.path.isdir(p))


def Walk(top, in_order=True):
    """Yields (dirname, subdirectory names, file names); top-down when in_order. Nothing for a missing `top`."""
    p = _path(top)
    if not _os.path.isdir(p):
        return
    yield from _os.walk(p, topdown=in_order)


class GFile:
    """`tf.gfile.GFile(name, mode='r')`: a file object opened on first use; modes r, w, a, r+, w+, a+ (+ 'b')."""

    def __init__(self, name, mode="r"):
        self._name = _path(name)
        self._display_name = _os.fspath(name)
        if mode.replace("b", "") not in ("r", "w", "a", "r+", "w+", "a+"):
            raise errors.InvalidArgumentError(None, None, f"mode '{mode}' is not supported")
        self._mode = mode
        self._f = None
        self._closed = False

    @property
    def name(self):
        return self._display_name

    @property
    def mode(self):
        return self._mode

    def _file(self):
        if self._closed:
            raise ValueError("I/O operation on closed file.")
        if self._f is None:
            with _Mapped(self._name):
                if _os.path.isdir(self._name):
                    raise errors.FailedPreconditionError(None, None, f"{self._display_name}; Is a directory")
                self._f = open(self._name, self._mode, **({} if "b" in self._mode else {"encoding": "utf-8",
                                                                                         "newline": ""}))
        return self._f

    def _io(self, fn, *args):
        f = self._file()
        with _Mapped(self._name):
            return getattr(f, fn)(*args)

    def read(self, n=-1):
        return self._io("read", -1 if n is None else n)

    def readline(self):
        return self._io("readline")

    def readlines(self):
        return self._io("readlines")

    def write(self, file_content):
        if "b" not in self._mode and isinstance(file_content, bytes):
            file_content = file_content.decode("utf-8")
        return self._io("write", file_content)

    def seek(self, offset=None, whence=0, position=None):
        """TF's seek: `position` is the deprecated name of `offset`."""
        if position is not None:
            offset = position
        return self._io("seek", offset, whence)

    def tell(self):
        return self._io("tell")

    def size(self):
        with _Mapped(self._name):
            if self._f is not None:
                self._f.flush()
            return _os.path.getsize(self._name)

    def flush(self):
        if self._f is not None:
            self._f.flush()

    def close(self):
        if self._f is not None:
            self._f.close()
            self._f = None
        self._closed = True

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    next = __next__

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


Open = GFile
FastGFile = GFile
