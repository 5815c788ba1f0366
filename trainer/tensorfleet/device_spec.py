"""`DeviceSpec`: TF's device-name grammar, parse / merge / to_string.

Sits at the bottom with dtypes because `tf.device` scopes are applied when an op
is created (graph layer); the placer in `placement` consumes the result.

Grammar (every part optional, any order, type case-insensitive):
    /job:<name>/replica:<int>/task:<int>/device:<TYPE>:<int|*>
    short forms: /cpu:0, /gpu:1, /CPU:0 ; the empty string means "anywhere".
Empty components are ignored as TF's `DeviceSpec.parse_from_string` does (`'/' + '/cpu:0'` is `/cpu:0`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional, Union

_JOB = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_TYPE = re.compile(r"^[A-Za-z][A-Za-z_]*$")


@dataclass(frozen=True)
class DeviceSpec:
    """A possibly partial device name; None fields are unspecified."""

    job: Optional[str] = None
    replica: Optional[int] = None
    task: Optional[int] = None
    device_type: Optional[str] = None
    device_index: Optional[int] = None

    def __post_init__(self):
        if self.device_type is not None:
            object.__setattr__(self, "device_type", _canon_type(self.device_type))

    # -- construction ---------------------------------------------------------
    @classmethod
    def from_string(cls, spec: Union[str, "DeviceSpec", None]) -> "DeviceSpec":
        if isinstance(spec, DeviceSpec):
            return spec
        return _parse(spec or "")

    parse = from_string

    def replace(self, **kw) -> "DeviceSpec":
        return replace(self, **kw)

    def make_merged_spec(self, other: Union[str, "DeviceSpec"]) -> "DeviceSpec":
        """Returns self with every field that `other` specifies overridden by `other`."""
        other = DeviceSpec.from_string(other)
        return DeviceSpec(*(o if o is not None else m for m, o in zip(self._fields(), other._fields())))

    def _fields(self):
        return (self.job, self.replica, self.task, self.device_type, self.device_index)

    merge_from = make_merged_spec
    merge = make_merged_spec  # `outer.merge(inner)`: inner fields override outer ones

    def matches(self, full: "DeviceSpec") -> bool:
        """True when every field this (partial) spec sets equals `full`'s."""
        return all(m is None or m == f for m, f in zip(self._fields(), full._fields()))

    @property
    def short_name(self) -> str:
        """'GPU:0' style (type and index only)."""
        return f"{self.device_type}:{'*' if self.device_index is None else self.device_index}"

    # -- rendering ------------------------------------------------------------
    def to_string(self) -> str:
        parts = []
        if self.job is not None:
            parts.append(f"/job:{self.job}")
        if self.replica is not None:
            parts.append(f"/replica:{self.replica}")
        if self.task is not None:
            parts.append(f"/task:{self.task}")
        if self.device_type is not None:
            idx = "*" if self.device_index is None else str(self.device_index)
            parts.append(f"/device:{self.device_type}:{idx}")
        return "".join(parts)

    def __str__(self):
        return self.to_string()

    @property
    def is_empty(self) -> bool:
        return self == _EMPTY


_EMPTY = DeviceSpec()


def _canon_type(t: str) -> str:
    up = t.upper()
    return up if up in ("CPU", "GPU", "TPU") else t


def _int(text: str, whole: str) -> int:
    if not text.isdigit():
        raise ValueError(f"Malformed device specification: {whole!r} (expected an integer, got {text!r})")
    return int(text)


def _parse(spec: str) -> DeviceSpec:
    whole = spec
    fields: dict = {}
    s = spec.strip()
    if not s:
        return _EMPTY
    if s.startswith("/"):
        s = s[1:]
    for part in s.split("/"):
        if not part:  # TF's parse_from_string skips empty components: '//cpu:0', '/job:ps//task:0', '/cpu:0/'
            continue
        bits = part.split(":")
        key = bits[0].lower()
        if key == "job" and len(bits) == 2 and _JOB.match(bits[1]):
            fields["job"] = bits[1]
        elif key == "replica" and len(bits) == 2:
            fields["replica"] = _int(bits[1], whole)
        elif key == "task" and len(bits) == 2:
            fields["task"] = _int(bits[1], whole)
        elif key == "device" and len(bits) in (2, 3) and _TYPE.match(bits[1]):
            fields["device_type"] = bits[1]
            if len(bits) == 3 and bits[2] != "*":
                fields["device_index"] = _int(bits[2], whole)
        elif len(bits) in (1, 2) and key in ("cpu", "gpu", "tpu"):
            fields["device_type"] = key
            if len(bits) == 2 and bits[1] != "*":
                fields["device_index"] = _int(bits[1], whole)
        else:
            raise ValueError(f"Malformed device specification: {whole!r} (cannot parse {part!r})")
    return DeviceSpec(**fields)


def merge(outer: Union[str, DeviceSpec, None], inner: Union[str, DeviceSpec, None]) -> DeviceSpec:
    """Merges two specs; fields `inner` sets override `outer`'s (TF's device-scope nesting rule)."""
    return DeviceSpec.from_string(outer).make_merged_spec(DeviceSpec.from_string(inner))
