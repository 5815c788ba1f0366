"""`tf.ConfigProto`, `tf.GPUOptions` as plain Python records; `tf.RunOptions`, `tf.RunMetadata` are TF's protos
(`run_metadata.py`, re-exported here).

Sits beside `session`: a `Session(config=...)` reads it once at creation to pick
its devices (`devices`), placement rules (`placement`), thread pools and
BLAS threads (`executor`) and GPU memory policy (`kernels.gpu_memory`).
Field names and defaults are TF 1.15's; unknown fields raise ValueError like a
protobuf message does.

GPU memory default (documented, differs from TF on purpose): TF reserves almost
all GPU memory when a session starts. Tensorfleet's default is TF's
`allow_growth=True` behaviour: cupy's pool grows on demand, up to the whole
device. `per_process_gpu_memory_fraction=f` caps the pool at f x device memory
(a request over the cap raises ResourceExhaustedError naming the op, the size
and the cap); with an explicit `allow_growth=False` the capped amount is
reserved up front, like TF.

Test-only / experimental fields live in `ConfigProto.Experimental`:
`simulated_devices` (a list of device names, e.g. ["/cpu:0", "/gpu:0", "/gpu:1"],
or `devices.SimulatedDevice` records): the session uses exactly these devices
instead of discovering hardware; simulated GPUs compute with numpy, so the GPU
placement, copy-node and memory-accounting paths run on CPU-only CI.
`cuda_graph_replay`: replay a whole `Session.run` as a CUDA graph when every
node of the run is on one (real) GPU.
"""
from __future__ import annotations

from .run_metadata import RunMetadata, RunOptions  # noqa: F401  (tf.RunOptions, tf.RunMetadata)

__all__ = ["ConfigProto", "GPUOptions", "RunOptions", "RunMetadata", "GraphOptions", "OptimizerOptions"]


class _Message:
    """A protobuf-like record: keyword fields with defaults, unknown fields rejected."""

    _FIELDS: dict = {}

    def __init__(self, **kwargs):
        for name, default in self._FIELDS.items():
            object.__setattr__(self, name, _fresh(default))
        for name, value in kwargs.items():
            setattr(self, name, value)

    def __setattr__(self, name, value):
        if name not in self._FIELDS:
            raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        conv = self._CONVERT.get(name) if hasattr(self, "_CONVERT") else None
        object.__setattr__(self, name, conv(value) if conv and value is not None else value)

    def __eq__(self, other):
        return type(self) is type(other) and all(getattr(self, f) == getattr(other, f) for f in self._FIELDS)

    def __repr__(self):
        set_fields = [f"{k}={getattr(self, k)!r}" for k, d in self._FIELDS.items() if getattr(self, k) != d]
        return f"{type(self).__name__}({', '.join(set_fields)})"

    def CopyFrom(self, other) -> None:  # noqa: N802  (protobuf name)
        for f in self._FIELDS:
            object.__setattr__(self, f, getattr(other, f))


def _fresh(default):
    if isinstance(default, type):
        return default()
    if isinstance(default, (list, dict)):
        return type(default)(default)
    return default


class GPUOptions(_Message):
    """`tf.GPUOptions`: memory policy and visible GPUs (see the module docstring for the default)."""

    _FIELDS = {
        "per_process_gpu_memory_fraction": 0.0,
        "allow_growth": None,  # None = not set: grow on demand (Tensorfleet's documented default)
        "allocator_type": "",
        "deferred_deletion_bytes": 0,
        "visible_device_list": "",
        "polling_active_delay_usecs": 0,
        "polling_inactive_delay_msecs": 0,
        "force_gpu_compatible": False,
    }
    _CONVERT = {"per_process_gpu_memory_fraction": float, "visible_device_list": str}


class OptimizerOptions(_Message):
    _FIELDS = {"do_common_subexpression_elimination": False, "do_constant_folding": False,
               "opt_level": 0, "global_jit_level": 0}


class GraphOptions(_Message):
    _FIELDS = {"optimizer_options": OptimizerOptions, "build_cost_model": 0, "infer_shapes": False,
               "place_pruned_graph": False, "enable_bfloat16_sendrecv": False, "timeline_step": 0,
               "rewrite_options": None}


class _Experimental(_Message):
    _FIELDS = {"simulated_devices": None, "cuda_graph_replay": False, "collective_group_leader": "",
               "executor_type": ""}


class ConfigProto(_Message):
    """`tf.ConfigProto`: devices, placement and threading of a session."""

    Experimental = _Experimental

    _FIELDS = {
        "device_count": dict,  # e.g. {"GPU": 0} hides every GPU
        "intra_op_parallelism_threads": 0,
        "inter_op_parallelism_threads": 0,
        "use_per_session_threads": False,
        "session_inter_op_thread_pool": list,
        "placement_period": 0,
        "device_filters": list,
        "gpu_options": GPUOptions,
        "allow_soft_placement": False,
        "log_device_placement": False,
        "graph_options": GraphOptions,
        "operation_timeout_in_ms": 0,
        "rpc_options": None,
        "cluster_def": None,
        "isolate_session_state": False,
        "experimental": _Experimental,
    }
    _CONVERT = {"device_count": dict, "intra_op_parallelism_threads": int, "inter_op_parallelism_threads": int,
                "allow_soft_placement": bool, "log_device_placement": bool, "use_per_session_threads": bool}
