"""The `grpc://` session backend: what `tf.Session(server.target)` runs on.

Registered with `session.register_session_factory("grpc", ...)` when tensorfleet
is imported (session never imports distributed). `Session` keeps doing what it
does for local targets (fetch structure, feed conversion and checks) and hands
the flattened (fetches, feeds, targets) to a backend here:

- the target is a server of this process (the usual between-graph case: a worker
  script's `Session(server.target)`): the backend is a `MasterSession` of that
  server, called directly, on the client's own Graph object;
- otherwise: a remote master over `client.RpcClient`; the graph goes as a GraphDef
  at creation and each run first sends the ops added since (an extension). Creation waits
  for a master that is not serving yet (`startup_wait`: TF's wait-for-ready and retries).
"""
from __future__ import annotations

import threading

from .. import errors
from ..graph_def import as_graph_def
from . import startup_wait
from .client import RpcClient, Timeouts, split_address
from .master import RPC_DEADLINE_SLACK_S
from .protos import service_pb2
from .server import local_server_for


def _address(target: str) -> str:
    if not target.startswith("grpc://"):
        raise errors.InvalidArgumentError(None, None, f"Session target {target!r} must be grpc://host:port")
    address = target[len("grpc://"):]
    try:
        split_address(address)
    except ValueError as e:
        raise errors.InvalidArgumentError(None, None, str(e)) from None
    return address


class _LocalBackend:
    def __init__(self, server, graph, config):
        self._session = server.master.create_session(graph, config)

    def run(self, fetches, feeds, feed_values, targets, timeout_ms=0, step_stats=None) -> list:
        if step_stats is None:
            return self._session.run(list(fetches), list(feeds), list(feed_values), list(targets), timeout_ms)
        return self._session.run(list(fetches), list(feeds), list(feed_values), list(targets), timeout_ms,
                                 step_stats=step_stats)

    def list_devices(self) -> list:
        return self._session.device_attributes()

    def close(self) -> None:
        self._session.close()


class _RemoteBackend:
    def __init__(self, address: str, graph, config):
        self._graph = graph
        self._lock = threading.Lock()
        self._client = RpcClient(address, "MasterService", f"master at {address}")
        options = service_pb2.SessionOptions(
            allow_soft_placement=bool(getattr(config, "allow_soft_placement", False)),
            log_device_placement=bool(getattr(config, "log_device_placement", False)),
            device_filters=list(getattr(config, "device_filters", None) or ()),
            operation_timeout_ms=int(getattr(config, "operation_timeout_in_ms", 0) or 0))
        deadline = startup_wait.creation_deadline(Timeouts().startup_seconds, options.operation_timeout_ms)
        waiting = f"CreateSession still waiting for the master at {address}"
        status = startup_wait.call_until_up(lambda: self._status(address), deadline, waiting)
        self._client.task = f"master of {status.task} at {address}"
        self._client.enable_bulk(status.bulk_port, status.local_socket)
        self._sent_version = graph.version
        req = service_pb2.CreateSessionRequest(graph_def=as_graph_def(graph), options=options)
        # the master may have gone away again between the two calls (a restarting pod): wait for it too
        resp = startup_wait.call_until_up(
            lambda: self._client.call("CreateSession", req, service_pb2.CreateSessionResponse)[0], deadline, waiting)
        self._handle = resp.session_handle

    @staticmethod
    def _status(address: str):
        status_client = RpcClient(address, "WorkerService", f"task at {address}")
        try:
            return status_client.call("GetStatus", service_pb2.GetStatusRequest(), service_pb2.GetStatusResponse)[0]
        finally:
            status_client.close()

    def _extend(self) -> None:
        with self._lock:
            version = self._graph.version
            if version == self._sent_version:
                return
            ext = as_graph_def(self._graph, from_version=self._sent_version)
            self._client.call("ExtendSession", service_pb2.ExtendSessionRequest(session_handle=self._handle,
                                                                                graph_def=ext),
                              service_pb2.ExtendSessionResponse)
            self._sent_version = version

    def run(self, fetches, feeds, feed_values, targets, timeout_ms=0, step_stats=None) -> list:
        if self._graph.version != self._sent_version:
            self._extend()
        req = service_pb2.RunStepRequest(session_handle=self._handle, fetch=[t.name for t in fetches],
                                         target=[op.name for op in targets], timeout_ms=timeout_ms,
                                         trace=step_stats is not None)
        # the master and its tasks enforce the deadline (a blocked dequeue fails there, taking nothing);
        # the call's own limit is later, for a master that does not answer at all
        limit = timeout_ms / 1000 + RPC_DEADLINE_SLACK_S + 1.0 if timeout_ms > 0 else None
        resp, tensors = self._client.call("RunStep", req, service_pb2.RunStepResponse,
                                          [(t.name, v) for t, v in zip(feeds, feed_values, strict=True)],
                                          timeout=limit)
        if step_stats is not None:
            step_stats.MergeFrom(resp.step_stats)
        return [v for _, v in tensors]

    def list_devices(self) -> list:
        resp, _ = self._client.call("ListDevices", service_pb2.ListDevicesRequest(session_handle=self._handle),
                                    service_pb2.ListDevicesResponse)
        return [(d.name, d.device_type, d.memory_limit) for d in resp.device]

    def close(self) -> None:
        try:
            self._client.call("CloseSession", service_pb2.CloseSessionRequest(session_handle=self._handle),
                              service_pb2.CloseSessionResponse)
        except errors.OpError:
            pass
        finally:
            self._client.close()


class GrpcSessionFactory:
    """What `session.register_session_factory("grpc", ...)` registers."""

    @staticmethod
    def create(target: str, graph, config):
        address = _address(target)
        server = local_server_for(target)
        if server is not None:
            return _LocalBackend(server, graph, config)
        return _RemoteBackend(address, graph, config)

    @staticmethod
    def reset(target: str, containers=None, config=None) -> None:
        address = _address(target)
        server = local_server_for(target)
        if server is not None:
            server.master.reset(list(containers or ()))
            return
        client = RpcClient(address, "MasterService", f"master at {address}")
        try:
            client.call("Reset", service_pb2.ResetRequest(container=list(containers or ())),
                        service_pb2.ResetResponse)
        finally:
            client.close()
