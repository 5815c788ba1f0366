"""`tf.logging`: TF 1.15's logging module, on the standard library's `logging` (logger name `tensorfleet`).

Beside the runtime (imports nothing from it). As TF: the levels are the stdlib ones (`DEBUG`=10 ... `FATAL`=50);
the logger gets a stderr handler with the format `INFO:tensorfleet:message` when it is first used and the root
logger has no handlers (messages also propagate to the root logger); the default verbosity is the root's
(WARNING) until `set_verbosity`. `fatal` logs at FATAL and does not exit (TF neither). `log_every_n` /
`log_first_n` count per call site (file and line), like TF.
"""
from __future__ import annotations

import logging as _logging
import sys as _sys
import threading as _threading

__all__ = ["DEBUG", "INFO", "WARN", "ERROR", "FATAL", "get_logger", "set_verbosity", "get_verbosity", "log", "debug",
           "info", "warn", "warning", "error", "fatal", "vlog", "log_every_n", "log_first_n", "log_if", "flush"]

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

LOGGER_NAME = "tensorfleet"
_logger = None
_lock = _threading.Lock()
_log_counts = {}


def get_logger() -> _logging.Logger:
    """The `tensorfleet` logger (created and given a stderr handler on first use, as TF's)."""
    global _logger
    if _logger is not None:
        return _logger
    with _lock:
        if _logger is None:
            logger = _logging.getLogger(LOGGER_NAME)
            if not _logging.getLogger().handlers and not logger.handlers:
                handler = _logging.StreamHandler(_sys.stderr)
                handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
                logger.addHandler(handler)
            _logger = logger
    return _logger


def set_verbosity(v) -> None:
    """Messages below level `v` (e.g. `tf.logging.INFO`) are dropped."""
    get_logger().setLevel(v)


def get_verbosity() -> int:
    return get_logger().getEffectiveLevel()


def log(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, stacklevel=2, **kwargs)


def debug(msg, *args, **kwargs):
    get_logger().debug(msg, *args, stacklevel=2, **kwargs)


def info(msg, *args, **kwargs):
    get_logger().info(msg, *args, stacklevel=2, **kwargs)


def warning(msg, *args, **kwargs):
    get_logger().warning(msg, *args, stacklevel=2, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    get_logger().error(msg, *args, stacklevel=2, **kwargs)


def fatal(msg, *args, **kwargs):
    get_logger().fatal(msg, *args, stacklevel=2, **kwargs)


def vlog(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, stacklevel=2, **kwargs)


def _next_count(depth: int = 2) -> int:
    frame = _sys._getframe(depth)
    key = (frame.f_code.co_filename, frame.f_lineno)
    with _lock:
        n = _log_counts.get(key, 0)
        _log_counts[key] = n + 1
    return n


def log_every_n(level, msg, n, *args):
    """Logs on the 1st, (n+1)th, (2n+1)th ... call from this call site."""
    if _next_count() % max(int(n), 1) == 0:
        get_logger().log(level, msg, *args, stacklevel=2)


def log_first_n(level, msg, n, *args):
    """Logs only the first `n` calls from this call site."""
    if _next_count() < n:
        get_logger().log(level, msg, *args, stacklevel=2)


def log_if(level, msg, condition, *args):
    if condition:
        get_logger().log(level, msg, *args, stacklevel=2)


def flush():
    for h in get_logger().handlers:
        h.flush()
