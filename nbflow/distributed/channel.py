"""The client's own connections to the tasks' Dask workers, driven from the calling thread.

``distributed.Client`` runs its event loop in a thread of its own; ``client.sync`` hands every
call to that thread and waits for it to hand the result back — two thread hops per step, each
of which waits for a core on a busy machine. ``Channels`` instead gives every thread that runs
steps a private asyncio loop and keeps, per loop, connections (``distributed.comm.connect``
with the client's connection arguments, so its TLS settings) to the workers it talks to. A
step runs its coroutine on that loop in the calling thread itself (``run``): the run messages
go out, the replies come back, and no other thread is involved.

A connection carries one request and its reply at a time; a worker hosting two tasks of a
step gets two. A connection whose call failed or was cancelled is dropped (its state is
unknown) and the next call opens a new one. When the calling thread already runs an event
loop (a Jupyter cell), that loop is blocked for the call anyway, as it is by ``client.sync``,
and is stepped aside while the private loop runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Coroutine
from typing import Any

from distributed.comm import connect
from distributed.config import get_loop_factory


class _LoopState:
    """A thread's private loop and its idle connections; dropped with the thread."""

    def __init__(self) -> None:
        # The kind of loop Dask is configured to run (``distributed.admin.event-loop``).
        self.loop = (get_loop_factory() or asyncio.new_event_loop)()
        self.free: dict[str, list[Any]] = {}  # address -> idle connections

    def close(self) -> None:
        for comms in self.free.values():
            for comm in comms:
                comm.abort()
            comms.clear()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter exit, half torn down already
            self.close()
            self.loop.close()


class Channels:
    """Per-thread event loops and connections to task workers (see the module docstring)."""

    def __init__(self, connection_args: dict[str, Any]):
        self._args = dict(connection_args)
        self._local = threading.local()
        self._states: weakref.WeakSet[_LoopState] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._closed = False

    def _state(self) -> _LoopState:
        state = getattr(self._local, "state", None)
        if state is None:
            state = self._local.state = _LoopState()
            with self._lock:
                self._states.add(state)
        return state

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coroutine`` to completion on this thread's private loop."""
        loop = self._state().loop
        outer = asyncio.events._get_running_loop()
        if outer is not None:  # a loop of this thread waits on us, as under client.sync
            asyncio.events._set_running_loop(None)
        try:
            return loop.run_until_complete(coroutine)
        finally:
            if outer is not None:
                asyncio.events._set_running_loop(outer)

    async def call(self, address: str, message: dict[str, Any]) -> Any:
        """Send ``message`` (with its ``"op"``) to the worker at ``address``; its reply."""
        free = self._state().free.setdefault(address, [])
        comm = free.pop() if free else await connect(address, **self._args)
        comm.allow_offload = False  # this thread waits anyway: no sizeof walk, no thread hop
        try:
            await comm.write(message)
            reply = await comm.read()
        except BaseException:
            comm.abort()
            raise
        if self._closed:
            comm.abort()
        else:
            free.append(comm)
        return reply

    def close(self) -> None:
        """Drop every idle connection (a thread's loop is idle between its calls)."""
        self._closed = True
        with self._lock:
            states = list(self._states)
        for state in states:
            state.close()
