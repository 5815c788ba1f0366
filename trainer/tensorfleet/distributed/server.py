"""`tf.train.Server`: one task's master and worker services on one gRPC port (+ an optional bulk port).

What a ps, worker or chief process runs. The server binds exactly the address its
own task has in the cluster spec:
- `localhost` / `127.0.0.1` (any loopback literal) binds loopback only;
- another IP literal binds that address (`0.0.0.0` / `::` mean every interface);
- a host name (a pod's own name in a TFJob) binds `[::]`, i.e. every interface of the
  pod's own network namespace, because the name may not resolve yet when the pod starts.
Without `TENSORFLEET_RPC_TOKEN` a server is local-only: it refuses a non-loopback address
(`ValueError` naming the variable). With it, every call must carry the token, or it is
answered `UNAUTHENTICATED` and nothing runs.

Beside the gRPC port the server listens on a bulk port (same host, ephemeral port,
reported by GetStatus; `TENSORFLEET_BULK=0` turns it off) that carries the same calls
as raw frames (`wire`), about 3x faster than grpc-python for tensors and 5x for small
calls on these machines. Clients fall back to gRPC when it is off or unreachable.
Malformed, oversize or unknown calls get a clear status and the server keeps serving.
The gRPC handler is `grpc_handler.GrpcHandler`; the bulk port is served here.
"""
from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import socket
import sys
import threading
import time
from concurrent import futures
from typing import Optional

import grpc
from google.protobuf.message import DecodeError

from .. import errors
from ..config import ConfigProto
from . import rpc_errors, wire
from .client import TOKEN_ENV, _attach, _metas_of, job_token, split_address
from .cluster import ClusterSpec
from .grpc_handler import GrpcHandler
from .master import Master
from .protos import cluster_pb2, service_pb2
from .tls import tls_from_env
from .worker import WorkerService

logger = logging.getLogger("tensorfleet.distributed")
_LOCAL_SERVERS: dict = {}  # port -> Server started in this process
#: open bulk/local connections a server accepts at once (each is served by its own thread)
MAX_BULK_CONNECTIONS = 512
_LOCAL_LOCK = threading.Lock()


def bind_host(host: str) -> str:
    """The interface a task address binds (see the module docstring)."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return "::"


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _after(fn, args: tuple, response):
    """Calls `fn(*args)` for its effect; -> (response, no tensors)."""
    fn(*args)
    return response, []


class _Methods:
    """Typed handlers of both services: name -> (request type, fn(request, tensors) -> (response, tensors))."""

    def __init__(self, worker: WorkerService, master: Master, bulk_port_fn, shutdown_fn):
        W, M = "WorkerService", "MasterService"
        pb = service_pb2
        self.table = {
            f"{W}/GetStatus": (pb.GetStatusRequest, lambda r, t: (self._status(bulk_port_fn()), [])),
            f"{W}/RegisterGraph": (pb.RegisterGraphRequest, lambda r, t: (pb.RegisterGraphResponse(
                graph_handle=worker.register_graph(r.graph_def, r.feed, r.fetch, r.target, r.allow_soft_placement,
                                                   r.log_device_placement)), [])),
            f"{W}/DeregisterGraph": (pb.DeregisterGraphRequest, lambda r, t: _after(
                worker.deregister_graph, (r.graph_handle,), pb.DeregisterGraphResponse())),
            f"{W}/RunGraph": (pb.RunGraphRequest, self._run_graph),
            f"{W}/CleanupStep": (pb.CleanupStepRequest, lambda r, t: _after(
                worker.cleanup_step, (r.step_id,), pb.CleanupStepResponse())),
            f"{W}/Reset": (pb.ResetRequest, lambda r, t: _after(
                worker.reset, (list(r.container),), pb.ResetResponse())),
            f"{W}/Shutdown": (pb.ShutdownRequest, lambda r, t: _after(
                shutdown_fn, (r.reason, r.exit_code), pb.ShutdownResponse())),
            f"{M}/CreateSession": (pb.CreateSessionRequest, lambda r, t: (pb.CreateSessionResponse(
                session_handle=master.create_session_from_proto(r.graph_def, r.options)), [])),
            f"{M}/ExtendSession": (pb.ExtendSessionRequest, lambda r, t: _after(
                master.extend_session, (r.session_handle, r.graph_def), pb.ExtendSessionResponse())),
            f"{M}/RunStep": (pb.RunStepRequest, self._run_step),
            f"{M}/CloseSession": (pb.CloseSessionRequest, lambda r, t: _after(
                master.close_session, (r.session_handle,), pb.CloseSessionResponse())),
            f"{M}/ListDevices": (pb.ListDevicesRequest, lambda r, t: (self._devices(master, r.session_handle), [])),
            f"{M}/Reset": (pb.ResetRequest, lambda r, t: _after(
                master.reset, (list(r.container),), pb.ResetResponse())),
        }
        self.worker, self.master = worker, master
        self.streaming = {f"{W}/RunGraph", f"{M}/RunStep"}
        #: time.monotonic() of the last call served (an idle ps can exit after a timeout: issue 11)
        self.last_call = time.monotonic()

    def _status(self, endpoints: tuple):
        bulk_port, local_socket = endpoints
        resp = service_pb2.GetStatusResponse(bulk_port=bulk_port, task=self.worker.task_name,
                                             incarnation=self.worker.incarnation, local_socket=local_socket)
        for name, dtype, mem in self.worker.device_names():
            resp.device.add(name=name, device_type=dtype, memory_limit=mem)
        return resp

    def _run_graph(self, r, tensors):
        out = self.worker.run_graph(r.graph_handle, r.step_id, dict(tensors), [(x.feed, x.key) for x in r.local],
                                    list(r.keep), r.end_of_step, list(r.keep_returned), r.timeout_ms)
        return service_pb2.RunGraphResponse(), list(out.items())

    def _run_step(self, r, tensors):
        values = self.master.run_step_by_name(r.session_handle, tensors, list(r.fetch), list(r.target),
                                              r.timeout_ms)
        return service_pb2.RunStepResponse(), list(zip(r.fetch, values, strict=True))

    @staticmethod
    def _devices(master, handle):
        resp = service_pb2.ListDevicesResponse()
        for name, dtype, mem in master.list_devices(handle):
            resp.device.add(name=name, device_type=dtype, memory_limit=mem)
        return resp

    def dispatch(self, method: str, request_bytes: bytes, payload, limits: wire.Limits) -> tuple:
        """-> (response message, [(name, array)]); raises tf.errors for every failure."""
        self.last_call = time.monotonic()
        entry = self.table.get(method)
        if entry is None:
            raise errors.UnimplementedError(None, None, f"Unknown method {method!r}")
        req_type, fn = entry
        try:
            request = req_type.FromString(request_bytes)
        except DecodeError as e:
            raise errors.InvalidArgumentError(None, None, f"{method}: malformed {req_type.__name__}: {e}") from None
        tensors = wire.unpack(_metas_of(request), payload, limits, method) if payload is not None else []
        return fn(request, tensors)


class Server:
    """`tf.train.Server(server_or_cluster_def, job_name=None, task_index=None, protocol=None, config=None,
    start=True)`."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None, config=None,
                 start=True, limits: Optional[wire.Limits] = None):
        cluster, job_name, task_index, protocol = _server_def_parts(server_or_cluster_def, job_name, task_index,
                                                                    protocol)
        if protocol != "grpc":
            raise ValueError(f"Unsupported protocol {protocol!r}: Tensorfleet servers speak 'grpc'")
        if config is not None and not isinstance(config, ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
        self._cluster = cluster
        self._job, self._task = job_name, task_index
        self._config = config
        self._limits = limits or wire.Limits()
        self._token = job_token()
        self._tls = tls_from_env()
        address = cluster.task_address(job_name, task_index)
        self._host, self._port = split_address(address)
        self._bind = bind_host(self._host)
        if not self._token and not _is_loopback(self._bind):
            raise ValueError(f"Task /job:{job_name}/task:{task_index} would listen on {address}, which is not a "
                             f"loopback address, but {TOKEN_ENV} is not set: set the job's token (the operator "
                             f"injects it) or use a localhost address")
        self._started = False
        self._stopped = threading.Event()
        self._grpc = None
        self._bulk_sock: Optional[socket.socket] = None
        self._bulk_port = 0
        self._local_sock: Optional[socket.socket] = None
        self._local_name = ""
        self._conns: set = set()
        self._worker = WorkerService(job_name, task_index, config)
        self._master = Master(self)
        self._methods = _Methods(self._worker, self._master, lambda: (self._bulk_port, self._local_name),
                                 self._shutdown_requested)
        self.exit_code: Optional[int] = None
        self.shutdown_reason = ""
        if start:
            self.start()

    # -- TF's API ------------------------------------------------------------------------------
    @property
    def target(self) -> str:
        return f"grpc://{self._host}:{self._port}"

    @property
    def server_def(self):
        return cluster_pb2.ServerDef(cluster=self._cluster.as_cluster_def(), job_name=self._job,
                                     task_index=self._task, protocol="grpc", port=self._port)

    def start(self) -> None:
        if self._started:
            return
        self._start_grpc()
        if self._bulk_enabled():
            self._start_bulk()
        self._started = True
        with _LOCAL_LOCK:
            _LOCAL_SERVERS[self._port] = self
        logger.info("Started server for /job:%s/task:%d at %s (bulk port %d)", self._job, self._task,
                    self.target, self._bulk_port)

    def join(self) -> None:
        """Blocks until the server stops (`stop()`, or a shutdown from the chief)."""
        while not self._stopped.wait(0.5):
            pass

    def _shutdown_requested(self, reason: str, exit_code: int) -> None:
        """A Shutdown call: reply first, then stop (join() returns; `exit_code` says what the process should do)."""
        logger.info("Task /job:%s/task:%d asked to shut down: %s", self._job, self._task, reason or "(no reason)")
        self.shutdown_reason, self.exit_code = reason, exit_code
        threading.Timer(0.05, self.stop).start()

    def stop(self) -> None:
        """Stops serving (not in TF 1.15's API, which never stops a server); join() then returns."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        with _LOCAL_LOCK:
            if _LOCAL_SERVERS.get(self._port) is self:
                del _LOCAL_SERVERS[self._port]
        if self._grpc is not None:
            self._grpc.stop(grace=0.5)
        for listener in (self._bulk_sock, self._local_sock):
            if listener is not None:
                _close(listener)
        for c in list(self._conns):
            _close(c)
        self._master.close()
        self._worker.close()

    @staticmethod
    def create_local_server(config=None, start=True) -> "Server":
        """A single-task server on 127.0.0.1, port chosen by the OS (job 'localhost')."""
        return Server({"localhost": ["127.0.0.1:0"]}, protocol="grpc", config=config, start=start)

    # -- runtime helpers ---------------------------------------------------------------------------
    @property
    def cluster_spec(self) -> ClusterSpec:
        return self._cluster

    @property
    def job_name(self) -> str:
        return self._job

    @property
    def task_index(self) -> int:
        return self._task

    @property
    def worker_service(self) -> WorkerService:
        return self._worker

    @property
    def master(self) -> Master:
        return self._master

    @property
    def limits(self) -> wire.Limits:
        return self._limits

    @property
    def idle_seconds(self) -> float:
        """Seconds since this server last served a call (for an idle-timeout exit of an orphaned ps)."""
        return time.monotonic() - self._methods.last_call

    def _bulk_enabled(self) -> bool:
        return os.environ.get("TENSORFLEET_BULK", "1") != "0"

    def _start_grpc(self) -> None:
        opts = [("grpc.max_send_message_length", self._limits.grpc_message_bytes),
                ("grpc.max_receive_message_length", self._limits.grpc_message_bytes),
                ("grpc.so_reuseport", 0),
                ("grpc.keepalive_permit_without_calls", 1),
                ("grpc.http2.min_ping_interval_without_data_ms", 500),
                ("grpc.http2.max_ping_strikes", 0)]
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="tf-grpc"), options=opts)
        server.add_generic_rpc_handlers((GrpcHandler(self),))
        host = f"[{self._bind}]" if ":" in self._bind else self._bind
        try:
            if self._tls is not None:
                port = server.add_secure_port(f"{host}:{self._port}", self._tls.grpc_server_credentials())
            else:
                port = server.add_insecure_port(f"{host}:{self._port}")
        except RuntimeError as e:
            raise errors.UnavailableError(None, None, f"Could not bind {host}:{self._port} for task "
                                                      f"/job:{self._job}/task:{self._task}: {e}") from None
        if not port:
            raise errors.UnavailableError(None, None, f"Could not bind {host}:{self._port} for task "
                                                      f"/job:{self._job}/task:{self._task}")
        if self._port == 0:
            self._port = port
            self._cluster = self._cluster.with_address(self._job, self._task, f"{self._host}:{port}")
        server.start()
        self._grpc = server

    def _start_bulk(self) -> None:
        family = socket.AF_INET6 if ":" in self._bind else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._bind, 0))
        sock.listen(128)
        self._bulk_sock = sock
        self._bulk_port = sock.getsockname()[1]
        threading.Thread(target=self._accept_loop, args=(sock,), name=f"tf-bulk-accept-{self._port}",
                         daemon=True).start()
        if sys.platform.startswith("linux") and os.environ.get("TENSORFLEET_LOCAL_SOCKET", "1") != "0" \
                and self._tls is None:
            # same-host fast path: an abstract Unix socket (per network namespace, so pods never share one)
            local = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            name = f"tensorfleet-{os.getpid()}-{self._port}-{self._worker.incarnation:x}"
            local.bind("\0" + name)
            local.listen(128)
            self._local_sock, self._local_name = local, name
            threading.Thread(target=self._accept_loop, args=(local,), name=f"tf-local-accept-{self._port}",
                             daemon=True).start()

    def _accept_loop(self, listener: socket.socket) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            if len(self._conns) >= MAX_BULK_CONNECTIONS:  # bounded: one thread per connection
                _send_status(conn, errors.RESOURCE_EXHAUSTED, f"more than {MAX_BULK_CONNECTIONS} connections")
                _close(conn)
                continue
            if conn.family != socket.AF_UNIX:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._conns.add(conn)
            threading.Thread(target=self._serve_bulk, args=(conn,), name="tf-bulk-conn", daemon=True).start()

    def _token_ok(self, given: str) -> bool:
        return not self._token or hmac.compare_digest(given.encode(), self._token.encode())

    def _serve_bulk(self, conn: socket.socket) -> None:
        try:
            if self._tls is not None and conn.family != socket.AF_UNIX:
                self._conns.discard(conn)
                conn = self._tls.server_context().wrap_socket(conn, server_side=True)
                self._conns.add(conn)
        except (OSError, ValueError):
            self._conns.discard(conn)
            _close(conn)
            return
        reader = wire.FrameReader(conn, self._limits)
        try:
            while not self._stopped.is_set():
                try:
                    raw, payload = reader.read()
                except wire.FrameError as e:
                    _send_status(conn, e.code, str(e))
                    return
                if raw is None:
                    return
                if not self._answer(conn, raw, payload):
                    return
        except OSError:
            pass
        finally:
            self._conns.discard(conn)
            _close(conn)

    def _answer(self, conn: socket.socket, raw: bytes, payload) -> bool:
        """Serves one bulk call; False closes the connection."""
        try:
            header = service_pb2.CallHeader.FromString(raw)
        except DecodeError:
            _send_status(conn, errors.INVALID_ARGUMENT, "malformed CallHeader")
            return False
        if not self._token_ok(header.token):
            _send_status(conn, errors.UNAUTHENTICATED, "missing or wrong job token")
            return False
        try:
            response, tensors = self._methods.dispatch(header.method, header.message, payload, self._limits)
            metas, parts, size = wire.pack(tensors)
            if metas:
                _attach(response, metas)
        except Exception as e:  # noqa: BLE001 - every failure is reported to the caller as a status
            st = rpc_errors.status_of(e)
            _send_status(conn, st.code, st.message)
            return True
        reply = service_pb2.CallHeader(message=response.SerializeToString(), payload_bytes=size)
        wire.send_frame(conn, reply.SerializeToString(), parts, size)
        return True


def _send_status(conn: socket.socket, code: int, message: str) -> None:
    reply = service_pb2.CallHeader(status=service_pb2.Status(code=code, message=message))
    try:
        wire.send_frame(conn, reply.SerializeToString(), [], 0)
    except OSError:
        pass


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def _server_def_parts(server_or_cluster_def, job_name, task_index, protocol) -> tuple:
    if isinstance(server_or_cluster_def, cluster_pb2.ServerDef):
        sd = server_or_cluster_def
        cluster = ClusterSpec(sd.cluster)
        job_name = job_name if job_name is not None else (sd.job_name or None)
        task_index = task_index if task_index is not None else sd.task_index
        protocol = protocol or sd.protocol or "grpc"
    else:
        cluster = ClusterSpec(server_or_cluster_def)
        protocol = protocol or "grpc"
    if not cluster:
        raise ValueError("The cluster of a Server must have at least one job")
    if job_name is None:
        if len(cluster.jobs) != 1:
            raise ValueError("Must specify an explicit `job_name`.")
        job_name = cluster.jobs[0]
    if job_name not in cluster.jobs:
        raise ValueError(f"Job {job_name!r} is not in the cluster (jobs: {sorted(cluster.jobs)})")
    if task_index is None:
        indices = cluster.task_indices(job_name)
        if len(indices) != 1:
            raise ValueError("Must specify an explicit `task_index`.")
        task_index = indices[0]
    cluster.task_address(job_name, task_index)  # ValueError naming the job if the task is missing
    return cluster, job_name, int(task_index), protocol


def local_server_for(target: str) -> Optional[Server]:
    """The server started in this process whose target is `target` (a loopback or same-name address)."""
    address = target[len("grpc://"):] if target.startswith("grpc://") else target
    try:
        host, port = split_address(address)
    except ValueError:
        return None
    with _LOCAL_LOCK:
        server = _LOCAL_SERVERS.get(port)
    if server is None:
        return None
    if host == server._host or (_is_loopback(bind_host(host)) and _is_loopback(server._bind)):
        return server
    return None
