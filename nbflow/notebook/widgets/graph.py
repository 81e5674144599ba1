"""The graph widget: TensorBoard's graph view in a notebook output (whitepaper §9.1).

The page draws it with the nbflow Board's own graph view (``front_end``: the panel's
TypeScript ``GraphView``, bundled for anywidget), fed the ``graph_def`` trait: scopes collapse
into groups, identical groups are marked, bookkeeping ops are set aside (by the ``rules`` sent
from Python), the layout runs in a web worker, and search, pan and zoom happen in the page —
exactly as in the panel. The view reports the groups it expanded (``expanded``, ids like
``"layer1/"``), the op clicked (``selected``, which fills ``details`` with where the op was
created and its value from the last run) and the colour mode.

Python keeps the same picture in ``graph_model`` (``view``: the visible items and their
layout), so code and tests can expand, reveal and search: ``toggle``, ``reveal``, ``query``.
A front end may also ask with messages ``{"type": "toggle", "id"}`` and ``{"type": "reveal",
"name"}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import ipywidgets as widgets
import traitlets

from nbflow.framework.ops import Graph
from nbflow.notebook import graph_model
from nbflow.notebook.cells import notebook_graphs
from nbflow.notebook.display import cell_build_summary_html, op_details
from nbflow.notebook.widgets.front_end import BoardWidget

# Attr values larger than this (JSON characters: big constants) are sent as a short summary.
MAX_ATTR_CHARS = 512


class GraphWidget(BoardWidget):
    """An interactive view of a Graph; ``highlight`` marks ops (e.g. those a cell built)."""

    bundle = "graph.js"
    graph_def = traitlets.Dict().tag(sync=True)
    rules = traitlets.Dict().tag(sync=True)
    view = traitlets.Dict()
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
        rules: graph_model.BookkeepingRules | None = None,
        last_values: dict[str, Any] | None = None,
        title: str = "",
        **kwargs: Any,
    ):
        self._graph = graph
        self._rules = rules
        self._last_values = last_values
        self._model = graph_model.build_model(graph, rules)
        self._version = (graph.version, graph._mutation_version)
        super().__init__(
            highlight=list(highlight),
            title=title,
            rules=rules_json(rules or graph_model.BookkeepingRules()),
            graph_def=front_end_graph_def(graph),
            **kwargs,
        )
        self.on_msg(self._on_front_end_msg)
        self._relayout()

    @property
    def model(self) -> graph_model.GraphModel:
        return self._model

    def refresh(self) -> None:
        """Rebuild from the graph if it changed (a re-run cell), keeping expanded groups."""
        version = (self._graph.version, self._graph._mutation_version)
        if version != self._version:
            self._version = version
            self._model = graph_model.build_model(self._graph, self._rules)
            self.graph_def = front_end_graph_def(self._graph)
            self._relayout()

    def toggle(self, group: str) -> None:
        """Expand a collapsed group or collapse an expanded one."""
        if group in self.expanded:
            self.expanded = [g for g in self.expanded if g != group and not g.startswith(group)]
        else:
            self.expanded = [*self.expanded, group]

    def reveal(self, name: str) -> None:
        """Expand the groups around op ``name`` and select it."""
        needed = graph_model.reveal(self._model, name)
        self.expanded = sorted(set(self.expanded) | needed)
        self.selected = name

    def _on_front_end_msg(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        kind = content.get("type")
        self.refresh()
        if kind == "toggle":
            self.toggle(str(content.get("id", "")))
        elif kind == "reveal":
            self.reveal(str(content.get("name", "")))

    @traitlets.observe("expanded", "color_by", "highlight")
    def _on_view_change(self, _change: Any) -> None:
        self._relayout()

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
        self.results = graph_model.search(self._model, change["new"])

    def _relayout(self) -> None:
        view = graph_model.layout_view(self._model, self.expanded, self.color_by)
        if self.highlight:
            shown = {
                graph_model.visible_item(self._model, self._model.index[n], set(self.expanded))
                for n in self.highlight
                if n in self._model.index
            }
            for node in view["nodes"]:
                node["hl"] = node["id"] in shown
        self.view = view


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


def rules_json(rules: graph_model.BookkeepingRules) -> dict[str, Any]:
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
