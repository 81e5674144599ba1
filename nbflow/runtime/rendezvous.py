"""The rendezvous: where a Send leaves a tensor and the matching Recv picks it up
(whitepaper §3.2.2).

A key names one transfer of one step (``ops/sendrecv_ops.py``'s ``rendezvous_key``, the one
place its format is defined). Whichever side comes first waits: a Send
before its Recv parks the value; a Recv before its Send parks a callback. A Recv therefore never
blocks a thread — its callback runs in the thread of the Send that satisfies it. ``abort`` fails
every parked and future Recv of the step, so an error on one device ends the step everywhere.

One ``LocalRendezvous`` serves one step of one process; the devices it knows turn a value
produced on the source device into one usable on the destination (a CuPy upload for a GPU).
"""

from __future__ import annotations

import threading
from typing import Any
from collections.abc import Callable

from nbflow import errors


class LocalRendezvous:
    """Tensors in flight between the devices of one process, for one step."""

    __slots__ = ("step_id", "devices", "_table", "_lock", "_error", "stats", "_on_abort")

    def __init__(self, step_id: int, devices: dict[str, Any] | None = None):
        self.step_id = step_id
        self.devices = devices or {}
        # key -> ("value", value, src_device) or ("waiter", callback)
        self._table: dict[str, tuple] = {}
        self._lock = threading.Lock()
        self._error: BaseException | None = None
        self.stats: Any = None
        self._on_abort: list[Callable[[BaseException], None]] = []

    @property
    def error(self) -> BaseException | None:
        """The error the step was aborted with, or None."""
        return self._error

    def when_aborted(self, callback: Callable[[BaseException], None]) -> None:
        """Call ``callback(error)`` when the step is aborted (now, if it already was): each
        device's ``ctx.cancellation.cancel``, so kernels blocked elsewhere (a Dequeue) stop."""
        with self._lock:
            error = self._error
            if error is None:
                self._on_abort.append(callback)
        if error is not None:
            callback(error)

    def send(self, key: str, value: Any, src_device: str = "") -> None:
        """Deliver ``value`` under ``key``: to a parked Recv now, or park it for the Recv."""
        with self._lock:
            if self._error is not None:
                raise self._error
            parked = self._table.pop(key, None)
            if parked is None:
                self._table[key] = ("value", value, src_device)
                return
            if parked[0] == "value":
                self._table[key] = parked
                raise errors.InternalError(None, None, f"Send of {key} twice in one step")
        parked[1](value, src_device, None)

    def recv(self, key: str, callback: Callable[[Any, str, BaseException | None], None]) -> Any:
        """Call ``callback(value, src_device, error)`` once the value for ``key`` is here.

        Returns a token for ``cancel``, or None when the callback already ran.
        """
        with self._lock:
            error = self._error
            parked = None if error is not None else self._table.pop(key, None)
            if error is None and parked is None:
                self._table[key] = ("waiter", callback)
                return key
        if parked is None:
            callback(None, "", error)
        else:
            callback(parked[1], parked[2], None)
        return None

    def cancel(self, key: str, error: BaseException) -> None:
        """Withdraw a parked Recv (its step was cancelled) and fail it with ``error``."""
        with self._lock:
            parked = self._table.get(key)
            if parked is None or parked[0] != "waiter":
                return
            del self._table[key]
        parked[1](None, "", error)

    def abort(self, error: BaseException) -> None:
        """Fail every parked and future Recv of this step with ``error``, and cancel the step
        on every device (``when_aborted``)."""
        with self._lock:
            if self._error is not None:
                return
            self._error = error
            waiters = [p[1] for p in self._table.values() if p[0] == "waiter"]
            self._table.clear()
            on_abort, self._on_abort = self._on_abort, []
        for callback in waiters:
            callback(None, "", error)
        for cancel in on_abort:
            cancel(error)

    @property
    def pending_keys(self) -> list[str]:
        with self._lock:
            return list(self._table)
