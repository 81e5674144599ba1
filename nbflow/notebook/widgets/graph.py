"""The graph widget: TensorBoard's graph view in a notebook output (whitepaper §9.1).

The page draws it with the nbflow Board's own graph view (``front_end``: the panel's
TypeScript ``GraphView``, bundled for anywidget), fed the ``graph_def`` trait: scopes collapse
into groups, identical groups are marked, bookkeeping ops are set aside (by the ``rules`` sent
from Python), the layout runs in a web worker, and search, pan and zoom happen in the page —
exactly as in the panel. The view's model (extension/src/model/graph.ts) is the only one: the
kernel holds data, not a second picture of the view.

The view reports the groups it expanded (``expanded``: scope paths as the view names them,
``"layer1"``), the op clicked (``selected``, which fills ``details`` with where the op was
created and its value from the last run) and the colour mode. Python asks the page: ``toggle``
and setting ``expanded`` expand or collapse groups, ``reveal`` sends ``{"type": "reveal",
"name"}`` and the page expands what hides the op and reports ``expanded`` back. ``query``
searches the GraphDef's op names (``results``). A front end may also ask with messages
``{"type": "toggle", "id"}`` and ``{"type": "reveal", "name"}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import traitlets

from nbflow.framework.ops import Graph
from nbflow.notebook.cells import notebook_graphs
from nbflow.notebook.display import cell_build_summary_html, op_details
from nbflow.notebook.widgets.front_end import BoardWidget

# Attr values larger than this (JSON characters: big constants) are sent as a short summary.
MAX_ATTR_CHARS = 512


@dataclass(frozen=True)
class BookkeepingRules:
    """Which ops the view sets aside: names and op types that do bookkeeping, and high degree."""

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


class GraphWidget(BoardWidget):
    """An interactive view of a Graph; ``highlight`` marks ops (e.g. those a cell built)."""

    bundle = "graph.js"
    graph_def = traitlets.Dict().tag(sync=True)
    rules = traitlets.Dict().tag(sync=True)
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    details = traitlets.Dict().tag(sync=True)
    query = traitlets.Unicode("").tag(sync=True)
    results = traitlets.List(traitlets.Unicode()).tag(sync=True)
    color_by = traitlets.Enum(["device", "structure"], "structure").tag(sync=True)
    highlight = traitlets.List(traitlets.Unicode()).tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        graph: Graph,
        *,
        highlight: Iterable[str] = (),
        rules: BookkeepingRules | None = None,
        last_values: dict[str, Any] | None = None,
        title: str = "",
        **kwargs: Any,
    ):
        self._graph = graph
        self._last_values = last_values
        self._version = (graph.version, graph._mutation_version)
        super().__init__(
            highlight=list(highlight),
            title=title,
            rules=rules_json(rules or BookkeepingRules()),
            graph_def=front_end_graph_def(graph),
            **kwargs,
        )
        self.on_msg(self._on_front_end_msg)

    def refresh(self) -> None:
        """Send the graph again if it changed (a re-run cell); the page keeps expanded groups."""
        version = (self._graph.version, self._graph._mutation_version)
        if version != self._version:
            self._version = version
            self.graph_def = front_end_graph_def(self._graph)

    def toggle(self, group: str) -> None:
        """Expand a collapsed group (a scope path, ``"layer1"``) or collapse an expanded one,
        and the groups inside it."""
        group = group.rstrip("/")
        if group in self.expanded:
            inside = group + "/"
            self.expanded = [g for g in self.expanded if g != group and not g.startswith(inside)]
        else:
            self.expanded = [*self.expanded, group]

    def reveal(self, name: str) -> None:
        """Ask the page to expand the groups around op ``name``; select it (fills ``details``).

        The page knows which groups hide the op (scopes, series, the auxiliary area) and
        reports them back in ``expanded``."""
        self.send({"type": "reveal", "name": name})
        self.selected = name

    def _on_front_end_msg(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        kind = content.get("type")
        self.refresh()
        if kind == "toggle":
            self.toggle(str(content.get("id", "")))
        elif kind == "reveal":
            self.reveal(str(content.get("name", "")))

    @traitlets.observe("selected")
    def _on_select(self, change: Any) -> None:
        name = change["new"]
        try:
            op = self._graph.get_operation_by_name(name)
        except KeyError:
            self.details = {}
            return
        values = self._last_values
        if values is None:
            values = notebook_graphs().last_values
        self.details = op_details(op, values)

    @traitlets.observe("query")
    def _on_query(self, change: Any) -> None:
        self.results = search_op_names(self.graph_def, change["new"])


def search_op_names(graph_def: dict[str, Any], query: str, limit: int = 50) -> list[str]:
    """Op names of a JSON GraphDef containing ``query`` (case-insensitive), shortest first."""
    q = query.strip().lower()
    if not q:
        return []
    hits = [n["name"] for n in graph_def.get("node", []) if q in n["name"].lower()]
    return sorted(hits, key=lambda n: (len(n), n))[:limit]


def front_end_graph_def(graph: Graph) -> dict[str, Any]:
    """The GraphDef the page draws, with output shapes; big attr values (constants) summarised."""
    graph_def = graph.as_graph_def(add_shapes=True)
    for node in graph_def["node"]:
        attrs = node["attr"]
        for key, value in attrs.items():
            if isinstance(value, dict) and "tensor" in value:
                tensor = value["tensor"]
                if len(json.dumps(tensor)) > MAX_ATTR_CHARS:
                    summary = {"dtype": tensor.get("dtype"), "shape": tensor.get("shape")}
                    attrs[key] = {"tensor": summary}
            elif len(json.dumps(value)) > MAX_ATTR_CHARS:
                attrs[key] = json.dumps(value)[:MAX_ATTR_CHARS] + "…"
    return graph_def


def rules_json(rules: BookkeepingRules) -> dict[str, Any]:
    """The bookkeeping rules as the Board's graph view takes them (it sets aside above a degree)."""
    return {
        "max_degree": rules.degree_threshold - 1,
        "op_types": list(rules.op_types),
        "name_patterns": list(rules.name_patterns),
    }


def cell_view(build: Any) -> widgets.VBox:
    """What ``%%dataflow`` shows: the cell's summary and diff, and the graph, cell ops marked."""
    summary = widgets.HTML(cell_build_summary_html(build))
    graph = GraphWidget(
        build.graph,
        highlight=[op.name for op in build.ops],
        title=f"graph {build.graph_name!r} — cell {build.cell.key!r}",
    )
    return widgets.VBox([summary, graph])
