"""Inter-op thread pools (one small pool per device) and intra-op BLAS threads.

Part of the executor: a concurrent run (`concurrent.py`) hands expensive ready nodes to the
pool of their device. Pools are process-wide: the first session creates them
with its `inter_op_parallelism_threads` and later sessions reuse them, unless a
session asks for `use_per_session_threads` (then it owns pools that close with
it) -- TF's rule. `intra_op_parallelism_threads > 0` is applied to BLAS through
threadpoolctl (process-wide, like the BLAS library itself).

Workers are plain daemon threads blocked on a `queue.SimpleQueue`; a task is
`(fn, args)`. A thread hand-off costs ~75-110 us on our VMs, so the executor
only submits work that is worth it (see `execution.py`).
"""
from __future__ import annotations

import json
import os
import queue
import threading
from typing import Callable, Optional

from ..kernels.backend import cupy_module
from ..kernels import fp_state

_SHARED: Optional["PoolSet"] = None
_SHARED_LOCK = threading.Lock()


class WorkerPool:
    """N daemon threads running submitted `(fn, args)` tasks; `init()` runs once per thread (e.g. CUDA device)."""

    def __init__(self, name: str, num_threads: int, init: Optional[Callable[[], None]] = None):
        self.name = name
        self.num_threads = num_threads
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._init = init
        self.submitted = 0
        self.started = 0
        self._threads = [threading.Thread(target=self._loop, name=f"tf-inter-op-{name}-{i}", daemon=True)
                         for i in range(num_threads)]
        for t in self._threads:
            t.start()

    def submit(self, fn: Callable, *args) -> None:
        self.submitted += 1
        self._q.put((fn, args))

    @property
    def queue_depth(self) -> int:
        """Tasks submitted and not yet picked up by a worker."""
        return self._q.qsize()

    def _loop(self) -> None:
        fp_state.kernel_thread()  # NaN/Inf silent and denormals flushed, as on the session's thread
        if self._init is not None:
            self._init()
        get = self._q.get
        while True:
            item = get()
            if item is None:
                return
            self.started += 1
            fn, args = item
            try:
                fn(*args)
            except BaseException:  # noqa: BLE001  (tasks report their own errors; keep the worker alive)
                pass

    def shutdown(self) -> None:
        for _ in self._threads:
            self._q.put(None)


def _cuda_init(cuda_id: int) -> Callable[[], None]:
    def init():
        cupy_module().cuda.Device(cuda_id).use()

    return init


class PoolSet:
    """One `WorkerPool` per device, created on first use: `inter_op` threads for CPUs, 1 per GPU."""

    def __init__(self, inter_op_threads: int = 0, owner: str = "shared"):
        self.inter_op_threads = inter_op_threads if inter_op_threads > 0 else (os.cpu_count() or 1)
        self.owner = owner
        self._pools: dict = {}
        self._lock = threading.Lock()

    def pool_for(self, device) -> WorkerPool:
        pool = self._pools.get(device.name)
        if pool is None:
            with self._lock:
                pool = self._pools.get(device.name)
                if pool is None:
                    if device.device_type == "CPU":
                        n, init = self.inter_op_threads, None
                    else:  # a GPU's host-side work is launches: one thread keeps its stream order simple
                        n = 1
                        init = _cuda_init(device.cuda_id) if getattr(device, "cuda_id", None) is not None else None
                    pool = WorkerPool(device.short_name.replace(":", "_"), n, init)
                    self._pools[device.name] = pool
        return pool

    @property
    def pools(self) -> dict:
        return dict(self._pools)

    def queue_depth(self) -> int:
        return sum(p.queue_depth for p in list(self._pools.values()))

    def shutdown(self) -> None:
        for p in self._pools.values():
            p.shutdown()
        self._pools.clear()


def pools_for_session(config) -> tuple:
    """(PoolSet, owned) for a session with `config`: the shared set, or its own with use_per_session_threads."""
    global _SHARED
    inter = int(getattr(config, "inter_op_parallelism_threads", 0) or 0)
    if getattr(config, "use_per_session_threads", False):
        return PoolSet(inter, owner="session"), True
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = PoolSet(inter)
        return _SHARED, False


def shared_pools() -> Optional[PoolSet]:
    return _SHARED


def all_queue_depth() -> int:
    return _SHARED.queue_depth() if _SHARED is not None else 0


#: environment variables through which a user sets BLAS threads; any of them set means "leave BLAS alone"
BLAS_THREAD_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
#: set by a launcher (e.g. the local runner) to the number of training processes it starts on this machine
PROCESSES_ENV = "TENSORFLEET_PROCESSES_PER_HOST"
_BLAS_DEFAULT_APPLIED: Optional[int] = None


def shared_machine_blas_threads(environ=None) -> Optional[int]:
    """BLAS threads for a process that shares its machine with other training processes, else None.

    Two-thread BLAS collapses to a tenth of its speed when another process keeps
    the other core busy, so a process that is one of several defaults to
    cpu_count // processes (at least 1) BLAS threads. "One of several": the
    launcher says how many run here (TENSORFLEET_PROCESSES_PER_HOST), or
    TF_CONFIG describes a cluster of more than one task (co-location unknown:
    1 thread). A user's own BLAS thread variable, or a ConfigProto's
    intra_op_parallelism_threads, always wins.
    """
    env = os.environ if environ is None else environ
    if any(env.get(v) for v in BLAS_THREAD_ENV):
        return None
    procs = env.get(PROCESSES_ENV)
    if procs:
        try:
            n = int(procs)
        except ValueError:
            raise ValueError(f"{PROCESSES_ENV} must be an integer, got {procs!r}") from None
        return max(1, (os.cpu_count() or 1) // n) if n > 1 else None
    tf_config = env.get("TF_CONFIG")
    if tf_config:
        try:
            cluster = json.loads(tf_config).get("cluster") or {}
            tasks = sum(len(v) for v in cluster.values() if isinstance(v, (list, dict)))
        except (ValueError, AttributeError):
            return None  # a malformed TF_CONFIG is reported by the code that uses it
        return 1 if tasks > 1 else None
    return None


def apply_shared_machine_blas_default() -> Optional[int]:
    """Applies `shared_machine_blas_threads()` once per process (the BLAS pool is process-wide)."""
    global _BLAS_DEFAULT_APPLIED
    if _BLAS_DEFAULT_APPLIED is None:
        n = shared_machine_blas_threads()
        _BLAS_DEFAULT_APPLIED = n or 0
        if n:
            from threadpoolctl import threadpool_limits  # late: only processes that limit BLAS threads load it

            threadpool_limits(limits=n, user_api="blas")
    return _BLAS_DEFAULT_APPLIED or None


class IntraOpThreads:
    """Applies `intra_op_parallelism_threads` to BLAS via threadpoolctl; `restore()` undoes it.

    With the default (0), a process that shares its machine with other training
    processes gets `shared_machine_blas_threads()` instead (applied once, kept).
    """

    def __init__(self, num_threads: int):
        self.num_threads = num_threads
        self._limiter = None
        if num_threads > 0:
            from threadpoolctl import threadpool_limits  # late: only processes that limit BLAS threads load it

            self._limiter = threadpool_limits(limits=num_threads, user_api="blas")
        else:
            apply_shared_machine_blas_default()

    def restore(self) -> None:
        if self._limiter is not None:
            self._limiter.restore_original_limits()
            self._limiter = None
