"""The launcher's log lines: every line carries the role and index; `--log-format json` for pipelines.

Used by every stage of the flow (cli, startup, roles). Built on the standard `logging` module: the
logger `tensorfleet_train` writes to stderr through a `TextFormatter` or a `JsonFormatter`; structured
fields (global step, loss, ...) travel in `extra={"fields": {...}}` so both formats carry the same data.

Text:  `2026-11-25T10:00:00.123Z INFO worker:0 progress global_step=100 loss=0.3012 examples_per_sec=812.4`
JSON:  `{"time": "...", "level": "INFO", "role": "worker", "index": 0, "event": "progress", "msg": "...",
        "global_step": 100, "loss": 0.3012, "examples_per_sec": 812.4}`
"""
from __future__ import annotations

import json
import logging
import math
import sys
import time
from typing import Any, Optional

LOGGER_NAME = "tensorfleet_train"
FORMATS = ("text", "json")


def _timestamp(created: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created)) + f".{int(created % 1 * 1000):03d}Z"


def _text_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    text = str(value)
    return json.dumps(text) if (" " in text or not text) else text


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)   # JSON has no NaN/inf
    return value


class _RoleFormatter(logging.Formatter):
    def __init__(self, role: str, index: int):
        super().__init__()
        self.role, self.index = role, index

    @staticmethod
    def fields(record: logging.LogRecord) -> dict:
        return dict(getattr(record, "fields", None) or {})

    @staticmethod
    def event(record: logging.LogRecord) -> str:
        """The launcher's event name; for other loggers' records (tensorfleet, grpc), the logger's name."""
        return getattr(record, "event", None) or record.name


class TextFormatter(_RoleFormatter):
    def format(self, record: logging.LogRecord) -> str:
        parts = [_timestamp(record.created), record.levelname, f"{self.role}:{self.index}", self.event(record)]
        message = record.getMessage()
        if message:
            parts.append(message)
        parts += [f"{k}={_text_value(v)}" for k, v in self.fields(record).items()]
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(_RoleFormatter):
    def format(self, record: logging.LogRecord) -> str:
        doc = {"time": _timestamp(record.created), "level": record.levelname, "role": self.role,
               "index": self.index, "event": self.event(record), "msg": record.getMessage()}
        for k, v in self.fields(record).items():
            doc.setdefault(k, _json_value(v))
        if record.exc_info:
            doc["traceback"] = self.formatException(record.exc_info)
        return json.dumps(doc, sort_keys=False)


def configure(role: str, index: int, log_format: str = "text", stream=None) -> logging.Logger:
    """Sets up the `tensorfleet_train` logger for this task (replacing earlier handlers)."""
    if log_format not in FORMATS:
        raise ValueError(f"log format must be one of {FORMATS}, got {log_format!r}")
    logger = logging.getLogger(LOGGER_NAME)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter((JsonFormatter if log_format == "json" else TextFormatter)(role, index))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    # other loggers' warnings (tensorfleet's runtime, grpc) come out in the same format, with role and index
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    return logger


def get() -> logging.Logger:
    return logging.getLogger(LOGGER_NAME)


def log(event: str, message: str = "", level: int = logging.INFO, exc_info: Optional[bool] = None,
        **fields: Any) -> None:
    """One log line: an event name, a message and structured fields."""
    get().log(level, message, extra={"event": event, "fields": fields}, exc_info=exc_info)
