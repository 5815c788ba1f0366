"""Reading TFJob manifests, and the ``render`` and ``validate`` commands.

First step of every ``tensorfleet`` command: a YAML file in, a TFJob body out
(:func:`load_job`), with one clear :class:`UsageError` line for a missing file,
YAML that does not parse or a manifest of another kind. ``render`` asks the
operator core (through ``operator_core``) for the Secret, services and pods it
would create; ``validate`` checks the operator's own CRD schema (jsonschema) and
then the core's semantic rules (``parse_job``), each message field path first.
"""
from __future__ import annotations

import base64
import pathlib
import secrets
from dataclasses import dataclass
from typing import Any, Iterable

import jsonschema
import yaml

from . import operator_core as core


class UsageError(Exception):
    """Bad input to a command: printed as one line, exit code 2."""


@dataclass(frozen=True)
class Problem:
    """One validation error: ``path`` is the offending field (``spec.runPolicy.backoffLimit``)."""
    path: str
    message: str

    def __str__(self) -> str:
        return f'{self.path}: {self.message}' if self.path else self.message


def load_documents(path: str | pathlib.Path) -> list[Any]:
    """Every YAML document of a file (empty documents dropped). Raises UsageError."""
    path = pathlib.Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UsageError(f'{path}: no such file') from None
    except IsADirectoryError:
        raise UsageError(f'{path}: is a directory, not a manifest') from None
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f'{path}: cannot be read ({err})') from None
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as err:
        mark = getattr(err, 'problem_mark', None)
        where = f' at line {mark.line + 1}, column {mark.column + 1}' if mark is not None else ''
        problem = getattr(err, 'problem', None) or str(err).splitlines()[0]
        raise UsageError(f'{path}: not valid YAML{where}: {problem}') from None
    if not docs:
        raise UsageError(f'{path}: the file holds no manifest')
    return docs


def check_kind(doc: Any, where: str) -> dict[str, Any]:
    """The document if it is a TFJob of a group the core serves. Raises UsageError."""
    if not isinstance(doc, dict):
        raise UsageError(f'{where}: a manifest must be a mapping, got {type(doc).__name__}')
    kind, version = doc.get('kind'), doc.get('apiVersion')
    if kind != core.KIND:
        raise UsageError(f'{where}: kind {kind!r} is not a {core.KIND} (only TFJob manifests run here)')
    if version not in core.API_VERSIONS:
        raise UsageError(f'{where}: apiVersion {version!r} is not one of {", ".join(core.API_VERSIONS)}')
    return doc


def load_job(path: str | pathlib.Path) -> dict[str, Any]:
    """The one TFJob in a file. Raises UsageError."""
    docs = load_documents(path)
    if len(docs) != 1:
        raise UsageError(f'{path}: holds {len(docs)} manifests; give one TFJob per file')
    return check_kind(docs[0], str(path))


def _schema_path(error: jsonschema.ValidationError) -> str:
    out = ''
    for part in error.absolute_path:
        out += f'[{part}]' if isinstance(part, int) else ('.' if out else '') + str(part)
    return out


def _schema_message(error: jsonschema.ValidationError) -> str:
    if error.validator == 'required':
        return error.message.replace(' is a required property', ' is required')
    return error.message


def validate_job(doc: dict[str, Any]) -> list[Problem]:
    """Schema errors (as ``kubectl apply`` would report them) then, if none, the core's own check."""
    validator = jsonschema.Draft7Validator(core.open_api_schema())
    errors = sorted(validator.iter_errors(doc), key=lambda e: (_schema_path(e), e.message))
    problems = [Problem(_schema_path(e), _schema_message(e)) for e in errors]
    if problems:
        return problems
    try:
        core.parse_job(with_defaults(doc, None))
    except core.InvalidSpec as err:
        return [Problem(err.field, err.message)]
    return []


def with_defaults(doc: dict[str, Any], namespace: str | None, uid: str = '') -> dict[str, Any]:
    """A copy of the manifest as the API server would hand it to the operator."""
    body = dict(doc)
    meta = dict(doc.get('metadata') or {}) if isinstance(doc.get('metadata'), dict) else {}
    if namespace:
        meta['namespace'] = namespace
    meta.setdefault('namespace', 'default')
    if uid:
        meta['uid'] = uid
    body['metadata'] = meta
    body.pop('status', None)
    return body


def parse(doc: dict[str, Any], where: str, namespace: str | None = None, uid: str = '') -> core.JobSpec:
    """Schema check plus ``parse_job``; any problem becomes a UsageError naming the field."""
    problems = validate_job(doc)
    if problems:
        raise UsageError(f'{where}: {problems[0]}' + (f' (and {len(problems) - 1} more; run '
                                                    f'`tensorfleet validate`)' if len(problems) > 1 else ''))
    return core.parse_job(with_defaults(doc, namespace, uid))


def render_objects(job: core.JobSpec, token: str, opts: core.ChildOptions | None = None) -> list[dict[str, Any]]:
    """What the operator creates for ``job``, in its order: the Secret, the services, the pods."""
    opts = opts or core.ChildOptions()
    replicas = core.replica_indexes(job)
    return ([core.rpc_token_secret(job, token, opts)]
            + [core.desired_service(job, rtype, i, opts) for rtype, i in replicas]
            + [core.desired_pod(job, rtype, i, opts) for rtype, i in replicas])


NO_OWNER_NOTE = ('# ownerReferences left out (they need the TFJob\'s uid; kubectl would refuse an empty one):\n'
                 '# give --uid "$(kubectl get tfjob NAME -o jsonpath={.metadata.uid})" for the operator\'s '
                 'exact objects\n')


def render(path: str, namespace: str | None, token: str | None, uid: str | None = None) -> str:
    """The ``render`` command's YAML (documents separated by ``---``): the operator's objects for the
    job; without ``uid`` (the job does not exist yet) they carry no ownerReferences."""
    doc = load_job(path)
    job = parse(doc, path, namespace, uid or '')
    objects = render_objects(job, token or secrets.token_urlsafe(32))
    if uid:
        return yaml.safe_dump_all(objects, sort_keys=False, width=200)
    for obj in objects:
        obj['metadata'].pop('ownerReferences', None)
    return NO_OWNER_NOTE + yaml.safe_dump_all(objects, sort_keys=False, width=200)


def decode_secret(secret: dict[str, Any]) -> str:
    return base64.b64decode(secret['data'][core.RPC_TOKEN_KEY]).decode()


def validate_files(paths: Iterable[str]) -> tuple[list[tuple[str, bool]], int]:
    """The ``validate`` command: one line per problem (``FILE: path: message``) or per valid manifest,
    each with whether it is good news, and the exit code (0 all valid, 1 a manifest is invalid, 2 a file
    is unreadable or not a TFJob)."""
    lines: list[tuple[str, bool]] = []
    code = 0
    for path in paths:
        try:
            docs = load_documents(path)
            for n, doc in enumerate(docs):
                where = path if len(docs) == 1 else f'{path}[{n}]'
                problems = validate_job(check_kind(doc, where))
                lines += [(f'{where}: {p}', False) for p in problems] or [(f'{where}: valid', True)]
                code = max(code, 1 if problems else 0)
        except UsageError as err:
            lines.append((str(err), False))
            code = 2
    return lines, code
