"""The board's view of log directories: one tailing ``LogReader`` per directory, plus traces.

Event logs are read by ``nbflow.summary.reader.LogReader`` (the same reader the notebook
widgets use); this module keeps one reader per log directory for the whole server, reloads it
at most every ``min_interval`` seconds (a poll of the panel makes one request per tag), and
adds what the board shows beyond summaries: traces. A trace is either

    a Chrome trace JSON file in a run's folder (``*trace*.json``, ``*timeline*.json``), or
    a step's RunMetadata logged with ``FileWriter.add_run_metadata(..., tag)``, converted to
    Chrome trace JSON with ``nbflow.runtime.timeline.Timeline``.

and graph files: a ``.pb``/``.pbtxt`` file in a log directory is a run of its own, named by its
path (``models/frozen.pb``), with only a graph (``nbflow.summary.graph_files``); the log
directory may itself be such a file, or a ``.meta`` (its one run is ``"."``). A graph file is
read again when its size or mtime changes; one that cannot be read is a warning on its run.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from nbflow.summary.graph_files import (
    GraphFileError,
    is_graph_file,
    is_logged_graph_file,
    read_graph_file,
)
from nbflow.board.paths import resolve_inside
from nbflow.summary.reader import LogReader
from nbflow.framework import protos
from nbflow.runtime.timeline import Timeline
from nbflow.runtime import step_stats


def is_trace_file(name: str) -> bool:
    lowered = name.lower()
    return lowered.endswith(".json") and ("trace" in lowered or "timeline" in lowered)


def is_kept_file(name: str) -> bool:
    """Files besides event files that the board shows: traces and graph files."""
    return is_trace_file(name) or is_logged_graph_file(name)


class LogDirectory:
    """A log directory's runs, reloaded incrementally and lazily."""

    def __init__(self, path: Path, root: str | Path | None = None, min_interval: float = 0.25):
        self.path = path
        self.reader = LogReader(
            str(path), root=None if root is None else str(root), keep_file=is_kept_file
        )
        # graph file -> (size, mtime_ns, JSON GraphDef or the warning it gave)
        self._graphs: dict[str, tuple[int, int, dict[str, Any] | str]] = {}
        self.min_interval = min_interval
        self._last_reload = -float("inf")
        self._lock = threading.Lock()

    def reload(self, force: bool = False) -> LogDirectory:
        """Read what was appended; skipped if the last reload is under ``min_interval`` old."""
        with self._lock:
            now = time.monotonic()
            if force or now - self._last_reload >= self.min_interval:
                self.reader.reload()
                self._last_reload = now
        return self

    def runs(self) -> list[str]:
        """Runs with event files, folders holding only trace files, and graph files."""
        traced = {r for r in self.reader.kept_runs() if self.trace_files(r)}
        return sorted(set(self.reader.runs()) | traced | set(self.graph_files()))

    def graph_files(self) -> dict[str, Path]:
        """Graph-file runs: run name (the file's path in the log directory) -> file."""
        if self.path.is_file():
            return {".": self.path} if is_graph_file(self.path.name) else {}
        out = {}
        for run in self.reader.kept_runs():
            for name in self.reader.kept_files(run):
                if is_logged_graph_file(name):
                    out[name if run == "." else f"{run}/{name}"] = self.path / run / name
        return out

    def graph_file(self, run: str) -> dict[str, Any] | str | None:
        """A graph-file run's JSON GraphDef, the warning reading it gave, or None if no such run."""
        path = self.graph_files().get(run)
        if path is None:
            return None
        root = self.reader.root
        if root is not None and os.path.commonpath([os.path.realpath(path), root]) != root:
            return "refused: the file links outside the board root"
        try:
            stat = os.stat(path)
        except OSError as e:
            return f"cannot be read ({e.strerror})"
        cached = self._graphs.get(run)
        if cached is not None and cached[:2] == (stat.st_size, stat.st_mtime_ns):
            return cached[2]
        try:
            result: dict[str, Any] | str = read_graph_file(str(path))
        except GraphFileError as e:
            result = str(e)
        except OSError as e:
            result = f"cannot be read ({e.strerror})"
        self._graphs[run] = (stat.st_size, stat.st_mtime_ns, result)
        return result

    def graph(self, run: str) -> dict[str, Any] | None:
        """The run's graph: its graph file's, or the one logged in its events; None if none."""
        graph = self.graph_file(run)
        if isinstance(graph, dict):
            return graph
        if self.has_events(run):
            return self.reader.run(run).graph
        return None

    def refused(self, run: str) -> bool:
        """Every event file of the run links outside the root: the run may not be read."""
        return bool(self.reader.refused(run)) and not self.has_events(run)

    def warnings(self, run: str) -> list[dict[str, Any]]:
        graph = self.graph_file(run)
        if isinstance(graph, str):
            return [{"file": run if run != "." else self.path.name, "offset": 0, "message": graph}]
        return [
            {"file": w.file, "offset": w.offset, "message": w.message}
            for w in self.reader.warnings(run)
        ]

    def hparams(self, run: str) -> dict[str, Any]:
        """The run's hyperparameters (TensorBoard HParams summaries in its events); {} if none."""
        return dict(self.reader.run(run).hparams) if self.has_events(run) else {}

    def has_events(self, run: str) -> bool:
        return run in self.reader.runs()

    def trace_files(self, run: str) -> list[str]:
        return [name for name in self.reader.kept_files(run) if is_trace_file(name)]

    def trace_names(self, run: str) -> list[str]:
        tagged = self.reader.run(run).run_metadata if self.has_events(run) else {}
        return self.trace_files(run) + sorted(tagged)

    def trace(self, run: str, name: str) -> Any:
        """A trace as Chrome trace JSON, by file name or run-metadata tag; KeyError if none."""
        if name in self.trace_files(run):
            path = resolve_inside(self.path, f"{run}/{name}")  # refuses a symlink leading out
            return json.loads(path.read_text())
        if self.has_events(run) and name in self.reader.run(run).run_metadata:
            return chrome_trace_of_run_metadata(self.reader.run(run).run_metadata[name])
        raise KeyError(name)

    def tags(self, run: str) -> dict[str, Any]:
        warnings = self.warnings(run)
        if not self.has_events(run):
            return {
                "warnings": warnings,
                "scalars": [],
                "histograms": [],
                "images": [],
                "graph": self.graph(run) is not None,
                "traces": self.trace_names(run),
            }
        data = self.reader.run(run)
        return {
            "warnings": warnings,
            "scalars": sorted(data.scalars_raw),
            "histograms": sorted(data.histograms),
            "images": sorted(data.images),
            "graph": data.graph is not None,
            "graph_version": data.graph_version,
            "traces": self.trace_names(run),
        }


def chrome_trace_of_run_metadata(data: bytes) -> Any:
    """Chrome trace JSON of a serialised RunMetadata, via ``nbflow.runtime.timeline``."""
    metadata = protos.RunMetadata.FromString(data)
    trace = Timeline(step_stats_of_proto(metadata.step_stats)).generate_chrome_trace_format()
    return json.loads(trace) if isinstance(trace, str) else trace


def step_stats_of_proto(proto: Any) -> Any:
    """nbflow's ``StepStats`` from a StepStats proto. The proto has no op type or inputs; they
    are read back from the timeline label, which nbflow writes as ``name = Op(in1, in2)``."""
    devices = []
    for dev in proto.dev_stats:
        nodes = []
        for n in dev.node_stats:
            _, _, call = n.timeline_label.partition(" = ")
            op_type, _, rest = call.partition("(")
            inputs = [i.strip() for i in rest.rstrip(")").split(",") if i.strip()]
            nodes.append(
                step_stats.NodeExecStats(
                    node_name=n.node_name,
                    op_type=op_type,
                    all_start_micros=n.all_start_micros,
                    op_start_rel_micros=n.op_start_rel_micros,
                    op_end_rel_micros=n.op_end_rel_micros,
                    all_end_rel_micros=n.all_end_rel_micros,
                    timeline_label=n.timeline_label,
                    thread_id=n.thread_id,
                    input_names=inputs,
                )
            )
        devices.append(step_stats.DeviceStepStats(device=dev.device, node_stats=nodes))
    return step_stats.StepStats(dev_stats=devices)


class LogCache:
    """``LogDirectory``s by real path, shared by all requests of one server."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = root
        self._dirs: dict[Path, LogDirectory] = {}
        self._lock = threading.Lock()

    def get(self, path: Path) -> LogDirectory:
        with self._lock:
            log = self._dirs.get(path)
            if log is None:
                log = self._dirs[path] = LogDirectory(path, self.root)
        return log.reload()
