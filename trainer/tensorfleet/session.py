"""`Session`: feeds in, fetches out, over an executor plan cached per signature.

Flow: at creation a session reads its `ConfigProto` once: its devices
(`devices.local_devices`, or `config.experimental.simulated_devices` in tests),
a `placement.Placer` that remembers every node's device for the session's life,
the inter-op pools (`thread_pools`: shared, or per session with
`use_per_session_threads`) and intra-op BLAS threads. `run()` flattens the
(nested) fetches and the feed_dict into graph elements, validates fed values
against their tensors' dtype and static shape, gets or builds the
`ExecutionPlan` for that signature (placed, with copy nodes), runs it, and
rebuilds the fetch structure with numpy values. Variable values live in the
session's `ResourceStore`, so two sessions on one graph have independent variables.
"""
from __future__ import annotations

import threading
from typing import Optional

import numpy as np

from . import dtypes as _dtypes
from . import errors
from .config import ConfigProto
from .run_metadata import fill_partition_graphs, fill_step_stats, trace_requested
from .devices import local_devices
from .graph import Graph, Operation, Tensor, _default_session_stack
from .indexed_slices import IndexedSlices, IndexedSlicesValue
from .default_graph import get_default_graph
from .kernels import ResourceStore, fp_state, queue_kernels
from .kernels.backend import to_host
from .executor import ExecutionPlan
from .placement import Placer, log_placement
from .executor.thread_pools import IntraOpThreads, pools_for_session


def _flatten_leaves(x) -> list:
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _flatten_leaves(item)]
    return [x]


def _flatten_tuple_feeds(feed_dict) -> dict:
    """TF's nest.flatten_dict_items: a (nested) tuple key, e.g. an RNN's LSTMStateTuple, feeds each of its tensors
    from the value of the same structure."""
    flat: dict = {}
    for key, value in feed_dict.items():
        keys, values = (_flatten_leaves(key), _flatten_leaves(value)) if isinstance(key, tuple) else ([key], [value])
        if len(keys) != len(values):
            raise ValueError(f"Could not flatten dictionary. Key had {len(keys)} elements, but value had "
                             f"{len(values)} elements. Key: {keys}, value: {values}.")
        for k, v in zip(keys, values):
            if k in flat:
                raise ValueError(f"Could not flatten dictionary: key {k} is not unique.")
            flat[k] = v
    return flat


class _FetchMapper:
    """Flattens nested fetches (lists, tuples, namedtuples, dicts) and rebuilds results."""

    def __init__(self, graph: Graph, fetches):
        self.elements: list = []
        self._structure = self._flatten(graph, fetches)

    def _flatten(self, graph, f):
        if isinstance(f, (list, tuple)) and not hasattr(f, "_as_graph_element"):
            return (type(f), [self._flatten(graph, x) for x in f])
        if isinstance(f, dict):
            return (dict, type(f), [(k, self._flatten(graph, v)) for k, v in f.items()])
        if f is None:
            raise TypeError(f"Fetch argument None has invalid type {type(None)}")
        if isinstance(f, IndexedSlices):  # -> IndexedSlicesValue(values, indices, dense_shape)
            parts = [f.values, f.indices] + ([f.dense_shape] if f.dense_shape is not None else [])
            return ("slices", [self._flatten(graph, p) for p in parts])
        try:
            el = graph.as_graph_element(f, allow_tensor=True, allow_operation=True)
        except TypeError as e:
            raise TypeError(f"Fetch argument {f!r} has invalid type {type(f)}, must be a string or Tensor. ({e})") \
                from None
        except (KeyError, ValueError) as e:
            raise ValueError(f"Fetch argument {f!r} cannot be interpreted as a Tensor. ({e})") from None
        self.elements.append(el)
        return len(self.elements) - 1

    def build(self, values: list):
        return self._build(self._structure, values)

    def _build(self, s, values):
        if isinstance(s, int):
            return values[s]
        if s[0] is dict:
            return s[1]((k, self._build(v, values)) for k, v in s[2])
        if s[0] == "slices":
            parts = [self._build(x, values) for x in s[1]]
            return IndexedSlicesValue(parts[0], parts[1], parts[2] if len(parts) == 3 else None)
        typ, items = s
        built = [self._build(x, values) for x in items]
        if typ is list:
            return built
        if typ is tuple:
            return tuple(built)
        return typ(*built) if hasattr(typ, "_fields") else typ(built)


def _fetch_value(v):
    if v is None:
        return None
    v = to_host(v)
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return v[()]
        if not v.flags.writeable:  # variables and constants are stored read-only: hand out a copy
            return v.copy()
    return v


def _shape_fits(dims, shape) -> bool:
    """A fed array's shape against a tensor's static dims (None: unknown rank / dimension)."""
    if dims is None:
        return True
    if len(dims) != len(shape):
        return False
    for d, n in zip(dims, shape):
        if d is not None and d != n:
            return False
    return True


def _convert_string_feed(t: Tensor, value):
    """A tf.string feed: an object array of bytes (str encoded as UTF-8); TypeError for non-strings."""
    try:
        arr = _dtypes.string_array(value)
    except TypeError as e:
        raise TypeError(f"Cannot feed value {value!r:.80} for Tensor '{t.name}', which has dtype string: {e}") \
            from None
    if not _shape_fits(t.shape.as_tuple(), arr.shape):
        raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor '{t.name}', which has shape "
                         f"'{t.shape}'")
    return arr


def _convert_feed(t: Tensor, value):
    npd = t.dtype.np_dtype
    if value.__class__ is np.ndarray and value.dtype == npd and npd.kind != "O":  # the common case: nothing to convert
        if not _shape_fits(t._shape.as_tuple(), value.shape):
            raise ValueError(f"Cannot feed value of shape {value.shape} for Tensor '{t.name}', which has shape "
                             f"'{t.shape}'")
        return value
    if isinstance(value, (Tensor, Operation)):
        raise TypeError(f"The value of a feed cannot be a tf.Tensor object. Acceptable feed values include "
                        f"Python scalars, strings, lists, numpy ndarrays, or TensorHandles. "
                        f"For reference, the tensor object was {value!r} which was passed to the feed with key "
                        f"{t!r}.")
    if npd.kind == "O":
        return _convert_string_feed(t, value)
    try:
        raw = np.asarray(value)
        arr = raw.astype(npd, copy=False) if raw.dtype != npd else raw
    except OverflowError:  # a Python int beyond int64/uint64
        raise _unrepresentable(t, value, raw) from None
    except (TypeError, ValueError) as e:
        raise TypeError(f"Cannot feed value {value!r:.80} of type {type(value).__name__} for Tensor '{t.name}', "
                        f"which has dtype {t.dtype.name} and shape '{t.shape}': {e}") from None
    if npd.kind in "iub" and raw.dtype != npd and raw.size and not np.array_equal(raw, arr):
        # a fractional float, or an int that does not fit (numpy would truncate or wrap silently)
        raise _unrepresentable(t, value, raw)
    if not _shape_fits(t.shape.as_tuple(), arr.shape):
        raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor '{t.name}', which has shape "
                         f"'{t.shape}'")
    return arr


class FeedValueError(errors.InvalidArgumentError, TypeError):
    """A fed value its tensor's dtype cannot represent: tf.errors.InvalidArgumentError naming the fed tensor
    (and its op), and a TypeError as this check raised before."""


def _unrepresentable(t: Tensor, value, raw) -> FeedValueError:
    shown = f"{value!r:.80}" if raw.ndim == 0 else f"of dtype {raw.dtype} and shape {raw.shape}"
    return FeedValueError(None, t.op, f"Cannot feed value {shown} for Tensor '{t.name}', which has dtype "
                                      f"{t.dtype.name} and shape '{t.shape}': the values are not representable as "
                                      f"{t.dtype.name}")


#: scheme ("grpc") -> factory with create(target, graph, config) -> backend and reset(target, containers, config).
#: The distributed layer registers "grpc" when tensorfleet is imported; session never imports it.
_SESSION_FACTORIES: dict = {}


def register_session_factory(scheme: str, factory) -> None:
    """Lets a higher layer serve `Session("<scheme>://...")`: the backend's run(fetch tensors, feed tensors,
    feed values, target ops, timeout_ms[, step_stats=a StepStats to trace into]) returns the fetched values;
    list_devices() and close() too."""
    _SESSION_FACTORIES[scheme] = factory


def _factory_for(target: str):
    scheme = target.split("://", 1)[0] if "://" in target else ""
    factory = _SESSION_FACTORIES.get(scheme)
    if factory is None:
        raise errors.UnimplementedError(None, None, f"Session target {target!r} needs the distributed runtime")
    return factory


class _RemoteDevice:
    """A device of a remote session, as list_devices() reports it (TF's _DeviceAttributes)."""

    def __init__(self, name, device_type, memory_limit_bytes):
        self.name, self.device_type, self.memory_limit_bytes = name, device_type, memory_limit_bytes

    def __repr__(self):
        return f"_DeviceAttributes({self.name}, {self.device_type}, {self.memory_limit_bytes})"


class BaseSession:
    """Common machinery of `Session` and `InteractiveSession`."""

    def __init__(self, target: str = "", graph: Optional[Graph] = None, config=None):
        self._graph = graph or get_default_graph()
        self._target = target
        self._closed = False
        self._plans: dict = {}
        self._accepted_feeds: set = set()  # (tensor, shape, dtype) of ndarray feeds passed as is
        self._plans_lock = threading.Lock()
        self._default_ctx = None
        self._pools = None
        self._owns_pools = False
        self._intra = None
        self._remote = None
        if config is not None and not isinstance(config, ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
        if target:
            self._config = config if config is not None else ConfigProto()
            self._resources = ResourceStore()  # unused by the remote run; keeps per-session hooks uniform
            self._remote = _factory_for(target).create(target, self._graph, self._config)
            return
        self._config = config = config if config is not None else ConfigProto()
        self._resources = ResourceStore()
        self._devices = local_devices(config)
        self._host = next(d for d in self._devices if d.device_type == "CPU" and d.spec.job == "localhost"
                          and d.spec.task == 0)
        self._placer = Placer(self._graph, self._devices, allow_soft_placement=config.allow_soft_placement,
                              log_device_placement=config.log_device_placement)
        self._logged_copies: set = set()
        self._inter_op_threads = config.inter_op_parallelism_threads
        self._timeout_ms = config.operation_timeout_in_ms or 0
        if self._inter_op_threads >= 0 and self._inter_op_threads != 1:
            self._pools, self._owns_pools = pools_for_session(config)
        self._intra = IntraOpThreads(config.intra_op_parallelism_threads)

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def graph_def(self):
        """The session's graph as a GraphDef (`Graph.as_graph_def`, installed by graph_io)."""
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return self._target

    def list_devices(self):
        """This session's devices: objects with .name, .device_type, .memory_limit_bytes (TF's _DeviceAttributes)."""
        if self._remote is not None:
            return [_RemoteDevice(*d) for d in self._remote.list_devices()]
        return list(self._devices)

    @property
    def placer(self) -> Placer:
        return self._placer

    def device_placement(self) -> dict:
        """{op name: device name} of every node placed so far in this session."""
        return {op.name: dev.name for op, dev in self._placer.assigned.items()}

    # -- running --------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops needed for `fetches` and returns their values in the same structure."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        feed_tensors, feed_values = self._feeds(feed_dict)
        cls = fetches.__class__
        if cls is Tensor and fetches._op._graph is self._graph:  # a single fetch: no structure to map
            mapper, fetch_tensors, targets, index = None, (fetches,), (), (0,)
        elif cls is Operation and fetches._graph is self._graph:
            mapper, fetch_tensors, targets, index = None, (), (fetches,), (None,)
        else:
            mapper = _FetchMapper(self._graph, fetches)
            fetch_tensors, targets, index = [], [], []
            for el in mapper.elements:
                if isinstance(el, Tensor):
                    index.append(len(fetch_tensors))
                    fetch_tensors.append(el)
                else:
                    index.append(None)
                    targets.append(el)
            fetch_tensors, targets = tuple(fetch_tensors), tuple(targets)
        if self._remote is not None:
            timeout_ms = getattr(options, "timeout_in_ms", 0) or 0
            if options is not None and trace_requested(options, run_metadata):  # every task's stats, merged
                results = self._remote.run(fetch_tensors, feed_tensors, feed_values, targets, timeout_ms,
                                           step_stats=run_metadata.step_stats)
            else:
                results = self._remote.run(fetch_tensors, feed_tensors, feed_values, targets, timeout_ms)
            if mapper is None:
                return None if index[0] is None else _fetch_value(results[0])
            return mapper.build([None if i is None else _fetch_value(results[i]) for i in index])
        plan = self._plan(fetch_tensors, tuple(feed_tensors), targets)
        trace = [] if options is not None and trace_requested(options, run_metadata) else None
        fp_token = fp_state.enter()  # as TF's kernels: NaN/Inf silent, denormals flushed to zero
        try:
            timeout_ms = (getattr(options, "timeout_in_ms", 0) if options is not None else 0) or self._timeout_ms
            if timeout_ms > 0:
                with queue_kernels.run_deadline(timeout_ms):  # blocking kernels (queues) honour it
                    results = plan.run(feed_values, trace)
            else:
                results = plan.run(feed_values, trace)
        finally:
            fp_state.exit(fp_token)
        if run_metadata is not None and options is not None:
            if trace is not None:
                fill_step_stats(run_metadata.step_stats, trace)
            if getattr(options, "output_partition_graphs", False):
                fill_partition_graphs(run_metadata, plan.plan)
        if mapper is None:
            return None if index[0] is None else _fetch_value(results[0])
        values = [None if i is None else _fetch_value(results[i]) for i in index]
        return mapper.build(values)

    def _feeds(self, feed_dict):
        if not feed_dict:
            return [], []
        if any(isinstance(k, tuple) for k in feed_dict):
            feed_dict = _flatten_tuple_feeds(feed_dict)
        tensors, values = [], []
        graph = self._graph
        accepted = self._accepted_feeds
        for key, value in feed_dict.items():
            if key.__class__ is Tensor and key._op._graph is graph:
                t = key
            else:
                try:
                    t = graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
                except (TypeError, ValueError, KeyError) as e:
                    raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e}") from None
            tensors.append(t)
            if value.__class__ is np.ndarray and (t, value.shape, value.dtype) in accepted:
                values.append(value)  # an array like one checked before: nothing to convert or check
                continue
            v = _convert_feed(t, value)
            if v is value and len(accepted) < 4096:
                accepted.add((t, value.shape, value.dtype))
            values.append(v)
        return tensors, values

    def _plan(self, fetches, feeds, targets) -> ExecutionPlan:
        key = (fetches, feeds, targets)
        plan = self._plans.get(key)
        if plan is None:
            with self._plans_lock:
                plan = self._plans.get(key)
                if plan is None:
                    plan = self._build_plan(fetches, feeds, targets)
                    self._plans[key] = plan
        return plan

    def _build_plan(self, fetches, feeds, targets) -> ExecutionPlan:
        plan = ExecutionPlan(fetches, feeds, targets, self._resources, self._placer.place, host_device=self._host,
                             pools=self._pools, inter_op_threads=self._inter_op_threads, on_copy=self._on_copy)
        if self._config.experimental.cuda_graph_replay:
            from .executor.cuda_graph import CudaGraphReplay  # late: only sessions that ask for replay load it

            plan.replay = CudaGraphReplay.for_plan(plan, self._resources)
        return plan

    def _on_copy(self, node) -> None:
        if self._config.log_device_placement and node.name not in self._logged_copies:
            self._logged_copies.add(node.name)
            log_placement(node.name, node.type, node.device)

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """Returns f(*feed_values) equivalent to run(fetches, dict(zip(feed_list, feed_values)))."""
        feed_list = list(feed_list or [])

        def call(*args, **kwargs):
            return self.run(fetches, dict(zip(feed_list, args)))

        return call

    # -- lifecycle ------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        queue_kernels.cancel_blocked(self._resources)  # a dequeue blocked in another thread fails, not hangs
        self._plans.clear()
        for hook in self._resources.__dict__.pop("_close_hooks", ()):  # e.g. tf.data iterators' threads
            hook()
        if self._remote is not None:
            self._remote.close()
        if self._owns_pools and self._pools is not None:
            self._pools.shutdown()
        if self._intra is not None:
            self._intra.restore()

    def as_default(self):
        return _SessionDefault(self)

    def __enter__(self):
        self._default_ctx = _SessionDefault(self)
        self._default_ctx.__enter__()
        self._graph_ctx = self._graph.as_default()
        self._graph_ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._graph_ctx.__exit__(*exc)
        self._default_ctx.__exit__(*exc)
        self.close()
        return False


class _SessionDefault:
    def __init__(self, session):
        self._session = session

    def __enter__(self):
        _default_session_stack.append(self._session)
        return self._session

    def __exit__(self, *exc):
        if _default_session_stack and _default_session_stack[-1] is self._session:
            _default_session_stack.pop()
        return False


class Session(BaseSession):
    """`tf.Session(target='', graph=None, config=None)`."""

    @staticmethod
    def reset(target, containers=None, config=None) -> None:
        """Clears the variables (resource containers) on every task of the cluster `target` belongs to."""
        _factory_for(target).reset(target, containers, config)


class InteractiveSession(BaseSession):
    """A session that installs itself as the default session on creation (for shells and notebooks)."""

    def __init__(self, target: str = "", graph: Optional[Graph] = None, config=None):
        super().__init__(target, graph, config)
        _default_session_stack.append(self)

    def close(self) -> None:
        if self in _default_session_stack:
            _default_session_stack.remove(self)
        super().close()
