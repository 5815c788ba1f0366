"""The typed method table of a `tf.train.Server`: both services' calls, as used by both transports.

`server.Server` builds one `Methods` over its `WorkerService` and `Master`; `grpc_handler` (gRPC)
and the bulk/single-port connection threads in `server` call `dispatch(method, request bytes,
payload, limits, cancel)`, which decodes the typed request, unpacks the tensors (`wire`) and runs the call;
every failure is a tf.errors exception that the transport turns into a status. RunGraph and RunStep
get the transport's `caller_watch.CallCancel`: their steps end when the caller goes away. A served call
that keeps a client's state (its registered graphs, its master session) names that state's owner to
the transport's `bind` (`client_leases`).
"""
from __future__ import annotations

import threading
import time
from typing import Optional

from google.protobuf.message import DecodeError

from .. import errors
from . import rpc_accounting, wire
from .client import _metas_of, payload_nbytes
from .master import Master
from .protos import service_pb2
from .worker import WorkerService


#: the calls that keep a client's state, and how they name its owner (`Methods._owner`)
_OWNER_OF = {"WorkerService/RegisterGraph": "registering", "WorkerService/RunGraph": "graph",
             "MasterService/CreateSession": "new session", "MasterService/RunStep": "session",
             "MasterService/ExtendSession": "session", "MasterService/ListDevices": "session"}


def _after(fn, args: tuple, response):
    """Calls `fn(*args)` for its effect; -> (response, no tensors)."""
    fn(*args)
    return response, []


class Methods:
    """Typed handlers of both services: name -> (request type, fn(request, tensors) -> (response, tensors))."""

    def __init__(self, worker: WorkerService, master: Master, bulk_port_fn, shutdown_fn):
        W, M = "WorkerService", "MasterService"
        pb = service_pb2
        self.table = {
            f"{W}/GetStatus": (pb.GetStatusRequest, lambda r, t: (self._status(bulk_port_fn(), r), [])),
            f"{W}/RegisterGraph": (pb.RegisterGraphRequest, lambda r, t: (pb.RegisterGraphResponse(
                graph_handle=worker.register_graph(r.graph_def, r.feed, r.fetch, r.target, r.allow_soft_placement,
                                                   r.log_device_placement, (r.master_task, r.master_incarnation))),
                [])),
            f"{W}/DeregisterGraph": (pb.DeregisterGraphRequest, lambda r, t: _after(
                worker.deregister_graph, (r.graph_handle,), pb.DeregisterGraphResponse())),
            f"{W}/RunGraph": (pb.RunGraphRequest, self._run_graph),
            f"{W}/CleanupStep": (pb.CleanupStepRequest, lambda r, t: _after(
                worker.cleanup_step, (r.step_id,), pb.CleanupStepResponse())),
            f"{W}/Reset": (pb.ResetRequest, lambda r, t: _after(
                worker.reset, (list(r.container),), pb.ResetResponse())),
            f"{W}/Shutdown": (pb.ShutdownRequest, lambda r, t: _after(
                shutdown_fn, (r.reason, r.exit_code, r.keep_serving, r.ended_task, r.ended_incarnation),
                pb.ShutdownResponse())),
            f"{M}/CreateSession": (pb.CreateSessionRequest, lambda r, t: (pb.CreateSessionResponse(
                session_handle=master.create_session_from_proto(r.graph_def, r.options)), [])),
            f"{M}/ExtendSession": (pb.ExtendSessionRequest, lambda r, t: _after(
                master.extend_session, (r.session_handle, r.graph_def), pb.ExtendSessionResponse())),
            f"{M}/RunStep": (pb.RunStepRequest, self._run_step),
            f"{M}/CloseSession": (pb.CloseSessionRequest, lambda r, t: _after(
                self._close_session, (r.session_handle,), pb.CloseSessionResponse())),
            f"{M}/ListDevices": (pb.ListDevicesRequest, lambda r, t: (self._devices(master, r.session_handle), [])),
            f"{M}/Reset": (pb.ResetRequest, lambda r, t: _after(
                master.reset, (list(r.container),), pb.ResetResponse())),
        }
        self.worker, self.master = worker, master
        #: called with ("session", handle) once a client closed its session (client_leases.forget)
        self.forget = None
        self.streaming = {f"{W}/RunGraph", f"{M}/RunStep"}
        #: time.monotonic() of the last call started or finished, and how many are being served (an idle
        #: ps exits after a timeout: shutdown.py)
        self.last_call = time.monotonic()
        self.in_flight = 0
        #: bulk calls between their request read and their reply sent (server.py waits for them at exit)
        self.answering = 0
        self._count_lock = threading.Lock()

    def answer_started(self) -> None:
        with self._count_lock:
            self.answering += 1

    def answer_ended(self) -> None:
        with self._count_lock:
            self.answering -= 1

    def _close_session(self, handle: str) -> None:
        self.master.close_session(handle)
        if self.forget is not None:
            self.forget(("session", handle))

    def _status(self, endpoints: tuple, request=None):
        bulk_port, local_socket = endpoints
        if request is not None:
            self.worker.task_seen(request.caller_task, request.caller_incarnation)
        resp = service_pb2.GetStatusResponse(bulk_port=bulk_port, task=self.worker.task_name,
                                             incarnation=self.worker.incarnation, local_socket=local_socket)
        for name, dtype, mem in self.worker.device_names():
            resp.device.add(name=name, device_type=dtype, memory_limit=mem)
        return resp

    def _run_graph(self, r, tensors, cancel=None):
        resp = service_pb2.RunGraphResponse()
        out = self.worker.run_graph(r.graph_handle, r.step_id, dict(tensors), [(x.feed, x.key) for x in r.local],
                                    list(r.keep), r.end_of_step, list(r.keep_returned), r.timeout_ms, cancel,
                                    resp.step_stats if r.trace else None)
        return resp, list(out.items())

    def _run_step(self, r, tensors, cancel=None):
        resp = service_pb2.RunStepResponse()
        values = self.master.run_step_by_name(r.session_handle, tensors, list(r.fetch), list(r.target),
                                              r.timeout_ms, cancel, resp.step_stats if r.trace else None)
        return resp, list(zip(r.fetch, values, strict=True))

    @staticmethod
    def _devices(master, handle):
        resp = service_pb2.ListDevicesResponse()
        for name, dtype, mem in master.list_devices(handle):
            resp.device.add(name=name, device_type=dtype, memory_limit=mem)
        return resp

    def dispatch(self, method: str, request_bytes: bytes, payload, limits: wire.Limits, cancel=None,
                 bind=None) -> tuple:
        """-> (response message, [(name, array)]); raises tf.errors for every failure. `cancel` (a
        `caller_watch.CallCancel`, for the `streaming` methods, which run steps): fires when the caller goes away.
        `bind(owner)`: called after a call that keeps the state of `owner` (`client_leases`)."""
        with self._count_lock:
            self.in_flight += 1
        try:
            return self._dispatch(method, request_bytes, payload, limits, cancel, bind)
        finally:
            with self._count_lock:
                self.in_flight -= 1
                self.last_call = time.monotonic()

    def _dispatch(self, method: str, request_bytes: bytes, payload, limits: wire.Limits, cancel, bind) -> tuple:
        entry = self.table.get(method)
        if entry is None:
            raise errors.UnimplementedError(None, None, f"Unknown method {method!r}")
        req_type, fn = entry
        try:
            request = req_type.FromString(request_bytes)
        except DecodeError as e:
            raise errors.InvalidArgumentError(None, None, f"{method}: malformed {req_type.__name__}: {e}") from None
        tensors = wire.unpack(_metas_of(request), payload, limits, method) if payload is not None else []
        if cancel is not None and method in self.streaming:
            out = fn(request, tensors, cancel)
        else:
            out = fn(request, tensors)
        if bind is not None:
            owner = self._owner(method, request, out[0])
            if owner is not None:
                bind(owner)
        return out

    def _owner(self, method: str, request, response) -> Optional[tuple]:
        """Whose state the call kept: ("master", task, incarnation) or ("session", handle); None: nobody's."""
        kind = _OWNER_OF.get(method)
        if kind is None:
            return None
        if kind == "graph":
            return self.worker.lease_of(request.graph_handle)
        if kind == "registering":
            return ("master", request.master_task, request.master_incarnation) if request.master_task else None
        return ("session", (response if kind == "new session" else request).session_handle)

    @staticmethod
    def account(method: str, request_bytes: bytes, payload, response, payload_bytes: int) -> None:
        """One call served, counted as on the wire (after the reply's tensor metadata is attached)."""
        if rpc_accounting.observing():
            rpc_accounting.observe("unknown", method.rsplit("/", 1)[-1], "server",
                                   response.ByteSize() + payload_bytes, len(request_bytes) + payload_nbytes(payload))
