"""``tf.graph_util``: GraphDef transformations for deployment, chiefly freezing.

    frozen = tf.graph_util.convert_variables_to_constants(sess, sess.graph_def, ["softmax"])
    # every variable the outputs need is now a Const holding its current value

Each function takes TensorFlow's ``GraphDef`` proto (``tf.GraphDef``) or nbflow's dict form
(``nbflow.framework.graph_def``) and returns the same kind it was given.
"""

from __future__ import annotations

import copy
from typing import Any
from collections.abc import Iterable, Sequence

from nbflow.framework import dtypes, protos
from nbflow.framework.graph_def import decode_attr, encode_attr
from nbflow.framework.op_def import lookup_op_def
from nbflow.framework.tensor_shape import TensorShape


def _node_name(name: str) -> str:
    name = name[1:] if name.startswith("^") else name
    return name.split(":")[0]


def _as_dict(graph_def: Any) -> dict[str, Any]:
    if isinstance(graph_def, protos.GraphDef):
        return protos.graph_proto_to_dict(graph_def)
    return graph_def


def _like(result: dict[str, Any], given: Any) -> Any:
    """``result`` in the form the caller gave: a GraphDef proto or nbflow's dict."""
    return protos.graph_def_to_proto(result) if isinstance(given, protos.GraphDef) else result


def extract_sub_graph(graph_def: Any, dest_nodes: Sequence[str]) -> Any:
    """The nodes ``dest_nodes`` depend on (data and control inputs), in the original order."""
    return _like(_extract_sub_graph(_as_dict(graph_def), dest_nodes), graph_def)


def _extract_sub_graph(graph_def: dict[str, Any], dest_nodes: Sequence[str]) -> dict[str, Any]:
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be a list.")
    by_name = {n["name"]: n for n in graph_def["node"]}
    missing = [d for d in dest_nodes if _node_name(d) not in by_name]
    if missing:
        raise AssertionError(f"{missing[0]} is not in graph")
    keep: set[str] = set()
    stack = [_node_name(d) for d in dest_nodes]
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        stack.extend(_node_name(i) for i in by_name[name].get("input", []))
    return {
        **{k: v for k, v in graph_def.items() if k != "node"},
        "node": [copy.deepcopy(n) for n in graph_def["node"] if n["name"] in keep],
    }


def convert_variables_to_constants(
    sess: Any,
    input_graph_def: Any,
    output_node_names: Sequence[str],
    variable_names_whitelist: Iterable[str] | None = None,
    variable_names_blacklist: Iterable[str] | None = None,
) -> Any:
    """Freeze: the subgraph for ``output_node_names`` with variables replaced by constants.

    The constants hold the variables' values in ``sess`` now; the result needs no checkpoint.
    """
    graph_def = _extract_sub_graph(_as_dict(input_graph_def), output_node_names)
    allow = set(variable_names_whitelist) if variable_names_whitelist is not None else None
    deny = set(variable_names_blacklist or ())
    names = [
        n["name"]
        for n in graph_def["node"]
        if lookup_op_def(n["op"]).is_variable
        and (allow is None or n["name"] in allow)
        and n["name"] not in deny
    ]
    values = sess.run([f"{name}:0" for name in names]) if names else []
    frozen = dict(zip(names, values))
    for node in graph_def["node"]:
        if node["name"] in frozen:
            value = frozen[node["name"]]
            dtype = dtypes.as_dtype(value.dtype)
            node["op"] = "Const"
            node["input"] = []
            node["attr"] = {"value": encode_attr(value), "dtype": encode_attr(dtype)}
    return _like(graph_def, input_graph_def)


def remove_training_nodes(input_graph: Any, protected_nodes: Sequence[str] | None = None) -> Any:
    """Drop Identity and CheckNumerics nodes (not ``protected_nodes``), rewiring consumers."""
    given, input_graph = input_graph, _as_dict(input_graph)
    protected = set(protected_nodes or ())
    removed: dict[str, str] = {}
    for node in input_graph["node"]:
        if lookup_op_def(node["op"]).removed_for_inference and node["name"] not in protected:
            data = [i for i in node.get("input", []) if not i.startswith("^")]
            if len(data) == 1 and len(data) == len(node.get("input", [])):
                removed[node["name"]] = data[0]

    def resolve(name: str) -> str:
        control = name.startswith("^")
        base = _node_name(name)
        seen = 0
        while base in removed and seen < len(removed):
            name, base, seen = removed[base], _node_name(removed[base]), seen + 1
        return f"^{_node_name(name)}" if control else name

    nodes = []
    for node in input_graph["node"]:
        if node["name"] in removed:
            continue
        node = copy.deepcopy(node)
        node["input"] = [resolve(i) for i in node.get("input", [])]
        nodes.append(node)
    return _like({**{k: v for k, v in input_graph.items() if k != "node"}, "node": nodes}, given)


def tensor_shape_from_node_def_name(graph: Any, input_name: str) -> TensorShape:
    """The static shape of the tensor named ``input_name`` ("op" means "op:0")."""
    name = input_name if ":" in input_name else f"{input_name}:0"
    return graph.get_tensor_by_name(name).shape


def must_run_on_cpu(node: Any, pin_variables_on_cpu: bool = False) -> bool:
    """Whether a node (Operation or NodeDef dict) must be placed on the CPU."""
    if isinstance(node, dict):
        op_type = node["op"]
        attr = {k: decode_attr(v) for k, v in node.get("attr", {}).items()}
    else:
        # TensorFlow's NodeDef carries type attrs (Cast's SrcT) that nbflow's op derives from
        # its inputs
        op_type, attr = node.type, {**node.op_def.type_attr_values(node), **node.attrs}
    opdef = lookup_op_def(op_type)
    if pin_variables_on_cpu and opdef.is_variable:
        return True
    return opdef.must_run_on_cpu(attr)
