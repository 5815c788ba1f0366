"""Helpers shared by the launcher's tests: the repository root, free 127.0.0.1 ports and the TF_CONFIG of
one task. Test modules import from here, never from `conftest` (several test directories have one)."""
import os

from loopback_ports import free_ports  # noqa: F401 (re-exported: the test modules import it from here)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))



def tf_config(cluster, job, index):
    """TF_CONFIG for task `job`:`index` of `cluster`, as the operator writes it."""
    return {"cluster": cluster, "task": {"type": job, "index": index}, "environment": "cloud"}
