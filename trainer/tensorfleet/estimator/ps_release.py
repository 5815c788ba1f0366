"""End of a distributed `train_and_evaluate`: the chief releases the ps tasks once the workers are done.

TF 1.15 leaves ps tasks in `server.join()` forever (the TFJob's success policy ends them); here a
finished job must leave no ps running. Each non-chief worker, after its last step, puts a token
into a `FIFOQueue` that lives on ps task 0 (a resource created on first use: no variable to
initialise, nothing in the checkpoint). The chief, after its final checkpoint, polls the queue's
size (never a blocking dequeue, which would hold the ps) until every other worker has put one,
for at most `TENSORFLEET_PS_RELEASE_TIMEOUT` seconds (default 300: workers start up to 60 s late,
as TF delays them), then tells every ps task to stop serving (`Master.shutdown_tasks("ps")`), so
their `server.join()` returns. `release_ps_tasks` is the one function to replace when the
library's chief-end release lands in the training loop.
"""
from __future__ import annotations

import os
import time

from .. import dtypes as _dtypes
from .. import errors
from .. import tf_logging as logging
from ..config import ConfigProto, RunOptions
from ..graph import Graph
from ..ops.data_flow_ops import FIFOQueue
from ..session import Session

__all__: list = []

QUEUE_NAME = "tensorfleet_estimator_workers_done"
DEFAULT_RELEASE_TIMEOUT = 300.0
QUEUE_CAPACITY = 100000    # tokens are never taken out: a restarted worker's second token must not block
POLL_SECONDS = 0.5


def _queue_ops(config):
    g = Graph()
    with g.as_default(), g.device("/job:ps/task:0"):
        q = FIFOQueue(QUEUE_CAPACITY, [_dtypes.int32], shapes=[[]], shared_name=QUEUE_NAME, name=QUEUE_NAME)
        return g, q.enqueue([config.global_id_in_cluster or 0]), q.size()


def _session_config(config):
    return ConfigProto(device_filters=["/job:ps/task:0", f"/job:{config.task_type}/task:{config.task_id}"])


def worker_done(server, config) -> None:
    """A non-chief worker after its last step: count itself on ps 0 (best effort: a gone ps is not an error)."""
    if server is None or not config.cluster_spec or config.num_ps_replicas == 0:
        return
    g, enqueue, _ = _queue_ops(config)
    try:
        with Session(server.target, graph=g, config=_session_config(config)) as sess:
            sess.run(enqueue, options=RunOptions(timeout_in_ms=30000))
    except errors.OpError as e:
        logging.warning("Could not tell the chief that this worker finished: %s", e)


def release_ps_tasks(server, config, timeout=None) -> list:
    """The chief after its final checkpoint: wait (bounded) for every other worker's token, then shut the ps
    tasks down. Returns the ps tasks that could not be told (already gone)."""
    if server is None or not config.cluster_spec or config.num_ps_replicas == 0:
        return []
    if timeout is None:
        timeout = float(os.environ.get("TENSORFLEET_PS_RELEASE_TIMEOUT", DEFAULT_RELEASE_TIMEOUT))
    others = config.num_worker_replicas - 1
    g, _, size = _queue_ops(config)
    deadline = time.monotonic() + timeout
    done = 0
    try:
        with Session(server.target, graph=g, config=_session_config(config)) as sess:
            while True:
                done = int(sess.run(size, options=RunOptions(timeout_in_ms=30000)))
                if done >= others or time.monotonic() >= deadline:
                    break
                time.sleep(POLL_SECONDS)
    except errors.OpError as e:
        logging.warning("Waiting for the workers to finish failed: %s", e)
    logging.info("%d of %d other worker(s) finished; releasing the ps tasks", done, others)
    master = getattr(server, "master", None)
    if master is None or not hasattr(master, "shutdown_tasks"):
        logging.warning("This server cannot shut the ps tasks down; they keep serving")
        return []
    failed = master.shutdown_tasks("ps", "training finished", 0)
    if failed:
        logging.warning("Could not reach ps task(s) %s to release them (already gone?)", ", ".join(failed))
    return failed
