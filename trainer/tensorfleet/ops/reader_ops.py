"""Readers of queue-based input pipelines: `tf.TFRecordReader`, `tf.TextLineReader`, `tf.FixedLengthRecordReader`,
`tf.WholeFileReader`, `tf.IdentityReader`; and `tf.read_file`, `tf.write_file`, `tf.matching_files`.

Op definitions with their Python wrappers (kernels: `kernels/reader_kernels.py`), beside the queues of
`data_flow_ops.py`. A reader is a stateful handle op (`ReaderHandle`) whose kernel creates the reader's state
in the session's resources, as a queue's does; `read(queue)` is a `ReaderRead` op taking the reader's and the
queue's handles, naming both resources in its attrs. It dequeues the next work unit (a file name) from the
queue when the current one is exhausted, so a producer (`train/input.py`) feeds file names and the reader
yields `(key, value)` records, key `"<file name>:<record>"` as TF formats it. A reader only reads bytes.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import convert_to_tensor, get_default_graph
from ..graph import Tensor
from ..tensor_shape import TensorShape
from .common import NotDifferentiable, make_op, register_op

__all__ = ["ReaderBase", "TFRecordReader", "TextLineReader", "FixedLengthRecordReader", "WholeFileReader",
           "IdentityReader", "read_file", "write_file", "matching_files"]

_STR = _dtypes.string
_SCALAR = TensorShape([])

register_op("ReaderHandle", lambda op: [(_dtypes.int32, _SCALAR)], stateful=True)
register_op("ReaderRead", lambda op: [(_STR, _SCALAR), (_STR, _SCALAR)], stateful=True)
register_op("ReaderReadUpTo", lambda op: [(_STR, TensorShape([None])), (_STR, TensorShape([None]))], stateful=True)
register_op("ReaderNumRecordsProduced", lambda op: [(_dtypes.int64, _SCALAR)], stateful=True)
register_op("ReaderNumWorkUnitsCompleted", lambda op: [(_dtypes.int64, _SCALAR)], stateful=True)
register_op("ReaderReset", lambda op: [], stateful=True)
register_op("ReadFile", lambda op: [(_STR, _SCALAR)], stateful=True)
register_op("WriteFile", lambda op: [], stateful=True)
register_op("MatchingFiles", lambda op: [(_STR, TensorShape([None]))], stateful=True)
for _t in ("ReaderHandle", "ReaderRead", "ReaderReadUpTo", "ReaderNumRecordsProduced", "ReaderNumWorkUnitsCompleted",
           "ReaderReset", "ReadFile", "WriteFile", "MatchingFiles"):
    NotDifferentiable(_t)


def _queue_ref_and_name(queue):
    """The handle tensor and resource name of a queue given as a QueueBase or its `queue_ref`."""
    ref = getattr(queue, "queue_ref", queue)
    if not isinstance(ref, Tensor) or ref.op.type != "QueueHandle":
        raise TypeError(f"A reader reads from a queue (a tf.FIFOQueue & co or its queue_ref), got {queue!r}")
    return ref, ref.op.get_attr("resource_name")


class ReaderBase:
    """`tf.ReaderBase`: the reads, counters and reset that every reader shares (state in the session)."""

    def __init__(self, reader_kind: str, attrs: dict, name=None, default_name="Reader", shared_name=None):
        g = get_default_graph()
        self._attrs = {"reader_kind": reader_kind, **attrs}
        op = make_op("ReaderHandle", [], dict(self._attrs), name=name, default_name=default_name)
        op._attrs["resource_name"] = shared_name or op.name
        self._attrs["resource_name"] = op._attrs["resource_name"]
        self._reader_ref = op.outputs[0]
        self._graph = g

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        return False

    def _op(self, op_type, inputs=(), extra=None, name=None):
        attrs = dict(self._attrs, **(extra or {}))
        with self._graph.colocate_with(self._reader_ref.op):
            return make_op(op_type, [self._reader_ref] + list(inputs), attrs, name=name,
                           default_name=op_type if op_type.startswith("Reader") else f"Reader{op_type}")

    def read(self, queue, name=None):
        """Returns `(key, value)`: the next record, taking the next file name from `queue` when the current
        file is done; OutOfRangeError once the queue is closed and empty."""
        ref, qname = _queue_ref_and_name(queue)
        op = self._op("ReaderRead", [ref], {"queue_name": qname}, name)
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue, num_records, name=None):
        """Returns up to `num_records` `(keys, values)` (fewer at the end of a file, as TF)."""
        ref, qname = _queue_ref_and_name(queue)
        n = convert_to_tensor(num_records, dtype=_dtypes.int64)
        op = self._op("ReaderReadUpTo", [ref, n], {"queue_name": qname}, name)
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name=None):
        """The number of records this reader has produced (int64)."""
        return self._op("ReaderNumRecordsProduced", (), None, name).outputs[0]

    def num_work_units_completed(self, name=None):
        """The number of work units (files) this reader has finished (int64)."""
        return self._op("ReaderNumWorkUnitsCompleted", (), None, name).outputs[0]

    def reset(self, name=None):
        """Restores the reader to its initial clean state (counters zero, no current file)."""
        return self._op("ReaderReset", (), None, name)

    def serialize_state(self, name=None):
        raise NotImplementedError("Reader SerializeState is not supported")

    def restore_state(self, state, name=None):
        raise NotImplementedError("Reader RestoreState is not supported")


class TFRecordReader(ReaderBase):
    """`tf.TFRecordReader(name=None, options=None)`: the records of TFRecord files; key `file:byte_offset`."""

    def __init__(self, name=None, options=None):
        from ..io.tfrecord import TFRecordOptions
        super().__init__("tfrecord", {"compression_type": TFRecordOptions.get_compression_type_string(options)},
                         name, "TFRecordReaderV2")


class TextLineReader(ReaderBase):
    """`tf.TextLineReader(skip_header_lines=None, name=None)`: the lines of text files, without their
    newline; key `file:line_number` (1-based, header lines counted)."""

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__("textline", {"skip_header_lines": int(skip_header_lines or 0)}, name, "TextLineReaderV2")


class FixedLengthRecordReader(ReaderBase):
    """`tf.FixedLengthRecordReader(record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
    name=None, encoding=None)`: fixed-size records after a header and before a footer; key `file:index`."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None, name=None,
                 encoding=None):
        if encoding:
            raise NotImplementedError(f"FixedLengthRecordReader(encoding={encoding!r}) is not supported")
        sizes = {"record_bytes": record_bytes, "header_bytes": header_bytes or 0,
                 "footer_bytes": footer_bytes or 0, "hop_bytes": hop_bytes or 0}
        for k, v in sizes.items():
            if int(v) < 0 or (k == "record_bytes" and int(v) <= 0):
                raise ValueError(f"FixedLengthRecordReader: {k} must be {'> 0' if k == 'record_bytes' else '>= 0'}"
                                 f", got {v}")
        super().__init__("fixed", {k: int(v) for k, v in sizes.items()}, name, "FixedLengthRecordReaderV2")


class WholeFileReader(ReaderBase):
    """`tf.WholeFileReader(name=None)`: one record per file, key the file name and value its contents."""

    def __init__(self, name=None):
        super().__init__("wholefile", {}, name, "WholeFileReaderV2")


class IdentityReader(ReaderBase):
    """`tf.IdentityReader(name=None)`: each work unit as both key and value."""

    def __init__(self, name=None):
        super().__init__("identity", {}, name, "IdentityReaderV2")


def read_file(filename, name=None):
    """`tf.read_file` / `tf.io.read_file`: the contents of a file as a string scalar."""
    return make_op("ReadFile", [convert_to_tensor(filename, dtype=_STR)], {}, name=name,
                   default_name="ReadFile").outputs[0]


def write_file(filename, contents, name=None):
    """`tf.write_file` / `tf.io.write_file`: writes `contents` to a file (creating its directory)."""
    return make_op("WriteFile", [convert_to_tensor(filename, dtype=_STR), convert_to_tensor(contents, dtype=_STR)],
                   {}, name=name, default_name="WriteFile")


def matching_files(pattern, name=None):
    """`tf.matching_files` / `tf.io.matching_files`: the sorted names of the files matching a glob pattern
    (a string or a vector of them)."""
    return make_op("MatchingFiles", [convert_to_tensor(pattern, dtype=_STR)], {}, name=name,
                   default_name="MatchingFiles").outputs[0]
