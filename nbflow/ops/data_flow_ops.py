"""Queues and gradient accumulators: stateful resources that let steps hand data to each other.

A queue op (``FIFOQueueV2``...) yields a handle to a queue held in the device's resource
manager, found by container and shared name, so concurrent steps and several sessions share it
(whitepaper §4.6-§4.7). Enqueue blocks while the queue is full and Dequeue while it has too few
elements: that back-pressure paces input pipelines (OSDI §3.1) and makes barriers (§4.4).

Blocking ops are *asynchronous kernels* (whitepaper §5.3): a blocked Dequeue parks a waiter
in the queue and returns, pinning no executor thread; whoever makes room or data later calls
the waiter's ``done``. A cancelled step (deadline, error) withdraws its waiters through
``ctx.cancellation``. The queue state (``_Queue``) is plain data under one lock; continuations
always run after the lock is released.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, TensorSpec
from nbflow.framework.ops import Tensor
from nbflow.framework.tensor_shape import TensorShape, as_shape
from nbflow.ops.random_ops import get_seed
from nbflow.ops.control_flow_ops import group
from nbflow.framework.indexed_slices import IndexedSlices

Done = Callable[..., None]


# --- queue state ----------------------------------------------------------------------------
class _Queue:
    """Elements (tuples of arrays), capacity, and the parked enqueuers and dequeuers."""

    kind = "FIFOQueue"

    def __init__(self, name: str, capacity: int, dtypes_: list, shapes: list, **options: Any):
        self.name = name
        self.capacity = capacity if capacity and capacity > 0 else None
        self.dtypes = dtypes_
        self.shapes = shapes
        self.closed = False
        self.lock = threading.Lock()
        self.items: list[tuple] = []
        self.enqueuers: list[list] = []  # [elements, done]
        self.dequeuers: list[list] = []  # [n, allow_smaller, many, done]

    # element storage (overridden by the shuffling and priority queues)
    def _put(self, element: tuple) -> None:
        self.items.append(element)

    def _take(self) -> tuple:
        return self.items.pop(0)

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
        _run(actions)
        if parked:  # withdraw the waiter if the step is cancelled (deadline, error)
            if ctx.cancellation.register(lambda: self._withdraw(waiters, waiter)) is None:
                self._withdraw(waiters, waiter)

    def _withdraw(self, waiters: list, waiter: list) -> None:
        with self.lock:
            if not any(w is waiter for w in waiters):
                return  # already served
            waiters[:] = [w for w in waiters if w is not waiter]
            actions = self._progress()  # a withdrawn head may unblock others
        _run(actions)
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
        _run(actions)

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
            return np.zeros([0] + [d or 0 for d in dims], dtype=_np_dtype(self.dtypes[k]))
        return np.stack(parts)


def _run(actions: list) -> None:
    for done, result, error in actions:
        if error is not None:
            done(error=error)
        else:
            done(result)


def _np_dtype(dtype: Any) -> Any:
    dtype = dtypes.as_dtype(dtype)
    return object if dtype is dtypes.string else dtype.np


class _RandomShuffleQueue(_Queue):
    kind = "RandomShuffleQueue"

    def __init__(self, *args: Any, min_after_dequeue: int = 0, seed: Any = None, **kw: Any):
        super().__init__(*args, **kw)
        self.min_after_dequeue = min_after_dequeue
        self.rng = np.random.default_rng(seed)

    def _available(self) -> int:
        if self.closed:
            return len(self.items)
        return max(0, len(self.items) - self.min_after_dequeue)

    def _take(self) -> tuple:
        i = int(self.rng.integers(len(self.items)))
        self.items[i], self.items[-1] = self.items[-1], self.items[i]
        return self.items.pop()


class _PaddingFIFOQueue(_Queue):
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


class _PriorityQueue(_Queue):
    kind = "PriorityQueue"

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self._counter = 0

    def _put(self, element: tuple) -> None:
        self._counter += 1
        heapq.heappush(self.items, (int(element[0]), self._counter, element))  # type: ignore

    def _take(self) -> tuple:
        return heapq.heappop(self.items)[2]  # type: ignore


# --- ops ------------------------------------------------------------------------------------
class _QueueOpBase(OpDef):
    abstract = True
    stateful = True
    differentiable = False
    queue_class: Any = _Queue
    attrs = {
        "component_types": REQUIRED,
        "shapes": [],
        "capacity": -1,
        "container": "",
        "shared_name": "",
    }

    def infer(self, **attrs: Any) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.resource)

    def options(self, attrs: dict) -> dict:
        return {}

    def bind(self, op: Any, device_type: str = "CPU") -> Callable[..., Any]:
        attrs = op.attrs
        container = attrs["container"]
        name = attrs["shared_name"] or op.name
        shapes = [as_shape(s) for s in attrs["shapes"]]
        types = [dtypes.as_dtype(t) for t in attrs["component_types"]]
        options = self.options(attrs)
        queue_class = self.queue_class

        def queue(ctx: KernelContext) -> _Queue:
            return ctx.resources.lookup_or_create(
                container,
                name,
                lambda: queue_class(name, attrs["capacity"], types, shapes, **options),
            )

        return queue


class FIFOQueueV2(_QueueOpBase):
    """A handle to a first-in first-out queue."""


class RandomShuffleQueueV2(_QueueOpBase):
    """A handle to a queue that dequeues a random element, keeping ``min_after_dequeue``."""

    queue_class = _RandomShuffleQueue
    attrs = {**_QueueOpBase.attrs, "min_after_dequeue": 0, "seed": 0, "seed2": 0}

    def options(self, attrs: dict) -> dict:
        seeds = (attrs["seed"], attrs["seed2"])
        return {
            "min_after_dequeue": attrs["min_after_dequeue"],
            "seed": None if seeds == (0, 0) else list(seeds),
        }


class PaddingFIFOQueueV2(_QueueOpBase):
    """A FIFO queue whose dequeue_many pads variable dimensions (None) with zeros."""

    queue_class = _PaddingFIFOQueue


class PriorityQueueV2(_QueueOpBase):
    """A queue that dequeues the element with the smallest int64 priority (component 0)."""

    queue_class = _PriorityQueue


class _AsyncQueueOp(OpDef):
    abstract = True
    stateful = True
    differentiable = False
    is_async = True

    def bind(self, op: Any, device_type: str = "CPU") -> Callable[..., Any]:
        attrs = {k: v for k, v in op.attrs.items() if not k.startswith("_") and k != "N"}
        start = self.start

        def kernel(ctx: KernelContext, handle: _Queue, *args: Any, done: Done) -> None:
            start(ctx, handle, list(args), done, **attrs)

        return kernel

    def start(self, ctx: KernelContext, queue: _Queue, args: list, done: Done, **attrs: Any):
        raise TypeError(f"{self.type} declares no start")


def _component(value: Any, dtype: Any) -> Any:
    return np.asarray(value, dtype=_np_dtype(dtype))


class QueueEnqueueV2(_AsyncQueueOp):
    """Enqueue one element (a tuple of components); blocks while the queue is full."""

    inputs = ("handle", "components*")
    attrs = {"timeout_ms": -1}
    num_outputs = 0

    def infer(self, handle: TensorSpec, components: list, timeout_ms: int) -> list:
        return []

    def start(self, ctx, queue, args, done, timeout_ms):  # type: ignore[override]
        element = tuple(_component(v, t) for v, t in zip(args, queue.dtypes))
        mismatch = _shape_mismatch(queue, [c.shape for c in element])
        if mismatch:
            done(error=errors.InvalidArgumentError(None, None, mismatch))
            return
        queue.enqueue([element], lambda *a, **k: done(None, **k), ctx)


def _shape_mismatch(queue: _Queue, shapes: list[tuple]) -> str:
    """TensorFlow's message when an element's component shapes differ from the queue's."""
    for k, (want, got) in enumerate(zip(queue.shapes or [], shapes)):
        if not want.is_compatible_with(got):
            return (
                f"Shape mismatch in tuple component {k}. Expected {want.as_list()}, got {list(got)}"
            )
    return ""


class QueueEnqueueManyV2(_AsyncQueueOp):
    """Enqueue the slices along dimension 0 of the components; blocks while full."""

    inputs = ("handle", "components*")
    attrs = {"timeout_ms": -1}
    num_outputs = 0

    def infer(self, handle: TensorSpec, components: list, timeout_ms: int) -> list:
        return []

    def start(self, ctx, queue, args, done, timeout_ms):  # type: ignore[override]
        columns = [_component(v, t) for v, t in zip(args, queue.dtypes)]
        n = {len(c) for c in columns}
        if len(n) != 1:
            done(
                error=errors.InvalidArgumentError(
                    None, None, f"enqueue_many: components differ in size along dim 0: {sorted(n)}"
                )
            )
            return
        mismatch = _shape_mismatch(queue, [c.shape[1:] for c in columns])
        if mismatch:
            done(error=errors.InvalidArgumentError(None, None, mismatch))
            return
        count = n.pop()
        if count == 0:
            done(None)
            return
        elements = [tuple(c[i] for c in columns) for i in range(count)]
        queue.enqueue(elements, lambda *a, **k: done(None, **k), ctx)


class _DequeueBase(_AsyncQueueOp):
    abstract = True
    attrs = {"component_types": REQUIRED, "timeout_ms": -1}

    def output_count(self, attrs: dict) -> int:
        return len(attrs["component_types"])


class QueueDequeueV2(_DequeueBase):
    """Dequeue one element; blocks while the queue is empty; OutOfRange once closed and empty."""

    inputs = ("handle",)

    def infer(self, handle: TensorSpec, component_types: list, timeout_ms: int) -> list:
        return [TensorSpec(TensorShape(None), t) for t in component_types]

    def start(self, ctx, queue, args, done, component_types, timeout_ms):  # type: ignore
        queue.dequeue(1, False, False, done, ctx)


class QueueDequeueManyV2(_DequeueBase):
    """Dequeue ``n`` elements stacked along a new dimension 0."""

    inputs = ("handle", "n")

    def infer(self, handle: TensorSpec, n: TensorSpec, component_types: list, timeout_ms: int):
        return [TensorSpec(TensorShape(None), t) for t in component_types]

    def start(self, ctx, queue, args, done, component_types, timeout_ms):  # type: ignore
        queue.dequeue(int(args[0]), False, True, done, ctx)


class QueueDequeueUpToV2(QueueDequeueManyV2):
    """Like dequeue_many, but a closed queue yields its last, smaller batch."""

    def start(self, ctx, queue, args, done, component_types, timeout_ms):  # type: ignore
        queue.dequeue(int(args[0]), True, True, done, ctx)


class QueueCloseV2(OpDef):
    """Close the queue: further enqueues fail; dequeues drain it, then raise OutOfRange."""

    inputs = ("handle",)
    attrs = {"cancel_pending_enqueues": False}
    num_outputs = 0
    stateful = True
    differentiable = False

    def infer(self, handle: TensorSpec, cancel_pending_enqueues: bool) -> list:
        return []

    def compute(self, ctx: KernelContext, handle: _Queue, cancel_pending_enqueues: bool):
        handle.close(cancel_pending_enqueues)


class QueueSizeV2(OpDef):
    """The number of elements in the queue."""

    inputs = ("handle",)
    stateful = True
    differentiable = False

    def infer(self, handle: TensorSpec) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.int32)

    def compute(self, ctx: KernelContext, handle: _Queue) -> Any:
        return np.int32(handle.size())


class QueueIsClosedV2(OpDef):
    """Whether the queue is closed."""

    inputs = ("handle",)
    stateful = True
    differentiable = False

    def infer(self, handle: TensorSpec) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.bool)

    def compute(self, ctx: KernelContext, handle: _Queue) -> Any:
        return np.bool_(handle.closed)


# --- Python API -----------------------------------------------------------------------------
def _graph() -> ops_lib.Graph:
    return ops_lib.get_default_graph()


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


class QueueBase:
    """Base of the queue classes: ``enqueue``, ``dequeue``, ``close`` and friends build ops."""

    _op_type = "FIFOQueueV2"

    def __init__(
        self,
        capacity: int,
        dtypes_: Any,
        shapes: Any = None,
        names: Any = None,
        shared_name: str | None = None,
        name: str = "fifo_queue",
        extra_attrs: dict | None = None,
    ):
        self._dtypes = [dtypes.as_dtype(t) for t in _as_list(dtypes_)]
        if shapes is not None:
            shapes = [as_shape(s) for s in _shape_list(shapes, len(self._dtypes))]
        self._shapes = shapes
        self._names = list(names) if names is not None else None
        attrs = {
            "component_types": self._dtypes,
            "shapes": shapes or [],
            "capacity": capacity,
            "shared_name": shared_name or "",
            **(extra_attrs or {}),
        }
        self._queue_ref = _graph().create_op(self._op_type, [], attrs, name=name).outputs[0]
        self._name = self._queue_ref.op.name
        # TensorFlow names a queue's ops after the queue's own name: q_Dequeue, q_enqueue, ...
        self._short_name = self._name.split("/")[-1]

    @property
    def queue_ref(self) -> Tensor:
        return self._queue_ref

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtypes(self) -> list:
        return list(self._dtypes)

    @property
    def shapes(self) -> list:
        return list(self._shapes or [TensorShape(None)] * len(self._dtypes))

    @property
    def names(self) -> Any:
        return self._names

    def _components(self, vals: Any) -> list[Tensor]:
        if isinstance(vals, dict):
            if self._names is None:
                raise ValueError("Queue must have names to enqueue a dictionary")
            vals = [vals[n] for n in self._names]
        values = _as_list(vals)
        if len(values) != len(self._dtypes):
            raise ValueError(
                f"Expected {len(self._dtypes)} components for queue {self._name}, got {len(values)}"
            )
        return [ops_lib.convert_to_tensor(v, dtype=t) for v, t in zip(values, self._dtypes)]

    def enqueue(self, vals: Any, name: str | None = None) -> ops_lib.Operation:
        """Enqueue one element; the step blocks while the queue is full."""
        return _graph().create_op(
            "QueueEnqueueV2",
            [self._queue_ref, self._components(vals)],
            name=name or f"{self._short_name}_enqueue",
        )

    def enqueue_many(self, vals: Any, name: str | None = None) -> ops_lib.Operation:
        """Enqueue the slices of each component along dimension 0."""
        return _graph().create_op(
            "QueueEnqueueManyV2",
            [self._queue_ref, self._components(vals)],
            name=name or f"{self._short_name}_EnqueueMany",
        )

    def _outputs(self, op: ops_lib.Operation, batch: Any) -> Any:
        outs = list(op.outputs)
        for k, t in enumerate(outs):
            if self._shapes is not None:
                shape = self._shapes[k]
                t.set_shape(shape if batch is False else TensorShape([batch]).concatenate(shape))
        if self._names is not None:
            return dict(zip(self._names, outs))
        return outs[0] if len(outs) == 1 else outs

    def dequeue(self, name: str | None = None) -> Any:
        """Dequeue one element; blocks while empty; OutOfRangeError once closed and drained."""
        op = _graph().create_op(
            "QueueDequeueV2",
            [self._queue_ref],
            {"component_types": self._dtypes},
            name=name or f"{self._short_name}_Dequeue",
        )
        return self._outputs(op, False)

    def dequeue_many(self, n: Any, name: str | None = None) -> Any:
        """Dequeue ``n`` elements, stacked along a new dimension 0."""
        op = _graph().create_op(
            "QueueDequeueManyV2",
            [self._queue_ref, ops_lib.convert_to_tensor(n, dtype=dtypes.int32)],
            {"component_types": self._dtypes},
            name=name or f"{self._short_name}_DequeueMany",
        )
        return self._outputs(op, n if isinstance(n, int) else None)

    def dequeue_up_to(self, n: Any, name: str | None = None) -> Any:
        """Like dequeue_many, but a closed queue returns its remaining (fewer) elements."""
        op = _graph().create_op(
            "QueueDequeueUpToV2",
            [self._queue_ref, ops_lib.convert_to_tensor(n, dtype=dtypes.int32)],
            {"component_types": self._dtypes},
            name=name or f"{self._short_name}_DequeueUpTo",
        )
        return self._outputs(op, None)

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None):
        """Close the queue; with ``cancel_pending_enqueues`` blocked enqueues fail at once."""
        return _graph().create_op(
            "QueueCloseV2",
            [self._queue_ref],
            {"cancel_pending_enqueues": cancel_pending_enqueues},
            name=name or f"{self._short_name}_Close",
        )

    def size(self, name: str | None = None) -> Tensor:
        return (
            _graph()
            .create_op("QueueSizeV2", [self._queue_ref], name=name or f"{self._short_name}_Size")
            .outputs[0]
        )

    def is_closed(self, name: str | None = None) -> Tensor:
        return (
            _graph()
            .create_op(
                "QueueIsClosedV2", [self._queue_ref], name=name or f"{self._short_name}_IsClosed"
            )
            .outputs[0]
        )


def _shape_list(shapes: Any, n: int) -> list:
    if isinstance(shapes, TensorShape):
        return [shapes]
    shapes = list(shapes)
    if n == 1 and (not shapes or all(isinstance(d, (int, type(None))) for d in shapes)):
        return [shapes]
    return shapes


class FIFOQueue(QueueBase):
    """``tf.FIFOQueue(capacity, dtypes, shapes=None, names=None, shared_name=None)``."""

    def __init__(
        self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"
    ):
        super().__init__(capacity, dtypes, shapes, names, shared_name, name)


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose ``dequeue_many`` pads dimensions declared None to the longest."""

    _op_type = "PaddingFIFOQueueV2"

    def __init__(
        self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"
    ):
        super().__init__(capacity, dtypes, shapes, names, shared_name, name)


class PriorityQueue(QueueBase):
    """Dequeues smallest-priority first; component 0 of every element is an int64 priority."""

    _op_type = "PriorityQueueV2"

    def __init__(
        self, capacity, types, shapes=None, names=None, shared_name=None, name="priority_queue"
    ):
        shapes = None if shapes is None else [TensorShape([])] + list(shapes)
        super().__init__(capacity, [dtypes.int64] + list(types), shapes, names, shared_name, name)


class RandomShuffleQueue(QueueBase):
    """Dequeues uniformly at random while keeping at least ``min_after_dequeue`` elements
    (until closed), so batches mix examples from a large buffer."""

    _op_type = "RandomShuffleQueueV2"

    def __init__(
        self,
        capacity,
        min_after_dequeue,
        dtypes,
        shapes=None,
        names=None,
        seed=None,
        shared_name=None,
        name="random_shuffle_queue",
    ):
        seed1, seed2 = get_seed(seed)
        extra = {
            "min_after_dequeue": min_after_dequeue,
            "seed": seed1 or 0,
            "seed2": seed2 or 0,
        }
        super().__init__(capacity, dtypes, shapes, names, shared_name, name, extra)


class _CountUpTo(OpDef):
    """ref += 1 and return the old value; OutOfRangeError once it reached ``limit`` (epochs)."""

    inputs = ("ref&",)
    attrs = {"limit": REQUIRED}
    stateful = True
    differentiable = False

    def infer(self, ref: TensorSpec, limit: int) -> TensorSpec:
        return TensorSpec(ref.shape, ref.dtype.base_dtype)

    def compute(self, ctx: KernelContext, ref: Any, limit: int) -> Any:
        with ref.lock:
            value = ref.read()
            if int(value) >= limit:
                raise errors.OutOfRangeError(
                    None, None, f"Reached limit of {limit} ({ref.name}): input exhausted"
                )
            old = value.copy()
            ref.value = value + 1
            return old


def count_up_to(ref: Any, limit: int, name: str | None = None) -> Tensor:
    ref_tensor = ref._ref() if hasattr(ref, "_ref") else ref
    return (
        _graph()
        .create_op("_CountUpTo", [ref_tensor], {"limit": limit}, name=name or "CountUpTo")
        .outputs[0]
    )


# --- synchronisation: a barrier made of queues, gradient accumulators (OSDI §4.4) ---------------
class TokenBarrier:
    """A reusable barrier for ``num_participants`` steps, made of FIFO queues.

    Participant ``i`` runs ``arrive(i)``: it puts a token in the queue it shares with each other
    participant, then takes one token from each of theirs; so no participant leaves round ``r``
    before all have entered it. One queue per ordered pair keeps rounds apart (FIFO per sender).
    """

    def __init__(
        self, num_participants: int, shared_name: str | None = None, name: str = "barrier"
    ):
        self.num_participants = num_participants
        base = shared_name or name
        with _graph().name_scope(name):
            self._queues = {
                (i, j): FIFOQueue(
                    num_participants + 1,
                    [dtypes.bool],
                    shapes=[[]],
                    shared_name=f"{base}_{i}_from_{j}",
                    name=f"from_{j}_to_{i}",
                )
                for i in range(num_participants)
                for j in range(num_participants)
                if i != j
            }

    def arrive(self, participant: int, name: str | None = None) -> ops_lib.Operation:
        others = [j for j in range(self.num_participants) if j != participant]
        graph = _graph()
        with graph.name_scope(name or f"arrive_{participant}"):
            sent = [self._queues[(j, participant)].enqueue([True]) for j in others]
            with graph.control_dependencies(sent):
                taken = [self._queues[(participant, j)].dequeue() for j in others]
            return group(*sent, *taken)


class _Accumulator:
    """Sums gradients applied for the current global step; ``take`` waits for ``num_required``."""

    def __init__(self, name: str, dtype: Any, shape: Any, reduction: str, sparse: bool):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.reduction = reduction
        self.sparse = sparse
        self.lock = threading.Lock()
        self.global_step = 0
        self.count = 0
        self.total: Any = None  # dense array, or {index: row} when sparse
        self.dense_shape: Any = None
        self.takers: list[tuple[int, Done]] = []

    def apply(self, local_step: int, grad: Any) -> None:
        with self.lock:
            if local_step < self.global_step:
                return  # stale: computed from parameters older than the last update
            if self.sparse:
                indices, values, dense_shape = grad
                self.total = self.total if self.total is not None else {}
                for i, row in zip(np.asarray(indices).reshape(-1), np.asarray(values)):
                    i = int(i)
                    self.total[i] = self.total[i] + row if i in self.total else np.array(row)
                if dense_shape is not None and np.size(dense_shape):
                    self.dense_shape = np.asarray(dense_shape, dtype=np.int64)
            else:
                grad = np.asarray(grad)
                if self.shape is not None and not self.shape.is_compatible_with(grad.shape):
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Shape mismatch: accumulator {self.name} expects {self.shape}, "
                        f"got {list(grad.shape)}",
                    )
                self.total = grad.copy() if self.total is None else self.total + grad
            self.count += 1
            actions = self._serve()
        _run(actions)

    def take(self, num_required: int, done: Done, ctx: KernelContext) -> None:
        if num_required < 1:
            done(
                error=errors.InvalidArgumentError(
                    None, None, f"num_required must be >= 1, got {num_required}"
                )
            )
            return
        waiter = (num_required, done)
        with self.lock:
            self.takers.append(waiter)
            actions = self._serve()
            parked = waiter in self.takers
        _run(actions)
        if parked:

            def withdraw() -> None:
                with self.lock:
                    if waiter not in self.takers:
                        return
                    self.takers.remove(waiter)
                done(error=errors.CancelledError(None, None, f"take_grad on {self.name} cancelled"))

            if ctx.cancellation.register(withdraw) is None:
                withdraw()

    def _serve(self) -> list:
        actions = []
        while self.takers and self.count >= self.takers[0][0]:
            _, done = self.takers.pop(0)
            scale = 1.0 / self.count if self.reduction == "MEAN" else 1.0
            if self.sparse:
                total = self.total or {}
                keys = sorted(total)
                indices = np.array(keys, dtype=np.int64)
                rows = [total[k] * scale for k in keys]
                values = (
                    np.stack(rows).astype(self.dtype.np)
                    if rows
                    else np.zeros(
                        [0]
                        + [d or 0 for d in (self.shape.as_list()[1:] if self.shape.ndims else [])],
                        dtype=self.dtype.np,
                    )
                )
                shape = (
                    self.dense_shape if self.dense_shape is not None else np.zeros([0], np.int64)
                )
                result: Any = (indices, values, shape)
            else:
                result = (self.total * scale).astype(self.dtype.np)
            self.total, self.count = None, 0
            self.global_step += 1
            actions.append((done, result, None))
        return actions


class _AccumulatorOp(OpDef):
    abstract = True
    stateful = True
    differentiable = False
    attrs = {
        "dtype": REQUIRED,
        "shape": TensorShape(None),
        "container": "",
        "shared_name": "",
        "reduction_type": "MEAN",
    }
    sparse = False

    def infer(self, **attrs: Any) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.resource)

    def bind(self, op: Any, device_type: str = "CPU") -> Callable[..., Any]:
        attrs = op.attrs
        name = attrs["shared_name"] or op.name
        sparse = self.sparse

        def accumulator(ctx: KernelContext) -> _Accumulator:
            return ctx.resources.lookup_or_create(
                attrs["container"],
                name,
                lambda: _Accumulator(
                    name,
                    dtypes.as_dtype(attrs["dtype"]),
                    as_shape(attrs["shape"]),
                    attrs["reduction_type"],
                    sparse,
                ),
            )

        return accumulator


class ConditionalAccumulatorV2(_AccumulatorOp):
    """A handle to a dense gradient accumulator."""


class SparseConditionalAccumulatorV2(_AccumulatorOp):
    """A handle to an accumulator of IndexedSlices gradients."""

    sparse = True


class AccumulatorApplyGradientV2(OpDef):
    """Add a gradient computed at ``local_step`` (dropped if older than the global step)."""

    inputs = ("handle", "local_step", "gradient*")
    num_outputs = 0
    stateful = True
    differentiable = False

    def infer(self, handle: TensorSpec, local_step: TensorSpec, gradient: list) -> list:
        return []

    def compute(self, ctx: KernelContext, handle: _Accumulator, local_step: Any, gradient: Any):
        grad = tuple(gradient) if handle.sparse else gradient[0]
        handle.apply(int(local_step), grad)


class AccumulatorTakeGradientV2(OpDef):
    """Wait until ``num_required`` gradients arrived; return their mean and start a new step."""

    inputs = ("handle", "num_required")
    attrs = {"dtype": REQUIRED, "sparse": False}
    stateful = True
    differentiable = False
    is_async = True

    def infer(self, handle: TensorSpec, num_required: TensorSpec, dtype: Any, sparse: bool):
        if sparse:
            return [
                TensorSpec(TensorShape([None]), dtypes.int64),
                TensorSpec(TensorShape(None), dtype),
                TensorSpec(TensorShape([None]), dtypes.int64),
            ]
        return TensorSpec(TensorShape(None), dtype)

    def compute(
        self,
        ctx: KernelContext,
        handle: _Accumulator,
        num_required: Any,
        dtype: Any,
        sparse: bool,
        done: Done,
    ) -> None:
        handle.take(int(num_required), done, ctx)


class AccumulatorNumAccumulatedV2(OpDef):
    """How many gradients the accumulator holds for the current step."""

    inputs = ("handle",)
    stateful = True
    differentiable = False

    def infer(self, handle: TensorSpec) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.int32)

    def compute(self, ctx: KernelContext, handle: _Accumulator) -> Any:
        return np.int32(handle.count)


class AccumulatorSetGlobalStepV2(OpDef):
    """Set the accumulator's global step (gradients from older local steps are then dropped)."""

    inputs = ("handle", "new_global_step")
    num_outputs = 0
    stateful = True
    differentiable = False

    def infer(self, handle: TensorSpec, new_global_step: TensorSpec) -> list:
        return []

    def compute(self, ctx: KernelContext, handle: _Accumulator, new_global_step: Any) -> None:
        with handle.lock:
            handle.global_step = max(handle.global_step, int(new_global_step))


class ConditionalAccumulator:
    """Accumulates gradients of one variable from several workers (OSDI §4.4).

    ``apply_grad(grad, local_step)`` drops gradients computed for an older global step;
    ``take_grad(num_required)`` blocks (asynchronously) until ``num_required`` arrived and
    returns their average, then advances the global step.
    """

    _op_type = "ConditionalAccumulatorV2"

    def __init__(
        self,
        dtype: Any,
        shape: Any = None,
        shared_name: str | None = None,
        name: str = "conditional_accumulator",
        reduction_type: str = "MEAN",
    ):
        self._dtype = dtypes.as_dtype(dtype)
        self._shape = as_shape(shape) if shape is not None else TensorShape(None)
        self._accumulator_ref = (
            _graph()
            .create_op(
                self._op_type,
                [],
                {
                    "dtype": self._dtype,
                    "shape": self._shape,
                    "shared_name": shared_name or "",
                    "reduction_type": reduction_type,
                },
                name=name,
            )
            .outputs[0]
        )

    @property
    def accumulator_ref(self) -> Tensor:
        return self._accumulator_ref

    @property
    def dtype(self) -> Any:
        return self._dtype

    def num_accumulated(self, name: str | None = None) -> Tensor:
        return (
            _graph()
            .create_op(
                "AccumulatorNumAccumulatedV2",
                [self._accumulator_ref],
                name=name or "num_accumulated",
            )
            .outputs[0]
        )

    def set_global_step(self, new_global_step: Any, name: str | None = None):
        step = ops_lib.convert_to_tensor(new_global_step, dtype=dtypes.int64)
        return _graph().create_op(
            "AccumulatorSetGlobalStepV2",
            [self._accumulator_ref, step],
            name=name or "set_global_step",
        )

    def _apply(self, parts: list, local_step: Any, name: str | None):
        step = ops_lib.convert_to_tensor(local_step, dtype=dtypes.int64)
        return _graph().create_op(
            "AccumulatorApplyGradientV2",
            [self._accumulator_ref, step, parts],
            name=name or "apply_grad",
        )

    def apply_grad(self, grad: Any, local_step: Any = 0, name: str | None = None):
        grad = ops_lib.convert_to_tensor(grad, dtype=self._dtype)
        return self._apply([grad], local_step, name)

    def take_grad(self, num_required: Any, name: str | None = None) -> Any:
        n = ops_lib.convert_to_tensor(num_required, dtype=dtypes.int32)
        op = _graph().create_op(
            "AccumulatorTakeGradientV2",
            [self._accumulator_ref, n],
            {"dtype": self._dtype, "sparse": False},
            name=name or "take_grad",
        )
        out = op.outputs[0]
        out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulator):
    """A ConditionalAccumulator of IndexedSlices (sparse gradients of embeddings)."""

    _op_type = "SparseConditionalAccumulatorV2"

    def __init__(
        self,
        dtype: Any,
        shape: Any = None,
        shared_name: str | None = None,
        name: str = "sparse_conditional_accumulator",
        reduction_type: str = "MEAN",
    ):
        super().__init__(dtype, shape, shared_name, name, reduction_type)

    def apply_indexed_slices_grad(self, grad: Any, local_step: Any = 0, name: str | None = None):
        shape = grad.dense_shape if grad.dense_shape is not None else [0]
        return self.apply_grad(grad.indices, grad.values, shape, local_step, name)

    def apply_grad(
        self,
        grad_indices: Any,
        grad_values: Any = None,
        grad_shape: Any = None,
        local_step: Any = 0,
        name: str | None = None,
    ):  # type: ignore[override]
        parts = [
            ops_lib.convert_to_tensor(grad_indices, dtype=dtypes.int64),
            ops_lib.convert_to_tensor(grad_values, dtype=self._dtype),
            ops_lib.convert_to_tensor(
                grad_shape if grad_shape is not None else [0], dtype=dtypes.int64
            ),
        ]
        return self._apply(parts, local_step, name)

    def take_grad(self, num_required: Any, name: str | None = None) -> Any:
        n = ops_lib.convert_to_tensor(num_required, dtype=dtypes.int32)
        op = _graph().create_op(
            "AccumulatorTakeGradientV2",
            [self._accumulator_ref, n],
            {"dtype": self._dtype, "sparse": True},
            name=name or "take_grad",
        )
        return tuple(op.outputs)

    def take_indexed_slices_grad(self, num_required: Any, name: str | None = None) -> Any:
        indices, values, shape = self.take_grad(num_required, name)
        return IndexedSlices(values, indices, shape)
