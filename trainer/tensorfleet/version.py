"""`tf.version`, `tf.__version__`, `tf.VERSION` and TF 1.15's other build constants; the runtime's own version.

Beside the runtime (imports nothing from it). The choice: `tf.__version__ == tf.VERSION ==
tf.version.VERSION == "1.15.0"`, the TF release whose API and semantics Tensorfleet follows, so that TF1
scripts' version gates (`tf.__version__.startswith("1.")`, `LooseVersion(tf.__version__) >= "1.14"`) take
their TF1 paths, as they would on the TF they were written for. The package's own version (pyproject,
`pip show tensorfleet`) is `tf.version.TENSORFLEET_VERSION`.

TF 1.15's other constants, in the form TF gives them (`tensorflow/python/framework/versions.py`), also as
the dunders `tf.__git_version__`, `tf.__compiler_version__`, `tf.__cxx11_abi_flag__`, `tf.__monolithic_build__`:
- `GIT_VERSION`: TF's is `git describe` of its build ("v1.15.0-rc3-22-g590d6ee"); here
  "v1.15.0-tensorfleet-<TENSORFLEET_VERSION>", so a log printing it shows which runtime ran;
- `COMPILER_VERSION`: TF's is the compiler of its C++ core ("7.3.1 20180303"); here the compiler of the
  interpreter that runs the kernels (`platform.python_compiler()`, e.g. "GCC 12.2.0");
- `CXX11_ABI_FLAG` 0 and `MONOLITHIC_BUILD` 0 (TF 1.15's pip builds' values; ints, as TF's);
- `GRAPH_DEF_VERSION` 119, `GRAPH_DEF_VERSION_MIN_CONSUMER` 0, `GRAPH_DEF_VERSION_MIN_PRODUCER` 0: TF 1.15's,
  and the producer version every GraphDef Tensorfleet writes carries.
The package version is read from the installed metadata on first use (about 0.1 s), then kept.
"""
from __future__ import annotations

import functools
import platform

__all__ = ["VERSION", "GIT_VERSION", "COMPILER_VERSION", "CXX11_ABI_FLAG", "MONOLITHIC_BUILD",  # noqa: F822
           "GRAPH_DEF_VERSION", "GRAPH_DEF_VERSION_MIN_CONSUMER", "GRAPH_DEF_VERSION_MIN_PRODUCER",
           "TENSORFLEET_VERSION"]  # GIT_VERSION and TENSORFLEET_VERSION: module __getattr__

VERSION = "1.15.0"
COMPILER_VERSION = platform.python_compiler()
CXX11_ABI_FLAG = 0
MONOLITHIC_BUILD = 0
GRAPH_DEF_VERSION = 119
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
_FALLBACK = "0+unknown"  # running from a source tree that was never pip-installed


@functools.lru_cache(maxsize=None)
def _package_version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover
        return _FALLBACK
    try:
        return version("tensorfleet")
    except PackageNotFoundError:
        return _FALLBACK


def git_version() -> str:
    return f"v{VERSION}-tensorfleet-{_package_version()}"


def __getattr__(name: str) -> str:
    if name == "TENSORFLEET_VERSION":
        return _package_version()
    if name == "GIT_VERSION":
        return git_version()
    raise AttributeError(f"module 'tensorfleet.version' has no attribute {name!r}")
