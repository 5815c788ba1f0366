"""`tf.summary.FileWriter` and `tf.summary.FileWriterCache`: summaries, graphs and session logs as Events.

Top layer (above `summary/event_file_writer`, which owns the file and its thread). As TF 1.15's writer.py:
* `add_summary(summary, global_step)` takes a `Summary` proto or its serialized bytes (what a summary op's
  fetch gives); the `metadata` of a value is kept only the first time its tag is seen (TensorBoard needs it
  once per tag);
* every Event gets `wall_time = time.time()` and, when given, `step`;
* `FileWriter(logdir, graph)` writes the graph first (`add_graph`); after `close()` the add_* calls warn and
  do nothing until `reopen()`.
"""
from __future__ import annotations

import threading
import time
import warnings

from ..protos import event_pb2, summary_pb2
from .event_file_writer import EventFileWriter

__all__ = ["FileWriter", "FileWriterCache"]


def _graph_def_bytes(graph=None, graph_def=None) -> bytes:
    """The serialized GraphDef for `add_graph`: from a tf.Graph, or a GraphDef proto (deprecated in TF)."""
    from ..graph import Graph

    if graph is not None and graph_def is not None:
        raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
    if not isinstance(graph, Graph) and isinstance(graph_def, Graph):
        warnings.warn("When passing a `Graph` object, please use the `graph` named argument instead of "
                      "`graph_def`.", stacklevel=3)
        graph, graph_def = graph_def, None
    if isinstance(graph, Graph):
        from ..graph_def import as_graph_def  # (the distributed runtime's GraphDef conversion)
        return as_graph_def(graph, add_shapes=True, opaque_ok=True).SerializeToString()
    proto = graph if graph is not None else graph_def
    if hasattr(proto, "SerializeToString") and type(proto).__name__ == "GraphDef":
        return proto.SerializeToString()
    raise TypeError("The passed graph must be an instance of `Graph` or the deprecated `GraphDef`")


class FileWriter:
    """`tf.summary.FileWriter(logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
    filename_suffix=None, session=None)`."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        if session is not None:
            raise NotImplementedError("FileWriter(session=...) (tf.contrib.summary's graph-based writer) is not "
                                      "supported; pass logdir and graph only")
        self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        self._closed = False
        self._session_run_tags: set = set()
        self._seen_summary_tags: set = set()
        self._tags_lock = threading.Lock()
        if graph is not None or graph_def is not None:
            try:
                self.add_graph(graph=graph, graph_def=graph_def)
            except BaseException:
                self.close()  # no thread or open file left behind by a failed constructor
                raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def get_logdir(self) -> str:
        """The directory the event file is in."""
        return self.event_writer.get_logdir()

    def _warn_if_closed(self) -> None:
        if self._closed:
            warnings.warn("Attempting to use a closed FileWriter. The operation will be a noop unless the "
                          "FileWriter is explicitly reopened.", stacklevel=3)

    def _add_event(self, event, step) -> None:
        self._warn_if_closed()
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None) -> None:
        """Adds a `Summary` (a proto, or the bytes a summary op's fetch gives) at `global_step`."""
        if isinstance(summary, (bytes, bytearray)):
            parsed = summary_pb2.Summary()
            parsed.ParseFromString(bytes(summary))
            summary = parsed
        elif not isinstance(summary, summary_pb2.Summary):
            raise TypeError(f"add_summary expects a Summary proto or its serialized bytes (a summary op's "
                            f"fetch), got {type(summary).__name__}")
        else:
            copy = summary_pb2.Summary()
            copy.CopyFrom(summary)  # the caller's proto is not changed by the metadata stripping
            summary = copy
        with self._tags_lock:
            for value in summary.value:
                if not value.HasField("metadata"):
                    continue
                if value.tag in self._seen_summary_tags:
                    value.ClearField("metadata")
                else:
                    self._seen_summary_tags.add(value.tag)
        self._add_event(event_pb2.Event(summary=summary), global_step)

    def add_session_log(self, session_log, global_step=None) -> None:
        """Adds a `SessionLog` (START, STOP, CHECKPOINT) at `global_step`."""
        self._add_event(event_pb2.Event(session_log=session_log), global_step)

    def add_graph(self, graph, global_step=None, graph_def=None) -> None:
        """Adds a graph (a tf.Graph, or a GraphDef proto) for TensorBoard's graph view."""
        self._add_event(event_pb2.Event(graph_def=_graph_def_bytes(graph, graph_def)), global_step)

    def add_meta_graph(self, meta_graph_def, global_step=None) -> None:
        """Adds a MetaGraphDef proto (any object with SerializeToString)."""
        if not hasattr(meta_graph_def, "SerializeToString"):
            raise TypeError(f"meta_graph_def must be a MetaGraphDef proto, got {type(meta_graph_def).__name__}")
        self._add_event(event_pb2.Event(meta_graph_def=meta_graph_def.SerializeToString()), global_step)

    def add_run_metadata(self, run_metadata, tag, global_step=None) -> None:
        """Adds a RunMetadata (proto or bytes) under `tag`; a tag may be used once per writer."""
        if tag in self._session_run_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._session_run_tags.add(tag)
        blob = run_metadata if isinstance(run_metadata, bytes) else run_metadata.SerializeToString()
        tagged = event_pb2.TaggedRunMetadata(tag=tag, run_metadata=blob)
        self._add_event(event_pb2.Event(tagged_run_metadata=tagged), global_step)

    def add_event(self, event) -> None:
        """Adds an `Event` as it is (wall_time and step are the caller's)."""
        self._warn_if_closed()
        self.event_writer.add_event(event)

    def flush(self) -> None:
        """Returns when every event added so far is on disk."""
        self._warn_if_closed()
        self.event_writer.flush()

    def close(self) -> None:
        """Flushes and closes the event file."""
        self.event_writer.close()
        self._closed = True

    def reopen(self) -> None:
        """After `close()`: opens a new event file in the same logdir."""
        self.event_writer.reopen()
        self._closed = False


class FileWriterCache:
    """`tf.summary.FileWriterCache`: one FileWriter per logdir, shared in the process."""

    _cache: dict = {}
    _lock = threading.RLock()

    @staticmethod
    def clear() -> None:
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}

    @staticmethod
    def get(logdir) -> FileWriter:
        """The cached FileWriter for `logdir`, created (with the default graph) on first use."""
        from ..default_graph import get_default_graph

        with FileWriterCache._lock:
            if logdir not in FileWriterCache._cache:
                FileWriterCache._cache[logdir] = FileWriter(logdir, graph=get_default_graph())
            return FileWriterCache._cache[logdir]
