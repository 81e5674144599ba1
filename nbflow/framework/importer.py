"""``import_graph_def``: a GraphDef (nbflow's dict, its JSON or TensorFlow's protobuf) into a graph.

Ops are rebuilt through the registry, so an imported graph runs like the original. TensorFlow's
``GraphDef`` protocol buffer (``tf.GraphDef``, e.g. parsed from a frozen ``.pb`` or a text
``.pbtxt``) is read too: attrs TensorFlow records that nbflow's op does not declare (``T``,
``grad_a``) are dropped, the few op types TensorFlow names differently are mapped (``AddV2`` is
``Add``), and every op type nbflow lacks is named in one error. Before anything is added to the
graph, the GraphDef's structure is checked: each node a name, an op type and a list of string
inputs, names unique, inputs present, no cycle except a loop's back edge. A loop's back edge
(NextIteration -> Merge) is patched in once both ends exist.
"""

from __future__ import annotations

import json
from typing import Any
from collections.abc import Sequence

from nbflow import errors
from nbflow.framework import ops as ops_lib
from nbflow.framework import protos
from nbflow.framework.graph_def import TF_OP_ALIASES, decode_attr
from nbflow.framework.op_def import TensorSpec, get_op_def, lookup_op_def, registered_ops


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
    *,
    trusted_shapes: bool = False,
) -> list[Any] | None:
    """Import a GraphDef into the default graph under scope ``name`` (default "import").

    ``input_map`` maps tensor names of the GraphDef to tensors of the default graph that
    replace them; ``return_elements`` names the ops or tensors to return.

    ``trusted_shapes``: a node carrying ``_output_shapes`` and ``_output_types`` (written by
    ``node_def_of(op, add_specs=True)``: nbflow's own, already inferred graph) gets those as
    its outputs and its shape function is not run. For GraphDefs a master of this codebase
    wrote, e.g. a distributed task's partition; other nodes are inferred as usual.
    """
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
            shapes = attrs.pop("_output_shapes", None)
            types = attrs.pop("_output_types", None)
            attrs.pop("_source", None)  # where the op was created, for viewers
            specs = None
            if trusted_shapes and shapes is not None and types is not None:
                specs = [TensorSpec(shape, dtype) for shape, dtype in zip(shapes, types)]
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
                    output_specs=specs,
                )
            created[node_name] = op
    for node_name, slot, src, index in back_edges:
        created[node_name]._update_input(slot, created[src].outputs[index])
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
    kinds = {n["name"]: lookup_op_def(n["op"]).control_kind for n in nodes}
    deps = {}
    for n in nodes:
        sources = [_parse_input(i)[0] for i in n.get("input", [])]
        if kinds[n["name"]] == "merge":
            sources = [s for s in sources if kinds.get(s) != "next_iteration"]
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
