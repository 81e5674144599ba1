"""GraphDef files as board runs: any TF1 model's graph, drawn without an event log.

TensorFlow 1.x programs leave their graphs in files as often as in event logs:

    frozen.pb      a binary ``GraphDef`` (``tf.io.write_graph(..., as_text=False)``, a frozen model)
    graph.pbtxt    the same in protobuf text format (``tf.io.write_graph``'s default)
    model.meta     a binary ``MetaGraphDef`` (``tf.train.Saver``); its ``graph_def`` is drawn
    saved_model.pb a ``SavedModel``; the graph of its first MetaGraphDef is drawn

The board reads them here and hands the front end the same JSON GraphDef an event log's graph
gives (``protos.graph_proto_to_dict``). A file that is not one of these (damaged, another
message, too large) is a ``GraphFileError`` whose message the board shows as the run's warning.
Tensor contents beyond a few values are left out of the JSON: the graph view shows an attr's
first 200 characters, and a frozen model's weights would otherwise travel with every graph.
"""

from __future__ import annotations

import os
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import DecodeError

from nbflow.framework import protos

GRAPH_SUFFIXES = (".pb", ".pbtxt", ".meta")
# In a log walk only .pb/.pbtxt count: a checkpoint folder holds a .meta per save, and a TF2
# SavedModel's fingerprint.pb / keras_metadata.pb hold no graph.
LOGGED_GRAPH_SUFFIXES = (".pb", ".pbtxt")
NOT_GRAPH_FILES = frozenset({"fingerprint.pb", "keras_metadata.pb"})
MAX_GRAPH_FILE_BYTES = 512 * 1024 * 1024


class GraphFileError(ValueError):
    """A graph file that could not be read as a GraphDef; the message names the file."""


def is_graph_file(name: str) -> bool:
    """A file the board opens as a graph when it is named as the log directory itself."""
    return name.lower().endswith(GRAPH_SUFFIXES)


def is_logged_graph_file(name: str) -> bool:
    """A file that a log directory walk shows as a run with only a graph."""
    lowered = name.lower()
    return lowered.endswith(LOGGED_GRAPH_SUFFIXES) and lowered not in NOT_GRAPH_FILES


def read_graph_file(path: str) -> dict[str, Any]:
    """The JSON GraphDef of a ``.pb``/``.pbtxt``/``.meta`` file; raises ``GraphFileError``."""
    name = os.path.basename(path)
    size = os.path.getsize(path)
    if size > MAX_GRAPH_FILE_BYTES:
        raise GraphFileError(
            f"{name}: {size} bytes, over the board's limit of {MAX_GRAPH_FILE_BYTES} bytes"
        )
    with open(path, "rb") as f:
        data = f.read()
    proto = _parse(name, data)
    if not proto.node:
        raise GraphFileError(f"{name}: the file holds no graph nodes (not a GraphDef?)")
    for i, node in enumerate(proto.node):
        if not node.name or not node.op:
            raise GraphFileError(f"{name}: node {i} has no name or no op (not a GraphDef?)")
    try:
        graph = protos.graph_proto_to_dict(proto)
    except Exception as e:  # any file a user points at: a warning on the run, never a 500
        raise GraphFileError(f"{name}: a node's attrs cannot be read ({e})") from e
    for node in graph["node"]:
        node["attr"] = {k: _elide_tensors(v) for k, v in node["attr"].items()}
    return graph


def _parse(name: str, data: bytes) -> Any:
    """The GraphDef proto a file holds, by its suffix."""
    lowered = name.lower()
    try:
        if lowered.endswith(".pbtxt"):
            return _parse_text(name, data)
        if lowered.endswith(".meta"):
            return protos.MetaGraphDef.FromString(data).graph_def
        if lowered == "saved_model.pb":
            saved = protos.SavedModel.FromString(data)
            if not saved.meta_graphs:
                raise GraphFileError(f"{name}: the SavedModel holds no MetaGraphDef")
            return saved.meta_graphs[0].graph_def
        return protos.GraphDef.FromString(data)
    except DecodeError as e:
        raise GraphFileError(f"{name}: not a readable binary protobuf ({e})") from e


def _parse_text(name: str, data: bytes) -> Any:
    """A text-format GraphDef, or a text-format MetaGraphDef's graph."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise GraphFileError(f"{name}: not UTF-8 text ({e})") from e
    try:
        return text_format.Parse(text, protos.GraphDef())
    except text_format.ParseError as graph_error:
        try:
            return text_format.Parse(text, protos.MetaGraphDef()).graph_def
        except text_format.ParseError:
            raise GraphFileError(f"{name}: not a text GraphDef ({graph_error})") from graph_error


def _elide_tensors(value: Any) -> Any:
    """An encoded attr with large tensor contents replaced by their size."""
    if isinstance(value, dict):
        if "tensor" in value and isinstance(value["tensor"], dict):
            tensor = dict(value["tensor"])
            for key in ("content", "strings"):
                if key in tensor and len(str(tensor[key])) > 256:
                    tensor[key] = f"<{len(str(tensor[key]))} characters left out>"
            return {**value, "tensor": tensor}
        if "list" in value and isinstance(value["list"], list):
            return {**value, "list": [_elide_tensors(v) for v in value["list"]]}
    return value
