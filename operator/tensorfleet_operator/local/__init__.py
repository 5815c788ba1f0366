"""Local mode: run a TFJob manifest on one machine, no cluster (the ``tensorfleet`` CLI).

Flow: ``cli.py`` parses the command; ``manifest.py`` loads and validates the
TFJob and renders what the operator would create; ``runner.py`` runs the job:
the operator's own pure core (reached only through ``operator_core.py``)
decides the desired pods and the lifecycle, ``kubelet.py`` plays the node (a
local process per pod, restarts in place, pod-like status dicts), ``placement.py``
rewrites addresses to 127.0.0.1 ports and partitions GPUs, ``console.py`` shows
output and the live table, ``rundir.py`` keeps logs and status for
``tensorfleet status`` and ``tensorfleet logs``.
"""
