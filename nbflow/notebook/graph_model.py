"""The graph view's model: pure functions from a GraphDef to what a front end draws.

TensorBoard's graph view (whitepaper §9.1) makes big graphs readable in three steps, all done
here in Python so that only the *visible* part of a 10,000-node graph is sent to the browser:

1. **Collapse name scopes.** Op ``a/b/MatMul`` lives in group ``a/b/`` inside group ``a/``
   (group ids end in "/", op ids are op names). A view is a set of expanded groups; every op is
   drawn as its outermost collapsed ancestor group, or as itself when all its ancestors are
   expanded. Edges between ops become edges between the items that show them, counted.
2. **Mark identical structure.** Each group gets a fingerprint from the op types it holds and
   the (source type, destination type) pairs of its internal edges, so two layers built by the
   same function match even though their op names differ; groups sharing one get a class id.
3. **Set bookkeeping aside.** Ops that most of the graph touches (init, save, summaries,
   global_step, or any op above a degree threshold) would tie every part of the drawing to one
   point; they are listed in a side area and their edges are not drawn.

``layout_view`` then places the visible items with a compound layered layout: each expanded
group is laid out on its own (recursively) and becomes one big box in its parent's layout. A
layer assignment by longest path (cycles such as loop back edges broken by DFS), a few
barycenter sweeps to reduce crossings, then packing per layer.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

NODE_W, NODE_H = 110.0, 28.0
GROUP_W, GROUP_H = 150.0, 40.0
GAP_X, GAP_Y, PAD = 24.0, 46.0, 16.0

DEVICE_PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
STRUCTURE_PALETTE = ("#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb", "#fcbba1", "#d9d9d9")


@dataclass(frozen=True)
class BookkeepingRules:
    """Which ops are set aside: names and op types that do bookkeeping, and high degree."""

    name_patterns: tuple[str, ...] = (
        r"(^|/)init(_\d+)?$",
        r"^save(_\d+)?(/|$)",
        r"(^|/)global_step(/|$)",
        r"^report_uninitialized_variables(_\d+)?(/|$)",
        r"(^|/)summaries(_\d+)?(/|$)",
    )
    op_types: tuple[str, ...] = (
        "SaveV2",
        "RestoreV2",
        "MergeSummary",
        "ScalarSummary",
        "HistogramSummary",
        "ImageSummary",
        "TensorSummary",
    )
    degree_threshold: int = 40

    def matches(self, name: str, op_type: str, degree: int) -> bool:
        if op_type in self.op_types or degree >= self.degree_threshold:
            return True
        return any(re.search(p, name) for p in self.name_patterns)


@dataclass
class Group:
    id: str  # "a/b/"
    parent: str  # "" for the root
    groups: list[str] = field(default_factory=list)
    ops: list[int] = field(default_factory=list)
    op_count: int = 0
    devices: set[str] = field(default_factory=set)
    fingerprint: int = 0
    identical_class: int | None = None

    @property
    def label(self) -> str:
        return self.id[:-1].rsplit("/", 1)[-1]


@dataclass
class GraphModel:
    """Ops, edges and the scope tree of a graph, indexed for fast views."""

    names: list[str]
    types: list[str]
    devices: list[str]
    edges: list[tuple[int, int, bool]]  # (source op, destination op, is control)
    chains: list[tuple[str, ...]]  # each op's enclosing groups, outermost first
    groups: dict[str, Group]
    aside: set[int]
    index: dict[str, int]

    @property
    def num_ops(self) -> int:
        return len(self.names)

    def parent_of(self, i: int) -> str:
        return self.chains[i][-1] if self.chains[i] else ""


def _nodes_of_graph(graph: Any) -> list[dict[str, Any]]:
    nodes = []
    for op in graph.get_operations():
        inputs = [t.op.name for t in op._inputs]
        inputs += ["^" + c.name for c in op._control_inputs]
        nodes.append({"name": op.name, "op": op.type, "input": inputs, "device": op.device})
    return nodes


def build_model(
    graph_or_def: Any, rules: BookkeepingRules | None = None, set_aside: bool = True
) -> GraphModel:
    """Index a Graph or GraphDef dict: scope tree, edges, fingerprints, bookkeeping ops."""
    if isinstance(graph_or_def, dict):
        nodes = graph_or_def.get("node", [])
    else:
        nodes = _nodes_of_graph(graph_or_def)
    names = [n["name"] for n in nodes]
    index = {name: i for i, name in enumerate(names)}
    types = [n["op"] for n in nodes]
    devices = [n.get("device", "") or "" for n in nodes]
    edges: list[tuple[int, int, bool]] = []
    for d, n in enumerate(nodes):
        for spec in n.get("input", []):
            control = spec.startswith("^")
            src = spec[1:] if control else spec.rsplit(":", 1)[0] if ":" in spec else spec
            s = index.get(src)
            if s is not None:
                edges.append((s, d, control))
    groups: dict[str, Group] = {"": Group("", "")}
    chains: list[tuple[str, ...]] = []
    for i, name in enumerate(names):
        parts = name.split("/")[:-1]
        chain = tuple("/".join(parts[: k + 1]) + "/" for k in range(len(parts)))
        chains.append(chain)
        parent = ""
        for g in chain:
            group = groups.get(g)
            if group is None:
                group = groups[g] = Group(g, parent)
                groups[parent].groups.append(g)
            group.op_count += 1
            group.devices.add(devices[i])
            parent = g
        groups[parent].ops.append(i)
    groups[""].op_count = len(names)
    model = GraphModel(names, types, devices, edges, chains, groups, set(), index)
    _fingerprint(model)
    if set_aside:
        model.aside = pick_bookkeeping(model, rules or BookkeepingRules())
    return model


def _fingerprint(model: GraphModel) -> None:
    """Give groups of identical structure (op types and internal edge types) one class id."""
    parts: dict[str, list[Any]] = defaultdict(list)
    for i, chain in enumerate(model.chains):
        for g in chain:
            parts[g].append(model.types[i])
    for s, d, control in model.edges:
        cs, cd = model.chains[s], model.chains[d]
        for g1, g2 in zip(cs, cd):
            if g1 != g2:
                break
            parts[g1].append((model.types[s], model.types[d], control))
    by_print: dict[int, list[str]] = defaultdict(list)
    for g, items in parts.items():
        group = model.groups[g]
        group.fingerprint = hash(tuple(sorted(items, key=repr)))
        if group.op_count >= 2:
            by_print[group.fingerprint].append(g)
    klass = 0
    for members in by_print.values():
        if len(members) >= 2:
            for g in members:
                model.groups[g].identical_class = klass
            klass += 1


def pick_bookkeeping(model: GraphModel, rules: BookkeepingRules) -> set[int]:
    """The ops to set aside: named or typed as bookkeeping, or of very high degree."""
    degree = [0] * model.num_ops
    for s, d, _ in model.edges:
        degree[s] += 1
        degree[d] += 1
    return {
        i for i in range(model.num_ops) if rules.matches(model.names[i], model.types[i], degree[i])
    }


def visible_item(model: GraphModel, i: int, expanded: set[str]) -> str:
    """The id of the item that shows op ``i``: its outermost collapsed group, or the op."""
    for g in model.chains[i]:
        if g not in expanded:
            return g
    return model.names[i]


def collapse(
    model: GraphModel, expanded: Iterable[str] = ()
) -> tuple[list[str], dict[tuple[str, str], list[int]]]:
    """Visible item ids and the counted edges between them (``[data, control]`` counts)."""
    expanded = set(expanded)
    item_of = [visible_item(model, i, expanded) for i in range(model.num_ops)]
    items = list(dict.fromkeys(item_of[i] for i in range(model.num_ops) if i not in model.aside))
    edges: dict[tuple[str, str], list[int]] = {}
    aside = model.aside
    for s, d, control in model.edges:
        if s in aside or d in aside:
            continue
        a, b = item_of[s], item_of[d]
        if a != b:
            counts = edges.setdefault((a, b), [0, 0])
            counts[1 if control else 0] += 1
    return items, edges


def device_colors(model: GraphModel) -> dict[str, str]:
    devices = sorted(set(model.devices))
    return {d: DEVICE_PALETTE[k % len(DEVICE_PALETTE)] for k, d in enumerate(devices)}


def _container_chain(model: GraphModel, item: str) -> tuple[str, ...]:
    if item.endswith("/"):
        parts = item[:-1].split("/")[:-1]
    else:
        parts = model.names[model.index[item]].split("/")[:-1]
    return tuple("/".join(parts[: k + 1]) + "/" for k in range(len(parts)))


def layout_view(
    model: GraphModel, expanded: Iterable[str] = (), color_by: str = "device"
) -> dict[str, Any]:
    """Place the visible items of a view; returns plain JSON for the front end.

    ``{"nodes": [...], "edges": [...], "aside": [...], "width", "height", "devices"}``; each
    node has id, label, kind ("op" | "group"), x, y, w, h (top-left based), fill, and for
    groups the op count, expanded flag and identical-structure class.
    """
    expanded = {g for g in expanded if g in model.groups}
    items, edges = collapse(model, expanded)
    # Containers: expanded groups holding visible items (and expanded groups inside them).
    children: dict[str, list[str]] = defaultdict(list)
    for item in items:
        chain = _container_chain(model, item)
        parent = ""
        for g in chain:
            if g not in expanded:
                break
            if g not in children[parent]:
                children[parent].append(g)
            parent = g
        children[parent].append(item)
    local_edges: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for a, b in edges:
        ca = [g for g in _container_chain(model, a) if g in expanded]
        cb = [g for g in _container_chain(model, b) if g in expanded]
        k = 0
        while k < len(ca) and k < len(cb) and ca[k] == cb[k]:
            k += 1
        container = ca[k - 1] if k else ""
        local_edges[container].append((ca[k] if len(ca) > k else a, cb[k] if len(cb) > k else b))
    colors = device_colors(model)
    sizes: dict[str, tuple[float, float]] = {}
    offsets: dict[str, tuple[float, float]] = {}

    def place(container: str) -> tuple[float, float]:
        members = children.get(container, [])
        for m in members:
            if m in expanded:
                w, h = place(m)
                sizes[m] = (w + 2 * PAD, h + 2 * PAD + 18)
            elif m.endswith("/"):
                sizes[m] = (GROUP_W, GROUP_H)
            else:
                sizes[m] = (NODE_W, NODE_H)
        positions, w, h = _layered(members, local_edges.get(container, []), sizes)
        for m, xy in positions.items():
            offsets[m] = xy
        return w, h

    width, height = place("")
    nodes: list[dict[str, Any]] = []

    def emit(container: str, ox: float, oy: float) -> None:
        for m in children.get(container, []):
            x, y = offsets[m][0] + ox, offsets[m][1] + oy
            w, h = sizes[m]
            nodes.append(_node_json(model, m, x, y, w, h, m in expanded, colors, color_by))
            if m in expanded:
                emit(m, x + PAD, y + PAD + 18)

    emit("", 0.0, 0.0)
    where = {n["id"]: n for n in nodes}
    edge_json = []
    for (a, b), (data, control) in edges.items():
        na, nb = where[a], where[b]
        edge_json.append(
            {
                "source": a,
                "target": b,
                "count": data + control,
                "control": data == 0,
                "points": [
                    [na["x"] + na["w"] / 2, na["y"] + na["h"]],
                    [nb["x"] + nb["w"] / 2, nb["y"]],
                ],
            }
        )
    aside = _aside_json(model, width, colors)
    return {
        "nodes": nodes,
        "edges": edge_json,
        "aside": aside,
        "width": width + (NODE_W + 3 * GAP_X if aside else 0),
        "height": max(height, len(aside) * (NODE_H + 8)),
        "devices": colors,
        "num_ops": model.num_ops,
    }


def _node_json(
    model: GraphModel,
    item: str,
    x: float,
    y: float,
    w: float,
    h: float,
    is_expanded: bool,
    colors: dict[str, str],
    color_by: str,
) -> dict[str, Any]:
    if item.endswith("/"):
        group = model.groups[item]
        device = next(iter(group.devices)) if len(group.devices) == 1 else "mixed"
        klass = group.identical_class
        if color_by == "structure" and klass is not None:
            fill = STRUCTURE_PALETTE[klass % len(STRUCTURE_PALETTE)]
        else:
            fill = colors.get(device, "#cccccc")
        return {
            "id": item,
            "label": group.label,
            "kind": "group",
            "op": "",
            "count": group.op_count,
            "device": device,
            "expanded": is_expanded,
            "identical": klass,
            "fill": fill,
            "x": x,
            "y": y,
            "w": w,
            "h": h,
        }
    i = model.index[item]
    device = model.devices[i]
    return {
        "id": item,
        "label": item.rsplit("/", 1)[-1],
        "kind": "op",
        "op": model.types[i],
        "count": 1,
        "device": device,
        "expanded": False,
        "identical": None,
        "fill": colors.get(device, "#cccccc"),
        "x": x,
        "y": y,
        "w": w,
        "h": h,
    }


def _aside_json(model: GraphModel, width: float, colors: dict[str, str]) -> list[dict[str, Any]]:
    degree: dict[int, int] = defaultdict(int)
    for s, d, _ in model.edges:
        if s in model.aside:
            degree[s] += 1
        if d in model.aside:
            degree[d] += 1
    out = []
    x = width + 2 * GAP_X
    for k, i in enumerate(sorted(model.aside, key=lambda i: model.names[i])):
        out.append(
            {
                "id": model.names[i],
                "label": model.names[i],
                "kind": "op",
                "op": model.types[i],
                "degree": degree[i],
                "device": model.devices[i],
                "fill": colors.get(model.devices[i], "#cccccc"),
                "x": x,
                "y": k * (NODE_H + 8),
                "w": NODE_W,
                "h": NODE_H,
            }
        )
    return out


def _layered(
    members: list[str], edges: list[tuple[str, str]], sizes: dict[str, tuple[float, float]]
) -> tuple[dict[str, tuple[float, float]], float, float]:
    """Layered layout of one container: longest-path layers, barycenter order, packing."""
    if not members:
        return {}, GROUP_W, GROUP_H / 2
    pos = {m: k for k, m in enumerate(members)}
    succ: list[list[int]] = [[] for _ in members]
    pred: list[list[int]] = [[] for _ in members]
    for a, b in set(edges):
        if a in pos and b in pos and a != b:
            succ[pos[a]].append(pos[b])
    # Break cycles: drop edges that point back to a node on the DFS stack.
    state = [0] * len(members)
    for root in range(len(members)):
        if state[root]:
            continue
        stack = [(root, iter(list(succ[root])))]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            for nxt in it:
                if state[nxt] == 1:
                    succ[node].remove(nxt)
                elif state[nxt] == 0:
                    state[nxt] = 1
                    stack.append((nxt, iter(list(succ[nxt]))))
                    break
            else:
                state[node] = 2
                stack.pop()
    for i, outs in enumerate(succ):
        for j in outs:
            pred[j].append(i)
    # Longest-path layering in topological order (Kahn).
    indegree = [len(p) for p in pred]
    layer = [0] * len(members)
    ready = [k for k, n in enumerate(indegree) if n == 0]
    while ready:
        node = ready.pop()
        for nxt in succ[node]:
            layer[nxt] = max(layer[nxt], layer[node] + 1)
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    layers: list[list[int]] = [[] for _ in range(max(layer) + 1)]
    for k in range(len(members)):
        layers[layer[k]].append(k)
    order = [0.0] * len(members)
    for row in layers:
        for k, node in enumerate(row):
            order[node] = k
    for sweep in range(4):  # barycenter: down, up, down, up
        down = sweep % 2 == 0
        rows = layers[1:] if down else layers[-2::-1]
        for row in rows:
            keys = {}
            for node in row:
                nbrs = pred[node] if down else succ[node]
                keys[node] = sum(order[n] for n in nbrs) / len(nbrs) if nbrs else order[node]
            row.sort(key=keys.__getitem__)
            for k, node in enumerate(row):
                order[node] = k
    positions: dict[str, tuple[float, float]] = {}
    widths = [sum(sizes[members[n]][0] for n in row) + GAP_X * (len(row) - 1) for row in layers]
    total_w = max(widths)
    y = 0.0
    for row, row_w in zip(layers, widths):
        x = (total_w - row_w) / 2
        row_h = max(sizes[members[n]][1] for n in row)
        for node in row:
            w, h = sizes[members[node]]
            positions[members[node]] = (x, y + (row_h - h) / 2)
            x += w + GAP_X
        y += row_h + GAP_Y
    return positions, total_w, y - GAP_Y


def search(model: GraphModel, query: str, limit: int = 50) -> list[str]:
    """Op names containing ``query`` (case-insensitive), shortest first."""
    q = query.strip().lower()
    if not q:
        return []
    hits = [n for n in model.names if q in n.lower()]
    return sorted(hits, key=lambda n: (len(n), n))[:limit]


def reveal(model: GraphModel, name: str) -> set[str]:
    """The groups to expand so op ``name`` is drawn as itself."""
    i = model.index.get(name)
    return set(model.chains[i]) if i is not None else set()
