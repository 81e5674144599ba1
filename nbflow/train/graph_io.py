"""``tf.train.write_graph``: a GraphDef as TensorFlow's binary ``.pb`` or text ``.pbtxt`` file.

    tf.train.write_graph(sess.graph, "/tmp/run", "graph.pbtxt")             # text format
    tf.train.write_graph(frozen, "/tmp/run", "frozen.pb", as_text=False)     # binary

Both are TensorFlow's ``GraphDef`` protocol buffer (protobuf's text format for ``as_text``), with
the type attrs TensorFlow's ops require (``nbflow.framework.graph_export``), so TensorFlow,
TensorBoard and Netron open them; read them back with ``tf.GraphDef`` (``ParseFromString`` or
``google.protobuf.text_format.Parse``) and ``tf.import_graph_def``.
"""

from __future__ import annotations

import os
from typing import Any

from google.protobuf import text_format

from nbflow.framework import protos
from nbflow.framework.graph_export import tensorflow_graph_def
from nbflow.framework.ops import Graph
from nbflow.train.checkpoint_management import write_atomically


def write_graph(
    graph_or_graph_def: Graph | dict[str, Any] | Any, logdir: str, name: str, as_text: bool = True
) -> str:
    """Write the GraphDef to ``logdir/name`` (atomically) and return the path.

    A ``tf.GraphDef`` proto is written as given; a Graph or nbflow's dict GraphDef is written as
    TensorFlow would write it.
    """
    proto = graph_or_graph_def
    if not isinstance(proto, protos.GraphDef):
        proto = tensorflow_graph_def(graph_or_graph_def)
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    data = text_format.MessageToString(proto) if as_text else proto.SerializeToString()
    write_atomically(path, data)
    return path
