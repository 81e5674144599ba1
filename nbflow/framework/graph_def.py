"""GraphDef: a graph as a plain JSON-serialisable dict, and back.

    {"node": [{"name": "MatMul", "op": "MatMul", "input": ["a", "b:0", "^init"],
               "device": "", "attr": {"transpose_a": false, ...}}], "versions": {...}}

Attr values are tagged where JSON has no type of their own: ``{"type": "float32"}`` for a
DType, ``{"shape": [2, null]}`` for a TensorShape, ``{"tensor": {...}}`` for an array.
``import_graph_def`` rebuilds ops through the registry, so an imported graph runs like the original.

``import_graph_def`` also takes TensorFlow's ``GraphDef`` protocol buffer (``tf.GraphDef``, e.g.
parsed from a frozen ``.pb`` or a text ``.pbtxt``): attrs TensorFlow records that nbflow's op does
not declare (``T``, ``grad_a``) are dropped, the few op types TensorFlow names differently are
mapped (``AddV2`` is ``Add``), and every op type nbflow lacks is named in one error. Before
anything is added to the graph, the GraphDef's structure is checked: each node a name, an op type
and a list of string inputs, names unique, inputs present, no cycle except a loop's back edge.

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
from collections.abc import Callable, Sequence

import numpy as np

from nbflow import errors
from nbflow.framework import dtypes, protos
from nbflow.framework.tensor_shape import TensorShape

GRAPH_DEF_VERSION = 1
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
        values = [base64.b64decode(v) for v in spec["strings"]]
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


def node_def_of(op: Any) -> dict[str, Any]:
    inputs = [t.op.name if t.value_index == 0 else t.name for t in op._inputs]
    inputs += [f"^{c.name}" for c in op._control_inputs]
    node = {
        "name": op.name,
        "op": op.type,
        "input": inputs,
        "device": op.device,
        "attr": {k: encode_attr(v) for k, v in op.attrs.items()},
    }
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
        node = node_def_of(op)
        if add_shapes:
            node["attr"]["_output_shapes"] = encode_attr([t.shape for t in op.outputs])
            node["attr"]["_output_types"] = encode_attr([t.dtype for t in op.outputs])
            source = source_of(op)
            if source:
                node["attr"]["_source"] = source
        nodes.append(node)
    return {"node": nodes, "versions": {"producer": GRAPH_DEF_VERSION, "min_consumer": 0}}


def to_json(graph_def: dict[str, Any], indent: int | None = None) -> str:
    return json.dumps(graph_def, indent=indent)


def _parse_input(name: str) -> tuple[str, int, bool]:
    if name.startswith("^"):
        return name[1:], -1, True
    op_name, sep, index = name.rpartition(":")
    if sep and index.isdigit():
        return op_name, int(index), False
    return name, 0, False


def import_graph_def(
    graph_def: dict[str, Any] | str,
    input_map: dict[str, Any] | None = None,
    return_elements: Sequence[str] | None = None,
    name: str | None = None,
    op_dict: Any = None,
    producer_op_list: Any = None,
) -> list[Any] | None:
    """Import a GraphDef into the default graph under scope ``name`` (default "import").

    ``input_map`` maps tensor names of the GraphDef to tensors of the default graph that
    replace them; ``return_elements`` names the ops or tensors to return.
    """
    from nbflow.framework import ops as ops_lib
    from nbflow.framework.op_def import get_op_def

    graph_def = as_graph_def_dict(graph_def)
    _validate_structure(graph_def)
    graph = ops_lib.get_default_graph()
    input_map = {_canonical(k): ops_lib.convert_to_tensor(v) for k, v in (input_map or {}).items()}
    nodes = {n["name"]: n for n in graph_def["node"]}
    _check_op_types(graph_def["node"])  # unknown op types fail before anything is added
    used_inputs: set[str] = set()
    created: dict[str, Any] = {}
    scope = "import" if name is None else name
    order = _topological_names(graph_def["node"])
    back_edges: list[tuple[str, int, str, int]] = []  # (Merge, input slot, NextIteration, k)
    with graph.name_scope(scope or None) as prefix:
        for node_name in order:
            node = nodes[node_name]
            op_type = TF_OP_ALIASES.get(node["op"], node["op"])
            opdef = get_op_def(op_type)
            attrs = {
                k: decode_attr(v)
                for k, v in node.get("attr", {}).items()
                if k in opdef.attrs or k.startswith("_") or k == "N"
            }
            for viewer_attr in ("_output_shapes", "_output_types", "_source"):
                attrs.pop(viewer_attr, None)
            if prefix and "frame_name" in attrs:  # each imported copy of a loop is its own frame
                attrs["frame_name"] = f"{prefix}{attrs['frame_name']}"
            if "_class" in attrs:
                attrs["_class"] = [
                    f"loc:@{prefix}{c[5:]}" if c.startswith("loc:@") else c for c in attrs["_class"]
                ]
            data, controls = [], []
            for spec in node.get("input", []):
                src, index, is_control = _parse_input(spec)
                if is_control:
                    controls.append(created[src])
                    continue
                key = f"{src}:{index}"
                if key in input_map:
                    used_inputs.add(key)
                    data.append(input_map[key])
                elif src not in created:  # a loop's back edge: patched once NextIteration exists
                    back_edges.append((node_name, len(data), src, index))
                    data.append(None)
                else:
                    data.append(created[src].outputs[index])
            data = [d if d is not None else next(x for x in data if x is not None) for d in data]
            grouped = opdef.group_inputs(data, attrs) if opdef.list_inputs else data
            with graph.device(node.get("device") or None) if node.get("device") else _null():
                op = graph.create_op(
                    op_type,
                    grouped,
                    attrs,
                    name=f"{prefix}{node_name}/" if prefix else f"{node_name}/",
                    control_inputs=controls,
                )
            created[node_name] = op
    for node_name, slot, src, index in back_edges:
        from nbflow.ops.control_flow_ops import _replace_input

        _replace_input(created[node_name], slot, created[src].outputs[index])
    missing = set(input_map) - used_inputs
    if missing:
        raise ValueError(
            "Attempted to map inputs that were not found in graph_def: "
            f"[{', '.join(sorted(missing))}]"
        )
    if return_elements is None:
        return None
    out = []
    for element in return_elements:
        op_name, index, _ = _parse_input(element)
        if op_name not in created:
            raise ValueError(f"Requested return_element {element!r} not found in graph_def.")
        out.append(created[op_name].outputs[index] if ":" in element else created[op_name])
    return out


def as_graph_def_dict(graph_def: Any) -> dict[str, Any]:
    """nbflow's dict form of a GraphDef given as a dict, JSON text or TensorFlow's protobuf."""
    if isinstance(graph_def, protos.GraphDef):
        return protos.graph_proto_to_dict(graph_def)
    if isinstance(graph_def, (str, bytes)):
        try:
            graph_def = json.loads(graph_def)
        except ValueError as e:
            raise TypeError(
                f"graph_def must be a GraphDef proto: got a string that is not nbflow's JSON "
                f"GraphDef either ({e}); parse a binary or text GraphDef into tf.GraphDef() first"
            ) from None
    if not isinstance(graph_def, dict) or not isinstance(graph_def.get("node", []), (list, tuple)):
        raise TypeError(
            f"graph_def must be a tf.GraphDef or a dict with a 'node' list, got "
            f"{type(graph_def).__name__}"
        )
    return graph_def


def _validate_structure(graph_def: dict[str, Any]) -> None:
    """Raise ValueError naming the first node that is not a well-formed NodeDef."""
    seen: set[str] = set()
    for k, node in enumerate(graph_def.get("node", [])):
        if not isinstance(node, dict) or not isinstance(node.get("name"), str) or not node["name"]:
            raise ValueError(f"graph_def node #{k} has no name: {str(node)[:80]}")
        name = node["name"]
        if not isinstance(node.get("op"), str) or not node["op"]:
            raise ValueError(f"Node '{name}' of graph_def has no op type: {str(node)[:80]}")
        inputs = node.get("input", [])
        if not isinstance(inputs, (list, tuple)) or not all(isinstance(i, str) for i in inputs):
            raise ValueError(
                f"Node '{name}': 'input' must be a list of tensor names, got {inputs!r}"
            )
        if not isinstance(node.get("attr", {}), dict):
            raise ValueError(f"Node '{name}': 'attr' must be a mapping, got {node['attr']!r}")
        if name in seen:
            raise ValueError(f"Node '{name}' appears twice in graph_def")
        seen.add(name)
    graph_def.setdefault("node", [])


def _check_op_types(nodes: list[dict[str, Any]]) -> None:
    from nbflow.framework.op_def import registered_ops

    known = registered_ops()
    missing: dict[str, list[str]] = {}
    for node in nodes:
        if TF_OP_ALIASES.get(node["op"], node["op"]) not in known:
            missing.setdefault(node["op"], []).append(node["name"])
    if missing:
        listed = "; ".join(
            f"{op} (node{'s' if len(names) > 1 else ''} {', '.join(names[:3])}"
            f"{', ...' if len(names) > 3 else ''})"
            for op, names in sorted(missing.items())
        )
        raise errors.NotFoundError(
            None,
            None,
            f"Op type not registered in nbflow: the graph_def uses {len(missing)} op type(s) "
            f"nbflow does not implement: {listed}",
        )


def _canonical(name: str) -> str:
    return name if ":" in name else f"{name}:0"


def _topological_names(nodes: list[dict[str, Any]]) -> list[str]:
    """Node names ordered so every node's inputs come first; loop back edges are cut: a Merge
    does not wait for its NextIteration input (patched in after the loop body is built)."""
    kinds = {n["name"]: n["op"] for n in nodes}
    deps = {}
    for n in nodes:
        sources = [_parse_input(i)[0] for i in n.get("input", [])]
        if n["op"] in ("Merge", "RefMerge"):
            back = ("NextIteration", "RefNextIteration")
            sources = [s for s in sources if kinds.get(s) not in back]
        deps[n["name"]] = sources
    order: list[str] = []
    state: dict[str, int] = {}
    for root in deps:
        stack = [(root, iter(deps[root]))]
        if state.get(root):
            continue
        state[root] = 1
        while stack:
            name, children = stack[-1]
            for child in children:
                if child not in deps:
                    raise ValueError(f"Node '{name}' has an input '{child}' not in the graph_def")
                if state.get(child) == 1:
                    cycle = [n for n, _ in stack]
                    cycle = cycle[cycle.index(child) :] + [child]
                    raise ValueError(
                        f"graph_def has a cycle through node '{child}': {' -> '.join(cycle)} "
                        "(only a loop's NextIteration -> Merge edge may close a cycle)"
                    )
                if not state.get(child):
                    state[child] = 1
                    stack.append((child, iter(deps[child])))
                    break
            else:
                stack.pop()
                state[name] = 2
                order.append(name)
    return order


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None
