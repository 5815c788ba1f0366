"""The master service: places a session's graph over the cluster and runs steps partition by partition.

Sits between `remote_session` (a client's `Session("grpc://...")`, in-process when
the target is a server of this process, else over the wire) and the worker
services of every task (its own in-process, others through `client.RpcClient`).

A `MasterSession` learns each task's devices (GetStatus; at creation it waits up
to `Timeouts.startup_seconds` for every task its `device_filters` admit), places
nodes with the simple placer over all those devices (`placement.Placer`: ops
without a job go to the master's own task; soft placement and
`log_device_placement` with full `/job:.../task:...` names), and per step
signature builds a `partition.StepPlan` whose sub-partitions it registers once
with their tasks. A step runs each sub-partition as soon as the ones it depends on
are done (its inputs' producers and its own task's previous stage), so independent
partitions run concurrently; when several are ready, all but one go to a pool and
one runs in the calling thread (an op alone in being ready costs no thread
hand-off). Values crossing tasks go through the master; values kept for a later
stage of the same task stay there (keyed by step id).
"""
from __future__ import annotations

import logging
import random
import threading
import time
from typing import Optional

import numpy as np

from .. import errors
from ..device_spec import DeviceSpec
from ..devices import Device
from ..graph import Graph
from ..graph_def import import_graph_def
from ..placement import Placer
from . import partition as _partition
from . import startup_wait
from .step_dataflow import Dataflow
from .client import RpcClient, Timeouts
from .protos import service_pb2
from ..protos.step_stats_pb2 import StepStats
from ..run_metadata import merge_step_stats

logger = logging.getLogger("tensorfleet.distributed")
#: how much longer than a step's timeout_in_ms a client waits for the task's own DeadlineExceededError
RPC_DEADLINE_SLACK_S = 2.0
#: a step's calls this small both ways go out together from the master's thread (step_dataflow.py)
SEND_ALL_BYTES = 1 << 20


class _LocalWorker:
    """This task's worker service, called directly (no serialization)."""

    def __init__(self, service):
        self.service = service
        self.task = service.task_name

    def status(self):
        return service_pb2.GetStatusResponse(
            device=[service_pb2.DeviceAttributes(name=n, device_type=t, memory_limit=m)
                    for n, t, m in self.service.device_names()],
            task=self.task, incarnation=self.service.incarnation)

    def register(self, sub, soft, log) -> str:
        return self.service.register_graph(sub.graph_def, [p for p, _ in sub.sent + sub.local], sub.fetch,
                                           sub.targets, soft, log, owner=(self.task, self.service.incarnation))

    def run(self, sub, step_id, sent: dict, timeout_ms: int, cancel=None, traces=None) -> dict:
        stats = None if traces is None else StepStats()
        out = self.service.run_graph(sub.handle, step_id, sent, [(p, s) for p, s in sub.local], sub.keep,
                                     sub.end_of_step, sub.keep_returned, timeout_ms, cancel, stats)
        if traces is not None:
            traces.append(stats)
        return out

    def cleanup(self, step_id) -> None:
        self.service.cleanup_step(step_id)

    def reset(self, containers) -> None:
        self.service.reset(containers)

    def deregister(self, handle) -> None:
        self.service.deregister_graph(handle)


class _RemoteWorker:
    """Another task's worker service, through an RpcClient."""

    def __init__(self, client: RpcClient, owner: tuple):
        self.client = client
        self.task = client.task
        self.incarnation = None
        self.owner = owner   # this master's (task, incarnation): its registrations there are its own

    def status(self):
        req = service_pb2.GetStatusRequest(caller_task=self.owner[0], caller_incarnation=self.owner[1])
        resp, _ = self.client.call("GetStatus", req, service_pb2.GetStatusResponse)
        if self.incarnation is not None and resp.incarnation != self.incarnation:
            logger.info("Task %s restarted (new incarnation): reconnecting", self.task)
            self.client.drop_connections()   # pooled sockets and the bulk port were the old process's
        self.incarnation = resp.incarnation
        self.client.enable_bulk(resp.bulk_port, resp.local_socket)
        return resp

    def register(self, sub, soft, log) -> str:
        req = service_pb2.RegisterGraphRequest(graph_def=sub.graph_def, feed=[p for p, _ in sub.sent + sub.local],
                                               fetch=sub.fetch, target=sub.targets, allow_soft_placement=soft,
                                               log_device_placement=log, master_task=self.owner[0],
                                               master_incarnation=self.owner[1])
        resp, _ = self.client.call("RegisterGraph", req, service_pb2.RegisterGraphResponse)
        return resp.graph_handle

    def run(self, sub, step_id, sent: dict, timeout_ms: int, cancel=None, traces=None) -> dict:
        return self._values(self.client.call(*self._run_graph(sub, step_id, sent, timeout_ms, traces), cancel=cancel),
                            traces)

    def start_run(self, sub, step_id, sent: dict, timeout_ms: int, cancel=None, traces=None):
        """`run` with the call sent now: -> the function reading its values (None: no bulk path, use `run`)."""
        reply = self.client.start_call(*self._run_graph(sub, step_id, sent, timeout_ms, traces), cancel=cancel)
        return None if reply is None else (lambda: self._values(reply(), traces))

    @staticmethod
    def _run_graph(sub, step_id, sent: dict, timeout_ms: int, traces) -> tuple:
        req = service_pb2.RunGraphRequest(graph_handle=sub.handle, step_id=step_id, keep=sub.keep,
                                          keep_returned=sub.keep_returned, end_of_step=sub.end_of_step,
                                          timeout_ms=timeout_ms, trace=traces is not None)
        req.local.extend(service_pb2.LocalFeed(feed=p, key=s) for p, s in sub.local)
        # the task itself fails a blocked op at the deadline (DeadlineExceededError naming the node); the
        # client waits a little longer for that answer, then gives up on the connection
        # (a cancelled step aborts the call: the task sees its caller go and cancels the run there)
        return ("RunGraph", req, service_pb2.RunGraphResponse, list(sent.items()),
                timeout_ms / 1000 + RPC_DEADLINE_SLACK_S if timeout_ms > 0 else None)

    @staticmethod
    def _values(reply: tuple, traces) -> dict:
        resp, tensors = reply
        if traces is not None:
            traces.append(resp.step_stats)
        return dict(tensors)

    def cleanup(self, step_id) -> None:
        self.client.call("CleanupStep", service_pb2.CleanupStepRequest(step_id=step_id),
                         service_pb2.CleanupStepResponse)

    def reset(self, containers) -> None:
        self.client.call("Reset", service_pb2.ResetRequest(container=containers), service_pb2.ResetResponse)

    def deregister(self, handle) -> None:
        self.client.call("DeregisterGraph", service_pb2.DeregisterGraphRequest(graph_handle=handle),
                         service_pb2.DeregisterGraphResponse)

    def shutdown(self, reason: str, exit_code: int, keep_serving: bool = False, ended_task: str = "",
                 ended_incarnation: int = 0) -> None:
        self.client.call("Shutdown", service_pb2.ShutdownRequest(reason=reason, exit_code=exit_code,
                                                                 keep_serving=keep_serving, ended_task=ended_task,
                                                                 ended_incarnation=ended_incarnation),
                         service_pb2.ShutdownResponse, timeout=self.client.timeouts.connect_seconds)


def _task_name(job: str, index: int) -> str:
    return f"/job:{job}/replica:0/task:{index}"


class Master:
    """The master half of a server: its sessions and the handles to every task's worker service."""

    def __init__(self, server, timeouts: Optional[Timeouts] = None):
        self._server = server
        self._timeouts = timeouts
        self._workers: dict = {}
        self._sessions: dict = {}
        self._lock = threading.Lock()

    @property
    def timeouts(self) -> Timeouts:
        """Explicit ones, else read from the environment now (a test or script may set it late)."""
        return self._timeouts or Timeouts()

    @property
    def job(self) -> str:
        return self._server.job_name

    @property
    def training_finished(self) -> bool:
        return self._server.training_finished.is_set()

    @property
    def task(self) -> int:
        return self._server.task_index

    def tasks(self, device_filters=()) -> list:
        """[(task name, address)] of the cluster tasks the filters admit (always this task)."""
        filters = [DeviceSpec.from_string(f) for f in device_filters or ()]
        own = _task_name(self.job, self.task)
        out = []
        for job, index, address in self._server.cluster_spec.tasks():
            name = _task_name(job, index)
            spec = DeviceSpec(job, 0, index)
            if name == own or not filters or any(f.replace(device_type=None, device_index=None).matches(spec)
                                                  for f in filters):
                out.append((name, address))
        return out

    def worker(self, task_name: str, address: str):
        with self._lock:
            handle = self._workers.get(task_name)
            if handle is None:
                if task_name == _task_name(self.job, self.task):
                    handle = _LocalWorker(self._server.worker_service)
                else:
                    handle = _RemoteWorker(RpcClient(address, "WorkerService", task_name, limits=self._server.limits,
                                                     timeouts=self.timeouts),
                                           (_task_name(self.job, self.task), self._server.worker_service.incarnation))
                self._workers[task_name] = handle
            return handle

    def wait_for_status(self, task_name: str, address: str, deadline: float):
        """The task's GetStatus, waiting for a task that is not up yet until `deadline` (startup_wait.py). Once the
        chief has released the cluster, a task unreachable for `dead_peer_seconds` is not coming back: a released
        ps serves only the tasks that had not ended yet (ps_lifetime.py), and then goes."""
        unreachable_since: list = []

        def released(e: errors.UnavailableError) -> None:
            if not self.training_finished:
                return
            if not unreachable_since:
                unreachable_since.append(time.monotonic())
            elif time.monotonic() - unreachable_since[0] > self.timeouts.dead_peer_seconds:
                raise errors.OutOfRangeError(None, None, f"Training finished (the chief released the "
                                                         f"cluster); {task_name} is gone: {e.message}") from e

        return startup_wait.call_until_up(self.worker(task_name, address).status, deadline,
                                          f"CreateSession still waiting for response from worker: {task_name}",
                                          released)

    # -- sessions ----------------------------------------------------------------------------------
    def create_session(self, graph: Graph, config=None) -> "MasterSession":
        return MasterSession(self, graph, allow_soft_placement=bool(getattr(config, "allow_soft_placement", False)),
                             log_device_placement=bool(getattr(config, "log_device_placement", False)),
                             device_filters=list(getattr(config, "device_filters", None) or ()),
                             timeout_ms=int(getattr(config, "operation_timeout_in_ms", 0) or 0))

    def create_session_from_proto(self, graph_def, options) -> str:
        graph = Graph()
        import_graph_def(graph_def, graph)
        session = MasterSession(self, graph, options.allow_soft_placement, options.log_device_placement,
                                list(options.device_filters), options.operation_timeout_ms)
        handle = f"s{random.getrandbits(62):x}"
        with self._lock:
            self._sessions[handle] = session
        return handle

    def _session(self, handle: str) -> "MasterSession":
        session = self._sessions.get(handle)
        if session is None:
            raise errors.AbortedError(None, None, f"Session {handle!r} is not found on the master of "
                                                  f"{_task_name(self.job, self.task)} (it may have restarted)")
        return session

    def extend_session(self, handle: str, graph_def) -> None:
        session = self._session(handle)
        with session.lock:
            import_graph_def(graph_def, session.graph)

    def run_step_by_name(self, handle: str, feeds: list, fetch_names: list, target_names: list,
                         timeout_ms: int = 0, cancel=None, step_stats=None) -> list:
        session = self._session(handle)
        key = (tuple(n for n, _ in feeds), tuple(fetch_names), tuple(target_names))
        resolved = session.by_name.get(key)
        if resolved is None:
            g = session.graph
            try:
                resolved = ([g.get_tensor_by_name(n) for n in key[1]], [g.get_operation_by_name(n) for n in key[2]],
                            [g.get_tensor_by_name(n) for n in key[0]])
            except (KeyError, ValueError) as e:
                raise errors.InvalidArgumentError(None, None, f"RunStep: {e}") from None
            if len(session.by_name) < 1024:
                session.by_name[key] = resolved
        fetches, targets, feed_tensors = resolved
        return session.run(fetches, feed_tensors, [v for _, v in feeds], targets, timeout_ms, cancel, step_stats)

    def close_session(self, handle: str) -> None:
        with self._lock:
            session = self._sessions.pop(handle, None)
        if session is not None:
            session.close()

    def list_devices(self, handle: str) -> list:
        return self._session(handle).device_attributes()

    def reset(self, containers=()) -> None:
        """Clears the variables of every task in the cluster (`tf.Session.reset`)."""
        for name, address in self.tasks():
            self.wait_for_status(name, address, time.monotonic() + self.timeouts.connect_seconds)
            self.worker(name, address).reset(list(containers))

    def shutdown_tasks(self, job: str = "ps", reason: str = "training finished", exit_code: int = 0,
                       keep_serving: bool = False, ended_task: str = "", ended_incarnation: int = 0) -> list:
        """Sends a Shutdown call (see shutdown.py) to every task of `job` other than this one, all at once, each
        bounded by the connect timeout; returns the tasks that could not be told (already gone)."""
        from .shutdown import tell_all   # late: shutdown.py is the layer above (it uses this method)

        own = _task_name(self.job, self.task)
        return tell_all(lambda name, address: self.worker(name, address).shutdown(reason, exit_code, keep_serving,
                                                                                   ended_task, ended_incarnation),
                        [(name, address) for name, address in self.tasks()
                         if name.startswith(f"/job:{job}/") and name != own])

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
            workers, self._workers = list(self._workers.values()), {}
        for s in sessions:
            s.close()
        for w in workers:
            if isinstance(w, _RemoteWorker):
                w.client.close()


class MasterSession:
    """One client session: the graph, its placement over the cluster, and the registered step plans."""

    def __init__(self, master: Master, graph: Graph, allow_soft_placement=False, log_device_placement=False,
                 device_filters=(), timeout_ms=0):
        self.master = master
        self.graph = graph
        self.soft, self.log = allow_soft_placement, log_device_placement
        self.timeout_ms = timeout_ms
        self.lock = threading.Lock()
        self._plans: dict = {}
        self.by_name: dict = {}  # (feed, fetch, target names) -> resolved graph elements (remote clients)
        self._registered: list = []  # (worker, handle)
        deadline = startup_wait.creation_deadline(master.timeouts.startup_seconds, timeout_ms)
        self._tasks = master.tasks(device_filters)
        self._devices = []
        for name, address in self._tasks:
            status = master.wait_for_status(name, address, deadline)
            for d in status.device:
                spec = DeviceSpec.from_string(d.name)
                self._devices.append(Device(d.name, spec, d.memory_limit, np))
        self._address = dict(self._tasks)
        self.placer = Placer(graph, self._devices, allow_soft_placement=self.soft,
                             log_device_placement=self.log, job=master.job, task=master.task)
        self._closed = False

    def device_attributes(self) -> list:
        return [(d.name, d.device_type, d.memory_limit_bytes) for d in self._devices]

    def _plan(self, fetches, feeds, targets):
        key = (tuple(fetches), tuple(feeds), tuple(targets))
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        with self.lock:
            plan = self._plans.get(key)
            if plan is None:
                ops = _partition.prune(fetches, feeds, targets)
                placement = self.placer.place(ops)
                plan = _partition.partition(fetches, feeds, targets, placement)
                for stage in plan.stages:
                    for sub in stage:
                        w = self.master.worker(sub.task, self._address[sub.task])
                        sub.handle = w.register(sub, self.soft, self.log)
                        sub.worker = w
                        self._registered.append((w, sub.handle))
                self._plans[key] = plan
        return plan

    def run(self, fetches, feeds, feed_values, targets, timeout_ms: int = 0, cancel=None, step_stats=None) -> list:
        """`cancel` (`caller_watch.CallCancel`, a remote client's RunStep): the client went away, so the
        step's partitions are cancelled where they run (locally by token, remotely by aborting RunGraph).
        `step_stats` (a StepStats): every partition runs traced and their stats are merged into it."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        plan = self._plan(fetches, feeds, targets)
        step_id = random.getrandbits(63)
        values = {t.name: v for t, v in zip(feeds, feed_values, strict=True)}
        timeout_ms = timeout_ms or self.timeout_ms
        traces: Optional[list] = None if step_stats is None else []  # one StepStats per partition run
        try:
            subs = plan.subs
            if len(subs) == 1:
                values.update(self._run_sub(subs[0], step_id, values, timeout_ms, cancel, traces))
            else:
                self._run_dataflow(subs, step_id, values, timeout_ms, cancel, traces)
        except (errors.UnavailableError, errors.AbortedError) as e:
            self._cleanup(plan, step_id)
            self._end_if_released(e)
            if self.master.training_finished:   # the chief released the cluster: a ps went away on purpose
                raise errors.OutOfRangeError(None, None, f"Training finished (the chief released the cluster); "
                                                         f"this step lost a task: {e.message}") from e
            raise
        except BaseException as e:
            self._cleanup(plan, step_id)
            self._end_if_released(e)
            raise
        for stats in traces or ():
            merge_step_stats(step_stats, stats)
        return [values[n] for n in plan.fetch_names]

    def _end_if_released(self, e: BaseException) -> None:
        """A step of the main thread that failed because the chief's release stopped this process's ps (the TF1 "done
        queue" idiom: no `join()`) ends the process as `join()` would: `SystemExit(exit_code)` (ps_lifetime.py)."""
        server = self.master._server
        if isinstance(e, errors.OpError) and getattr(server, "released_exit", False) \
                and threading.current_thread() is threading.main_thread():
            logger.info("Task %s was released by the chief: its process exits with %s", server.task_name,
                        server.exit_code)
            raise SystemExit(server.exit_code) from e

    @staticmethod
    def _run_sub(sub, step_id, values, timeout_ms, cancel=None, traces=None) -> dict:
        sent = {p: values[s] for p, s in sub.sent}
        if traces is not None:
            if cancel is not None:
                cancel.check("RunStep")
            return sub.worker.run(sub, step_id, sent, timeout_ms, cancel, traces)
        if cancel is None:
            return sub.worker.run(sub, step_id, sent, timeout_ms)
        cancel.check("RunStep")   # the client went away: start no more partitions
        return sub.worker.run(sub, step_id, sent, timeout_ms, cancel)

    @staticmethod
    def _start_sub(sub, step_id, values, timeout_ms, cancel=None, traces=None):
        """Sends `sub`'s call when it is another task's and small both ways (its reply read later, in this
        thread); None otherwise: a large transfer is read or written in a thread of its own, beside the
        others (one thread would move several ps tasks' megabytes one after the other)."""
        start = getattr(sub.worker, "start_run", None)
        if start is None or not 0 <= sub.reply_bytes <= SEND_ALL_BYTES:
            return None
        sent = {p: values[s] for p, s in sub.sent}
        if sum(getattr(v, "nbytes", 0) for v in sent.values()) > SEND_ALL_BYTES:
            return None
        if cancel is not None:
            cancel.check("RunStep")
        return start(sub, step_id, sent, timeout_ms, cancel, traces)

    def _run_dataflow(self, subs, step_id, values, timeout_ms, cancel=None, traces=None) -> None:
        Dataflow(subs, lambda sub: self._run_sub(sub, step_id, values, timeout_ms, cancel, traces), values,
                 lambda sub: self._start_sub(sub, step_id, values, timeout_ms, cancel, traces)).run()

    @staticmethod
    def _cleanup(plan, step_id) -> None:
        for sub in plan.subs:
            if not sub.keep:
                continue
            try:
                sub.worker.cleanup(step_id)
            except errors.OpError:
                pass

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for w, handle in self._registered:
            try:
                w.deregister(handle)
            except errors.OpError:
                pass
        self._registered.clear()
        self._plans.clear()
