"""Kubernetes' rules for names, label keys and values, and annotations.

Pure helpers of the core (``spec.py`` checks a TFJob with them before anything
is built; the shell's ``controller.py`` checks a job name before it becomes a
label selector). They restate apimachinery's ``pkg/util/validation`` and
``ValidateAnnotations`` (Kubernetes 1.32), the checks the API server makes on
every pod and service the operator creates, so that a job the API server would
refuse fails at once as ``InvalidSpec`` naming its field instead of being
retried forever. Each function returns ``None`` or the problem in the API
server's words.
"""
from __future__ import annotations

import re
from typing import Any

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63
ANNOTATIONS_TOTAL_MAX = 256 * 1024      # bytes of all keys and values together

_DNS1123_SUBDOMAIN = re.compile(r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
_DNS1035_LABEL = re.compile(r'[a-z]([-a-z0-9]*[a-z0-9])?')
_QUALIFIED_NAME = re.compile(r'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')
_LABEL_VALUE = re.compile(r'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')

_NAME_CHARS = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
               "alphanumeric character")


def shown(value: Any, limit: int = 70) -> str:
    """A value quoted for a message, cut short (a 1 MB label must not become a 1 MB message)."""
    text = repr(value)
    return text if len(text) <= limit else f'{text[:limit]}... ({len(str(value))} characters)'


def dns1123_subdomain_problem(value: str) -> str | None:
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        return f'must be no more than {DNS1123_SUBDOMAIN_MAX} characters'
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        return ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                'and must start and end with an alphanumeric character')
    return None


def dns1035_label_problem(value: str) -> str | None:
    if len(value) > DNS1123_LABEL_MAX:
        return f'must be no more than {DNS1123_LABEL_MAX} characters'
    if not _DNS1035_LABEL.fullmatch(value):
        return ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                'alphabetic character, and end with an alphanumeric character')
    return None


def qualified_name_problem(value: str) -> str | None:
    """A label key or annotation key: ``[prefix/]name``, prefix a DNS-1123 subdomain."""
    parts = value.split('/')
    if len(parts) > 2:
        return f"a qualified name {_NAME_CHARS}, with an optional DNS subdomain prefix and '/'"
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            return 'prefix part must be non-empty'
        problem = dns1123_subdomain_problem(parts[0])
        if problem:
            return f'prefix part {problem}'
    if not name:
        return 'name part must be non-empty'
    if len(name) > QUALIFIED_NAME_MAX:
        return f'name part must be no more than {QUALIFIED_NAME_MAX} characters'
    if not _QUALIFIED_NAME.fullmatch(name):
        return f'name part {_NAME_CHARS}'
    return None


def label_value_problem(value: str) -> str | None:
    if len(value) > LABEL_VALUE_MAX:
        return f'must be no more than {LABEL_VALUE_MAX} characters'
    if not _LABEL_VALUE.fullmatch(value):
        return f'a valid label must be an empty string or {_NAME_CHARS[5:]}'
    return None


def labels_problem(labels: Any) -> str | None:
    """Every key a qualified name, every value a label value (both strings)."""
    if not isinstance(labels, dict):
        return 'must be a map of strings'
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            return f'{shown(key)}: keys and values must be strings, got {shown(value)}'
        problem = qualified_name_problem(key)
        if problem:
            return f'key {shown(key)}: {problem}'
        problem = label_value_problem(value)
        if problem:
            return f'value of {shown(key)} ({shown(value)}): {problem}'
    return None


def annotations_problem(annotations: Any, reserved: int = 0) -> str | None:
    """Keys qualified names (checked lowercased, as the API server does), values strings, all keys
    and values at most :data:`ANNOTATIONS_TOTAL_MAX` bytes less ``reserved`` (what the operator adds)."""
    if not isinstance(annotations, dict):
        return 'must be a map of strings'
    total = 0
    for key, value in annotations.items():
        if not isinstance(key, str) or not isinstance(value, str):
            return f'{shown(key)}: keys and values must be strings, got {shown(value)}'
        problem = qualified_name_problem(key.lower())
        if problem:
            return f'key {shown(key)}: {problem}'
        total += len(key.encode()) + len(value.encode())
    limit = ANNOTATIONS_TOTAL_MAX - reserved
    if total > limit:
        return f'{total} bytes of keys and values; at most {limit} (the API server allows {ANNOTATIONS_TOTAL_MAX} ' \
               f'per object{", less what the operator adds" if reserved else ""})'
    return None
