"""``tf.tables_initializer``: the op that runs every lookup-table initializer of a graph.

Lookup tables register their initializers in ``GraphKeys.TABLE_INITIALIZERS`` as TensorFlow's
do; TF1 programs run ``tf.tables_initializer()`` next to ``tf.global_variables_initializer()``,
which must work (as a no-op) in a graph without tables.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.tables_initializer()) is None
    True
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.ops.control_flow_ops import group, no_op


def tables_initializer(name: str = "init_all_tables") -> Any:
    """One op running every table initializer of the default graph (a no-op when none)."""
    initializers = ops_lib.get_collection(ops_lib.GraphKeys.TABLE_INITIALIZERS)
    return group(*initializers, name=name) if initializers else no_op(name=name)


initialize_all_tables = tables_initializer
