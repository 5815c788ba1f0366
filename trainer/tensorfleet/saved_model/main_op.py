"""`tf.saved_model.main_op`: the op a loader runs after restoring (TF 1.15): initialize the local variables
and tables, `main_op_with_restore` also runs a restore op first."""
from __future__ import annotations

from ..default_graph import control_dependencies, get_default_graph
from ..graph import GraphKeys
from ..ops import control_flow_ops
from ..ops.state_ops import global_variables_initializer, local_variables_initializer

__all__ = ["main_op", "main_op_with_restore"]


def main_op():
    """The group of the global and local variable initializers and the table initializers."""
    init = global_variables_initializer()
    init_local = local_variables_initializer()
    tables = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    return control_flow_ops.group(init, init_local, *tables)


def main_op_with_restore(restore_op_name):
    """`main_op()` then the op named `restore_op_name`."""
    with control_dependencies([main_op()]):
        return control_flow_ops.group(restore_op_name)
