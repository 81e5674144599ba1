"""One traced step as rows of bars and arrows (whitepaper §9.2's EEG view), from Chrome trace
JSON or from ``RunMetadata.step_stats``.

Chrome trace: complete events (``"ph": "X"``, ``ts``/``dur`` in µs) on ``pid``/``tid`` rows
named by ``process_name``/``thread_name`` metadata events; flow events (``"s"``/``"f"``/``"t"``)
with a shared ``id`` give arrows. Send/Recv bars with the same rendezvous key
(``args.key`` / ``args.tensor_name``) are joined by an arrow as well, from the Send's end to the
Recv's end, so a transfer wait shows as a diagonal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nbflow.runtime.timeline import Timeline


@dataclass(frozen=True)
class Bar:
    row: str
    name: str
    op: str
    start: float  # µs from the step's first event
    end: float


@dataclass(frozen=True)
class Arrow:
    start_row: str
    start: float
    end_row: str
    end: float
    label: str


@dataclass(frozen=True)
class TimelineModel:
    rows: tuple[str, ...]
    bars: tuple[Bar, ...]
    arrows: tuple[Arrow, ...]

    @property
    def duration(self) -> float:
        return max((b.end for b in self.bars), default=0.0)


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


def trace_model(trace: Any) -> TimelineModel:
    """Rows (one per device/process and thread), bars and arrows of a trace."""
    events = load_trace(trace)["traceEvents"]
    process: dict[Any, str] = {}
    thread: dict[tuple[Any, Any], str] = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            process[e.get("pid")] = str(e.get("args", {}).get("name", e.get("pid")))
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            thread[(e.get("pid"), e.get("tid"))] = str(e.get("args", {}).get("name", e.get("tid")))
    timed = [e for e in events if e.get("ph") in ("X", "s", "f", "t") and "ts" in e]
    t0 = min((float(e["ts"]) for e in timed), default=0.0)

    def row(e: dict[str, Any]) -> str:
        pid, tid = e.get("pid"), e.get("tid")
        return f"{process.get(pid, pid)} / {thread.get((pid, tid), tid)}"

    bars: list[Bar] = []
    rows: dict[str, None] = {}  # the rows in order of first appearance
    for e in timed:
        if e["ph"] != "X":
            continue
        r = row(e)
        rows.setdefault(r, None)
        start = float(e["ts"]) - t0
        args = e.get("args") or {}
        bars.append(
            Bar(
                r,
                str(e.get("name", "?")),
                str(args.get("op", e.get("cat", ""))),
                start,
                start + float(e.get("dur", 0.0)),
            )
        )
    arrows = _flow_arrows(timed, row, t0) + _send_recv_arrows(events, row, t0)
    return TimelineModel(tuple(rows), tuple(bars), tuple(arrows))


def _flow_arrows(events: list[dict[str, Any]], row: Any, t0: float) -> list[Arrow]:
    starts: dict[Any, dict[str, Any]] = {}
    arrows = []
    for e in sorted(events, key=lambda e: float(e["ts"])):
        if e["ph"] == "s":
            starts[e.get("id")] = e
        elif e["ph"] in ("f", "t") and e.get("id") in starts:
            s = starts[e.get("id")]
            arrows.append(
                Arrow(
                    row(s), float(s["ts"]) - t0, row(e), float(e["ts"]) - t0, str(e.get("name", ""))
                )
            )
    return arrows


def _send_recv_arrows(events: list[dict[str, Any]], row: Any, t0: float) -> list[Arrow]:
    sends: dict[str, dict[str, Any]] = {}
    recvs: list[tuple[str, dict[str, Any]]] = []
    for e in events:
        if e.get("ph") != "X":
            continue
        args = e.get("args") or {}
        op = str(args.get("op", e.get("name", "")))
        key = args.get("key") or args.get("tensor_name")
        if not key:
            continue
        if "Send" in op:
            sends[str(key)] = e
        elif "Recv" in op:
            recvs.append((str(key), e))
    arrows = []
    for key, r in recvs:
        s = sends.get(key)
        if s is not None:
            s_end = float(s["ts"]) + float(s.get("dur", 0)) - t0
            r_end = float(r["ts"]) + float(r.get("dur", 0)) - t0
            arrows.append(Arrow(row(s), s_end, row(r), r_end, key))
    return arrows
