"""What a ``TensorSummary`` node says about itself, and the TF 2 summary hooks a TF1 graph sees.

``tensor_summary(..., summary_description=...)`` stored a JSON-encoded ``SummaryDescription``
(``{"typeHint": "..."}``) in the node's ``description`` attribute; ``get_summary_description``
reads it back from the ``NodeDef``. ``SummaryDescription`` is TensorFlow's one-field message
(summary.proto, field 1 ``type_hint``), declared here in its own descriptor pool.

    >>> d = get_summary_description_from_json('{"typeHint": "scalar"}')
    >>> d.type_hint
    'scalar'
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

from nbflow.framework import ops as ops_lib
from nbflow.ops.summary_ops import is_tf1_tensor_summary


def _summary_description_class() -> Any:
    file = descriptor_pb2.FileDescriptorProto(
        name="nbflow/summary_description.proto", package="tensorflow", syntax="proto3"
    )
    message = file.message_type.add(name="SummaryDescription")
    message.field.add(
        name="type_hint",
        number=1,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(
        pool.FindMessageTypeByName("tensorflow.SummaryDescription")
    )


SummaryDescription = _summary_description_class()


def get_summary_description_from_json(text: str) -> Any:
    """Parses the JSON form TensorFlow stores in a node's ``description`` attribute."""
    return json_format.Parse(text, SummaryDescription())


def get_summary_description(node_def: Any) -> Any:
    """The ``SummaryDescription`` of a ``TensorSummary`` node (its ``description`` attr)."""
    if not is_tf1_tensor_summary(node_def):
        raise ValueError(f"Can't get_summary_description on {node_def.op}")
    description = node_def.attr["description"].s
    if isinstance(description, bytes):
        description = description.decode()
    return get_summary_description_from_json(description or "{}")


def all_v2_summary_ops() -> list[Any]:
    """The TF 2 summary ops built into the default graph (``tf.contrib.summary`` style); nbflow
    builds TF 1 summaries only, so the collection TensorFlow reads is empty unless a user adds."""
    return ops_lib.get_collection("_SUMMARY_V2")


def initialize(graph: Any = None, session: Any = None) -> None:
    """Initializes TF 2 summary writers of ``graph`` in ``session``: nbflow's writers are
    ``FileWriter``s, which need no graph op, so only TensorFlow's argument checks remain."""
    if session is None:
        session = ops_lib.get_default_session()
        if session is None:
            raise ValueError("session must be passed if no default session exists")
