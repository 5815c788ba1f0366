"""`tf.version`, `tf.__version__`, `tf.VERSION`: the TF release this runtime follows, and its own version.

Beside the runtime (imports nothing from it). The choice: `tf.__version__ == tf.VERSION ==
tf.version.VERSION == "1.15.0"`, the TF release whose API and semantics Tensorfleet follows, so that TF1
scripts' version gates (`tf.__version__.startswith("1.")`, `LooseVersion(tf.__version__) >= "1.14"`) take
their TF1 paths, as they would on the TF they were written for. The package's own version (pyproject,
`pip show tensorfleet`) is `tf.version.TENSORFLEET_VERSION`, and `tf.version.GIT_VERSION` is
"tensorfleet-<that>", so a log printing TF's GIT_VERSION shows which runtime ran. Both are read from the
installed package's metadata on first use (about 0.1 s, so not at import).
"""
from __future__ import annotations

__all__ = ["VERSION", "GIT_VERSION", "TENSORFLEET_VERSION"]  # noqa: F822  (the last two: module __getattr__)

VERSION = "1.15.0"
_FALLBACK = "0+unknown"  # running from a source tree that was never pip-installed


def _package_version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover
        return _FALLBACK
    try:
        return version("tensorfleet")
    except PackageNotFoundError:
        return _FALLBACK


def __getattr__(name: str) -> str:
    if name == "TENSORFLEET_VERSION":
        return _package_version()
    if name == "GIT_VERSION":
        return f"tensorfleet-{_package_version()}"
    raise AttributeError(f"module 'tensorfleet.version' has no attribute {name!r}")
