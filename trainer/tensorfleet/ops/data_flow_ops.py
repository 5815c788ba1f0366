"""Queues: `tf.FIFOQueue`, `tf.RandomShuffleQueue`, `tf.PaddingFIFOQueue` (accumulators: `accumulator_ops.py`).

Op definitions with their Python wrappers (kernels: `kernels/queue_kernels.py`).
A queue is a stateful handle op (`QueueHandle`) whose kernel creates the queue
in the session's resources; every queue op takes the handle as input (so the
placer colocates it with the queue, e.g. on a ps) and names the queue in its
`resource_name` attr. Blocking ops (enqueue on a full queue, dequeue on an
empty one) honour `RunOptions(timeout_in_ms=...)` and are cancelled
when the session closes.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import convert_to_tensor, get_default_graph
from ..tensor_shape import TensorShape, as_shape, unknown_shape
from .accumulator_ops import ConditionalAccumulator, ConditionalAccumulatorBase, SparseConditionalAccumulator  # noqa: F401
from .common import NotDifferentiable, make_op, register_op, static_value

__all__ = ["QueueBase", "FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue", "ConditionalAccumulator",
           "ConditionalAccumulatorBase", "SparseConditionalAccumulator"]

_SCALAR_INT = [(_dtypes.int32, TensorShape([]))]


def _component_shapes(op, batch=None):
    shapes = op.get_attr("shapes")
    dts = op.get_attr("component_types")
    out = []
    for i, dt in enumerate(dts):
        s = shapes[i] if shapes else None
        base = unknown_shape() if s is None else TensorShape([None if d in (-1, None) else d for d in s])
        if op.get_attr("kind") == "padding" and s is not None:
            base = unknown_shape(len(s))
        if batch is not False:
            base = TensorShape([batch]).concatenate(base) if base.ndims is not None else unknown_shape()
        out.append((dt, base))
    return out


def _many_shape(op):
    v = static_value(op.inputs[1])
    batch = int(v) if v is not None and op.type == "QueueDequeueMany" else None
    return _component_shapes(op, batch)


register_op("QueueHandle", lambda op: _SCALAR_INT, stateful=True)
register_op("QueueEnqueue", lambda op: [], stateful=True)
register_op("QueueEnqueueMany", lambda op: [], stateful=True)
register_op("QueueDequeue", lambda op: _component_shapes(op, False), stateful=True)
register_op("QueueDequeueMany", _many_shape, stateful=True)
register_op("QueueDequeueUpTo", _many_shape, stateful=True)
register_op("QueueClose", lambda op: [], stateful=True)
register_op("QueueSize", lambda op: _SCALAR_INT, stateful=True)
register_op("QueueIsClosed", lambda op: [(_dtypes.bool_, TensorShape([]))], stateful=True)
for _t in ("QueueHandle", "QueueEnqueue", "QueueEnqueueMany", "QueueDequeue", "QueueDequeueMany", "QueueDequeueUpTo",
           "QueueClose", "QueueSize", "QueueIsClosed"):
    NotDifferentiable(_t)


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _shape_list(shapes) -> list:
    """TF's rule: a TensorShape, or a list of ints/None (`[]` included: a scalar), is one component's shape;
    otherwise one shape per component."""
    if isinstance(shapes, TensorShape):
        return [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError(f"shapes must be a TensorShape or a list or tuple of shapes, got {shapes!r}")
    if all(d is None or isinstance(d, int) for d in shapes):
        shapes = [shapes]
    return [as_shape(s) for s in shapes]


class QueueBase:
    """What every queue shares: enqueue/dequeue ops on one queue resource (TF's `tf.queue.QueueBase`)."""

    _kind = "fifo"

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue", **extra):
        if names is not None:
            raise NotImplementedError("queues with named components (names=...) are not supported")
        self._dtypes = [_dtypes.as_dtype(d) for d in _as_list(dtypes)]
        if shapes is not None:
            shapes = _shape_list(shapes)
            if len(shapes) != len(self._dtypes):
                raise ValueError(f"Queue shapes must have the same length as dtypes ({len(shapes)} vs "
                                 f"{len(self._dtypes)})")
        self._shapes = shapes
        g = get_default_graph()
        self._attrs = {"kind": self._kind, "capacity": int(capacity), "component_types": self._dtypes,
                       "shapes": None if shapes is None else [tuple(s.as_list()) if s.ndims is not None else None
                                                              for s in shapes]}
        if self._attrs["shapes"] is not None and any(s is None for s in self._attrs["shapes"]):
            self._attrs["shapes"] = None
        self._attrs.update(extra)
        op = make_op("QueueHandle", [], dict(self._attrs), name=name)
        self._attrs["resource_name"] = shared_name or op.name
        op._attrs["resource_name"] = self._attrs["resource_name"]
        self._queue_ref = op.outputs[0]
        self._name = op.name
        self._graph = g

    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtypes(self):
        return list(self._dtypes)

    @property
    def shapes(self):
        return list(self._shapes) if self._shapes is not None else [unknown_shape() for _ in self._dtypes]

    def _op(self, op_type, inputs=(), name=None):
        with self._graph.colocate_with(self._queue_ref.op):
            return make_op(op_type, [self._queue_ref] + list(inputs), dict(self._attrs), name=name,
                           default_name=f"{self._name}_{op_type}")

    def _components(self, vals):
        if isinstance(vals, dict):
            raise NotImplementedError("enqueue of a dict needs names=, which is not supported")
        vals = _as_list(vals) if isinstance(vals, (list, tuple)) else [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} components for queue {self._name}, got {len(vals)}")
        return [convert_to_tensor(v, dtype=dt) for v, dt in zip(vals, self._dtypes, strict=True)]

    def enqueue(self, vals, name=None):
        return self._op("QueueEnqueue", self._components(vals), name)

    def enqueue_many(self, vals, name=None):
        return self._op("QueueEnqueueMany", self._components(vals), name)

    def _unpack(self, op):
        outs = list(op.outputs)
        return outs[0] if len(outs) == 1 else outs  # TF unpacks a one-component tuple, dtypes=[t] too

    def dequeue(self, name=None):
        return self._unpack(self._op("QueueDequeue", (), name))

    def dequeue_many(self, n, name=None):
        return self._unpack(self._op("QueueDequeueMany", [convert_to_tensor(n, dtype=_dtypes.int32)], name))

    def dequeue_up_to(self, n, name=None):
        return self._unpack(self._op("QueueDequeueUpTo", [convert_to_tensor(n, dtype=_dtypes.int32)], name))

    def close(self, cancel_pending_enqueues=False, name=None):
        """Closes the queue: later enqueues fail; blocked ones wait for room unless cancel_pending_enqueues."""
        op = self._op("QueueClose", (), name)
        op._attrs["cancel_pending_enqueues"] = bool(cancel_pending_enqueues)
        return op

    def size(self, name=None):
        return self._op("QueueSize", (), name).outputs[0]

    def is_closed(self, name=None):
        return self._op("QueueIsClosed", (), name).outputs[0]


class FIFOQueue(QueueBase):
    """`tf.FIFOQueue`: elements leave in the order they came."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"):
        super().__init__(capacity, dtypes, shapes, names, shared_name, name)


class PaddingFIFOQueue(QueueBase):
    """`tf.PaddingFIFOQueue`: dequeue_many pads each component to the batch's largest shape (shapes required)."""

    _kind = "padding"

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"):
        if shapes is None:
            raise ValueError("PaddingFIFOQueue requires shapes")
        super().__init__(capacity, dtypes, shapes, names, shared_name, name)
        self._attrs["shapes"] = [tuple(-1 if d is None else d for d in as_shape(s).as_list())
                                 for s in _as_list(shapes)]
        self._queue_ref.op._attrs["shapes"] = self._attrs["shapes"]


class RandomShuffleQueue(QueueBase):
    """`tf.RandomShuffleQueue`: dequeues a uniformly random element, keeping min_after_dequeue until closed."""

    _kind = "shuffle"

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None, shared_name=None,
                 name="random_shuffle_queue"):
        from .random_seed import get_seed
        s1, s2 = get_seed(seed)
        super().__init__(capacity, dtypes, shapes, names, shared_name, name,
                         min_after_dequeue=int(min_after_dequeue), seed=s1 or 0, seed2=s2 or 0)
