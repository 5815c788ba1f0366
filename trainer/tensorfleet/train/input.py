"""TF 1.15's queue-based input producers: `tf.train.input_producer`, `string_input_producer`,
`range_input_producer`, `slice_input_producer`, `limit_epochs`, `match_filenames_once`.

Part of the training-loop layer (train/), as TF's training/input.py; batching is in `input_batching.py`. Each
producer builds a FIFOQueue fed by one `enqueue_many` of its (optionally shuffled) input, run in a loop by a
`QueueRunner` added to the QUEUE_RUNNERS collection (started by `tf.train.start_queue_runners` or a
MonitoredSession), and a `tf.summary.scalar` of the queue's fullness named as TF's ("fraction_of_32_full").
`num_epochs` counts enqueues with a local `epochs` variable (`limit_epochs`, `count_up_to`): after the last
epoch the enqueue raises OutOfRangeError, the queue runner closes the queue, and readers then end with
OutOfRangeError, which the Coordinator and MonitoredSession treat as the normal end of input.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import control_dependencies, convert_to_tensor, name_scope
from ..graph import GraphKeys, Tensor
from ..ops.state_ops import count_up_to
from ..ops import array_ops, check_ops, math_ops, random_ops, slicing_ops, state_ops
from ..ops.data_flow_ops import FIFOQueue
from ..ops.reader_ops import matching_files
from ..summary import summary_api
from ..tensor_shape import as_shape
from .queue_runner import QueueRunner, add_queue_runner

__all__ = ["input_producer", "string_input_producer", "range_input_producer", "slice_input_producer",
           "limit_epochs", "match_filenames_once"]


def match_filenames_once(pattern, name=None):
    """`tf.train.match_filenames_once`: a local variable initialised to the files matching `pattern` (run
    `tf.local_variables_initializer()`, as MonitoredSession does)."""
    with name_scope(name, "matching_filenames", [pattern]) as scope:
        return state_ops.Variable(matching_files(pattern), trainable=False, validate_shape=False, name=scope,
                                  collections=[GraphKeys.LOCAL_VARIABLES])


def limit_epochs(tensor, num_epochs=None, name=None):
    """`tf.train.limit_epochs`: `tensor`, which raises OutOfRangeError once evaluated `num_epochs` times."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = convert_to_tensor(0, dtype=_dtypes.int64)
        epochs = state_ops.Variable(zero64, name="epochs", trainable=False,
                                    collections=[GraphKeys.LOCAL_VARIABLES])
        counter = count_up_to(epochs, num_epochs)
        with control_dependencies([counter]):
            return array_ops.identity(tensor, name=scope)


def _fraction_full_summary(summary_name, q, capacity):
    size = math_ops.cast(q.size(), _dtypes.float32)
    summary_api.scalar(summary_name, size * (1.0 / capacity))


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None, capacity=32,
                   shared_name=None, summary_name=None, name=None, cancel_op=None):
    """`tf.train.input_producer`: a queue holding the rows of `input_tensor`, `num_epochs` times (forever when
    None), each epoch shuffled when `shuffle`; returns the queue."""
    with name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        shape = input_tensor.shape
        element = shape[1:] if shape.ndims is not None else as_shape(element_shape) if element_shape is not None \
            else shape
        if element_shape is not None:
            element = element.merge_with(as_shape(element_shape))
        if element.ndims is None or not element.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or `element_shape` must be "
                             "specified")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        q = FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype.base_dtype], shapes=[element],
                      shared_name=shared_name)
        enq = q.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(q, [enq], cancel_op=cancel_op))
        if summary_name is not None:
            _fraction_full_summary(summary_name, q, capacity)
        return q


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                          name=None, cancel_op=None):
    """`tf.train.string_input_producer`: a queue of strings (file names) for a reader."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, Tensor) and not isinstance(string_tensor, state_ops.Variable) \
            and not len(string_tensor):
        raise ValueError(not_null_err)
    with name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=_dtypes.string)
        with control_dependencies([check_ops.Assert(math_ops.greater(array_ops.size(string_tensor), 0),
                                                    [not_null_err])]):
            string_tensor = array_ops.identity(string_tensor)
        return input_producer(string_tensor, element_shape=[], num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                              capacity=capacity, shared_name=shared_name, name=scope,
                              summary_name=f"fraction_of_{capacity}_full", cancel_op=cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """`tf.train.range_input_producer`: a queue of the integers 0 .. limit-1."""
    with name_scope(name, "input_producer", [limit]) as scope:
        range_tensor = array_ops.range(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity, shared_name,
                              f"fraction_of_{capacity}_full", scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """`tf.train.slice_input_producer`: one row of each tensor of `tensor_list` (the same row of every one)."""
    with name_scope(name, "input_producer", list(tensor_list)):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = array_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                                     capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [slicing_ops.gather(t, index) for t in tensor_list]
