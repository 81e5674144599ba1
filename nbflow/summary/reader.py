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
import time
from dataclasses import dataclass, field
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from google.protobuf.message import DecodeError

from nbflow.framework import protos
from nbflow.summary.hparams import HParamValue, is_hparams_value, read_session_start_info
from nbflow.summary.records import Skipped, read_records, scan_records


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

    @classmethod
    def of_proto(cls, step: int, wall_time: float, h: Any) -> HistogramValue:
        """The value of a ``HistogramProto`` logged at ``step``."""
        return cls(
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


@dataclass(frozen=True)
class ReadWarning:
    """Something in a run's files that could not be read: shown on the run, never raised."""

    file: str  # relative to the log directory
    offset: int
    message: str


class EventFileReader:
    """Tails one event file: ``read()`` returns the events appended since the last call.

    Only the bytes after ``offset`` are read. Damaged records are skipped and noted in
    ``warnings`` (as TensorBoard's loader logs them); a record cut short is left for the next
    call, and noted only once the file has stopped growing with it still cut short.
    """

    def __init__(self, path: str, name: str | None = None):
        self.path = path
        self.name = name or os.path.basename(path)
        self.offset = 0
        self.size = -1  # the file's size at the last read; -1 before the first
        self.warnings: list[ReadWarning] = []

    def read(self) -> list[Any]:
        return [event for _, event in self.read_events()]

    def read_events(self) -> list[tuple[int, Any]]:
        """(offset, event) of each event appended since the last call."""
        events: list[tuple[int, Any]] = []
        try:
            size = os.path.getsize(self.path)
            if size == self.offset:
                self.size = size
                return events
            with open(self.path, "rb") as f:
                for item in scan_records(f, self.offset):
                    if isinstance(item, Skipped):
                        self.warn(item.offset, f"corrupt record skipped ({item.what})")
                        self.offset = item.resume
                        continue
                    data, end = item
                    try:
                        events.append((self.offset, protos.Event.FromString(data)))
                    except DecodeError as e:
                        self.warn(self.offset, f"record is not an Event ({e})")
                    self.offset = end
        except FileNotFoundError:
            return events
        if self.offset < size and size == self.size and not events:
            self.warn(self.offset, f"truncated: {size - self.offset} bytes of an unfinished record")
        self.size = size
        return events

    def warn(self, offset: int, message: str) -> None:
        if not any(w.offset == offset for w in self.warnings):
            self.warnings.append(ReadWarning(self.name, offset, message))


@dataclass
class RunData:
    """Everything read so far from one run's event files."""

    scalars_raw: dict[str, list[tuple[int, float, float]]] = field(default_factory=dict)
    histograms: dict[str, list[HistogramValue]] = field(default_factory=dict)
    images: dict[str, list[ImageValue]] = field(default_factory=dict)
    audio: dict[str, list[AudioValue]] = field(default_factory=dict)
    tensors: dict[str, list[TensorValue]] = field(default_factory=dict)
    graph: dict[str, Any] | None = None
    graph_version: int = 0  # graphs read so far: a re-run that logs its graph again bumps it
    run_metadata: dict[str, bytes] = field(default_factory=dict)
    # the run's hyperparameters, from TensorBoard HParams summaries (nbflow.summary.hparams)
    hparams: dict[str, HParamValue] = field(default_factory=dict)
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
            self.graph_version += 1
        elif kind == "meta_graph_def" and self.graph is None:
            meta = protos.MetaGraphDef.FromString(event.meta_graph_def)
            self.graph = protos.graph_proto_to_dict(meta.graph_def)
            self.graph_version += 1
        elif kind == "tagged_run_metadata":
            tagged = event.tagged_run_metadata
            self.run_metadata[tagged.tag] = tagged.run_metadata
        elif kind == "session_log" and event.session_log.status == protos.SessionLog.START:
            self._purge_after(event.step)

    def _purge_after(self, step: int) -> None:
        """A restart from a checkpoint at ``step``: later events of the old run are orphans."""
        for tag, points in self.scalars_raw.items():
            self.scalars_raw[tag] = [p for p in points if p[0] < step]
        stores: tuple[dict[str, list[Any]], ...] = (
            self.histograms,
            self.images,
            self.audio,
            self.tensors,
        )
        for store in stores:
            for tag, values in store.items():
                store[tag] = [v for v in values if v.step < step]

    def _add_value(self, step: int, wall_time: float, value: Any) -> None:
        kind = value.WhichOneof("value")
        tag = value.tag
        if kind == "simple_value":
            self.scalars_raw.setdefault(tag, []).append((step, wall_time, value.simple_value))
        elif kind == "histo":
            self.histograms.setdefault(tag, []).append(
                HistogramValue.of_proto(step, wall_time, value.histo)
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
        elif kind == "tensor" and is_hparams_value(value):
            try:
                self.hparams.update(read_session_start_info(value) or {})
            except DecodeError:
                pass  # not TensorBoard's HParamsPluginData: nothing to show
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


SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "site-packages"})


def is_skipped_folder(name: str, entries: set[str]) -> bool:
    """Folders a log walk never enters: hidden ones, caches, virtual and conda environments."""
    return (
        name.startswith(".")
        or name in SKIPPED_FOLDERS
        or "pyvenv.cfg" in entries
        or "conda-meta" in entries
    )


@dataclass
class _Listing:
    """One folder as last listed: reused while the folder's mtime is unchanged."""

    mtime_ns: int
    folders: list[str]
    files: list[str]


class LogReader:
    """Reads a log directory: every folder holding event files is a run (``"."`` the root).

    The walk is bounded: it skips hidden folders, virtual environments (a folder with
    ``pyvenv.cfg``), ``node_modules`` and ``__pycache__``, goes at most ``max_depth`` folders
    deep, follows no symlinked folder, and lists a folder again only when its mtime changed.
    With ``root`` set, an event file whose real location (after symlinks) is outside ``root``
    is refused: not read, and named in ``refused(run)``. A run whose folder disappears is
    dropped; a run that lost or truncated a file is read again from the files it has.
    ``keep_file`` names other files worth remembering per run (the board's trace files).
    """

    def __init__(
        self,
        logdir: str,
        root: str | None = None,
        max_depth: int = 8,
        keep_file: Callable[[str], bool] | None = None,
    ):
        self.logdir = str(logdir)
        self.root = os.path.realpath(root) if root is not None else None
        self.max_depth = max_depth
        self.keep_file = keep_file
        self._files: dict[str, EventFileReader] = {}
        self._runs: dict[str, RunData] = {}
        self._listings: dict[str, _Listing] = {}
        self._run_files: dict[str, list[str]] = {}
        self._kept: dict[str, list[str]] = {}
        self._refused: dict[str, list[str]] = {}
        self._warnings: dict[str, list[ReadWarning]] = {}

    def reload(self) -> list[str]:
        """Read what was appended since the last call; returns the runs that changed."""
        changed = []
        scanned = self._scan()
        for run in set(self._runs) - set(scanned):  # deleted runs disappear
            self._forget(run)
        for run, paths in sorted(scanned.items()):
            if run in self._runs and self._must_reread(run, paths):
                self._forget(run)
            data = self._runs.setdefault(run, RunData())
            self._run_files[run] = paths
            before = data.event_count
            for path in paths:
                reader = self._files.get(path)
                if reader is None:
                    name = os.path.relpath(path, self.logdir).replace(os.sep, "/")
                    reader = self._files[path] = EventFileReader(path, name)
                for offset, event in reader.read_events():
                    try:
                        data.add(event)
                    except (DecodeError, ValueError, TypeError, KeyError) as e:
                        reader.warn(offset, f"{event.WhichOneof('what')} not readable ({e})")
            if data.event_count != before:
                changed.append(run)
        return changed

    def _must_reread(self, run: str, paths: list[str]) -> bool:
        """A file of the run was deleted or shrank (rewritten): its events must go."""
        if set(self._run_files.get(run, [])) - set(paths):
            return True
        for path in paths:
            reader = self._files.get(path)
            if reader is not None:
                try:
                    if os.path.getsize(path) < reader.offset:
                        return True
                except OSError:
                    return True
        return False

    def _forget(self, run: str) -> None:
        self._runs.pop(run, None)
        for path in self._run_files.pop(run, []):
            self._files.pop(path, None)

    def _scan(self) -> dict[str, list[str]]:
        """Event files by run; fills the kept and refused files and the walk's warnings."""
        runs: dict[str, list[str]] = {}
        self._kept, self._refused, self._warnings = {}, {}, {}
        listings: dict[str, _Listing] = {}
        stack = [(self.logdir, 0)]
        while stack:
            folder, depth = stack.pop()
            listing = self._list(folder)
            if listing is None:
                continue
            listings[folder] = listing
            run = os.path.relpath(folder, self.logdir).replace(os.sep, "/")
            events = []
            for name in listing.files:
                path = os.path.join(folder, name)
                if is_event_file(name):
                    if self._outside_root(path):
                        self._refused.setdefault(run, []).append(name)
                    else:
                        events.append(path)
                elif self.keep_file is not None and self.keep_file(name):
                    self._kept.setdefault(run, []).append(name)
            if events:
                runs[run] = events
            if depth < self.max_depth:
                stack.extend(
                    (os.path.join(folder, d), depth + 1) for d in reversed(listing.folders)
                )
        self._listings = listings
        return runs

    def _list(self, folder: str) -> _Listing | None:
        """The folder's sub-folders to walk and its files, from the cache if its mtime holds."""
        try:
            mtime_ns = os.stat(folder).st_mtime_ns
        except OSError:
            return None
        cached = self._listings.get(folder)
        if cached is not None and cached.mtime_ns == mtime_ns:
            return cached
        folders, files = [], []
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            return None
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.name)
                elif entry.is_file():  # follows a symlinked file; the root check comes later
                    files.append(entry.name)
            except OSError:
                continue
        walk = []
        for name in sorted(folders):
            try:
                inside = set(os.listdir(os.path.join(folder, name)))
            except OSError:
                continue
            if not is_skipped_folder(name, inside):
                walk.append(name)
        if time.time_ns() - mtime_ns < 2_000_000_000:
            mtime_ns = -1  # changed just now: a change in the same clock tick would go unseen
        return _Listing(mtime_ns, walk, sorted(files))

    def _outside_root(self, path: str) -> bool:
        if self.root is None:
            return False
        real = os.path.realpath(path)
        return os.path.commonpath([real, self.root]) != self.root

    # --- queries --------------------------------------------------------------------------------
    def runs(self) -> list[str]:
        return sorted(self._runs)

    def refused(self, run: str) -> list[str]:
        """The run's event files that resolve outside ``root`` and were not read."""
        return list(self._refused.get(run, []))

    def kept_runs(self) -> list[str]:
        """Folders holding files that ``keep_file`` picked."""
        return sorted(self._kept)

    def kept_files(self, run: str) -> list[str]:
        """The run folder's files that ``keep_file`` picked, by name."""
        return list(self._kept.get(run, []))

    def folders(self) -> list[str]:
        """Every folder the last walk listed, relative to the log directory."""
        return sorted(os.path.relpath(f, self.logdir).replace(os.sep, "/") for f in self._listings)

    def warnings(self, run: str) -> list[ReadWarning]:
        """What could not be read in the run: damaged records, refused files."""
        out = [w for path in self._run_files.get(run, []) for w in self._files[path].warnings]
        prefix = "" if run == "." else run + "/"
        out += [
            ReadWarning(prefix + name, 0, "refused: the file links outside the board root")
            for name in self._refused.get(run, [])
        ]
        return out

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
