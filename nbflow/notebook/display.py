"""Rich display of graphs, ops, tensors, sessions and cell builds in notebook front ends.

``framework`` and ``runtime`` objects call ``mimebundle`` lazily from their
``_repr_mimebundle_``, so this module (and the widgets) load only when a front end asks.
Every bundle carries ``text/plain`` (the object's repr) and ``text/html``; a graph in a kernel
also carries the graph widget's view.
"""

from __future__ import annotations

import html
import linecache
from typing import Any

import numpy as np
from IPython import get_ipython

from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Graph, Operation, Tensor
from nbflow.notebook.cells import cell_key_of

MAX_ATTR_CHARS = 120


def _filter(bundle: dict[str, Any], include: Any, exclude: Any) -> dict[str, Any]:
    if include:
        bundle = {k: v for k, v in bundle.items() if k in include}
    if exclude:
        bundle = {k: v for k, v in bundle.items() if k not in exclude}
    return bundle


def mimebundle(obj: Any, include: Any = None, exclude: Any = None) -> dict[str, Any]:
    """The display bundle of a Graph, Operation, Tensor or Session."""
    if isinstance(obj, Graph):
        bundle = graph_mimebundle(obj)
    elif isinstance(obj, Operation):
        bundle = {"text/plain": repr(obj), "text/html": operation_html(obj)}
    elif isinstance(obj, Tensor):
        bundle = {"text/plain": repr(obj), "text/html": tensor_html(obj)}
    else:
        bundle = {"text/plain": repr(obj), "text/html": session_html(obj)}
    return _filter(bundle, include, exclude)


ops_lib.register_mimebundle_renderer(mimebundle)  # Graph/Operation/Tensor/Session display


def in_kernel() -> bool:
    """True inside a Jupyter kernel (where widgets have a front end to talk to)."""
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def graph_mimebundle(graph: Graph) -> dict[str, Any]:
    bundle = {"text/plain": repr(graph), "text/html": graph_html(graph)}
    if in_kernel():
        widget_bundle: Any = graph_widget.GraphWidget(
            graph
        )._repr_mimebundle_()  # data, or (data, metadata)
        if isinstance(widget_bundle, tuple):
            widget_bundle = widget_bundle[0]
        bundle.update(widget_bundle or {})
        bundle["text/plain"] = repr(graph)
    return bundle


def _table(rows: list[tuple[str, str]], title: str) -> str:
    cells = "".join(
        f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(k)}</th>"
        f"<td style='text-align:left'>{v}</td></tr>"
        for k, v in rows
    )
    return f"<div class='nbflow'><b>{title}</b><table>{cells}</table></div>"


def _code(text: Any) -> str:
    return f"<code>{html.escape(str(text))}</code>"


def shape_of(t: Tensor) -> str:
    return str(t.shape)


def format_attr(value: Any) -> str:
    if isinstance(value, np.ndarray):
        if value.size > 8:
            return f"array(dtype={value.dtype}, shape={list(value.shape)})"
        return np.array2string(value, threshold=8)
    text = getattr(value, "name", None) if hasattr(value, "as_numpy_dtype") else None
    text = text or str(value)
    return text if len(text) <= MAX_ATTR_CHARS else text[: MAX_ATTR_CHARS - 1] + "…"


def creation_site(op: Operation) -> dict[str, Any] | None:
    """Where the op was created: file or cell key, line number, function and source line."""
    site = op.traceback
    if not site:
        return None
    filename, line, function = site
    return {
        "cell": cell_key_of(op),
        "file": filename,
        "line": line,
        "function": function,
        "source": linecache.getline(filename, line).strip(),
    }


def format_value(value: Any) -> str:
    array = np.asarray(value)
    if array.size > 20:
        return (
            f"{array.dtype}{list(array.shape)} min={array.min():.4g} max={array.max():.4g} "
            f"mean={array.mean():.4g}"
            if array.dtype.kind in "fiu"
            else f"{array.dtype}{list(array.shape)}"
        )
    if array.ndim == 0:
        return f"{array.item():.6g}" if array.dtype.kind in "fc" else str(array.item())
    return np.array2string(array, precision=4, threshold=20)


def op_details(op: Operation, last_values: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything the graph view shows for a clicked op, as plain JSON."""
    site = creation_site(op)
    values = {}
    for t in op.outputs:
        if last_values and t.name in last_values:
            values[t.name] = format_value(last_values[t.name])
    return {
        "name": op.name,
        "op": op.type,
        "device": op.device or "(unplaced)",
        "attrs": {k: format_attr(v) for k, v in op.attrs.items() if not k.startswith("_")},
        "inputs": [t.name for t in op.inputs] + ["^" + c.name for c in op.control_inputs],
        "outputs": [
            {"name": t.name, "dtype": t.dtype.name, "shape": shape_of(t)} for t in op.outputs
        ],
        "created": site,
        "values": values,
    }


def _site_html(site: dict[str, Any] | None) -> str:
    if not site:
        return "unknown"
    where = f"cell {site['cell']!r}" if site["cell"] else site["file"]
    text = f"{html.escape(where)}, line {site['line']}"
    if site["source"]:
        text += f": {_code(site['source'])}"
    return text


def operation_html(op: Operation, last_values: dict[str, Any] | None = None) -> str:
    d = op_details(op, last_values)
    rows = [
        ("type", _code(d["op"])),
        ("device", html.escape(d["device"])),
        ("inputs", ", ".join(_code(i) for i in d["inputs"]) or "none"),
        (
            "outputs",
            ", ".join(_code(f"{o['name']} {o['dtype']}{o['shape']}") for o in d["outputs"])
            or "none",
        ),
    ]
    rows += [(f"attr {k}", _code(v)) for k, v in d["attrs"].items()]
    rows.append(("created at", _site_html(d["created"])))
    rows += [(f"last value {k}", _code(v)) for k, v in d["values"].items()]
    return _table(rows, f"Operation {html.escape(op.name)}")


def tensor_html(t: Tensor) -> str:
    rows = [
        ("dtype", _code(t.dtype.name)),
        ("shape", _code(shape_of(t))),
        ("device", html.escape(t.device or "(unplaced)")),
        ("produced by", f"{_code(t.op.name)} ({html.escape(t.op.type)})"),
        ("consumers", ", ".join(_code(c.name) for c in t.consumers()[:10]) or "none"),
        ("created at", _site_html(creation_site(t.op))),
    ]
    return _table(rows, f"Tensor {html.escape(t.name)}")


def session_html(sess: Any) -> str:
    graph = sess.graph
    rows = [
        ("graph", html.escape(repr(graph))),
        ("devices", ", ".join(html.escape(d.name) for d in sess.list_devices())),
        ("cached step signatures", str(len(getattr(sess, "_steps", {})))),
        ("closed", str(getattr(sess, "_closed", False))),
    ]
    return _table(rows, type(sess).__name__)


def graph_html(graph: Graph, limit: int = 12) -> str:
    """A static summary of a graph: op count, top-level scopes and op types (counted by name)."""
    ops = graph.get_operations()
    scopes: dict[str, int] = {}
    types: dict[str, int] = {}
    for op in ops:
        if "/" in op.name:
            scope = op.name.split("/", 1)[0]
            scopes[scope] = scopes.get(scope, 0) + 1
        types[op.type] = types.get(op.type, 0) + 1
    shown = ", ".join(f"{html.escape(k)} ({v})" for k, v in list(scopes.items())[:limit])
    top = sorted(types.items(), key=lambda kv: -kv[1])[:limit]
    devices = sorted({op.device or "" for op in ops})
    rows = [
        ("ops", str(len(ops))),
        ("scopes", shown or "none"),
        ("op types", ", ".join(f"{html.escape(k)}×{v}" for k, v in top) or "none"),
        ("devices", ", ".join(html.escape(d or "(unplaced)") for d in devices)),
    ]
    return _table(rows, "nbflow Graph")


def diff_html(diff: Any) -> str:
    def names(items: tuple[str, ...], sign: str, color: str) -> str:
        shown = ", ".join(html.escape(n) for n in items[:20])
        more = f" … (+{len(items) - 20})" if len(items) > 20 else ""
        return f"<div style='color:{color}'>{sign} {shown}{more}</div>" if items else ""

    return (
        "<div class='nbflow-diff'>"
        + names(diff.added, "+", "#1a7f37")
        + names(diff.removed, "−", "#cf222e")
        + names(diff.changed, "~", "#9a6700")
        + names(diff.rewired, "↺ re-wired:", "#0969da")
        + "</div>"
    )


def cell_build_summary_html(build: Any) -> str:
    head = (
        f"<b>%%dataflow</b> cell <code>{html.escape(build.cell.key)}</code> built "
        f"{len(build.ops)} ops into graph <code>{html.escape(build.graph_name)}</code> "
        f"(run {build.run})"
    )
    if build.run > 1:
        head += f" — diff to last run: {html.escape(build.diff.summary())}"
        head += diff_html(build.diff)
    return f"<div class='nbflow-cell'>{head}</div>"


def cell_build_mimebundle(build: Any) -> dict[str, Any]:
    text = f"cell {build.cell.key!r}: {len(build.ops)} ops in graph {build.graph_name!r}" + (
        f"; {build.diff.summary()}" if build.run > 1 else ""
    )
    bundle = {"text/plain": text, "text/html": cell_build_summary_html(build)}
    if in_kernel():
        widget_bundle = graph_widget.cell_view(build)._repr_mimebundle_()
        if isinstance(widget_bundle, tuple):
            widget_bundle = widget_bundle[0]
        bundle.update(widget_bundle or {})
    return bundle


# In a kernel, graphs and cell builds show as the graph widget, which renders its side panel with
# the HTML helpers above.
from nbflow.notebook.widgets import graph as graph_widget  # noqa: E402
