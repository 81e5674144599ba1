"""``tf.summary.FileWriter``: event files in TensorBoard's own format, written off the step.

    writer = tf.summary.FileWriter("/tmp/run", sess.graph)
    writer.add_summary(sess.run(merged), global_step=step)   # returns at once
    writer.close()

The caller only puts (what, step, time) on a bounded queue (``max_queue``); a background
thread builds the ``Event`` protocol buffers, frames them as TFRecords and flushes the file every
``flush_secs`` seconds, on ``flush()`` and on ``close()``. Files are named like TensorFlow's:
``events.out.tfevents.<time>.<host>.<pid>.<n><suffix>``; each starts with a ``file_version``
event, as TensorBoard expects.
"""

from __future__ import annotations

import itertools
import os
import queue
import socket
import threading
import time
from typing import Any

import numpy as np

from nbflow.framework import protos
from nbflow.summary.records import RecordWriter

_file_counter = itertools.count()


class _Flush:
    """A queue marker: the thread flushes the file, then sets ``done``."""

    def __init__(self, close: bool = False):
        self.close = close
        self.done = threading.Event()


def _as_summary_bytes(summary: Any) -> bytes:
    if isinstance(summary, bytes):
        return summary
    if isinstance(summary, np.ndarray):
        return bytes(summary.item()) if summary.ndim == 0 else bytes(summary.ravel()[0])
    if hasattr(summary, "SerializeToString"):
        return summary.SerializeToString()
    raise TypeError(f"Expected a serialized Summary (bytes) or a Summary proto, got {summary!r}")


class EventFileWriter:
    """Writes events to one file of ``logdir`` from a background thread."""

    def __init__(
        self, logdir: str, max_queue: int = 10, flush_secs: float = 120, filename_suffix: str = ""
    ):
        self._logdir = str(logdir)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._suffix = filename_suffix or ""
        self._closed = True
        self._error: BaseException | None = None
        self.reopen()

    def get_logdir(self) -> str:
        return self._logdir

    @property
    def path(self) -> str:
        return self._path

    def reopen(self) -> None:
        """Start a new event file after ``close()`` (no-op while open)."""
        if not self._closed:
            return
        os.makedirs(self._logdir, exist_ok=True)
        name = (
            f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
            f"{os.getpid()}.{next(_file_counter)}{self._suffix}"
        )
        self._path = os.path.join(self._logdir, name)
        self._writer = RecordWriter(open(self._path, "wb"))
        self._queue: queue.Queue = queue.Queue(max(1, self._max_queue))
        self._closed = False
        first = protos.Event(wall_time=time.time(), file_version="brain.Event:2")
        self._writer.write(first.SerializeToString())
        self._writer.flush()
        self._thread = threading.Thread(
            target=self._run, name=f"nbflow-event-writer:{self._logdir}", daemon=True
        )
        self._thread.start()

    def add_event(self, event: Any) -> None:
        """Queue an ``Event`` (or a function returning one, called on the writer thread)."""
        if self._closed:
            return
        if self._error is not None:
            raise RuntimeError(f"event writer for {self._logdir} failed") from self._error
        self._queue.put(event)

    def flush(self) -> None:
        """Wait until every queued event is written and the file flushed."""
        if self._closed:
            return
        marker = _Flush()
        self._queue.put(marker)
        while not marker.done.wait(0.5):
            if not self._thread.is_alive():
                break

    def close(self) -> None:
        """Flush and close the file; ``reopen()`` starts a new one."""
        if self._closed:
            return
        marker = _Flush(close=True)
        self._queue.put(marker)
        self._thread.join()
        self._closed = True

    def _run(self) -> None:
        last_flush = time.monotonic()
        writer = self._writer
        while True:
            timeout = max(0.0, last_flush + self._flush_secs - time.monotonic())
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                item = None
            try:
                if isinstance(item, _Flush):
                    writer.flush()
                    last_flush = time.monotonic()
                    if item.close:
                        writer.close()
                        item.done.set()
                        return
                    item.done.set()
                    continue
                if item is not None:
                    event = item() if callable(item) else item
                    writer.write(event.SerializeToString())
                if time.monotonic() - last_flush >= self._flush_secs:
                    writer.flush()
                    last_flush = time.monotonic()
            except BaseException as e:  # noqa: BLE001 - reported to the next caller
                self._error = e
                if isinstance(item, _Flush):
                    item.done.set()


class FileWriter:
    """``tf.summary.FileWriter(logdir, graph=None, max_queue=10, flush_secs=120, ...)``."""

    def __init__(
        self,
        logdir: str,
        graph: Any = None,
        max_queue: int = 10,
        flush_secs: float = 120,
        graph_def: Any = None,
        filename_suffix: str | None = None,
        session: Any = None,
    ):
        self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix or "")
        self._seen_run_metadata_tags: set[str] = set()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    # --- events ---------------------------------------------------------------------------------
    def add_event(self, event: Any) -> None:
        self.event_writer.add_event(event)

    def _add(self, step: Any, **what: Any) -> None:
        wall_time = time.time()
        step = None if step is None else int(np.asarray(step))

        def build() -> Any:
            event = protos.Event(wall_time=wall_time, **what)
            if step is not None:
                event.step = step
            return event

        self.event_writer.add_event(build)

    def add_summary(self, summary: Any, global_step: Any = None) -> None:
        """Add a serialized Summary (what a summary op yields) or a Summary proto."""
        data = _as_summary_bytes(summary)
        wall_time = time.time()
        step = None if global_step is None else int(np.asarray(global_step))

        def build() -> Any:
            event = protos.Event(wall_time=wall_time)
            event.summary.ParseFromString(data)
            if step is not None:
                event.step = step
            return event

        self.event_writer.add_event(build)

    def add_session_log(self, session_log: Any, global_step: Any = None) -> None:
        self._add(global_step, session_log=session_log)

    def add_graph(self, graph: Any, global_step: Any = None, graph_def: Any = None) -> None:
        """Add the graph as TensorFlow's binary GraphDef (TensorBoard's graph dashboard)."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        if graph is not None:
            graph_def = graph.as_graph_def(add_shapes=True)
        if isinstance(graph_def, dict):
            graph_def = protos.graph_def_to_proto(graph_def)
        data = graph_def if isinstance(graph_def, bytes) else graph_def.SerializeToString()
        self._add(global_step, graph_def=data)

    def add_meta_graph(self, meta_graph_def: Any, global_step: Any = None) -> None:
        """Add a meta graph (its graph part, as TensorBoard reads it)."""
        graph_def = meta_graph_def["graph_def"] if isinstance(meta_graph_def, dict) else None
        if graph_def is None:
            data = meta_graph_def.SerializeToString()
        else:
            data = protos.MetaGraphDef(
                graph_def=protos.graph_def_to_proto(graph_def)
            ).SerializeToString()
        self._add(global_step, meta_graph_def=data)

    def add_run_metadata(self, run_metadata: Any, tag: str, global_step: Any = None) -> None:
        """Add a step's RunMetadata under ``tag`` (each tag once per writer, as in TensorFlow)."""
        if tag in self._seen_run_metadata_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._seen_run_metadata_tags.add(tag)
        data = run_metadata_proto(run_metadata).SerializeToString()
        tagged = protos.TaggedRunMetadata(tag=tag, run_metadata=data)
        self._add(global_step, tagged_run_metadata=tagged)

    # --- lifetime -------------------------------------------------------------------------------
    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()

    def __enter__(self) -> FileWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def run_metadata_proto(run_metadata: Any) -> Any:
    """A RunMetadata proto from one, from bytes, or from nbflow's ``tf.RunMetadata``."""
    if isinstance(run_metadata, bytes):
        return protos.RunMetadata.FromString(run_metadata)
    if hasattr(run_metadata, "SerializeToString"):
        return run_metadata
    proto = protos.RunMetadata()
    for graph_def in getattr(run_metadata, "partition_graphs", None) or []:
        if isinstance(graph_def, dict):
            proto.partition_graphs.add().CopyFrom(protos.graph_def_to_proto(graph_def))
    stats = getattr(run_metadata, "step_stats", None)
    # NodeExecStats.thread_id is a uint32, as in TensorFlow, but nbflow records Python thread
    # idents (64-bit); a step's threads are numbered 0, 1, ... in order of first appearance.
    threads: dict[Any, int] = {}
    for device in _get(stats, "dev_stats") or []:
        out = proto.step_stats.dev_stats.add(device=str(_get(device, "device") or ""))
        for node in _get(device, "node_stats") or []:
            stat = out.node_stats.add()
            for field in (
                "node_name",
                "all_start_micros",
                "op_start_rel_micros",
                "op_end_rel_micros",
                "all_end_rel_micros",
                "timeline_label",
            ):
                value = _get(node, field)
                if value is not None:
                    setattr(stat, field, value)
            thread = _get(node, "thread_id")
            if thread is not None:
                stat.thread_id = threads.setdefault(thread, len(threads))
    return proto


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


class FileWriterCache:
    """One shared FileWriter per log directory (what the monitored-session hooks use)."""

    _cache: dict[str, FileWriter] = {}
    _lock = threading.RLock()

    @staticmethod
    def get(logdir: str) -> FileWriter:
        with FileWriterCache._lock:
            key = os.path.abspath(str(logdir))
            writer = FileWriterCache._cache.get(key)
            if writer is None:
                writer = FileWriterCache._cache[key] = FileWriter(logdir)
            writer.reopen()  # a cached writer somebody closed starts a new file
            return writer

    @staticmethod
    def clear() -> None:
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}
