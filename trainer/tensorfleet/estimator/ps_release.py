"""End of a distributed `train_and_evaluate`: the chief releases the cluster.

TF 1.15 leaves ps tasks in `server.join()` forever (the TFJob's success policy ends them); here a
finished job leaves no ps running. The library's chief-end release (`distributed/shutdown.py`) does
it: when the chief's `MonitoredTrainingSession` closes after its last step it tells the other
workers that training finished (their sessions end cleanly: the global step is at `max_steps`) and
then stops every ps, whose `server.join()` returns. `release_ps_tasks` calls the same idempotent
release after `Estimator.train` returns, for a chief whose training ended without closing a
session normally (e.g. `max_steps` already reached at start-up).
"""
from __future__ import annotations

from ..distributed import shutdown

__all__: list = []


def release_ps_tasks(server, config) -> list:
    """The chief after its final checkpoint: release the cluster (idempotent). Returns the tasks that could not
    be told (already gone)."""
    if server is None or not config.cluster_spec or config.num_ps_replicas == 0:
        return []
    return shutdown.release_cluster(server)
