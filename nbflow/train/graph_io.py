"""``tf.train.write_graph``: a GraphDef as TensorFlow's binary ``.pb`` or text ``.pbtxt`` file.

    tf.train.write_graph(sess.graph, "/tmp/run", "graph.pbtxt")             # text format
    tf.train.write_graph(frozen, "/tmp/run", "frozen.pb", as_text=False)     # binary

Both are TensorFlow's ``GraphDef`` protocol buffer (protobuf's text format for ``as_text``), so
TensorBoard and Netron open them; read them back with ``tf.GraphDef`` (``ParseFromString`` or
``google.protobuf.text_format.Parse``) and ``tf.import_graph_def``.
"""

from __future__ import annotations

import os
from typing import Any

from google.protobuf import text_format

from nbflow.framework import protos
from nbflow.framework.graph_def import as_graph_def_dict
from nbflow.framework.ops import Graph
from nbflow.train.saver import write_atomically


def as_graph_def_proto(graph_or_graph_def: Graph | dict[str, Any] | Any) -> Any:
    """TensorFlow's ``GraphDef`` message for a Graph, nbflow's dict GraphDef or a GraphDef."""
    if isinstance(graph_or_graph_def, protos.GraphDef):
        return graph_or_graph_def
    if isinstance(graph_or_graph_def, Graph):
        graph_or_graph_def = graph_or_graph_def.as_graph_def()
    return protos.graph_def_to_proto(as_graph_def_dict(graph_or_graph_def))


def write_graph(graph_or_graph_def: Any, logdir: str, name: str, as_text: bool = True) -> str:
    """Write the GraphDef to ``logdir/name`` (atomically) and return the path."""
    proto = as_graph_def_proto(graph_or_graph_def)
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    data = text_format.MessageToString(proto) if as_text else proto.SerializeToString()
    write_atomically(path, data)
    return path
