"""Queues: ops and classes that let steps hand data to each other (``tf.FIFOQueue``...).

A queue op (``FIFOQueueV2``...) yields a handle to a queue held in the device's resource
manager, found by container and shared name, so concurrent steps and several sessions share it
(whitepaper §4.6-§4.7). Enqueue, EnqueueMany and Dequeue* are asynchronous kernels over the
``QueueResource`` of ``queue_resources.py``, which owns the waiting; Close, Size and IsClosed read
or flip its state at once. The Python classes (``FIFOQueue``, ``RandomShuffleQueue``,
``PaddingFIFOQueue``, ``PriorityQueue``) only build those ops, with TensorFlow's node names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, TensorSpec
from nbflow.framework.ops import Tensor
from nbflow.framework.tensor_shape import TensorShape, as_shape
from nbflow.ops.queue_resources import (
    Done,
    PaddingFIFOQueueResource,
    PriorityQueueResource,
    QueueResource,
    RandomShuffleQueueResource,
    numpy_dtype,
)
from nbflow.ops.random_ops import get_seed


# --- ops ------------------------------------------------------------------------------------
class _QueueOpBase(OpDef):
    abstract = True
    stateful = True
    differentiable = False
    queue_class: Any = QueueResource
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

        def queue(ctx: KernelContext) -> QueueResource:
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

    queue_class = RandomShuffleQueueResource
    attrs = {**_QueueOpBase.attrs, "min_after_dequeue": 0, "seed": 0, "seed2": 0}

    def options(self, attrs: dict) -> dict:
        seeds = (attrs["seed"], attrs["seed2"])
        return {
            "min_after_dequeue": attrs["min_after_dequeue"],
            "seed": None if seeds == (0, 0) else list(seeds),
        }


class PaddingFIFOQueueV2(_QueueOpBase):
    """A FIFO queue whose dequeue_many pads variable dimensions (None) with zeros."""

    queue_class = PaddingFIFOQueueResource


class PriorityQueueV2(_QueueOpBase):
    """A queue that dequeues the element with the smallest int64 priority (component 0)."""

    queue_class = PriorityQueueResource


class _AsyncQueueOp(OpDef):
    abstract = True
    stateful = True
    differentiable = False
    is_async = True

    def bind(self, op: Any, device_type: str = "CPU") -> Callable[..., Any]:
        attrs = {k: v for k, v in op.attrs.items() if not k.startswith("_") and k != "N"}
        start = self.start

        def kernel(ctx: KernelContext, handle: QueueResource, *args: Any, done: Done) -> None:
            start(ctx, handle, list(args), done, **attrs)

        return kernel

    def start(self, ctx: KernelContext, queue: QueueResource, args: list, done: Done, **attrs: Any):
        raise TypeError(f"{self.type} declares no start")


def _component(value: Any, dtype: Any) -> Any:
    return np.asarray(value, dtype=numpy_dtype(dtype))


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


def _shape_mismatch(queue: QueueResource, shapes: list[tuple]) -> str:
    """TensorFlow's message when an element's component shapes differ from the queue's."""
    if queue.fixed_shapes is not None and queue.fixed_shapes == tuple(shapes):
        return ""
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

    def compute(self, ctx: KernelContext, handle: QueueResource, cancel_pending_enqueues: bool):
        handle.close(cancel_pending_enqueues)


class QueueSizeV2(OpDef):
    """The number of elements in the queue."""

    inputs = ("handle",)
    stateful = True
    differentiable = False

    def infer(self, handle: TensorSpec) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.int32)

    def compute(self, ctx: KernelContext, handle: QueueResource) -> Any:
        return np.int32(handle.size())


class QueueIsClosedV2(OpDef):
    """Whether the queue is closed."""

    inputs = ("handle",)
    stateful = True
    differentiable = False

    def infer(self, handle: TensorSpec) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.bool)

    def compute(self, ctx: KernelContext, handle: QueueResource) -> Any:
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
