"""Graphs in TensorFlow's own form: what real TensorFlow's importer, its loader and TF Serving accept.

Beside `graph_def` (the internal GraphDef the distributed runtime ships between tasks and `.meta` files
hold, where ops keep this project's attributes: static shapes and axes, op references, Python values).
`export_graph_def` writes the ops a set of roots needs with TF's op names, input order and attributes
(and fails naming the node when an op has no TF form); `import_tf_graph_def` turns a GraphDef in TF's
form (written by real TF, or exported here) into the internal form. Used by `saved_model/`, and by
`tf.import_graph_def` / `import_meta_graph` (graph_io.py) for GraphDefs `is_tf_form` recognises.
The per-op forms: `forms_math`, `forms_array`, `forms_nn`, `forms_state`, `forms_io`.
"""
from . import forms_array, forms_io, forms_math, forms_nn, forms_state  # noqa: F401  (fill the tables)
from .export import TFGraphExport, export_graph_def, needed_ops
from .importer import checkpoint_io_nodes, import_tf_graph_def, is_tf_form, saver_key_map
from .registry import READERS, WRITERS, NoTFForm
from .saver_nodes import SAVER_OP_TYPES

__all__ = ["export_graph_def", "import_tf_graph_def", "is_tf_form", "needed_ops", "saver_key_map",
           "checkpoint_io_nodes", "NoTFForm", "TFGraphExport", "has_tf_form", "tf_op_types"]


def has_tf_form(op_type: str) -> bool:
    """Whether ops of this (internal) type can be written in TF's form."""
    return op_type in WRITERS


def tf_op_types() -> list:
    """Every TF op type the readers accept or the saver nodes use (what exported graphs are written with)."""
    return sorted(set(READERS) | set(SAVER_OP_TYPES))
