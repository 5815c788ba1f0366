"""Tensorfleet operator: reconciles TFJob custom resources into pods and services.

Two layers. The pure core (``tensorfleet_operator.core``: api, spec, children,
observe, entries, conditions, plan, crd) decides; it does no I/O and imports
no kopf, aiohttp or prometheus, so a local runner can use it without the shell.
The shell does the I/O: ``handlers.py`` (the only kopf import: watches, login,
peering daemon) triggers ``controller.py`` (per-job queue, timers, backoff,
peering pause/resume), which reads a job and its children through
``kubeclient.py``, calls ``core.plan.reconcile`` and hands the plan to
``apply.py`` (plan -> API calls); ``metrics.py`` counts, ``config.py`` is the
edge to the environment, ``__main__.py`` the CLI.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version('tensorfleet')
except _metadata.PackageNotFoundError:     # run from a source tree that is not installed
    __version__ = '0.1.0+source'
