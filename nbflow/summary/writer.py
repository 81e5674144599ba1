"""``tf.summary.FileWriter``: event files in TensorBoard's own format, written off the step.

    writer = tf.summary.FileWriter("/tmp/run", sess.graph)
    writer.add_summary(sess.run(merged), global_step=step)   # returns at once
    writer.close()

``add_summary`` puts the ``Event``'s key bytes in front of the serialized Summary and frames it
as a TFRecord at once (framework/wire_format.py: a few microseconds), then appends it to a
pending list. When half of ``max_queue`` events are pending, the caller appends them to the file
itself, in one buffered write, unless the background thread is busy writing (then the thread
takes them; a caller blocks only while ``max_queue`` are pending). The thread writes every
``flush_secs`` seconds (then flushing the file), on ``flush()`` and ``close()``, which return
once everything added before them is in the file, and builds the events given as functions
(``add_graph``'s). One lock around taking and writing a batch keeps the events in order. A step
thus pays for encoding bytes and a page-cache write every few events, not for waking a thread
(the OS wake-up and the GIL hand-over: ~35 µs per event with batches of 5, measured on the
2-core machine, several times the write).

Files are named like TensorFlow's: ``events.out.tfevents.<time>.<host>.<pid>.<n><suffix>``;
each starts with a ``file_version`` event, as TensorBoard expects.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import os
import socket
import threading
import time
from typing import Any

import numpy as np

from nbflow.framework import protos
from nbflow.framework.wire_format import WireError, event_bytes, summary_tags
from nbflow.summary.records import RecordWriter, encode_record

_file_counter = itertools.count()


class _Flush:
    """A pending-list marker: the thread flushes the file (and closes it), then sets ``done``."""

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


def _record(item: Any) -> bytes:
    """A pending item as a framed record: it is one already (bytes), or an Event, or a function
    returning an Event (called on the writer thread)."""
    if isinstance(item, bytes):
        return item
    if callable(item):
        item = item()
    return encode_record(item.SerializeToString())


class EventFileWriter:
    """Writes events to one file of ``logdir`` from a background thread."""

    def __init__(
        self, logdir: str, max_queue: int = 10, flush_secs: float = 120, filename_suffix: str = ""
    ):
        self._logdir = str(logdir)
        self._max_queue = max(1, max_queue)
        self._batch = (self._max_queue + 1) // 2  # pending events that wake the thread
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
        self._pending: collections.deque = collections.deque()
        self._marked = False  # a flush or close marker is pending: the thread must wake now
        self._wake = threading.Condition(threading.Lock())
        self._io = threading.Lock()  # held while a batch is taken and written
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
        self._add(event)

    def add_summary(self, wall_time: float, step: int | None, summary: bytes) -> None:
        """Queue the Event of a serialized Summary (``step`` None: not set), written from the
        bytes (framework/wire_format.py) after checking they are a well-formed message."""
        try:
            summary_tags(summary)
        except WireError as e:
            raise ValueError(f"not a serialized Summary ({e}): {summary[:32]!r}") from None
        self._add(encode_record(event_bytes(wall_time, step or 0, summary)))

    def _add(self, item: Any) -> None:
        if self._closed:
            return
        if self._error is not None:
            raise RuntimeError(f"event writer for {self._logdir} failed") from self._error
        with self._wake:
            while len(self._pending) >= self._max_queue and self._thread.is_alive():
                self._wake.wait(0.5)  # the thread is still writing the last batch
            self._pending.append(item)
            if len(self._pending) < self._batch:
                return
        self._write_here()

    def _write_here(self) -> None:
        """Write the pending events on the caller's thread, unless the writer thread is busy
        writing or some of them are its work (functions, flush markers): then wake it."""
        if not self._io.acquire(blocking=False):
            with self._wake:
                self._wake.notify_all()
            return
        try:
            if not self._thread.is_alive():  # closed (or failed) while this event was added
                return
            with self._wake:
                if any(not isinstance(item, bytes) for item in self._pending):
                    self._wake.notify_all()
                    return
                batch, self._pending = self._pending, collections.deque()
            try:
                self._writer.write_encoded(list(batch))
            except BaseException as e:
                self._error = e
                raise RuntimeError(f"event writer for {self._logdir} failed") from e
        finally:
            self._io.release()

    def _mark(self, close: bool) -> _Flush:
        marker = _Flush(close)
        with self._wake:
            self._pending.append(marker)
            self._marked = True
            self._wake.notify_all()
        return marker

    def flush(self) -> None:
        """Wait until every queued event is written and the file flushed."""
        if self._closed:
            return
        marker = self._mark(close=False)
        while not marker.done.wait(0.5):
            if not self._thread.is_alive():
                break

    def close(self) -> None:
        """Flush and close the file; ``reopen()`` starts a new one."""
        if self._closed:
            return
        self._mark(close=True)
        self._thread.join()
        self._closed = True

    def _wait(self, flush_at: float) -> None:
        """Wait for a batch the callers left to the thread, a marker or the flush time."""
        with self._wake:
            while not self._marked and len(self._pending) < self._batch:
                timeout = flush_at - time.monotonic()
                if timeout <= 0:
                    break
                self._wake.wait(timeout)

    def _take(self) -> collections.deque:
        """Everything pending (under ``_io``), waking callers that wait for room."""
        with self._wake:
            batch, self._pending, self._marked = self._pending, collections.deque(), False
            self._wake.notify_all()
        return batch

    def _run(self) -> None:
        flush_at = time.monotonic() + self._flush_secs
        while True:
            self._wait(flush_at)
            with self._io:
                if self._write_batch(self._take(), flush_at):
                    return
            if time.monotonic() >= flush_at:
                flush_at = time.monotonic() + self._flush_secs

    def _write_batch(self, batch: collections.deque, flush_at: float) -> bool:
        """Write a batch on the thread, flushing and closing at its markers (and flushing at
        the flush time); True once the file is closed."""
        writer = self._writer
        records: list[bytes] = []
        try:
            for item in batch:
                if not isinstance(item, _Flush):
                    records.append(_record(item))
                    continue
                writer.write_encoded(records)
                records = []
                writer.flush()
                if item.close:
                    writer.close()
                    item.done.set()
                    return True
                item.done.set()
            writer.write_encoded(records)
            if time.monotonic() >= flush_at:
                writer.flush()
        except BaseException as e:  # noqa: BLE001 - reported to the next caller
            self._error = e
            markers = [item for item in batch if isinstance(item, _Flush)]
            closing = any(marker.close for marker in markers)
            if closing:
                with contextlib.suppress(Exception):
                    writer.close()
            for marker in markers:
                marker.done.set()
            return closing
        return False


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
        data = summary if type(summary) is bytes else _as_summary_bytes(summary)
        if global_step is not None and type(global_step) is not int:
            global_step = int(np.asarray(global_step))
        self.event_writer.add_summary(time.time(), global_step, data)

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
