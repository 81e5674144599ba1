"""Reading event logs back: a log directory with several runs into plain NumPy structures.

    reader = LogReader("/tmp/logs")          # runs are the folders holding event files
    reader.reload()                          # reads what was appended since the last call
    loss = reader.scalars("train")["loss"]   # ScalarSeries(steps, wall_times, values)
    reader.images("train")["input/image/0"][-1].png   # PNG bytes

This is what the notebook widgets and the JupyterLab panel read. ``reload`` tails files that
are still being written: each file's offset after its last complete record is remembered, a
half-written record is left for the next call, and new files and new runs are picked up.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterator

import numpy as np

from nbflow.framework import protos
from nbflow.summary.records import read_records


@dataclass
class ScalarSeries:
    """One scalar tag of a run: parallel arrays, in the order the events were written."""

    steps: np.ndarray
    wall_times: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return len(self.steps)


@dataclass(frozen=True)
class HistogramValue:
    step: int
    wall_time: float
    min: float
    max: float
    num: float
    sum: float
    sum_squares: float
    bucket_limits: np.ndarray
    buckets: np.ndarray


@dataclass(frozen=True)
class ImageValue:
    step: int
    wall_time: float
    width: int
    height: int
    colorspace: int
    png: bytes


@dataclass(frozen=True)
class AudioValue:
    step: int
    wall_time: float
    sample_rate: float
    num_channels: int
    length_frames: int
    wav: bytes
    content_type: str


@dataclass(frozen=True)
class TensorValue:
    step: int
    wall_time: float
    value: np.ndarray
    plugin_name: str


def is_event_file(path: str) -> bool:
    return "tfevents" in os.path.basename(path)


def summary_iterator(path: str) -> Iterator[Any]:
    """Every ``Event`` of one event file (``tf.train.summary_iterator``)."""
    with open(path, "rb") as f:
        for data, _ in read_records(f, 0, path):
            yield protos.Event.FromString(data)


class EventFileReader:
    """Tails one event file: ``read()`` returns the events appended since the last call."""

    def __init__(self, path: str):
        self.path = path
        self.offset = 0

    def read(self) -> list[Any]:
        events = []
        try:
            with open(self.path, "rb") as f:
                for data, offset in read_records(f, self.offset, self.path):
                    events.append(protos.Event.FromString(data))
                    self.offset = offset
        except FileNotFoundError:
            pass
        return events


@dataclass
class RunData:
    """Everything read so far from one run's event files."""

    scalars_raw: dict[str, list[tuple[int, float, float]]] = field(default_factory=dict)
    histograms: dict[str, list[HistogramValue]] = field(default_factory=dict)
    images: dict[str, list[ImageValue]] = field(default_factory=dict)
    audio: dict[str, list[AudioValue]] = field(default_factory=dict)
    tensors: dict[str, list[TensorValue]] = field(default_factory=dict)
    graph: dict[str, Any] | None = None
    run_metadata: dict[str, bytes] = field(default_factory=dict)
    first_wall_time: float | None = None
    event_count: int = 0

    def add(self, event: Any) -> None:
        self.event_count += 1
        if self.first_wall_time is None:
            self.first_wall_time = event.wall_time
        kind = event.WhichOneof("what")
        if kind == "summary":
            for value in event.summary.value:
                self._add_value(event.step, event.wall_time, value)
        elif kind == "graph_def":
            self.graph = protos.graph_proto_to_dict(protos.GraphDef.FromString(event.graph_def))
        elif kind == "meta_graph_def" and self.graph is None:
            meta = protos.MetaGraphDef.FromString(event.meta_graph_def)
            self.graph = protos.graph_proto_to_dict(meta.graph_def)
        elif kind == "tagged_run_metadata":
            tagged = event.tagged_run_metadata
            self.run_metadata[tagged.tag] = tagged.run_metadata
        elif kind == "session_log" and event.session_log.status == protos.SessionLog.START:
            self._purge_after(event.step)

    def _purge_after(self, step: int) -> None:
        """A restart from a checkpoint at ``step``: later events of the old run are orphans."""
        for tag, points in self.scalars_raw.items():
            self.scalars_raw[tag] = [p for p in points if p[0] < step]
        for store in (self.histograms, self.images, self.audio, self.tensors):
            for tag, values in store.items():
                store[tag] = [v for v in values if v.step < step]

    def _add_value(self, step: int, wall_time: float, value: Any) -> None:
        kind = value.WhichOneof("value")
        tag = value.tag
        if kind == "simple_value":
            self.scalars_raw.setdefault(tag, []).append((step, wall_time, value.simple_value))
        elif kind == "histo":
            h = value.histo
            self.histograms.setdefault(tag, []).append(
                HistogramValue(
                    step,
                    wall_time,
                    h.min,
                    h.max,
                    h.num,
                    h.sum,
                    h.sum_squares,
                    np.array(h.bucket_limit),
                    np.array(h.bucket),
                )
            )
        elif kind == "image":
            im = value.image
            self.images.setdefault(tag, []).append(
                ImageValue(
                    step, wall_time, im.width, im.height, im.colorspace, im.encoded_image_string
                )
            )
        elif kind == "audio":
            a = value.audio
            self.audio.setdefault(tag, []).append(
                AudioValue(
                    step,
                    wall_time,
                    a.sample_rate,
                    a.num_channels,
                    a.length_frames,
                    a.encoded_audio_string,
                    a.content_type,
                )
            )
        elif kind == "tensor":
            plugin = value.metadata.plugin_data.plugin_name
            array = protos.make_ndarray(value.tensor)
            if plugin == "scalars" or (
                value.metadata.data_class == 1 and array.size == 1 and array.dtype != object
            ):
                self.scalars_raw.setdefault(tag, []).append((step, wall_time, float(array)))
            else:
                self.tensors.setdefault(tag, []).append(TensorValue(step, wall_time, array, plugin))

    def scalars(self) -> dict[str, ScalarSeries]:
        out = {}
        for tag, points in self.scalars_raw.items():
            steps, times, values = zip(*points) if points else ((), (), ())
            out[tag] = ScalarSeries(
                np.array(steps, dtype=np.int64),
                np.array(times, dtype=np.float64),
                np.array(values, dtype=np.float64),
            )
        return out


class LogReader:
    """Reads a log directory: every folder holding event files is a run (``"."`` the root)."""

    def __init__(self, logdir: str):
        self.logdir = str(logdir)
        self._files: dict[str, EventFileReader] = {}
        self._runs: dict[str, RunData] = {}

    def reload(self) -> list[str]:
        """Read what was appended since the last call; returns the runs that changed."""
        changed = []
        for run, paths in sorted(self._scan().items()):
            data = self._runs.setdefault(run, RunData())
            before = data.event_count
            for path in paths:
                reader = self._files.get(path)
                if reader is None:
                    reader = self._files[path] = EventFileReader(path)
                for event in reader.read():
                    data.add(event)
            if data.event_count != before:
                changed.append(run)
        return changed

    def _scan(self) -> dict[str, list[str]]:
        runs: dict[str, list[str]] = {}
        for root, dirs, files in os.walk(self.logdir):
            dirs.sort()
            events = sorted(os.path.join(root, f) for f in files if is_event_file(f))
            if events:
                run = os.path.relpath(root, self.logdir)
                runs[run.replace(os.sep, "/")] = events
        return runs

    # --- queries --------------------------------------------------------------------------------
    def runs(self) -> list[str]:
        return sorted(self._runs)

    def run(self, run: str) -> RunData:
        try:
            return self._runs[run]
        except KeyError:
            raise KeyError(f"No run {run!r} in {self.logdir}; runs: {self.runs()}") from None

    def tags(self, run: str) -> dict[str, list[str]]:
        data = self.run(run)
        return {
            "scalars": sorted(data.scalars_raw),
            "histograms": sorted(data.histograms),
            "images": sorted(data.images),
            "audio": sorted(data.audio),
            "tensors": sorted(data.tensors),
            "run_metadata": sorted(data.run_metadata),
            "graph": [] if data.graph is None else ["graph"],
        }

    def scalars(self, run: str) -> dict[str, ScalarSeries]:
        return self.run(run).scalars()

    def histograms(self, run: str) -> dict[str, list[HistogramValue]]:
        return dict(self.run(run).histograms)

    def images(self, run: str) -> dict[str, list[ImageValue]]:
        return dict(self.run(run).images)

    def audio(self, run: str) -> dict[str, list[AudioValue]]:
        return dict(self.run(run).audio)

    def tensors(self, run: str) -> dict[str, list[TensorValue]]:
        return dict(self.run(run).tensors)

    def text(self, run: str) -> dict[str, list[tuple[int, str]]]:
        """Text summaries: (step, text) per tag."""
        out: dict[str, list[tuple[int, str]]] = {}
        for tag, values in self.run(run).tensors.items():
            for v in values:
                if v.plugin_name == "text":
                    texts = [b.decode("utf-8", "replace") for b in np.asarray(v.value).ravel()]
                    out.setdefault(tag, []).append((v.step, "\n".join(texts)))
        return out

    def graph(self, run: str) -> dict[str, Any] | None:
        return self.run(run).graph


def read_logdir(logdir: str) -> LogReader:
    """A reader with everything currently in ``logdir`` loaded."""
    reader = LogReader(logdir)
    reader.reload()
    return reader
