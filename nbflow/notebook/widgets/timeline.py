"""The timeline widget: one traced step drawn by the nbflow Board's own timeline view.

The page renders with the panel's TypeScript ``TimelineView`` (bundled by ``front_end``): a row
per device and thread, ops as bars on a µs axis, wheel zoom and drag pan. The kernel only turns
what it is given into Chrome trace JSON, the form the Board's ``trace`` route serves, and sends
it (``trace``).

Accepted: a Chrome trace (dict, event list, JSON text or a path to a file), a ``RunMetadata``
(or anything with ``step_stats``), nbflow's ``StepStats``, or TensorFlow's StepStats as a dict
(``dev_stats[].node_stats[]``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import traitlets

from nbflow.notebook.widgets.front_end import BoardWidget
from nbflow.runtime.timeline import Timeline


def load_trace(trace: Any) -> dict[str, Any]:
    """Chrome trace JSON from a dict, a JSON string, a path, or step stats (via the runtime)."""
    if isinstance(trace, dict) and "traceEvents" in trace:
        return trace
    if isinstance(trace, list):
        return {"traceEvents": trace}
    if isinstance(trace, (str, Path)):
        text = str(trace)
        if not text.lstrip().startswith(("{", "[")):
            text = Path(text).read_text()
        return load_trace(json.loads(text))
    step_stats = getattr(trace, "step_stats", trace)
    return step_stats_to_trace(step_stats)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def step_stats_to_trace(step_stats: Any) -> dict[str, Any]:
    """TensorFlow's StepStats (``dev_stats[].node_stats[]``) as Chrome trace events."""
    if not isinstance(step_stats, dict):  # the runtime's StepStats: its own Chrome export
        return json.loads(Timeline(step_stats).generate_chrome_trace_format())
    events: list[dict[str, Any]] = []
    for pid, dev in enumerate(_get(step_stats, "dev_stats", []) or []):
        device = _get(dev, "device", f"device {pid}")
        events.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": device}})
        for node in _get(dev, "node_stats", []) or []:
            start = _get(node, "all_start_micros", 0)
            end = _get(node, "all_end_rel_micros", 0) or _get(node, "op_end_rel_micros", 0)
            label = _get(node, "timeline_label", "") or ""
            events.append(
                {
                    "ph": "X",
                    "pid": pid,
                    "tid": _get(node, "thread_id", 0),
                    "ts": start,
                    "dur": end,
                    "name": _get(node, "node_name", "?"),
                    "args": {"name": _get(node, "node_name", "?"), "op": label.split("(")[0]},
                }
            )
    return {"traceEvents": events}


class TimelineWidget(BoardWidget):
    """A traced step: ``TimelineWidget(run_metadata)``, a Chrome trace dict, JSON or path."""

    bundle = "timeline.js"
    trace = traitlets.Dict().tag(sync=True)
    name = traitlets.Unicode("step").tag(sync=True)

    def __init__(self, trace: Any, name: str = "step", **kwargs: Any):
        super().__init__(trace=load_trace(trace), name=name, **kwargs)

    @property
    def events(self) -> list[dict[str, Any]]:
        """The trace's complete events (``"ph": "X"``): the bars the view draws."""
        return [e for e in self.trace.get("traceEvents", []) if e.get("ph") == "X"]
