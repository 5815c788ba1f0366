"""`tf.train.summary_iterator(path)`: the `tf.Event` protos of an event file, in order.

Reader beside `summary/writer.py` (which writes them): each TFRecord of the file (`io/tfrecord.py`, CRCs
checked) is parsed as an `Event` (protos/event.proto, TF's field numbers), so a program can read back
what its FileWriter or a `tensorfleet-train` run wrote without TensorBoard. A generator, as TF's: a
missing file raises NotFoundError at the first `next()`.
"""
from __future__ import annotations

from typing import Iterator

from ..io.tfrecord import tf_record_iterator
from ..protos.event_pb2 import Event

__all__ = ["summary_iterator"]


def summary_iterator(path) -> Iterator[Event]:
    for record in tf_record_iterator(path):
        yield Event.FromString(record)
