"""Tensorfleet operator: reconciles TFJob custom resources into pods and services.

Flow: ``handlers.py`` (kopf, the only I/O besides ``kubeclient.py``) reads a
TFJob and its children and calls the pure core ``plan.reconcile``, which uses
``spec.py`` (defaulting, validation), ``children.py`` (pods, services,
TF_CONFIG), ``status.py`` and ``conditions.py`` (status from observed pods).
``api.py`` holds every name and default; ``crd.py`` renders the CRD from it.
The pure core is meant to be reused by a later local (no-cluster) runner.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version('tensorfleet')
except _metadata.PackageNotFoundError:     # run from a source tree that is not installed
    __version__ = '0.1.0+source'
