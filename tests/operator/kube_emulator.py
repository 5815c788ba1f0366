"""An in-process Kubernetes API for the operator's integration tests and bench.

kmock's ``KubernetesEmulator`` (by kopf's author) is an in-memory object store
over HTTP. This thin subclass adds what kopf and the operator rely on and kmock
lacks (see the kopf-ecosystem reference, section 2 and Appendix A): uid,
creationTimestamp, an increasing resourceVersion on every write, generateName,
``status.phase: Pending`` on new pods (the API server's default), label
selectors (equality, inequality and existence) on lists and watches, watches
that start from a resourceVersion and subscribe before their snapshot, and 422
on a failed JSON-patch test, and 401 for revoked bearer tokens. It refuses what a real API server
refuses in a pod's or service's metadata (422 Invalid with the field in ``details.causes``, 400 for
a label value that is no string) and in a label selector (400), per ``kube_validation.py``, and
counts those refusals in ``refused``; ``unavailable`` plays an outage (503). Its core discovery
says ``groupVersion: v1`` (kmock's ``/v1`` leaves helm without core kinds). It touches kmock
internals: pin ``kmock==0.8``.

Not emulated: garbage collection, admission, CRD-schema validation, strategic
merge, PUT, server-side apply.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime
import itertools
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp.web
import jsonpatch
import kmock
from kmock._internal import dsl, enums, rendering

import kube_validation

TFJOB_RESOURCE = 'tfjobs'


def selector_matches(labels: dict[str, str], selector: str | None) -> bool:
    for term in filter(None, (t.strip() for t in (selector or '').split(','))):
        if '!=' in term:
            key, value = term.split('!=', 1)
            if labels.get(key.strip()) == value.strip():
                return False
        elif '=' in term:
            key, value = term.replace('==', '=').split('=', 1)
            if labels.get(key.strip()) != value.strip():
                return False
        elif term.startswith('!'):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


def _core_group_version(response: Any) -> Any:
    """kmock answers ``/api/v1`` with ``groupVersion: "/v1"``; the API server says ``"v1"``, and
    client-go (helm) maps no core kind otherwise."""
    body = getattr(response, 'body', None)
    if not isinstance(body, bytes):
        return response
    data = json.loads(body)
    if data.get('groupVersion') != '/v1':
        return response
    return aiohttp.web.json_response({**data, 'groupVersion': 'v1'}, status=response.status)


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return (obj.get('metadata') or {}).get('labels') or {}


class _FastRouting(kmock.KubernetesScaffold):
    """Route a request to its reaction by checking the filters on that request only.

    kmock's own routing tests ``request in reaction_source``, which walks every
    request recorded so far through the filters: quadratic, minutes for a few
    thousand requests. The emulator's reactions are plain criteria filters
    (priorities, actions, paths), for which checking the one request is
    equivalent. Other view kinds (slices, groups...) still take the exact path.
    It sits between KubernetesEmulator and KubernetesScaffold in the MRO, so
    KubernetesEmulator's bookkeeping ends up here.
    """

    def _matches(self, source: Any, request: Any) -> bool:
        while source is not self:
            if isinstance(source, dsl.Filter):
                if not source.criteria(request):
                    return False
            elif not isinstance(source, (dsl.Priority, dsl.Reaction)):
                return request in source
            source = source._source
        return True

    async def _handle(self, request: Any) -> Any:
        payloads = self._payloads
        if getattr(self, '_sorted_for', None) != len(payloads):
            prios = [tuple(-p for p in payload.priorities) for payload in payloads]
            width = max((len(p) for p in prios), default=0)
            prios = [p + (0,) * (width - len(p)) for p in prios]
            self._sorted = [payloads[i] for i in sorted(range(len(prios)), key=lambda i: prios[i])]
            self._sorted_for = len(payloads)
        # Recorded requests are only needed by kmock's assertions: keep memory flat.
        if len(self._requests) > 1000:
            del self._requests[:-100]
        for payload in self._sorted:
            if not payload._disabled.is_set() and self._matches(payload._source, request):
                try:
                    return await payload(request)
                except rendering.ReactionMismatchError:
                    payload._disabled.set()
                except NotImplementedError:
                    pass
        raise NotImplementedError('no reaction matches the request')


class TFJobEmulator(kmock.KubernetesEmulator, _FastRouting):
    _rv = itertools.count(1000)    # class-level: monotonic across instances, harmless
    _last_rv = 999
    create_delay = 0.0             # seconds each create takes (to stop an operator mid-way)
    revoked_tokens: frozenset[str] = frozenset()   # bearer tokens answered with 401 (expired)
    unauthorized = 0               # how many requests got 401
    unavailable = False            # an outage: every request is answered 503 ServiceUnavailable

    @property
    def refused(self) -> collections.Counter[tuple[str, int]]:
        """Requests refused as invalid, by (plural, status): 422/400 creates, 400 selectors."""
        if '_refused' not in self.__dict__:
            self.__dict__['_refused'] = collections.Counter()
        return self.__dict__['_refused']

    def _validate(self, request: Any) -> None:
        """Refuse, as the API server does, invalid metadata on a create and a bad label selector."""
        plural = request.resource.plural
        if request.action == enums.action.CREATE and plural in ('pods', 'services') \
                and isinstance(request.data, dict):
            found = kube_validation.refusal(plural, request.data)
            if found:
                status, causes = found
                self.refused[(plural, status)] += 1
                kind, name = plural[:-1].capitalize(), (request.data.get('metadata') or {}).get('name')
                if status == 400:
                    raise kmock.KubernetesError(status=400, reason='BadRequest', message=causes[0][1])
                raise kmock.KubernetesError(
                    status=422, reason='Invalid',
                    message=f'{kind} "{name}" is invalid: ' + ', '.join(f'{f}: {m}' for f, m in causes),
                    details={'name': name, 'kind': plural[:-1],
                             'causes': [{'reason': 'FieldValueInvalid', 'message': m, 'field': f}
                                        for f, m in causes]})
        error = kube_validation.selector_error(request.params.get('labelSelector'))
        if error:
            self.refused[(plural, 400)] += 1
            raise kmock.KubernetesError(status=400, reason='BadRequest', message=error)

    @property
    def deletes(self) -> collections.Counter[tuple[str, str | None]]:
        """DELETE requests received, by (plural, name): nothing should be deleted twice."""
        if '_deletes' not in self.__dict__:
            self.__dict__['_deletes'] = collections.Counter()
        return self.__dict__['_deletes']

    @property
    def tokens(self) -> collections.Counter[tuple[str, bool]]:
        """Bearer tokens seen, by (value, is a watch): which credentials the operator really sent."""
        if '_tokens' not in self.__dict__:
            self.__dict__['_tokens'] = collections.Counter()
        return self.__dict__['_tokens']

    async def _handle(self, request: Any) -> Any:
        auth = request.headers.get('Authorization') or ''
        if auth.startswith('Bearer '):
            self.tokens[(auth[len('Bearer '):], request.params.get('watch') == 'true')] += 1
        if self.unavailable:
            raise kmock.KubernetesError(status=503, reason='ServiceUnavailable', message='the server is shutting down')
        if auth.startswith('Bearer ') and auth[len('Bearer '):] in self.revoked_tokens:
            self.unauthorized += 1
            raise kmock.KubernetesError(status=401, reason='Unauthorized', message='Unauthorized')
        if self.create_delay and request.action == enums.action.CREATE:
            await asyncio.sleep(self.create_delay)
        if request.resource is not None:
            self._validate(request)
        if request.resource is not None and isinstance(request.data, (dict, list)):
            self._stamp(request)
        elif request.resource is not None and request.action == enums.action.DELETE:
            self._last_rv = next(self._rv)
            self.deletes[(request.resource.plural, request.name)] += 1
        try:
            response = await super()._handle(request)
        except (jsonpatch.JsonPatchConflict, jsonpatch.JsonPatchTestFailed) as e:
            raise kmock.KubernetesError(status=422, reason='Invalid', message=str(e)) from e
        if request.url.path.rstrip('/') == '/api/v1':
            response = _core_group_version(response)
        return response

    def _stamp(self, request: Any) -> None:
        """What the API server adds to a write: resourceVersion; on create also uid, name from
        generateName, namespace, creationTimestamp, and a new pod's phase Pending."""
        self._last_rv = next(self._rv)
        rv = str(self._last_rv)
        if request.action == enums.action.CREATE and isinstance(request.data, dict):
            meta = request.data.setdefault('metadata', {})
            meta['uid'] = str(uuid.uuid4())
            if not meta.get('name') and meta.get('generateName'):
                meta['name'] = meta['generateName'] + uuid.uuid4().hex[:5]
            if request.namespace and not meta.get('namespace'):
                meta['namespace'] = request.namespace
            meta['creationTimestamp'] = datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%dT%H:%M:%SZ')
            meta['resourceVersion'] = rv
            if request.resource.plural == 'pods':
                request.data.setdefault('status', {}).setdefault('phase', 'Pending')
        elif request.action == enums.action.UPDATE and isinstance(request.data, dict):
            request.data.setdefault('metadata', {})['resourceVersion'] = rv
        elif request.action == enums.action.UPDATE and isinstance(request.data, list):
            request.data.append({'op': 'replace', 'path': '/metadata/resourceVersion', 'value': rv})

    async def _serve_list(self, request: Any) -> Any:
        result = await super()._serve_list(request)
        result['metadata'] = {'resourceVersion': str(self._last_rv)}
        selector = request.params.get('labelSelector')
        if selector:
            result['items'] = [o for o in result['items'] if selector_matches(_labels(o), selector)]
        return result

    async def _serve_watch(self, request: Any) -> AsyncIterator[Any]:
        yield b''
        selector = request.params.get('labelSelector')
        bus = self._buses[request.resource]
        async with self._lock:
            marker = await bus.mark()        # subscribe before the snapshot: no lost events
            objs = self._KubernetesEmulator__get_objs(request, strict=False)
            since = request.params.get('resourceVersion')
            since_rv = int(since) if since and since.isdigit() else None
            events = [{'type': 'ADDED', 'object': o.raw} for o in objs if not o.deleted
                      if since_rv is None or int(o.raw.get('metadata', {}).get('resourceVersion') or 0) > since_rv]
        try:
            for event in events:
                if selector_matches(_labels(event['object']), selector):
                    yield event
            async for event in bus.stream(since=marker):
                meta = event.get('object', {}).get('metadata', {})
                if self._KubernetesEmulator__check(request, request.resource, meta.get('namespace'),
                                                   meta.get('name'), strict=False) \
                        and selector_matches(meta.get('labels') or {}, selector):
                    yield event
        finally:
            with contextlib.suppress(Exception):
                await bus.unmark(marker)


def declare_resources(emulator: kmock.KubernetesEmulator, group: str = 'tensorfleet.io') -> None:
    """Discovery for the built-in groups plus the TFJob, both PodGroups (Volcano and
    scheduler-plugins) and kopf's peering resources (KopfPeering, ClusterKopfPeering)."""
    emulator.resources.load_bundled()
    verbs = {'get', 'list', 'watch', 'create', 'patch', 'delete'}
    emulator.resources[f'{group}/v1/tfjobs'] = kmock.ResourceInfo(
        kind='TFJob', singular='tfjob', namespaced=True, verbs=verbs, subresources={'status'})
    emulator.resources['scheduling.volcano.sh/v1beta1/podgroups'] = kmock.ResourceInfo(
        kind='PodGroup', singular='podgroup', namespaced=True, verbs=verbs)
    emulator.resources['scheduling.x-k8s.io/v1alpha1/podgroups'] = kmock.ResourceInfo(
        kind='PodGroup', singular='podgroup', namespaced=True, verbs=verbs, subresources={'status'})
    emulator.resources['kopf.dev/v1/kopfpeerings'] = kmock.ResourceInfo(
        kind='KopfPeering', singular='kopfpeering', namespaced=True, verbs=verbs)
    emulator.resources['kopf.dev/v1/clusterkopfpeerings'] = kmock.ResourceInfo(
        kind='ClusterKopfPeering', singular='clusterkopfpeering', namespaced=False, verbs=verbs)
