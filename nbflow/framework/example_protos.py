"""``tf.train.Example`` and its kin: TensorFlow's example.proto and feature.proto, byte for byte.

A TFRecord file of training data holds one serialized ``Example`` per record: a map from
feature names to lists of bytes, floats or 64-bit integers. A ``SequenceExample`` adds
``feature_lists``, a map from names to lists of such features (one per time step)::

    Example { Features features = 1 }
    SequenceExample { Features context = 1; FeatureLists feature_lists = 2 }
    Features { map<string, Feature> feature = 1 }
    FeatureLists { map<string, FeatureList> feature_list = 1 }
    FeatureList { repeated Feature feature = 1 }
    Feature { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
                           Int64List int64_list = 3 } }
    BytesList { repeated bytes value = 1 }   FloatList { repeated float value = 1 [packed] }
    Int64List { repeated int64 value = 1 [packed] }

The messages are declared here as a ``FileDescriptorProto`` (package ``tensorflow``, proto3, the
same field numbers) in a descriptor pool of their own, and protobuf's ``message_factory`` makes
the classes, as ``protos.py`` does for the event and graph messages. So the bytes are protobuf's
own: a record written by TensorFlow parses here and the reverse.

    >>> ex = Example(features=Features(feature={"x": Feature(int64_list=Int64List(value=[7]))}))
    >>> ex.SerializeToString().hex()
    '0a0c0a0a0a017812051a030a0107'
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_PACKAGE = "tensorflow"

# message -> fields (name, number, type, label): label "" (singular), "repeated" or
# "oneof:<name>"; "map:<Value>" declares map<string, Value>. A type not in _SCALARS is a message.
_SCALARS = {"bytes": _F.TYPE_BYTES, "float": _F.TYPE_FLOAT, "int64": _F.TYPE_INT64}
_MESSAGES: dict[str, list[tuple[str, int, str, str]]] = {
    "BytesList": [("value", 1, "bytes", "repeated")],
    "FloatList": [("value", 1, "float", "repeated")],
    "Int64List": [("value", 1, "int64", "repeated")],
    "Feature": [
        ("bytes_list", 1, "BytesList", "oneof:kind"),
        ("float_list", 2, "FloatList", "oneof:kind"),
        ("int64_list", 3, "Int64List", "oneof:kind"),
    ],
    "Features": [("feature", 1, "Feature", "map")],
    "FeatureList": [("feature", 1, "Feature", "repeated")],
    "FeatureLists": [("feature_list", 1, "FeatureList", "map")],
    "Example": [("features", 1, "Features", "")],
    "SequenceExample": [
        ("context", 1, "Features", ""),
        ("feature_lists", 2, "FeatureLists", ""),
    ],
}


def _type(field: Any, type_name: str) -> None:
    if type_name in _SCALARS:
        field.type = _SCALARS[type_name]
    else:
        field.type = _F.TYPE_MESSAGE
        field.type_name = f".{_PACKAGE}.{type_name}"


def _build_file() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(
        name="nbflow/tensorflow_example.proto", package=_PACKAGE, syntax="proto3"
    )
    for message_name, fields in _MESSAGES.items():
        message = file.message_type.add(name=message_name)
        for name, number, type_name, label in fields:
            field = message.field.add(name=name, number=number)  # JSON: lowerCamelCase
            field.label = _F.LABEL_OPTIONAL
            if label == "repeated":
                field.label = _F.LABEL_REPEATED
            elif label.startswith("oneof:"):
                if not message.oneof_decl:
                    message.oneof_decl.add(name=label[6:])
                field.oneof_index = 0
            elif label == "map":  # map<string, V> is a repeated nested key/value entry
                entry = message.nested_type.add(name=f"{name.title().replace('_', '')}Entry")
                entry.options.map_entry = True
                key = entry.field.add(name="key", number=1, label=_F.LABEL_OPTIONAL)
                key.type = _F.TYPE_STRING
                value = entry.field.add(name="value", number=2, label=_F.LABEL_OPTIONAL)
                _type(value, type_name)
                field.label = _F.LABEL_REPEATED
                type_name = f"{message_name}.{entry.name}"
            _type(field, type_name)
    return file


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_build_file())


def _message(name: str) -> Any:
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{_PACKAGE}.{name}"))


BytesList = _message("BytesList")
FloatList = _message("FloatList")
Int64List = _message("Int64List")
Feature = _message("Feature")
Features = _message("Features")
FeatureList = _message("FeatureList")
FeatureLists = _message("FeatureLists")
Example = _message("Example")
SequenceExample = _message("SequenceExample")

__all__ = [
    "BytesList",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
]
