"""GraphDef: a graph as a plain JSON-serialisable dict.

    {"node": [{"name": "MatMul", "op": "MatMul", "input": ["a", "b:0", "^init"],
               "device": "", "attr": {"transpose_a": false, ...}}], "versions": {...}}

Attr values are tagged where JSON has no type of their own: ``{"type": "float32"}`` for a
DType, ``{"shape": [2, null]}`` for a TensorShape, ``{"tensor": {...}}`` for an array.
``Graph.as_graph_def`` and ``Operation.node_def`` write this form; ``importer.import_graph_def``
reads it (or TensorFlow's protobuf) back into a graph.

``as_graph_def(add_shapes=True)`` (what ``FileWriter`` logs) describes each op for viewers, in
attrs whose leading ``_`` TensorFlow's importer skips: ``_output_shapes`` as TensorFlow writes
it, ``_output_types`` (the outputs' dtypes) and ``_source``, where the op was created: "file:line",
or "cell:ID#N:line" for a notebook cell once the notebook layer has named it
(``register_source_namer``). The Board's graph view shows them and links the cell.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from collections.abc import Callable

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework.tensor_shape import TensorShape

GRAPH_DEF_VERSION = 1


def graph_def_versions() -> dict[str, int]:
    """The ``versions`` field nbflow writes: this producer version, read by any consumer."""
    return {"producer": GRAPH_DEF_VERSION, "min_consumer": 0}


def graph_def_of(nodes: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """A GraphDef of ``nodes`` (NodeDefs, ``node_def_of``) at this version."""
    return {"node": nodes, "versions": graph_def_versions(), **fields}


# TensorFlow op types that are another name of an op nbflow declares.
TF_OP_ALIASES = {"AddV2": "Add"}


def encode_attr(value: Any) -> Any:
    if isinstance(value, dtypes.DType):
        return {"type": value.name}
    if isinstance(value, TensorShape):
        return {"shape": None if value.ndims is None else value.as_list()}
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return {"tensor": encode_array(np.asarray(value))}
    if isinstance(value, (list, tuple)):
        return {"list": [encode_attr(v) for v in value]}
    if isinstance(value, bytes):
        return {"s": base64.b64encode(value).decode("ascii")}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {"dict": {k: encode_attr(v) for k, v in value.items()}}
    raise TypeError(f"Cannot serialise attr value {value!r} of type {type(value).__name__}")


def decode_attr(value: Any) -> Any:
    if isinstance(value, dict):
        if "type" in value:
            return dtypes.as_dtype(value["type"])
        if "shape" in value:
            return TensorShape(value["shape"])
        if "tensor" in value:
            return decode_array(value["tensor"])
        if "list" in value:
            return [decode_attr(v) for v in value["list"]]
        if "s" in value:
            return base64.b64decode(value["s"])
        if "dict" in value:
            return {k: decode_attr(v) for k, v in value["dict"].items()}
    return value


def encode_array(array: np.ndarray) -> dict[str, Any]:
    dtype = dtypes.as_dtype(array.dtype)
    if dtype is dtypes.string:
        items = [v if isinstance(v, bytes) else str(v).encode() for v in array.ravel()]
        return {
            "dtype": "string",
            "shape": list(array.shape),
            "strings": [base64.b64encode(v).decode("ascii") for v in items],
        }
    if array.size <= 16:
        values = array.ravel().tolist()
        if dtype.is_complex:
            values = [[v.real, v.imag] for v in values]
        elif dtype is dtypes.bfloat16:
            values = array.astype(np.float32).ravel().tolist()
        return {"dtype": dtype.name, "shape": list(array.shape), "values": values}
    raw = np.ascontiguousarray(array).tobytes()
    return {
        "dtype": dtype.name,
        "shape": list(array.shape),
        "content": base64.b64encode(raw).decode("ascii"),
    }


def decode_array(spec: dict[str, Any]) -> np.ndarray:
    dtype = dtypes.as_dtype(spec["dtype"])
    shape = tuple(spec["shape"])
    if dtype is dtypes.string:
        values: list[Any] = [base64.b64decode(v) for v in spec["strings"]]
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out.reshape(shape)
    if "content" in spec:
        return (
            np.frombuffer(base64.b64decode(spec["content"]), dtype=dtype.np).reshape(shape).copy()
        )
    values = spec["values"]
    if dtype.is_complex:
        values = [complex(re, im) for re, im in values]
    return np.array(values, dtype=dtype.np).reshape(shape)


def node_def_of(op: Any, add_specs: bool = False) -> dict[str, Any]:
    """One op as a NodeDef dict; ``add_specs`` records its outputs' inferred shapes and dtypes
    (``_output_shapes``, as TensorFlow writes it, and ``_output_types``), so that
    ``import_graph_def(..., trusted_shapes=True)`` rebuilds it without its shape function."""
    inputs = [t.op.name if t.value_index == 0 else t.name for t in op._inputs]
    inputs += [f"^{c.name}" for c in op._control_inputs]
    node = {
        "name": op.name,
        "op": op.type,
        "input": inputs,
        "device": op.device,
        "attr": {k: encode_attr(v) for k, v in op.attrs.items()},
    }
    if add_specs:
        node["attr"]["_output_shapes"] = encode_attr([t.shape for t in op.outputs])
        node["attr"]["_output_types"] = encode_attr([t.dtype for t in op.outputs])
    return node


SourceNamer = Callable[[str, int], "str | None"]
_source_namers: list[SourceNamer] = []


def register_source_namer(namer: SourceNamer) -> None:
    """Let a higher layer name creation sites: ``namer(filename, line)`` answers a ``_source``
    text (the notebook layer: "cell:ID#N:line" for a cell's file) or None to pass."""
    if namer not in _source_namers:
        _source_namers.append(namer)


def source_of(op: Any) -> str | None:
    """Where ``op`` was created, as its ``_source`` attr says it; None when not recorded."""
    site = op.traceback
    if not site:
        return None
    filename, line, _ = site
    for namer in _source_namers:
        named = namer(filename, line)
        if named:
            return named
    return f"{filename}:{line}"


def graph_to_graph_def(graph: Any, add_shapes: bool = False) -> dict[str, Any]:
    nodes = []
    for op in graph.get_operations():
        node = node_def_of(op, add_specs=add_shapes)
        if add_shapes:
            source = source_of(op)
            if source:
                node["attr"]["_source"] = source
        nodes.append(node)
    return graph_def_of(nodes)


def to_json(graph_def: dict[str, Any], indent: int | None = None) -> str:
    return json.dumps(graph_def, indent=indent)
