"""``QueueRunner``: threads that keep running a queue's enqueue ops (whitepaper §4.5-§4.6).

Each enqueue op gets a thread that runs it until the coordinator stops or the op reports the
input exhausted (``OutOfRangeError``, e.g. ``num_epochs`` reached); when the last thread ends
that way, the runner closes the queue, so consumers drain it and then see OutOfRangeError. A
stop request closes the queue with ``cancel_pending_enqueues`` so blocked threads wake up.
Any other exception is reported to the coordinator (``join`` re-raises it).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from nbflow import errors
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import GraphKeys


class QueueRunner:
    """Runs ``enqueue_ops`` in threads to fill ``queue``."""

    def __init__(
        self,
        queue: Any = None,
        enqueue_ops: Sequence[Any] | None = None,
        close_op: Any = None,
        cancel_op: Any = None,
        queue_closed_exception_types: Sequence[type[BaseException]] | None = None,
        queue_runner_def: Any = None,
        import_scope: str | None = None,
    ):
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and at least one enqueue op")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = (
            cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        )
        self._closed_types = tuple(
            queue_closed_exception_types or (errors.OutOfRangeError, errors.CancelledError)
        )
        self._lock = threading.Lock()
        self._runs_per_session: dict[Any, int] = {}
        self._exceptions_raised: list[BaseException] = []

    @property
    def queue(self) -> Any:
        return self._queue

    @property
    def enqueue_ops(self) -> list:
        return list(self._enqueue_ops)

    @property
    def close_op(self) -> Any:
        return self._close_op

    @property
    def cancel_op(self) -> Any:
        return self._cancel_op

    @property
    def exceptions_raised(self) -> list[BaseException]:
        return list(self._exceptions_raised)

    @property
    def name(self) -> str:
        return self._queue.name

    def _run(self, sess: Any, enqueue_op: Any, coord: Any) -> None:
        decremented = False
        try:
            while not (coord is not None and coord.should_stop()):
                try:
                    sess.run(enqueue_op)
                except self._closed_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        last = self._runs_per_session[sess] == 0
                    if last:
                        try:
                            sess.run(self._close_op)
                        except Exception:  # noqa: BLE001 - the session may be closing
                            pass
                    return
        except Exception as e:  # noqa: BLE001 - reported to the coordinator
            if coord is not None:
                coord.request_stop(e)
            else:
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess: Any, coord: Any) -> None:
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except Exception:  # noqa: BLE001 - the session may already be closed
            pass

    def create_threads(
        self, sess: Any, coord: Any = None, daemon: bool = False, start: bool = False
    ) -> list[threading.Thread]:
        """One thread per enqueue op (plus one that closes the queue on a stop request)."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [
            threading.Thread(
                target=self._run,
                args=(sess, op, coord),
                daemon=daemon,
                name=f"QueueRunner:{self.name}:{k}",
            )
            for k, op in enumerate(self._enqueue_ops)
        ]
        if coord is not None:
            threads.append(
                threading.Thread(
                    target=self._close_on_stop,
                    args=(sess, coord),
                    daemon=daemon,
                    name=f"QueueRunner:{self.name}:close",
                )
            )
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if start:
                t.start()
        return threads


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    """Add ``qr`` to the graph's queue runners (``start_queue_runners`` starts them)."""
    ops_lib.add_to_collection(collection, qr)


def start_queue_runners(
    sess: Any = None,
    coord: Any = None,
    daemon: bool = True,
    start: bool = True,
    collection: str = GraphKeys.QUEUE_RUNNERS,
) -> list[threading.Thread]:
    """Start the threads of every queue runner of the graph; returns them."""
    if sess is None:
        sess = ops_lib.get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: no default session is registered.")
    threads: list[threading.Thread] = []
    for qr in sess.graph.get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
