"""TF 1.15's queue-based batching: `tf.train.batch`, `maybe_batch`, `batch_join`, `maybe_batch_join`,
`shuffle_batch`, `maybe_shuffle_batch`, `shuffle_batch_join`, `maybe_shuffle_batch_join`.

Part of the training-loop layer (train/), the second half of TF's training/input.py (producers:
`input.py`). Each builds a queue (FIFOQueue; PaddingFIFOQueue with `dynamic_pad`; RandomShuffleQueue for the
shuffle kinds) of one element per example, a `QueueRunner` of `num_threads` threads running the same enqueue
op (the `_join` kinds: one thread per input list), a fullness summary named as TF's, and returns the
`dequeue_many(batch_size)` (`dequeue_up_to` with `allow_smaller_final_batch`) in the structure of the input:
a dict gives a dict, a list a list (a one-element list gives a single tensor, as TF's queues unpack it).
`keep_input` (the `maybe_` kinds) filters examples: a scalar for one example, a vector with `enqueue_many`.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import convert_to_tensor, name_scope
from ..graph import Tensor
from ..ops import array_ops, math_ops, slicing_ops
from ..ops.data_flow_ops import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from ..summary import summary_api
from ..tensor_shape import TensorShape, as_shape
from .queue_runner import QueueRunner, add_queue_runner

__all__ = ["batch", "maybe_batch", "batch_join", "maybe_batch_join", "shuffle_batch", "maybe_shuffle_batch",
           "shuffle_batch_join", "maybe_shuffle_batch_join"]


def _as_tensor_list(tensors) -> list:
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    if isinstance(tensors, (list, tuple)):
        return list(tensors)
    return [tensors]


def _as_original_type(original, dequeued):
    if isinstance(dequeued, Tensor):
        dequeued = [dequeued]
    if isinstance(original, dict):
        return {k: dequeued[i] for i, k in enumerate(sorted(original, key=str))}
    return dequeued[0] if len(dequeued) == 1 else list(dequeued)


def _validate(tensor_list, what: str) -> list:
    if not tensor_list:
        raise ValueError(f"Expected at least one tensor in {what}().")
    out = []
    for t in tensor_list:
        if type(t).__name__ == "SparseTensor":
            raise NotImplementedError(f"{what}() of a SparseTensor is not supported (batch its dense parts)")
        out.append(convert_to_tensor(t))
    return out


def _validate_keep_input(keep_input, enqueue_many: bool):
    if keep_input is True:
        return True
    keep_input = convert_to_tensor(keep_input, dtype=_dtypes.bool_)
    nd = keep_input.shape.ndims
    if nd is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and nd == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if nd > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep_input


def _dtypes_of(tensor_list_list) -> list:
    types = [t.dtype.base_dtype for t in tensor_list_list[0]]
    for other in tensor_list_list[1:]:
        got = [t.dtype.base_dtype for t in other]
        if got != types:
            raise TypeError(f"Expected types to be consistent: {types} vs. {got}.")
    return types


def _shapes(tensor_list_list, shapes, enqueue_many: bool, dynamic_pad: bool) -> list:
    if shapes is None:
        out = []
        for t in tensor_list_list[0]:
            s = t.shape
            if s.ndims is None:
                raise ValueError(f"Cannot infer Tensor's rank: {t}")
            if enqueue_many:
                if s.ndims < 1:
                    raise ValueError(f"Shape {s} must have rank at least 1 with enqueue_many=True ({t.name})")
                s = TensorShape(s.as_list()[1:])
            out.append(s)
    else:
        out = [as_shape(s) for s in shapes]
        if len(out) != len(tensor_list_list[0]):
            raise ValueError(f"shapes has {len(out)} entries for {len(tensor_list_list[0])} tensors")
    if not dynamic_pad and any(not s.is_fully_defined() for s in out):
        raise ValueError(f"All shapes must be fully defined: {[str(s) for s in out]} (pass shapes=, or "
                         f"dynamic_pad=True to pad dimensions of unknown size)")
    return out


def _select(tensor_list, keep_input, enqueue_many: bool) -> list:
    """The examples whose keep_input is true, as a batch for enqueue_many (TF: dynamic_partition)."""
    out = []
    for t in tensor_list:
        if not enqueue_many:
            t = array_ops.expand_dims(t, 0)
        if keep_input.shape.ndims == 0:
            mask = array_ops.fill(array_ops.shape(t)[:1], keep_input)
        else:
            mask = keep_input
        out.append(slicing_ops.boolean_mask(t, mask))
    return out


def _enqueue_ops(queue, tensor_list_list, keep_input, enqueue_many: bool) -> list:
    ops = []
    for tl in tensor_list_list:
        if keep_input is True:
            ops.append(queue.enqueue_many(tl) if enqueue_many else queue.enqueue(tl))
        else:
            ops.append(queue.enqueue_many(_select(tl, keep_input, enqueue_many)))
    return ops


def _dequeue(queue, batch_size, allow_smaller_final_batch: bool, name):
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _batch(tensors_list, batch_size, keep_input, threads, capacity, enqueue_many, shapes, dynamic_pad,
           allow_smaller_final_batch, shared_name, name, default_name, join: bool):
    tensor_list_list = [_as_tensor_list(t) for t in tensors_list]
    flat = [t for tl in tensor_list_list for t in tl]
    with name_scope(name, default_name, [t for t in flat if isinstance(t, Tensor)]) as scope:
        tensor_list_list = [_validate(tl, default_name) for tl in tensor_list_list]
        if join and not tensor_list_list:
            raise ValueError(f"Expected at least one input in {default_name}().")
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        types = _dtypes_of(tensor_list_list)
        shapes = _shapes(tensor_list_list, shapes, enqueue_many, dynamic_pad)
        cls = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        queue = cls(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)
        ops = _enqueue_ops(queue, tensor_list_list, keep_input, enqueue_many)
        add_queue_runner(QueueRunner(queue, ops * threads if not join else ops))
        summary_api.scalar(f"fraction_of_{capacity}_full",
                           math_ops.cast(queue.size(), _dtypes.float32) * (1.0 / capacity))
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors_list[0], dequeued)


def _shuffle_batch(tensors_list, batch_size, capacity, min_after_dequeue, keep_input, threads, seed, enqueue_many,
                   shapes, allow_smaller_final_batch, shared_name, name, default_name, join: bool):
    tensor_list_list = [_as_tensor_list(t) for t in tensors_list]
    flat = [t for tl in tensor_list_list for t in tl]
    with name_scope(name, default_name, [t for t in flat if isinstance(t, Tensor)]) as scope:
        if capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue {min_after_dequeue}.")
        tensor_list_list = [_validate(tl, default_name) for tl in tensor_list_list]
        if join and not tensor_list_list:
            raise ValueError(f"Expected at least one input in {default_name}().")
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        types = _dtypes_of(tensor_list_list)
        shapes = _shapes(tensor_list_list, shapes, enqueue_many, False)
        queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed, dtypes=types,
                                   shapes=shapes, shared_name=shared_name)
        ops = _enqueue_ops(queue, tensor_list_list, keep_input, enqueue_many)
        add_queue_runner(QueueRunner(queue, ops * threads if not join else ops))
        over = math_ops.maximum(0, queue.size() - min_after_dequeue)
        full = math_ops.cast(over, _dtypes.float32) * (1.0 / (capacity - min_after_dequeue))
        summary_api.scalar(f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full", full)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors_list[0], dequeued)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.batch`: batches of `batch_size` examples in the order the `num_threads` threads enqueue them."""
    return _batch([tensors], batch_size, True, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, "batch", False)


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
                dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.maybe_batch`: `batch` of the examples whose `keep_input` is true."""
    return _batch([tensors], batch_size, keep_input, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, "batch", False)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
               allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.batch_join`: one enqueue thread per tensor list of `tensors_list`, batched together."""
    return _batch(list(tensors_list), batch_size, True, 1, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, "batch_join", True)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False, shapes=None,
                     dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.maybe_batch_join`: `batch_join` of the examples whose `keep_input` is true."""
    return _batch(list(tensors_list), batch_size, keep_input, 1, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, "batch_join", True)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None, enqueue_many=False,
                  shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.shuffle_batch`: batches drawn at random from a RandomShuffleQueue that keeps
    `min_after_dequeue` examples (until its input ends)."""
    return _shuffle_batch([tensors], batch_size, capacity, min_after_dequeue, True, num_threads, seed, enqueue_many,
                          shapes, allow_smaller_final_batch, shared_name, name, "shuffle_batch", False)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads=1, seed=None,
                        enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                        name=None):
    """`tf.train.maybe_shuffle_batch`: `shuffle_batch` of the examples whose `keep_input` is true."""
    return _shuffle_batch([tensors], batch_size, capacity, min_after_dequeue, keep_input, num_threads, seed,
                          enqueue_many, shapes, allow_smaller_final_batch, shared_name, name, "shuffle_batch", False)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.shuffle_batch_join`: one enqueue thread per tensor list, shuffled together."""
    return _shuffle_batch(list(tensors_list), batch_size, capacity, min_after_dequeue, True, 1, seed, enqueue_many,
                          shapes, allow_smaller_final_batch, shared_name, name, "shuffle_batch_join", True)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input, seed=None,
                             enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                             name=None):
    """`tf.train.maybe_shuffle_batch_join`: `shuffle_batch_join` of the examples whose `keep_input` is true."""
    return _shuffle_batch(list(tensors_list), batch_size, capacity, min_after_dequeue, keep_input, 1, seed,
                          enqueue_many, shapes, allow_smaller_final_batch, shared_name, name, "shuffle_batch_join",
                          True)
