"""Where the live dashboard reads summaries from: event-log directories, or memory.

A source's ``read()`` returns ``{run: RunData}`` where ``RunData`` has ``scalars``,
``histograms`` and ``images``, each ``{tag: series}`` and a series has append-only lists
``steps``, ``wall_times`` and ``values`` (scalars: floats; histograms: the reader's
``HistogramValue``, with TensorFlow's buckets whichever source made them; images: objects with
``png`` bytes). Readers only
ever append, so the dashboard keeps, per series, how many points it has already drawn.

``LogDirSource`` tails the TensorBoard event files under a log directory with nbflow's
summary reader (``nbflow.summary.reader``): each ``read()`` decodes only appended records.
"""

from __future__ import annotations

import io
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image as PILImage

from nbflow.ops.histogram import histogram_proto
from nbflow.summary.reader import HistogramValue, LogReader


@dataclass
class Series:
    steps: list[int] = field(default_factory=list)
    wall_times: list[float] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)

    def append(self, step: int, wall_time: float, value: Any) -> None:
        self.steps.append(step)
        self.wall_times.append(wall_time)
        self.values.append(value)


@dataclass
class Image:
    png: bytes
    width: int = 0
    height: int = 0


@dataclass
class RunData:
    scalars: dict[str, Series] = field(default_factory=dict)
    histograms: dict[str, Series] = field(default_factory=dict)
    images: dict[str, Series] = field(default_factory=dict)


class MemorySource:
    """Summaries pushed from Python (a training loop without event files, or a test)."""

    def __init__(self) -> None:
        self._runs: dict[str, RunData] = {}
        self._lock = threading.Lock()

    def _series(self, kind: str, run: str, tag: str) -> Series:
        data = self._runs.setdefault(run, RunData())
        return getattr(data, kind).setdefault(tag, Series())

    def add_scalar(self, tag: str, value: float, step: int, run: str = ".") -> None:
        with self._lock:
            self._series("scalars", run, tag).append(step, time.time(), float(value))

    def add_histogram(self, tag: str, values: Any, step: int, run: str = ".") -> None:
        """A histogram of ``values`` with TensorFlow's buckets, as ``tf.summary.histogram``."""
        wall_time = time.time()
        hist = HistogramValue.of_proto(step, wall_time, histogram_proto(np.asarray(values)))
        with self._lock:
            self._series("histograms", run, tag).append(step, wall_time, hist)

    def add_image(self, tag: str, png: bytes, step: int, run: str = ".") -> None:
        """An encoded image (PNG, JPEG, ...); its size is read from its header."""
        with PILImage.open(io.BytesIO(png)) as decoded:
            width, height = decoded.size
        with self._lock:
            self._series("images", run, tag).append(step, time.time(), Image(png, width, height))

    def read(self) -> dict[str, RunData]:
        with self._lock:
            return dict(self._runs)


class LogDirSource:
    """The runs of a log directory, tailed through ``nbflow.summary.reader.LogReader``."""

    def __init__(self, logdir: str | Path):
        self.logdir = Path(logdir).resolve()
        self._reader = LogReader(str(self.logdir))

    def read(self) -> dict[str, RunData]:
        if not self.logdir.is_dir():
            return {}
        self._reader.reload()
        out = {}
        for run in self._reader.runs():
            data = self._reader.run(run)
            scalars = {}
            for tag, points in list(data.scalars_raw.items()):
                points = list(points)
                scalars[tag] = Series(
                    [p[0] for p in points], [p[1] for p in points], [p[2] for p in points]
                )
            # the log directory itself is a run too; legends name it after the directory
            out[self.logdir.name if run == "." else run] = RunData(
                scalars,
                {tag: _series(values) for tag, values in list(data.histograms.items())},
                {tag: _series(values) for tag, values in list(data.images.items())},
            )
        return out


def _series(values: list[Any]) -> Series:
    values = list(values)
    return Series([v.step for v in values], [v.wall_time for v in values], values)


def as_source(logdir_or_source: Any) -> Any:
    """A source for a log directory path, or the given source object itself."""
    if isinstance(logdir_or_source, (str, Path)):
        return LogDirSource(logdir_or_source)
    return logdir_or_source
