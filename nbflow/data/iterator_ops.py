"""Iterators over datasets: the resource holding a pipeline's state and the ops that use it.

An iterator is a resource (``_IteratorResource``) in the session device's resource manager,
found by container and shared name like a queue. Four stateful ops, CPU only:

- ``IteratorV2``: the handle of an initializable (or ``from_structure``) iterator;
- ``MakeIterator(handle, captured*)``: the initializer. Its inputs are the tensors the dataset
  captured (often placeholders fed at this run); its kernel builds the pipeline's Python state
  (chained generators, ``Dataset._iterate``) from their values and stores it in the resource.
  Running it again starts the pipeline over;
- ``OneShotIterator(captured*)``: a handle whose pipeline is built on first use;
- ``IteratorGetNext(handle)``: the next element, one output per flattened component;
  ``OutOfRangeError`` at the end of the data.

A graph holds serialisable attrs only, so the dataset (a Python object) is registered in a
process-wide table under a token (``dataset_3``) that the node records, as ``py_func`` does; the
registration ends with the graph.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Iterator as PyIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from nbflow import errors
from nbflow.data import structure
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, TensorSpec
from nbflow.framework.ops import Operation, Tensor
from nbflow.framework.tensor_shape import TensorShape, as_shape


class Worker(Protocol):
    """Something running beside a pipeline (a prefetch thread) that the run must stop."""

    def signal_stop(self) -> None: ...

    def join(self) -> None: ...


@dataclass
class PipelineRun:
    """One initialization of an iterator: the captured tensors' values by name, state that
    datasets keep across the epochs of this run (a shuffle's generator, a cache), and the
    background workers it started, stopped by ``close()`` (re-initialization, session close).
    """

    values: dict[str, Any]
    state: dict[int, Any] = field(default_factory=dict)
    workers: set[Worker] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def nested(self, values: dict[str, Any]) -> PipelineRun:
        """A run for a dataset made per element (flat_map): its own values and state, this
        run's workers."""
        return PipelineRun(values, {}, self.workers, self.lock)

    def add_worker(self, worker: Worker) -> None:
        with self.lock:
            self.workers.add(worker)

    def remove_worker(self, worker: Worker) -> None:
        with self.lock:
            self.workers.discard(worker)

    def close(self) -> None:
        """Stop every worker: tell them all first, then wait for each."""
        with self.lock:
            workers = list(self.workers)
            self.workers.clear()
        for worker in workers:
            worker.signal_stop()
        for worker in workers:
            worker.join()


# --- the process-wide table of datasets -----------------------------------------------------
_DATASETS: dict[str, Any] = {}
_ids = itertools.count()
_table_lock = threading.Lock()


def register_dataset(dataset: Any, graph: ops_lib.Graph) -> str:
    """A token naming ``dataset`` for the ops of ``graph``; it lives as long as the graph."""
    with _table_lock:
        token = f"dataset_{next(_ids)}"
        _DATASETS[token] = dataset
    weakref.finalize(graph, _DATASETS.pop, token, None)
    return token


def _lookup_dataset(token: str) -> Any:
    dataset = _DATASETS.get(token)
    if dataset is None:
        raise errors.NotFoundError(
            None,
            None,
            f"dataset {token} is not registered: its graph is gone, or it was "
            "imported into another process",
        )
    return dataset


# --- the resource -----------------------------------------------------------------------------
class _IteratorResource:
    """The running pipeline of one iterator: a generator of flat elements, under a lock."""

    def __init__(self, name: str):
        self.name = name
        self.lock = threading.Lock()
        self.elements: PyIterator[tuple] | None = None
        self.run: PipelineRun | None = None

    def start(self, dataset: Any, values: tuple, once: bool = False):
        """Start the pipeline over (``once``: only if it has not started yet); ``values``
        are those of ``dataset._captures()``, in order."""
        # By position, not by the op's input names: graph rewrites (merging equal constants)
        # may rename the op's inputs, never the dataset's own tensors.
        run = PipelineRun({t.name: v for t, v in zip(dataset._captures(), values)})
        with self.lock:
            if not (once and self.elements is not None):
                self._stop()
                self.run = run
                self.elements = dataset._iterate(run)  # a generator: runs nothing yet

    def release(self) -> None:
        """Stop the pipeline's background work (the session is closing)."""
        with self.lock:
            self._stop()
            self.elements = self.run = None

    def _stop(self) -> None:
        # Workers first: a prefetch thread blocked on its upstream then ends with
        # CancelledError, never passing a cut-short input off as a complete one.
        if self.run is not None:
            self.run.close()
        close = getattr(self.elements, "close", None)
        if close is not None:
            close()  # runs the generators' cleanup (a cache's unfinished file is removed)

    def get_next(self) -> tuple:
        with self.lock:
            if self.elements is None:
                raise errors.FailedPreconditionError(
                    None,
                    None,
                    f"GetNext() failed because the iterator {self.name} has not been "
                    "initialized. Ensure that you have run the initializer operation for this "
                    "iterator before getting the next element.",
                )
            try:
                return next(self.elements)
            except StopIteration:
                raise errors.OutOfRangeError(None, None, "End of sequence") from None


def _resource(ctx: KernelContext, container: str, name: str) -> _IteratorResource:
    return ctx.resources.lookup_or_create(container, name, lambda: _IteratorResource(name))


# --- ops ----------------------------------------------------------------------------------------
class _IteratorOp(OpDef):
    abstract = True
    stateful = True
    differentiable = False
    cpu_only = True


class IteratorV2(_IteratorOp):
    """The handle of an iterator resource, found by container and shared name."""

    attrs = {"shared_name": "", "container": "", "output_types": REQUIRED, "output_shapes": []}

    def infer(self, **attrs: Any) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.resource)

    def bind(self, op: Any, device_type: str = "CPU") -> Callable[..., Any]:
        container, name = op.attrs["container"], op.attrs["shared_name"] or op.name
        return lambda ctx: _resource(ctx, container, name)


class MakeIterator(_IteratorOp):
    """(Re)starts the iterator on the dataset ``dataset``, given its captured tensors."""

    inputs = ("iterator", "captured*")
    attrs = {"dataset": REQUIRED}
    num_outputs = 0

    def infer(self, iterator: TensorSpec, captured: list, dataset: str) -> list:
        return []

    def bind(self, op: Any, device_type: str = "CPU") -> Callable[..., Any]:
        token = op.attrs["dataset"]

        def make_iterator(ctx: KernelContext, iterator: _IteratorResource, *values: Any) -> None:
            iterator.start(_lookup_dataset(token), values)

        return make_iterator


class OneShotIterator(_IteratorOp):
    """The handle of an iterator whose pipeline starts at its first use in a session."""

    inputs = ("captured*",)
    attrs = {
        "dataset": REQUIRED,
        "shared_name": "",
        "container": "",
        "output_types": REQUIRED,
        "output_shapes": [],
    }

    def infer(self, captured: list, **attrs: Any) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.resource)

    def bind(self, op: Any, device_type: str = "CPU") -> Callable[..., Any]:
        container, name = op.attrs["container"], op.attrs["shared_name"] or op.name
        token = op.attrs["dataset"]

        def one_shot_iterator(ctx: KernelContext, *values: Any) -> _IteratorResource:
            iterator = _resource(ctx, container, name)
            if iterator.elements is None:
                iterator.start(_lookup_dataset(token), values, once=True)
            return iterator

        return one_shot_iterator


class IteratorGetNext(_IteratorOp):
    """The iterator's next element, one output per component; OutOfRange at the end."""

    inputs = ("iterator",)
    attrs = {"output_types": REQUIRED, "output_shapes": REQUIRED}

    def output_count(self, attrs: dict[str, Any]) -> int:
        return len(attrs["output_types"])

    def infer(self, iterator: TensorSpec, output_types: list, output_shapes: list) -> list:
        return [TensorSpec(s, t) for t, s in zip(output_types, output_shapes)]

    def bind(self, op: Any, device_type: str = "CPU") -> Callable[..., Any]:
        single = len(op.attrs["output_types"]) == 1

        def get_next(ctx: KernelContext, iterator: _IteratorResource) -> Any:
            element = iterator.get_next()
            return element[0] if single else element

        return get_next


# --- Python API -------------------------------------------------------------------------------
def _flat_types_and_shapes(specs: Any) -> tuple[list[dtypes.DType], list[TensorShape]]:
    flat = structure.flatten(specs)
    return [s.dtype for s in flat], [s.shape for s in flat]


class Iterator:
    """Reads the elements of a dataset in a session: ``get_next()`` gives their tensors.

    >>> import nbflow as tf
    >>> it = tf.data.Dataset.range(3).make_initializable_iterator()
    >>> x = it.get_next()
    >>> with tf.Session() as sess:
    ...     _ = sess.run(it.initializer)
    ...     [int(sess.run(x)) for _ in range(3)]
    [0, 1, 2]
    """

    def __init__(self, handle: Tensor, initializer: Operation | None, element_specs: Any):
        self._handle = handle
        self._initializer = initializer
        self._element_specs = element_specs

    @staticmethod
    def from_structure(
        output_types: Any,
        output_shapes: Any = None,
        shared_name: str | None = None,
        output_classes: Any = None,
    ) -> Iterator:
        """An iterator of this element structure, not bound to a dataset: build initializers
        for datasets of that structure with ``make_initializer``."""
        types = structure.map_structure(dtypes.as_dtype, output_types)
        if output_shapes is None:
            shapes = structure.map_structure(lambda _: TensorShape(None), types)
        else:
            shapes = _shapes_like(types, output_shapes)
        flat_shapes = structure.flatten(shapes)
        specs = structure.pack_sequence_as(
            types,
            [TensorSpec(s, t) for t, s in zip(structure.flatten(types), flat_shapes)],
        )
        return Iterator(_iterator_handle(specs, shared_name), None, specs)

    @property
    def initializer(self) -> Operation:
        if self._initializer is None:
            raise ValueError(
                "Iterator does not have an initializer: it was made with from_structure (use "
                "make_initializer(dataset)) or make_one_shot_iterator"
            )
        return self._initializer

    def make_initializer(self, dataset: Any, name: str | None = None) -> Operation:
        """An op that (re)starts this iterator on ``dataset``'s elements."""
        structure.assert_same_structure(
            self._element_specs, dataset._element_specs, "make_initializer"
        )
        for mine, theirs in zip(
            structure.flatten(self._element_specs), structure.flatten(dataset._element_specs)
        ):
            if mine.dtype.base_dtype != theirs.dtype.base_dtype:
                raise TypeError(
                    f"Expected output types {self.output_types} but got dataset with output "
                    f"types {dataset.output_types}."
                )
            if not mine.shape.is_compatible_with(theirs.shape):
                raise TypeError(
                    f"Expected output shapes compatible with {self.output_shapes} but got "
                    f"dataset with output shapes {dataset.output_shapes}."
                )
        return make_iterator_op(self._handle, dataset, name)

    def get_next(self, name: str | None = None) -> Any:
        """The next element's tensors, nested as the dataset's elements."""
        types, shapes = _flat_types_and_shapes(self._element_specs)
        op = self._handle.graph.create_op(
            "IteratorGetNext",
            [self._handle],
            {"output_types": types, "output_shapes": shapes},
            name=name or "IteratorGetNext",
        )
        return structure.pack_sequence_as(self._element_specs, list(op.outputs))

    @property
    def output_types(self) -> Any:
        return structure.map_structure(lambda s: s.dtype, self._element_specs)

    @property
    def output_shapes(self) -> Any:
        return structure.map_structure(lambda s: s.shape, self._element_specs)

    @property
    def output_classes(self) -> Any:
        return structure.map_structure(lambda _: Tensor, self._element_specs)

    @property
    def element_spec(self) -> Any:
        return self._element_specs


def _shapes_like(types: Any, shapes: Any) -> Any:
    # Shapes given as lists ([None, 3]) are leaves, like TensorShapes.
    flat_types = structure.flatten(types)
    flat_shapes = structure.flatten(shapes)
    if len(flat_types) != len(flat_shapes):
        raise ValueError(f"output_shapes {shapes!r} do not match output_types {types!r}")
    return structure.pack_sequence_as(types, [as_shape(s) for s in flat_shapes])


def _iterator_handle(specs: Any, shared_name: str | None) -> Tensor:
    types, shapes = _flat_types_and_shapes(specs)
    graph = ops_lib.get_default_graph()
    attrs = {"shared_name": shared_name or "", "output_types": types, "output_shapes": shapes}
    return graph.create_op("IteratorV2", [], attrs, name="Iterator").outputs[0]


def make_iterator_op(handle: Tensor, dataset: Any, name: str | None = None) -> Operation:
    graph = handle.graph
    token = register_dataset(dataset, graph)
    return graph.create_op(
        "MakeIterator", [handle, dataset._captures()], {"dataset": token}, name=name
    )


def make_initializable_iterator(dataset: Any, shared_name: str | None = None) -> Iterator:
    handle = _iterator_handle(dataset._element_specs, shared_name)
    return Iterator(handle, make_iterator_op(handle, dataset), dataset._element_specs)


def make_one_shot_iterator(dataset: Any) -> Iterator:
    captured = dataset._captures()
    for tensor in captured:
        if tensor.op.op_def.is_placeholder:
            raise ValueError(
                f"Failed to capture placeholder {tensor.name}: one-shot iterators do not "
                "support parameterization; use make_initializable_iterator() and feed it when "
                "running the initializer"
            )
    graph = ops_lib.get_default_graph()
    types, shapes = _flat_types_and_shapes(dataset._element_specs)
    attrs = {
        "dataset": register_dataset(dataset, graph),
        "output_types": types,
        "output_shapes": shapes,
    }
    handle = graph.create_op("OneShotIterator", [captured], attrs).outputs[0]
    return Iterator(handle, None, dataset._element_specs)


def component(value: Any, dtype: dtypes.DType) -> np.ndarray:
    """``value`` as an array of ``dtype`` (strings as object arrays of bytes)."""
    if dtype.base_dtype is dtypes.string:
        array = np.empty(np.shape(value), dtype=object)
        array[...] = value
        return array
    return np.asarray(value, dtype=dtype.np)
