"""A graph as the ``GraphDef`` TensorFlow itself would write, so TensorFlow can import it.

nbflow's ops carry the attrs their kernels need; TensorFlow's ops also carry type attrs (``T``,
``Tidx``, ``SrcT``...) that its importer requires, and it refuses attrs its op does not declare.
``tensorflow_graph_def`` therefore, for every node:

- adds the type attrs TensorFlow's op declares, read from the dtypes of the op's inputs or
  outputs (each ``OpDef`` names them in ``type_attrs``: ``{"T": 0}`` is the first input's dtype);
- leaves out nbflow attrs that still hold their default value (TensorFlow's op either has the
  same default or lacks the attr: ``Softmax``'s ``axis=-1``); an attr with another value is kept,
  so nbflow re-imports the file unchanged.

    proto = tensorflow_graph_def(sess.graph)          # or a frozen GraphDef
    open("frozen.pb", "wb").write(proto.SerializeToString())

Op types are the same in both; an nbflow op TensorFlow lacks stays as it is (TensorFlow will name
it when importing).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import protos
from nbflow.framework.importer import as_graph_def_dict, import_graph_def
from nbflow.framework.op_def import get_op_def
from nbflow.framework.ops import Graph


def _is_default(value: Any, default: Any) -> bool:
    try:
        equal = value == default
        return bool(np.all(equal)) if not isinstance(equal, bool) else equal
    except (TypeError, ValueError):
        return False


def tensorflow_graph_def(graph_or_graph_def: Any) -> Any:
    """TensorFlow's ``GraphDef`` proto of a Graph, a GraphDef proto or nbflow's dict GraphDef."""
    graph = graph_or_graph_def
    if not isinstance(graph, Graph):
        graph = Graph()
        with graph.as_default():
            import_graph_def(as_graph_def_dict(graph_or_graph_def), name="")
    proto = protos.graph_def_to_proto(graph.as_graph_def())
    ops = {op.name: op for op in graph.get_operations()}
    for node in proto.node:
        op = ops[node.name]
        opdef = get_op_def(op.type)
        for key in list(node.attr):
            if key in opdef.attrs and _is_default(op.attrs.get(key), opdef.attrs[key]):
                del node.attr[key]
        for attr, dtype in opdef.type_attr_values(op).items():
            if attr not in node.attr:
                node.attr[attr].type = protos.DATA_TYPES[dtype.name]
    return proto
