"""The worker service: runs the graph partitions masters register with this task.

Sits under `server` (which exposes it over gRPC and the bulk path) and beside
`master` (which calls it, in-process for its own task). It owns the task's
`ResourceStore`, so variables live here, outlive sessions and are shared by name
by every master that registers partitions naming them (between-graph
replication); `reset` clears them (`tf.Session.reset`).

A registered partition is a GraphDef whose cross-task inputs are Placeholders;
it is imported into its own Graph once and run through a local `Session` bound
to the task's ResourceStore (so the executor's plan cache, kernels and placement
apply unchanged). A run takes feed values from the call and from this task's
`Rendezvous` (values an earlier stage of the same step kept here), and returns or
keeps its fetches.

Queues and accumulators live in the task's store too (`kernels/queue_kernels.py`),
so the sessions of every worker process that name one on this task share it. A
blocking kernel in a run honours the run's `timeout_ms` (DeadlineExceededError,
raised here on the task, so no element is taken after the caller gave up) and its
partition's cancellation token: deregistering a partition (its master session
closed) cancels that partition's blocked runs, and only those. A run whose caller
went away (`caller_watch`) is cancelled alone, through its own token under the
partition's.

Every registration has an owner, the registering master's (task, incarnation): a
registration from a new incarnation of a task drops every graph of that task's older
incarnations (the master restarted; TF 2's SessionMgr does the same for worker sessions);
`release_owner` drops one owner's graphs (`client_leases`: its connections are gone).
Registrations without a task (an old client) are kept until deregistered.
"""
from __future__ import annotations

import itertools
import logging
import os
import random
import threading
from typing import Optional, Sequence

from .. import errors
from ..config import ConfigProto
from ..devices import local_devices
from ..graph import Graph
from ..graph_def import import_graph_def
from ..kernels import ResourceStore
from ..kernels import fp_state, queue_kernels
from ..kernels.backend import to_host
from ..run_metadata import fill_step_stats
from .rendezvous import Rendezvous

logger = logging.getLogger("tensorfleet.distributed")
NO_OWNER = ("", 0)


def _convert_feed(t, value):
    from ..session import _convert_feed as convert

    return convert(t, value)


class _Partition:
    """One registered partition: its graph, a session on the task's store, and its signature."""

    def __init__(self, graph_def, feeds, fetches, targets, store: ResourceStore, soft: bool, log: bool):
        from ..session import Session  # session sits below distributed; imported lazily (import order)

        self.graph = Graph()
        import_graph_def(graph_def, self.graph)
        self.feed_names = list(feeds)
        self.fetch_names = list(fetches)
        g = self.graph
        try:
            self.feeds = [g.get_tensor_by_name(n) for n in feeds]
            self.fetches = [g.get_tensor_by_name(n) for n in fetches]
            self.targets = [g.get_operation_by_name(n) for n in targets]
        except (KeyError, ValueError) as e:
            raise errors.InvalidArgumentError(None, None, f"RegisterGraph: {e}") from None
        self._fetch_key, self._feed_key, self._target_key = tuple(self.fetches), tuple(self.feeds), tuple(self.targets)
        config = ConfigProto(allow_soft_placement=soft, log_device_placement=log)
        self.session = Session(graph=self.graph, config=config)
        self.session._resources = store  # variables live in the worker service, shared by all partitions
        self.store = store
        self.cancel = queue_kernels.CancelToken()
        self.lock = threading.Lock()
        self.owner = NO_OWNER
        self.lease = None   # ("master", task, incarnation): its owner's key in client_leases (None: no task)

    def close(self, whole_task: bool = False) -> None:
        """Cancels this partition's blocked runs; `whole_task` (the server stops): every blocked run and the
        store's close hooks too. A deregistration must not touch what other sessions share in the store."""
        queue_kernels.cancel_token(self.cancel, self.store)
        if not whole_task:
            self.session._resources = type(self.store)()  # Session.close acts on a private, empty store
        self.session.close()

    def run(self, feed_values: dict, timeout_ms: int = 0, cancel=None, trace: Optional[list] = None) -> list:
        """`cancel` (a `caller_watch.CallCancel`): this run alone is cancelled when its caller goes away;
        `trace`: a list the executor appends its per-node records to (`run_metadata.fill_step_stats`)."""
        feed_dict = {}
        for name, t in zip(self.feed_names, self.feeds, strict=True):
            try:
                feed_dict[t] = feed_values[name]
            except KeyError:
                raise errors.InvalidArgumentError(None, None, f"RunGraph: no value for feed '{name}'") from None
        if not self.fetches and not self.targets:
            return []
        # the session's plan, run directly: fetched values are sent as they are (read-only arrays,
        # variables included), without the copies Session.run makes for its callers
        plan = self.session._plan(self._fetch_key, self._feed_key, self._target_key)
        values = [_convert_feed(t, feed_dict[t]) for t in self._feed_key]  # dtype and shape checked
        run_token = self.cancel
        forget = None
        if cancel is not None:   # the run's own token, under the partition's
            run_token = queue_kernels.CancelToken(self.cancel)
            forget = cancel.on_cancel(lambda: queue_kernels.cancel_token(run_token, self.store))
            cancel.check("RunGraph")   # the caller is already gone: run nothing
        token = fp_state.enter()  # as Session.run: the kernels' floating-point state (fp_state) around the step
        try:
            with queue_kernels.run_scope(timeout_ms, run_token):  # blocking kernels: deadline, cancellation
                return [to_host(v) for v in plan.run(values, trace)]
        finally:
            fp_state.exit(token)
            if forget is not None:
                forget()


class WorkerService:
    """The worker half of a server (one per task)."""

    def __init__(self, job: str, task: int, config: Optional[ConfigProto] = None):
        self.job, self.task = job, task
        self.task_name = f"/job:{job}/replica:0/task:{task}"
        self.resources = ResourceStore()
        self.devices = local_devices(config)
        self.incarnation = random.getrandbits(63)
        self.rendezvous = Rendezvous()
        self._partitions: dict = {}
        self._by_owner: dict = {}       # (master task, incarnation) -> {handle}
        self._incarnations: dict = {}   # master task -> its latest registering incarnation
        #: called with each owner whose graphs were dropped here because its task re-registered (client_leases)
        self.on_owner_replaced = None
        #: called with (task, incarnation) of every caller that names itself (a ps's lifetime: ps_lifetime.py)
        self.on_task_seen = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._prefix = f"{os.getpid():x}.{self.incarnation:x}"

    # -- service methods (typed Python; `server` maps them to the wire) ------------------------
    def device_names(self) -> list:
        """[(full name on this task, device type, memory limit)]."""
        out = []
        for d in self.devices:
            suffix = f"/device:{d.spec.device_type}:{d.spec.device_index}"
            out.append((self.task_name + suffix, d.spec.device_type, d.memory_limit_bytes))
        return out

    def register_graph(self, graph_def, feeds, fetches, targets, soft: bool = False, log: bool = False,
                       owner: tuple = NO_OWNER) -> str:
        """`owner`: the registering master's (task name, incarnation)."""
        part = _Partition(graph_def, feeds, fetches, targets, self.resources, soft, log)
        part.owner = owner = (str(owner[0]), int(owner[1]))
        part.lease = ("master",) + owner if owner[0] else None
        handle = f"{self._prefix}.{next(self._ids)}"
        task, incarnation = owner
        replaced, stale = None, []
        with self._lock:
            previous = self._incarnations.get(task) if task else None
            if previous is not None and previous != incarnation:
                replaced = (task, previous)
                stale = self._pop_owner_locked(replaced)
            if task:
                self._incarnations[task] = incarnation
            self._partitions[handle] = part
            self._by_owner.setdefault(owner, set()).add(handle)
        if task:
            self.task_seen(task, incarnation)
        if replaced is not None:
            logger.info("Task %s: master %s restarted (new incarnation): dropped the %d graph(s) of its previous "
                        "incarnation", self.task_name, task, len(stale))
            for p in stale:
                p.close()
            if self.on_owner_replaced is not None:
                self.on_owner_replaced(replaced)
        return handle

    def task_seen(self, task: str, incarnation: int) -> None:
        """A call from `incarnation` of `task` (a registering master, a GetStatus caller)."""
        if self.on_task_seen is not None and task:
            self.on_task_seen(task, int(incarnation))

    def _pop_owner_locked(self, owner: tuple) -> list:
        return [self._partitions.pop(h) for h in self._by_owner.pop(owner, ()) if h in self._partitions]

    def deregister_graph(self, handle: str) -> None:
        with self._lock:
            part = self._partitions.pop(handle, None)
            if part is not None:
                handles = self._by_owner.get(part.owner)
                if handles is not None:
                    handles.discard(handle)
                    if not handles:
                        del self._by_owner[part.owner]
        if part is not None:
            part.close()

    def lease_of(self, handle: str):
        """("master", task, incarnation) of the master that registered `handle`; None when unknown or no task."""
        part = self._partitions.get(handle)
        return part.lease if part is not None else None

    def release_owner(self, owner: tuple) -> int:
        """Drops every graph `owner` registered (its blocked runs end with CancelledError); -> how many."""
        with self._lock:
            parts = self._pop_owner_locked(owner)
            if owner[0] and self._incarnations.get(owner[0]) == owner[1]:
                del self._incarnations[owner[0]]
        for p in parts:
            p.close()
        return len(parts)

    def registrations(self) -> dict:
        """{owner: number of registered graphs}."""
        with self._lock:
            return {owner: len(handles) for owner, handles in self._by_owner.items()}

    def run_graph(self, handle: str, step_id: int, sent: dict, local: list, keep: list,
                  end_of_step: bool, keep_returned: Sequence = (), timeout_ms: int = 0, cancel=None,
                  step_stats=None) -> dict:
        """Runs a partition; returns {fetch name: value} for the fetches not only kept (`keep` minus
        `keep_returned`); the `keep` ones are stored in the rendezvous under `step_id`. `cancel`
        (`caller_watch.CallCancel`): the caller went away, so the run's blocked ops fail with CancelledError.
        `step_stats` (a StepStats): the run is traced into it, under this task's device names."""
        part = self._partitions.get(handle)
        if part is None:
            raise errors.AbortedError(None, None, f"Graph handle {handle!r} is not registered on task "
                                                  f"{self.task_name} (the task may have restarted)")
        try:
            values = dict(sent)
            for feed, key in local:
                values[feed] = self.rendezvous.take(step_id, key, self.task_name)
            trace = [] if step_stats is not None else None
            results = part.run(values, timeout_ms, cancel, trace)
            if trace is not None:
                fill_step_stats(step_stats, trace, task=self.task_name)
            out = {}
            keep_set, also = set(keep), set(keep_returned)
            for name, value in zip(part.fetch_names, results, strict=True):
                if name in keep_set:
                    self.rendezvous.put(step_id, name, value)
                    if name not in also:
                        continue
                out[name] = value
            return out
        except errors.OpError as e:
            self.rendezvous.cleanup(step_id)
            raise _on_task(e, self.task_name) from None
        finally:
            if end_of_step:
                self.rendezvous.cleanup(step_id)

    def cleanup_step(self, step_id: int) -> None:
        self.rendezvous.cleanup(step_id)

    def reset(self, containers=()) -> None:
        """Clears this task's variables, queues and accumulators (all containers: Tensorfleet has only the
        default one); ops blocked on a cleared queue or accumulator fail with CancelledError."""
        with self.resources.lock:
            self.resources.variables.clear()
        queue_kernels.discard_all(self.resources)

    def close(self) -> None:
        with self._lock:
            parts, self._partitions = list(self._partitions.values()), {}
            self._by_owner.clear()
        for p in parts:
            p.close(whole_task=True)


def _on_task(e: errors.OpError, task_name: str) -> errors.OpError:
    """The same error class, its message naming the task that raised it."""
    if task_name in e.message:
        return e
    return type(e)(e.node_def, e.op, f"{e.message} (on task {task_name})")
