"""What a real API server refuses in the metadata of a pod or service it is asked to create, and in a
label selector, with its status code and words (Kubernetes 1.32: apimachinery's
``pkg/util/validation``, ``ValidateObjectMeta``, ``labels.Parse``), for ``kube_emulator``.

Written from the API server's rules and messages, apart from the operator's own checks
(``tensorfleet_operator.core.metadata_rules``) so that the emulator stays an oracle for them:

- a label key or annotation key is a qualified name, ``[prefix/]name``: the prefix a DNS-1123
  subdomain (at most 253), the name at most 63 of ``[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]``;
- a label value is at most 63 characters of the same alphabet, or empty;
- annotations' keys and values together at most 256 KiB;
- a pod's name is a DNS-1123 subdomain, a service's a DNS-1035 label (at most 63);
- a label value that is not a string cannot be decoded at all: 400 BadRequest, not 422.
"""
from __future__ import annotations

import re
from typing import Any

_ALNUM_NAME = re.compile(r'(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)')
_SUBDOMAIN = re.compile(r'[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*')
_DNS1035 = re.compile(r'[a-z](?:[-a-z0-9]*[a-z0-9])?')
_CHARS = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
          "alphanumeric character")


def key_error(key: str) -> str | None:
    prefix, slash, name = key.rpartition('/')
    if slash and '/' in prefix:
        return f"a qualified name {_CHARS} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    if slash and not prefix:
        return 'prefix part must be non-empty'
    if slash and (len(prefix) > 253 or not _SUBDOMAIN.fullmatch(prefix)):
        return 'prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters'
    if not name:
        return 'name part must be non-empty'
    if len(name) > 63:
        return 'name part must be no more than 63 characters'
    if not _ALNUM_NAME.fullmatch(name):
        return f'name part {_CHARS}'
    return None


def value_error(value: str) -> str | None:
    if len(value) > 63:
        return 'must be no more than 63 characters'
    if value and not _ALNUM_NAME.fullmatch(value):
        return f'a valid label must be an empty string or {_CHARS[5:]}'
    return None


def _quoted(value: str) -> str:
    return '"' + (value if len(value) <= 80 else value[:80] + '...') + '"'


def refusal(plural: str, obj: dict[str, Any]) -> tuple[int, list[tuple[str, str]]] | None:
    """(status, [(field, message)]) for an object the API server would not create, else None."""
    meta = obj.get('metadata') or {}
    labels, annotations = meta.get('labels') or {}, meta.get('annotations') or {}
    for field, values in (('labels', labels), ('annotations', annotations)):
        if any(not isinstance(v, str) for v in values.values()):
            return 400, [('', f'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.{field} '
                              'of type string')]
    causes = []
    name = meta.get('name') or ''
    if plural == 'services' and (len(name) > 63 or not _DNS1035.fullmatch(name)):
        causes.append(('metadata.name', f'Invalid value: {_quoted(name)}: a DNS-1035 label must consist of lower '
                                        "case alphanumeric characters or '-', start with an alphabetic character, "
                                        'and end with an alphanumeric character'))
    if plural == 'pods' and (len(name) > 253 or not _SUBDOMAIN.fullmatch(name)):
        causes.append(('metadata.name', f'Invalid value: {_quoted(name)}: a lowercase RFC 1123 subdomain must '
                                        'consist of lower case alphanumeric characters'))
    for key, value in labels.items():
        error = key_error(key)
        if error:
            causes.append(('metadata.labels', f'Invalid value: {_quoted(key)}: {error}'))
        error = value_error(value)
        if error:
            causes.append(('metadata.labels', f'Invalid value: {_quoted(value)}: {error}'))
    size = 0
    for key, value in annotations.items():
        error = key_error(key.lower())
        if error:
            causes.append(('metadata.annotations', f'Invalid value: {_quoted(key)}: {error}'))
        size += len(key) + len(value)
    if size > 256 * 1024:
        causes.append(('metadata.annotations', 'Too long: may not be more than 262144 bytes'))
    return (422, causes) if causes else None


def selector_error(selector: str | None) -> str | None:
    """The 400 BadRequest message for an equality selector with a bad key or value, else None."""
    for term in filter(None, (t.strip() for t in (selector or '').split(','))):
        key, _, value = term.replace('!=', '=').replace('==', '=').lstrip('!').partition('=')
        error = key_error(key.strip())
        if error:
            return f'unable to parse requirement: key: Invalid value: {_quoted(key)}: {error}'
        error = value_error(value.strip())
        if error:
            return (f'unable to parse requirement: values[0][{key.strip()}]: Invalid value: {_quoted(value)}: '
                    f'{error}')
    return None
