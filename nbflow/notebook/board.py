"""``%dataflow_board LOGDIR``: open the nbflow Board on a log directory, or on a graph file.

``LOGDIR`` may be a ``.pb``/``.pbtxt``/``.meta`` file (``%dataflow_board model.pb``): the Board
then draws that GraphDef, any TF1 model's graph (``nbflow.summary.graph_files``).

The display carries three forms and the front end picks one:

    application/vnd.nbflow.board+json   {"logdir": ...}: in JupyterLab with the extension, the
                                        renderer (ranked above HTML) opens the Board panel
    text/html                           elsewhere (classic notebook, VS Code, nbviewer): the
                                        board inline, as a static table of the runs, each
                                        scalar tag's last value and a small line of its history
    text/plain                          a terminal
"""

from __future__ import annotations

import html
import math
import os
from typing import Any

from nbflow.summary.graph_files import GraphFileError, is_graph_file, read_graph_file
from nbflow.summary.reader import LogReader

BOARD_MIME = "application/vnd.nbflow.board+json"
MAX_RUNS = 20
SPARK_WIDTH, SPARK_HEIGHT = 120, 24


class BoardDisplay:
    def __init__(self, logdir: str):
        self.logdir = logdir

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {
            BOARD_MIME: {"logdir": self.logdir},
            "text/html": inline_board_html(self.logdir),
            "text/plain": f"nbflow Board: {self.logdir}",
        }


def board_display(logdir: str) -> BoardDisplay:
    """The Board on ``logdir``, or on several directories as TensorBoard's ``--logdir_spec``
    ``name:path,name:path`` (each path made absolute; the panel makes them root-relative)."""
    entries = logdir_spec_entries(logdir)
    if len(entries) == 1 and not entries[0][0]:
        return BoardDisplay(os.path.abspath(os.path.expanduser(logdir)))
    absolute = [(name, os.path.abspath(os.path.expanduser(path))) for name, path in entries]
    return BoardDisplay(",".join(f"{name}:{path}" if name else path for name, path in absolute))


def logdir_spec_entries(spec: str) -> list[tuple[str, str]]:
    """``(name, path)`` of each directory of ``name:path,...`` ('' for an unnamed one); a
    Windows drive (``C:\\``, as ``os.path.abspath`` writes it) is part of a path, not a name."""
    entries = []
    for part in (p.strip() for p in spec.split(",")):
        name, sep, path = part.partition(":")
        named = (
            sep
            and name
            and not any(c in name for c in "/\\")
            and not (len(name) == 1 and path[:1] == "\\")
        )
        entries.append((name.strip(), path.strip() or ".") if named else ("", part))
    return [e for e in entries if e[1]] or [("", ".")]


def inline_board_html(logdir: str) -> str:
    """The runs of ``logdir`` (one directory or a ``name:path,...`` spec) as an HTML table: run,
    tag, last step and value, a sparkline."""
    shown = html.escape(logdir)
    head = f"<div class='nbflow-board-inline'><b>nbflow Board</b> on <code>{shown}</code>"
    if os.path.isfile(logdir) and is_graph_file(logdir):
        return head + ": " + html.escape(_graph_file_summary(logdir)) + "</div>"
    entries = [("", logdir)] if os.path.isdir(logdir) else logdir_spec_entries(logdir)
    rows = [row for name, path in entries for row in _run_rows(path, name)]
    if not rows:
        return head + ": no scalar summaries yet.</div>"
    return (
        head
        + "<table><thead><tr><th>run</th><th>tag</th><th>step</th><th>value</th><th></th>"
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )


def _run_rows(logdir: str, name: str) -> list[str]:
    """Table rows of a directory's runs (named ``name/run`` when ``name`` is given)."""
    reader = LogReader(logdir, root=logdir, max_depth=4)
    if os.path.isdir(logdir):
        reader.reload()
    rows = []
    for run in reader.runs()[:MAX_RUNS]:
        shown = html.escape(f"{name}/{run}" if name and run != "." else name or run)
        for tag, series in sorted(reader.scalars(run).items()):
            last = series.values[-1] if len(series) else math.nan
            rows.append(
                f"<tr><td>{shown}</td><td>{html.escape(tag)}</td>"
                f"<td>{int(series.steps[-1]) if len(series) else ''}</td>"
                f"<td>{last:.4g}</td><td>{_sparkline(series.values.tolist())}</td></tr>"
            )
        for w in reader.warnings(run):
            rows.append(
                f"<tr><td>{shown}</td><td colspan='4'>&#9888; "
                f"{html.escape(w.file)} at byte {w.offset}: {html.escape(w.message)}</td></tr>"
            )
    return rows


def _graph_file_summary(path: str) -> str:
    """ "a graph of 9 ops (Const 2, Identity 2, ...)", or why the file cannot be read."""
    try:
        nodes = read_graph_file(path)["node"]
    except (GraphFileError, OSError) as e:
        return f"\u26a0 {e}"
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node["op"]] = counts.get(node["op"], 0) + 1
    ops = ", ".join(f"{op} {n}" for op, n in sorted(counts.items(), key=lambda kv: -kv[1])[:8])
    return f"a graph of {len(nodes)} ops ({ops}{', ...' if len(counts) > 8 else ''})"


def _sparkline(values: list[float]) -> str:
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 2:
        return ""
    lo, hi = min(finite), max(finite)
    span = (hi - lo) or 1.0
    step = SPARK_WIDTH / (len(values) - 1)
    points = " ".join(
        f"{i * step:.1f},{SPARK_HEIGHT - 2 - (v - lo) / span * (SPARK_HEIGHT - 4):.1f}"
        for i, v in enumerate(values)
        if math.isfinite(v)
    )
    return (
        f"<svg width='{SPARK_WIDTH}' height='{SPARK_HEIGHT}' role='img'>"
        f"<polyline fill='none' stroke='#1f77b4' stroke-width='1.5' points='{points}'/></svg>"
    )
