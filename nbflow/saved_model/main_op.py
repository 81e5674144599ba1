"""The op a SavedModel runs after its variables are restored (``tf.saved_model.main_op``).

    builder.add_meta_graph_and_variables(sess, [tag], main_op=tf.saved_model.main_op.main_op())

``main_op()`` initializes what a checkpoint does not hold: local variables and lookup tables.
``main_op_with_restore(restore_op_name)`` runs that, then the saver's restore op, for loaders
that run only the main op.
"""

from __future__ import annotations

from nbflow.framework import ops as ops_lib
from nbflow.ops import control_flow_ops, lookup_ops, variables


def main_op() -> ops_lib.Operation:
    """Group the local variables' initializer and the tables' initializer."""
    init_local = variables.local_variables_initializer()
    init_tables = lookup_ops.tables_initializer()
    return control_flow_ops.group(init_local, init_tables)


def main_op_with_restore(restore_op_name: str) -> ops_lib.Operation:
    """``main_op()``, then the restore op named ``restore_op_name`` (as TensorFlow orders them)."""
    restore = ops_lib.get_default_graph().as_graph_element(restore_op_name)
    with ops_lib.control_dependencies([main_op()]):
        return control_flow_ops.group(restore)
