"""``tf.train.write_graph``: a graph's GraphDef as a file (nbflow's GraphDef is JSON)."""

from __future__ import annotations

import json
import os
from typing import Any

from nbflow.framework.ops import Graph
from nbflow.train.saver import write_atomically


def write_graph(
    graph_or_graph_def: Graph | dict[str, Any], logdir: str, name: str, as_text: bool = True
) -> str:
    """Write the GraphDef to ``logdir/name`` (atomically) and return the path.

    ``as_text`` indents the JSON for reading; ``tf.import_graph_def`` reads either form.
    """
    graph_def = (
        graph_or_graph_def.as_graph_def()
        if isinstance(graph_or_graph_def, Graph)
        else graph_or_graph_def
    )
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    write_atomically(path, json.dumps(graph_def, indent=1 if as_text else None))
    return path
