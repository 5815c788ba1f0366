"""`tf.summary` (TF 1.15's graph-mode API): summary ops, `FileWriter`, `FileWriterCache` and the protos.

Top layer: `summary_api` builds the ops (ops/summary_ops.py, kernels/summary_kernels.py), `writer` turns
their fetched bytes into Events, `event_file_writer` writes the event file TensorBoard reads (io/tfrecord.py).
"""
from ..protos.event_pb2 import Event, SessionLog, TaggedRunMetadata
from ..protos.summary_pb2 import Summary, SummaryDescription
from .summary_api import audio, histogram, image, merge, merge_all, scalar, tensor_summary, text
from .writer import FileWriter, FileWriterCache

__all__ = ["Event", "FileWriter", "FileWriterCache", "SessionLog", "Summary", "SummaryDescription",
           "TaggedRunMetadata", "audio", "histogram", "image", "merge", "merge_all", "scalar", "tensor_summary", "text"]
