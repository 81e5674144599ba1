"""Queue resources: the state behind the queue ops, and how a blocked op waits without a thread.

A queue (``QueueResource``) is plain data under one lock: its elements (tuples of arrays), its
capacity, and two lists of parked waiters, enqueuers ``[elements, done]`` and dequeuers
``[n, allow_smaller, many, done]``. Enqueue blocks while the queue is full and Dequeue while it has
too few elements: that back-pressure paces input pipelines (OSDI §3.1) and makes barriers (§4.4).

Blocking ops are *asynchronous kernels* (whitepaper §5.3): a blocked Dequeue parks a waiter in
the queue and returns, pinning no executor thread. Every change (an enqueue, a dequeue, a close,
a withdrawn waiter) calls ``_progress``, which serves the parked waiters in arrival order while it
can and returns the continuations to call; ``run_continuations`` calls them after the lock is
released, so a continuation that touches the queue again cannot deadlock. A cancelled step
(deadline, error) withdraws its waiters through ``ctx.cancellation``.

The subclasses change only how elements are stored and taken: a random element once
``min_after_dequeue`` remain (``RandomShuffleQueueResource``), zero-padded batches
(``PaddingFIFOQueueResource``), or the smallest int64 priority first (``PriorityQueueResource``).
"""

from __future__ import annotations

import collections
import heapq
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework.op_def import KernelContext

Done = Callable[..., None]


class QueueResource:
    """Elements (tuples of arrays), capacity, and the parked enqueuers and dequeuers."""

    kind = "FIFOQueue"

    def __init__(self, name: str, capacity: int, dtypes_: list, shapes: list, **options: Any):
        self.name = name
        self.capacity = capacity if capacity and capacity > 0 else None
        self.dtypes = dtypes_
        self.shapes = shapes
        # every component's shape, when all are fully defined: an element's check is one ``==``
        self.fixed_shapes = (
            tuple(tuple(s.as_list()) for s in shapes)
            if shapes and all(s.is_fully_defined() for s in shapes)
            else None
        )
        self.closed = False
        self.lock = threading.Lock()
        self.items: Any = self._storage()
        self.enqueuers: list[list] = []  # [elements, done]
        self.dequeuers: list[list] = []  # [n, allow_smaller, many, done]

    # element storage (overridden by the shuffling and priority queues)
    def _storage(self) -> Any:
        return collections.deque()  # taken from the front in O(1)

    def _put(self, element: tuple) -> None:
        self.items.append(element)

    def _take(self) -> tuple:
        return self.items.popleft()

    def _available(self) -> int:
        """How many elements a dequeue may take now."""
        return len(self.items)

    def size(self) -> int:
        with self.lock:
            return len(self.items)

    # --- operations: continuations always run outside the lock ----------------------------
    def enqueue(self, elements: list[tuple], done: Done, ctx: KernelContext) -> None:
        if self.closed:
            done(error=self._closed_error("Enqueue"))
            return
        self._wait(self.enqueuers, [elements, done], ctx)

    def dequeue(self, n: int, allow_smaller: bool, many: bool, done: Done, ctx: KernelContext):
        self._wait(self.dequeuers, [n, allow_smaller, many, done], ctx)

    def _wait(self, waiters: list, waiter: list, ctx: KernelContext) -> None:
        with self.lock:
            waiters.append(waiter)
            actions = self._progress()
            parked = any(w is waiter for w in waiters)
        run_continuations(actions)
        if parked:  # withdraw the waiter if the step is cancelled (deadline, error)
            if ctx.cancellation.register(lambda: self._withdraw(waiters, waiter)) is None:
                self._withdraw(waiters, waiter)

    def _withdraw(self, waiters: list, waiter: list) -> None:
        with self.lock:
            if not any(w is waiter for w in waiters):
                return  # already served
            waiters[:] = [w for w in waiters if w is not waiter]
            actions = self._progress()  # a withdrawn head may unblock others
        run_continuations(actions)
        waiter[-1](
            error=errors.CancelledError(None, None, f"{self.kind} '{self.name}': step cancelled")
        )

    def close(self, cancel_pending_enqueues: bool) -> None:
        with self.lock:
            self.closed = True
            actions = []
            if cancel_pending_enqueues:
                for _, done in self.enqueuers:
                    actions.append((done, None, self._closed_error("pending Enqueue cancelled")))
                self.enqueuers = []
            actions += self._progress()
        run_continuations(actions)

    def _closed_error(self, what: str) -> errors.OpError:
        return errors.CancelledError(None, None, f"{self.kind} '{self.name}' is closed ({what})")

    def _progress(self) -> list:
        """Serve parked waiters in arrival order while possible (under the lock)."""
        actions: list = []
        moved = True
        while moved:
            moved = False
            while self.enqueuers:
                elements, done = self.enqueuers[0]
                if self.capacity is not None and len(self.items) + 1 > self.capacity:
                    break
                self._put(elements.pop(0))
                moved = True
                if not elements:
                    self.enqueuers.pop(0)
                    actions.append((done, None, None))
            while self.dequeuers:
                n, allow_smaller, many, done = self.dequeuers[0]
                available = self._available()
                if available >= n or (self.closed and allow_smaller and self.items):
                    taken = [self._take() for _ in range(min(n, len(self.items)))]
                    self.dequeuers.pop(0)
                    actions.append((done, self._result(taken, many), None))
                    moved = True
                elif self.closed and not self.enqueuers:
                    self.dequeuers.pop(0)
                    message = (
                        f"{self.kind} '{self.name}' is closed and has insufficient elements "
                        f"(requested {n}, current size {len(self.items)})"
                    )
                    actions.append((done, None, errors.OutOfRangeError(None, None, message)))
                    moved = True
                else:
                    break
        return actions

    def _result(self, taken: list[tuple], many: bool) -> Any:
        if not many:
            element = taken[0]
            return element if len(element) != 1 else element[0]
        columns = [self._stack([e[k] for e in taken], k) for k in range(len(self.dtypes))]
        return columns if len(columns) != 1 else columns[0]

    def _stack(self, parts: list, k: int) -> Any:
        if not parts:
            shape = self.shapes[k] if self.shapes else None
            dims = [] if shape is None or shape.ndims is None else shape.as_list()
            return np.zeros([0] + [d or 0 for d in dims], dtype=numpy_dtype(self.dtypes[k]))
        return np.stack(parts)


def run_continuations(actions: list) -> None:
    for done, result, error in actions:
        if error is not None:
            done(error=error)
        else:
            done(result)


def numpy_dtype(dtype: Any) -> Any:
    dtype = dtypes.as_dtype(dtype)
    return object if dtype is dtypes.string else dtype.np


class RandomShuffleQueueResource(QueueResource):
    kind = "RandomShuffleQueue"

    def __init__(self, *args: Any, min_after_dequeue: int = 0, seed: Any = None, **kw: Any):
        super().__init__(*args, **kw)
        self.min_after_dequeue = min_after_dequeue
        self.rng = np.random.default_rng(seed)
        self._uniforms: list[float] = []  # drawn 1,024 at a time: one draw costs ~2 µs

    def _storage(self) -> Any:
        return []

    def _available(self) -> int:
        if self.closed:
            return len(self.items)
        return max(0, len(self.items) - self.min_after_dequeue)

    def _take(self) -> tuple:
        if not self._uniforms:
            self._uniforms = self.rng.random(1024).tolist()
        n = len(self.items)
        i = min(int(self._uniforms.pop() * n), n - 1)
        self.items[i], self.items[-1] = self.items[-1], self.items[i]
        return self.items.pop()


class PaddingFIFOQueueResource(QueueResource):
    kind = "PaddingFIFOQueue"

    def _stack(self, parts: list, k: int) -> Any:
        if not parts:
            return super()._stack(parts, k)
        arrays = [np.asarray(p) for p in parts]
        target = [max(a.shape[d] for a in arrays) for d in range(arrays[0].ndim)]
        out = np.zeros([len(arrays)] + target, dtype=arrays[0].dtype)
        for i, a in enumerate(arrays):
            out[(i,) + tuple(slice(0, s) for s in a.shape)] = a
        return out


class PriorityQueueResource(QueueResource):
    kind = "PriorityQueue"

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self._counter = 0

    def _storage(self) -> Any:
        return []  # a heap

    def _put(self, element: tuple) -> None:
        self._counter += 1
        heapq.heappush(self.items, (int(element[0]), self._counter, element))  # type: ignore

    def _take(self) -> tuple:
        return heapq.heappop(self.items)[2]  # type: ignore
