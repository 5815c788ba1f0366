"""`tf.train.Server`: one task's master and worker services on one port (gRPC and bulk frames).

What a ps, worker or chief process runs. The server binds exactly the address its
own task has in the cluster spec:
- `localhost` / `127.0.0.1` (any loopback literal) binds loopback only;
- another IP literal binds that address (`0.0.0.0` / `::` mean every interface);
- a host name (a pod's own name in a TFJob) binds `[::]`, i.e. every interface of the
  pod's own network namespace, because the name may not resolve yet when the pod starts.
Without `TENSORFLEET_RPC_TOKEN` a server is local-only: it refuses a non-loopback address
(`ValueError` naming the variable). With it, every call must carry the token, or it is
answered `UNAUTHENTICATED` and nothing runs.

The spec's port also carries the bulk path (`one_port`: each connection is sniffed; the
HTTP/2 preface goes to grpcio on a private Unix socket, anything else is raw frames, `wire`),
about 3x faster than grpc-python for tensors and 5x for small calls on these machines;
GetStatus advertises it (`TENSORFLEET_BULK=0` turns it off). Under TLS the server terminates
TLS itself and tells the two apart by ALPN. With `TENSORFLEET_SINGLE_PORT=0` grpcio listens on
the spec's port itself and the bulk path on an ephemeral port. Clients fall back to gRPC when
the bulk path is off or unreachable.
Every connection but grpcio's own is held by one `conn_loop.ConnectionLoop` (bounded in number and
in unauthenticated and idle time) until it has an authenticated request, which `bulk_calls.BulkCalls`
serves in a worker thread. Malformed, oversize or unknown calls get a clear status and the server
keeps serving. A step (RunGraph, RunStep) whose caller goes away is cancelled (`caller_watch`).
The method table is `service_methods.Methods`, the gRPC handler `grpc_handler.GrpcHandler`.
"""
from __future__ import annotations

import atexit
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

from .. import errors
from ..config import ConfigProto
from . import one_port, shutdown, wire
from .bulk_calls import BulkCalls
from .caller_watch import ConnectionWatch
from .client import TOKEN_ENV, Timeouts, job_token, split_address
from .client_leases import ClientLeases
from .ps_lifetime import PsLifetime, end_released_process
from .cluster import ClusterSpec, server_def_parts
from .conn_limits import GRPC_STREAMS_PER_CONNECTION, ConnectionLimits
from .conn_loop import ConnectionLoop
from .grpc_handler import GrpcHandler
from .master import Master
from .protos import cluster_pb2
from .service_methods import Methods
from .tls import tls_from_env
from .worker import WorkerService

logger = logging.getLogger("tensorfleet.distributed")
_LOCAL_SERVERS: dict = {}  # port -> Server started in this process
#: at this process's exit, how long it waits in all for the replies its servers are sending (`_drain_at_exit`)
EXIT_DRAIN_SECONDS = 2.0
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


class Server:
    """`tf.train.Server(server_or_cluster_def, job_name=None, task_index=None, protocol=None, config=None,
    start=True)`."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None, config=None,
                 start=True, limits: Optional[wire.Limits] = None):
        cluster, job_name, task_index, protocol = server_def_parts(server_or_cluster_def, job_name, task_index,
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
        self._tls_context = self._tls.server_context() if self._tls is not None else None
        address = cluster.task_address(job_name, task_index)
        self._host, self._port = split_address(address)
        self._bind = bind_host(self._host)
        if not self._token and not _is_loopback(self._bind):
            raise ValueError(f"Task /job:{job_name}/replica:0/task:{task_index} would listen on {address}, "
                             f"which is not a loopback address, but {TOKEN_ENV} is not set: set the job's token "
                             f"(the operator injects it) or use a localhost address")
        self._started = False
        self._stopped = threading.Event()
        self._grpc = None
        self._bulk_sock: Optional[socket.socket] = None
        self._bulk_port = 0
        self._local_sock: Optional[socket.socket] = None
        self._local_name = ""
        self._shared_sock: Optional[socket.socket] = None  # single-port mode: gRPC and bulk (one_port.py)
        self._grpc_unix: Optional[one_port.InternalGrpcSocket] = None
        self._connections: Optional[ConnectionLoop] = None   # every connection not grpcio's own (conn_loop.py)
        self.connection_limits = ConnectionLimits()
        self._caller_watch = ConnectionWatch(f"{job_name}-{task_index}")
        self._worker = WorkerService(job_name, task_index, config)
        self._master = Master(self)
        self._methods = Methods(self._worker, self._master, lambda: (self._bulk_port, self._local_name),
                                 self._shutdown_requested)
        self._leases = ClientLeases(self.task_name, self._worker, self._master)   # dead clients' state
        self._methods.forget = self._leases.forget
        self.exit_code: Optional[int] = None
        self.shutdown_reason = ""
        #: set when this task learns that the cluster's training finished (shutdown.py)
        self.training_finished = threading.Event()
        self.released_cluster = False   # this task (the chief) released the cluster
        self.end_reported = False       # a chief/worker task told the ps that it ended (shutdown.py)
        self.lifetime: Optional[PsLifetime] = None   # a ps: when the chief's release stops it (ps_lifetime.py)
        self.released_exit = False   # the release that stopped this ps ends its process (ps_lifetime.py)
        self._joining = 0            # threads in join()
        if job_name == "ps":
            self.lifetime = PsLifetime(self.task_name, shutdown.training_tasks(cluster), self._stop_released)
            self._worker.on_task_seen = self.lifetime.task_seen
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
        if one_port.single_port_enabled():
            self._start_single_port()
        else:
            self._start_grpc()
            if self._bulk_enabled():
                self._start_bulk()
        self._started = True
        with _LOCAL_LOCK:
            _LOCAL_SERVERS[self._port] = self
        _register_exit_drain()
        if self._job in shutdown.WORKER_JOBS and "ps" in self._cluster.jobs:
            shutdown.register_task_end(self)
        logger.info("Started server for %s at %s (bulk port %d)", self.task_name, self.target, self._bulk_port)

    def join(self) -> None:
        """As in TF, never hands control back to a script that falls through after it: a server the chief's
        release stopped ends the process from here, `SystemExit(exit_code)` (0: `finally` blocks and atexit run).
        A ps task that serves no call for `shutdown.ps_idle_timeout()` seconds (its chief never came back) stops
        with `SystemExit(shutdown.PS_IDLE_TIMEOUT_EXIT_CODE)`, a retryable exit code. Returns only after this
        process's own `stop()` (Tensorfleet's extension)."""
        idle_limit = shutdown.ps_idle_timeout() if self._job == "ps" else 0.0
        poll = min(0.5, idle_limit / 4) if idle_limit else 0.5
        with _LOCAL_LOCK:
            self._joining += 1
        try:
            while not self._stopped.wait(poll):
                if idle_limit and self.idle_seconds > idle_limit:
                    code = shutdown.PS_IDLE_TIMEOUT_EXIT_CODE
                    logger.warning("Task %s served no call for %g s (%s): exiting with code %d", self.task_name,
                                   idle_limit, shutdown.PS_IDLE_TIMEOUT_ENV, code)
                    self.shutdown_reason, self.exit_code = f"idle for {idle_limit:g} s", code
                    self.stop()
        finally:
            with _LOCAL_LOCK:
                self._joining -= 1
        if self.exit_code is not None:
            raise SystemExit(self.exit_code)

    task_name = property(lambda self: f"/job:{self._job}/replica:0/task:{self._task}")
    is_stopped = property(lambda self: self._stopped.is_set())

    def mark_training_finished(self, reason: str) -> None:
        if not self.training_finished.is_set():
            self.shutdown_reason = reason
            self.training_finished.set()

    def _shutdown_requested(self, reason: str, exit_code: int, keep_serving: bool = False,
                            ended_task: str = "", ended_incarnation: int = 0) -> None:
        """A Shutdown call (see shutdown.py): a training task's end report (`ended_task`, from its process
        `ended_incarnation`); else the chief's end of
        training: with `keep_serving` only recorded (what the other workers are told); else a release, after which
        a ps stops when its `lifetime` says and any other task at once."""
        if ended_task:
            if self.lifetime is not None:
                self.lifetime.task_ended(ended_task, ended_incarnation)
            return
        logger.info("Task %s told that training finished%s: %s", self.task_name,
                    "" if keep_serving else " (released)", reason or "(no reason)")
        self.mark_training_finished(reason)
        if keep_serving:
            return
        if self.lifetime is not None:
            self.lifetime.release(reason, exit_code)
        else:
            self._stop_released(reason, exit_code)

    def _stop_released(self, reason: str, exit_code: int) -> None:
        """Stops after the reply to the Shutdown call has gone; `join()` then exits with `exit_code`. A ps whose
        process joins in no thread (the TF1 "done queue" idiom) and runs no other server ends its process with
        `exit_code` all the same (`ps_lifetime.end_released_process`); never a process that hosts other servers."""
        self.shutdown_reason, self.exit_code = reason, exit_code
        threading.Timer(0.05, self._stop_after_release).start()

    def _stop_after_release(self) -> None:
        with _LOCAL_LOCK:   # decided before the stop: a step it cancels in the main thread then raises SystemExit
            self.released_exit = self.lifetime is not None and not self._joining and \
                all(s is self for s in _LOCAL_SERVERS.values())
        self.stop()
        if self.released_exit and self.exit_code is not None:
            end_released_process(self.task_name, self.exit_code)

    def stop(self) -> None:
        """Stops serving (not in TF 1.15's API, which never stops a server); join() then returns."""
        if self._stopped.is_set():
            return
        if self._job in shutdown.WORKER_JOBS and "ps" in self._cluster.jobs:
            shutdown.report_task_ended(self, "the task's server stopped")
        self._stopped.set()
        with _LOCAL_LOCK:
            if _LOCAL_SERVERS.get(self._port) is self:
                del _LOCAL_SERVERS[self._port]
        if self._grpc is not None:
            self._grpc.stop(grace=0.5)
        if self._grpc_unix is not None:
            self._grpc_unix.remove()
        if self._connections is not None:
            self._connections.close()   # its listeners and every connection
        self._leases.close()
        self._caller_watch.close()
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
        """Seconds since this server last served a call (0 while one is being served)."""
        if self._methods.in_flight:
            return 0.0
        return time.monotonic() - self._methods.last_call

    def _bulk_enabled(self) -> bool:
        return os.environ.get("TENSORFLEET_BULK", "1") != "0"

    def _start_single_port(self) -> None:
        """One TCP listener on the spec's address for gRPC and bulk; grpcio itself on a private Unix socket."""
        try:
            sock = one_port.bind_listener(self._bind, self._port)
        except OSError as e:
            raise errors.UnavailableError(None, None, f"Could not bind {self._bind}:{self._port} for task "
                                                      f"{self.task_name}: {e}") from None
        if self._port == 0:
            self._port = sock.getsockname()[1]
            self._cluster = self._cluster.with_address(self._job, self._task, f"{self._host}:{self._port}")
        self._grpc_unix = one_port.InternalGrpcSocket(
            f"tensorfleet-grpc-{os.getpid()}-{self._port}-{self._worker.incarnation:x}")
        try:
            self._start_grpc(self._grpc_unix.grpc_address)
        except BaseException:
            sock.close()
            self._grpc_unix.remove()
            raise
        self._shared_sock = sock
        loop = self._connection_loop(self._grpc_unix.path)
        loop.add_listener(sock, shared=True)
        if self._bulk_enabled():
            self._bulk_port = self._port
            self._start_local()
        loop.start()

    def _start_grpc(self, internal_address: str = "") -> None:
        opts = [("grpc.max_send_message_length", self._limits.grpc_message_bytes),
                ("grpc.max_receive_message_length", self._limits.grpc_message_bytes),
                ("grpc.so_reuseport", 0),
                ("grpc.keepalive_permit_without_calls", 1),
                ("grpc.http2.min_ping_interval_without_data_ms", 500),
                ("grpc.http2.max_ping_strikes", 0),
                ("grpc.max_concurrent_streams", GRPC_STREAMS_PER_CONNECTION)]
        if not internal_address:   # grpcio's own TCP port: ping clients, so a vanished host's call ends (caller_watch)
            ping_ms = max(1000, int(Timeouts().dead_peer_seconds * 500))
            opts += [("grpc.keepalive_time_ms", ping_ms), ("grpc.keepalive_timeout_ms", ping_ms)]
        # each admitted call gets a thread at once (a blocking call never waits behind others); more are refused
        calls = self.connection_limits.grpc_calls
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=calls, thread_name_prefix="tf-grpc"),
                             options=opts, maximum_concurrent_rpcs=calls)
        server.add_generic_rpc_handlers((GrpcHandler(self),))
        host = f"[{self._bind}]" if ":" in self._bind else self._bind
        try:
            if internal_address:
                port = server.add_insecure_port(internal_address)
            elif self._tls is not None:
                port = server.add_secure_port(f"{host}:{self._port}", self._tls.grpc_server_credentials())
            else:
                port = server.add_insecure_port(f"{host}:{self._port}")
        except RuntimeError as e:
            raise errors.UnavailableError(None, None, f"Could not bind {host}:{self._port} for task "
                                                      f"{self.task_name}: {e}") from None
        if not port:
            raise errors.UnavailableError(None, None, f"Could not bind {host}:{self._port} for task "
                                                      f"{self.task_name}")
        if self._port == 0 and not internal_address:
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
        loop = self._connection_loop("")
        loop.add_listener(sock, shared=False)
        self._start_local()
        loop.start()

    def _connection_loop(self, grpc_path: str) -> ConnectionLoop:
        """The loop that holds this server's connections (`grpc_path`: the internal grpcio server's socket, in
        single-port mode); bulk requests go to a `BulkCalls` unless the bulk path is off."""
        heads = wire.RequestHeads(self._token, self._limits)
        name = f"{self._job}-{self._task}"
        bulk = BulkCalls(name, self._methods, self._limits, heads, self._caller_watch,
                         self.connection_limits, self._leases.bind) if self._bulk_enabled() else None
        self._connections = ConnectionLoop(name, self.connection_limits, heads, bulk.submit if bulk else None,
                                           grpc_path, self._tls_context, self._leases.connection_closed)
        return self._connections

    def _start_local(self) -> None:
        if sys.platform.startswith("linux") and os.environ.get("TENSORFLEET_LOCAL_SOCKET", "1") != "0" \
                and self._tls is None:
            # same-host fast path: an abstract Unix socket (per network namespace, so pods never share one)
            local = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            name = f"tensorfleet-{os.getpid()}-{self._port}-{self._worker.incarnation:x}"
            local.bind("\0" + name)
            local.listen(128)
            self._local_sock, self._local_name = local, name
            assert self._connections is not None
            self._connections.add_listener(local, shared=False)

    def _token_ok(self, given: str) -> bool:
        return not self._token or hmac.compare_digest(given.encode(), self._token.encode())


_drain_registered = False


def _register_exit_drain() -> None:
    global _drain_registered
    with _LOCAL_LOCK:
        if _drain_registered:
            return
        _drain_registered = True
    atexit.register(_drain_at_exit)


def _drain_at_exit() -> None:
    """At the process's exit, the bulk calls its servers are answering finish first (at most EXIT_DRAIN_SECONDS
    in all): a ps whose main thread ends the process as soon as a worker's call let it (the TF1 done-queue
    idiom: the last token's dequeue returns, the script exits) would otherwise close that worker's
    connection before the enqueue's reply went out, failing a worker whose step had run."""
    deadline = time.monotonic() + EXIT_DRAIN_SECONDS
    with _LOCAL_LOCK:
        servers = list(_LOCAL_SERVERS.values())
    for server in servers:
        while server._methods.answering and time.monotonic() < deadline:
            time.sleep(0.002)


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
