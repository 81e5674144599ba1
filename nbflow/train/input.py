"""Input pipelines made of queues (whitepaper §4.5): producers of file names and batching.

    files = tf.train.string_input_producer(["a.csv", "b.csv"], num_epochs=2)
    key, line = tf.TextLineReader().read(files)
    x, y = tf.decode_csv(line, [[0.0], [0]])
    xs, ys = tf.train.shuffle_batch([x, y], 32, capacity=1000, min_after_dequeue=200)

Each stage is a queue filled by a ``QueueRunner``; ``start_queue_runners`` starts the threads.
``num_epochs`` counts in a local variable (run ``local_variables_initializer``); once it is
reached, producers stop, queues close, and consumers get ``OutOfRangeError`` when drained.
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import GraphKeys
from nbflow.ops import array_ops, bytes_ops, queue_ops, state_ops, variables
from nbflow.train.queue_runner import QueueRunner, add_queue_runner
from nbflow.ops.variables import Variable
from nbflow.ops import random_ops


def limit_epochs(tensor: Any, num_epochs: int | None = None, name: str | None = None) -> Any:
    """``tensor``, but after ``num_epochs`` evaluations an OutOfRangeError instead."""
    tensor = ops_lib.convert_to_tensor(tensor)
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "limit_epochs"):
        epochs = Variable(
            array_ops.constant(0, dtype=dtypes.int64),
            name="epochs",
            trainable=False,
            collections=[GraphKeys.LOCAL_VARIABLES],
        )
        counter = state_ops.count_up_to(epochs, num_epochs)
        with graph.control_dependencies([counter]):
            return array_ops.identity(tensor, name="epochs_limited")


def input_producer(
    input_tensor: Any,
    element_shape: Any = None,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    summary_name: str | None = None,
    name: str | None = None,
    cancel_op: Any = None,
) -> queue_ops.QueueBase:
    """A queue that a QueueRunner fills with the rows of ``input_tensor``, epoch after epoch."""
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "input_producer"):
        input_tensor = ops_lib.convert_to_tensor(input_tensor)
        shape = element_shape if element_shape is not None else input_tensor.shape[1:]
        values = limit_epochs(input_tensor, num_epochs)
        if shuffle:
            values = random_ops.random_shuffle(values, seed=seed)
        queue = queue_ops.FIFOQueue(
            capacity, [input_tensor.dtype.base_dtype], shapes=[shape], shared_name=shared_name
        )
        enqueue = queue.enqueue_many([values])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        return queue


def string_input_producer(
    string_tensor: Any,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
    cancel_op: Any = None,
) -> queue_ops.QueueBase:
    """A queue of file names for readers, (shuffled and) repeated ``num_epochs`` times."""
    string_tensor = ops_lib.convert_to_tensor(string_tensor, dtype=dtypes.string)
    return input_producer(
        string_tensor,
        [],
        num_epochs,
        shuffle,
        seed,
        capacity,
        shared_name,
        name=name or "input_producer",
        cancel_op=cancel_op,
    )


def range_input_producer(
    limit: int | ops_lib.Tensor,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
) -> queue_ops.QueueBase:
    """A queue of the integers ``0 .. limit - 1``."""
    return input_producer(
        array_ops.range(limit),
        [],
        num_epochs,
        shuffle,
        seed,
        capacity,
        shared_name,
        name=name or "input_producer",
    )


def _flat(tensors: Any) -> tuple[list, Any]:
    if isinstance(tensors, dict):
        keys = sorted(tensors)
        return [ops_lib.convert_to_tensor(tensors[k]) for k in keys], lambda v: dict(zip(keys, v))
    if isinstance(tensors, (list, tuple)):
        return [ops_lib.convert_to_tensor(t) for t in tensors], list
    return [ops_lib.convert_to_tensor(tensors)], lambda v: v[0]


def _batch(
    queue_factory: Any,
    tensors_list: list[Any],
    batch_size: int,
    num_threads: int,
    enqueue_many: bool,
    shapes: Any,
    allow_smaller_final_batch: bool,
    name: str,
) -> Any:
    """One queue fed by ``num_threads`` threads per element of ``tensors_list`` (``batch`` has
    one element, the ``*_join`` variants one per source), dequeued in batches."""
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name):
        sources = [_flat(tensors) for tensors in tensors_list]
        flat, rebuild = sources[0]
        for other, _ in sources[1:]:
            if [t.dtype.base_dtype for t in other] != [t.dtype.base_dtype for t in flat]:
                raise ValueError(
                    f"All tensors in tensors_list must have the same types: {other} vs {flat}"
                )
        if shapes is None:
            shapes = [t.shape[1:] if enqueue_many else t.shape for t in flat]
        queue = queue_factory([t.dtype.base_dtype for t in flat], shapes)
        enqueues = [
            queue.enqueue_many(tensors) if enqueue_many else queue.enqueue(tensors)
            for tensors, _ in sources
        ]
        add_queue_runner(QueueRunner(queue, enqueues * num_threads))
        if allow_smaller_final_batch:
            out = queue.dequeue_up_to(batch_size)
        else:
            out = queue.dequeue_many(batch_size)
        out = out if isinstance(out, list) else [out]
        return rebuild(out)


def batch(
    tensors: Any,
    batch_size: int,
    num_threads: int = 1,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches of ``batch_size`` examples, filled by ``num_threads`` threads through a queue."""

    def factory(types: list, shapes_: list) -> Any:
        cls = queue_ops.PaddingFIFOQueue if dynamic_pad else queue_ops.FIFOQueue
        return cls(capacity, types, shapes_, shared_name=shared_name)

    return _batch(
        factory,
        [tensors],
        batch_size,
        num_threads,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        name or "batch",
    )


def shuffle_batch(
    tensors: Any,
    batch_size: int,
    capacity: int,
    min_after_dequeue: int,
    num_threads: int = 1,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches drawn at random from a buffer of at least ``min_after_dequeue`` examples."""

    def factory(types: list, shapes_: list) -> Any:
        return queue_ops.RandomShuffleQueue(
            capacity, min_after_dequeue, types, shapes_, seed=seed, shared_name=shared_name
        )

    return _batch(
        factory,
        [tensors],
        batch_size,
        num_threads,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        name or "shuffle_batch",
    )


# --- slices of in-memory tensors, and batches joined from several sources -------------------------
def slice_input_producer(
    tensor_list: list[Any],
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
) -> list[Any]:
    """One row of every tensor of ``tensor_list`` at a time (the same row of each), the rows
    (shuffled and) repeated ``num_epochs`` times: ``image, label = slice_input_producer([x, y])``.
    """
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "input_producer"):
        tensors = [ops_lib.convert_to_tensor(t) for t in tensor_list]
        if not tensors:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        rows = array_ops.shape(tensors[0])[0]
        queue = range_input_producer(
            rows, num_epochs, shuffle, seed, capacity, shared_name, name="input_producer"
        )
        index = queue.dequeue()
        return [array_ops.gather(t, index) for t in tensors]


def batch_join(
    tensors_list: list[Any],
    batch_size: int,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches mixing several sources of examples (one thread each, e.g. one reader per file),
    each source a list or dict of tensors of the same types."""

    def factory(types: list, shapes_: list) -> Any:
        cls = queue_ops.PaddingFIFOQueue if dynamic_pad else queue_ops.FIFOQueue
        return cls(capacity, types, shapes_, shared_name=shared_name)

    return _batch(
        factory,
        list(tensors_list),
        batch_size,
        1,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        name or "batch_join",
    )


def shuffle_batch_join(
    tensors_list: list[Any],
    batch_size: int,
    capacity: int,
    min_after_dequeue: int,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """``batch_join`` through a RandomShuffleQueue: examples of all sources mixed at random."""

    def factory(types: list, shapes_: list) -> Any:
        return queue_ops.RandomShuffleQueue(
            capacity, min_after_dequeue, types, shapes_, seed=seed, shared_name=shared_name
        )

    return _batch(
        factory,
        list(tensors_list),
        batch_size,
        1,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        name or "shuffle_batch_join",
    )


# --- conditional batching: maybe_batch and friends -----------------------------------------------
def _kept(tensors: Any, keep_input: Any, enqueue_many: bool) -> tuple[Any, list]:
    """``tensors`` as a batch holding only the kept examples, and the shape of one example.

    ``keep_input`` is a scalar bool (keep this example, or with ``enqueue_many`` the whole
    batch) or, with ``enqueue_many``, one bool per example. The result always enqueues with
    ``enqueue_many``: zero or more rows.
    """
    flat, rebuild = _flat(tensors)
    keep = ops_lib.convert_to_tensor(keep_input, dtype=dtypes.bool)
    if keep.shape.ndims is None or keep.shape.ndims > 1:
        raise ValueError(f"keep_input must be a scalar or a vector, got shape {keep.shape}")
    if keep.shape.ndims == 1 and not enqueue_many:
        raise ValueError("keep_input must be a scalar when enqueue_many=False")
    shapes = [t.shape[1:] if enqueue_many else t.shape for t in flat]
    if not enqueue_many:
        flat = [array_ops.expand_dims(t, 0) for t in flat]
    kept = []
    for t in flat:
        mask = keep
        if keep.shape.ndims == 0:
            mask = array_ops.fill(array_ops.shape(t)[:1], keep)
        kept.append(array_ops.boolean_mask(t, mask))
    return rebuild(kept), shapes


def maybe_batch(
    tensors: Any,
    keep_input: Any,
    batch_size: int,
    num_threads: int = 1,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """``batch`` of only the examples whose ``keep_input`` is true."""
    with ops_lib.name_scope(name or "maybe_batch"):
        kept, example_shapes = _kept(tensors, keep_input, enqueue_many)
    return batch(
        kept,
        batch_size,
        num_threads,
        capacity,
        True,
        shapes or example_shapes,
        dynamic_pad,
        allow_smaller_final_batch,
        shared_name,
        name or "maybe_batch",
    )


def maybe_shuffle_batch(
    tensors: Any,
    batch_size: int,
    capacity: int,
    min_after_dequeue: int,
    keep_input: Any,
    num_threads: int = 1,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """``shuffle_batch`` of only the examples whose ``keep_input`` is true."""
    with ops_lib.name_scope(name or "maybe_shuffle_batch"):
        kept, example_shapes = _kept(tensors, keep_input, enqueue_many)
    return shuffle_batch(
        kept,
        batch_size,
        capacity,
        min_after_dequeue,
        num_threads,
        seed,
        True,
        shapes or example_shapes,
        allow_smaller_final_batch,
        shared_name,
        name or "maybe_shuffle_batch",
    )


def maybe_batch_join(
    tensors_list: list[Any],
    keep_input: Any,
    batch_size: int,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """``batch_join`` of only the examples whose ``keep_input`` is true (one per source)."""
    with ops_lib.name_scope(name or "maybe_batch_join"):
        pairs = [_kept(tensors, keep_input, enqueue_many) for tensors in tensors_list]
    return batch_join(
        [kept for kept, _ in pairs],
        batch_size,
        capacity,
        True,
        shapes or pairs[0][1],
        dynamic_pad,
        allow_smaller_final_batch,
        shared_name,
        name or "maybe_batch_join",
    )


def maybe_shuffle_batch_join(
    tensors_list: list[Any],
    batch_size: int,
    capacity: int,
    min_after_dequeue: int,
    keep_input: Any,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """``shuffle_batch_join`` of only the examples whose ``keep_input`` is true."""
    with ops_lib.name_scope(name or "maybe_shuffle_batch_join"):
        pairs = [_kept(tensors, keep_input, enqueue_many) for tensors in tensors_list]
    return shuffle_batch_join(
        [kept for kept, _ in pairs],
        batch_size,
        capacity,
        min_after_dequeue,
        seed,
        True,
        shapes or pairs[0][1],
        allow_smaller_final_batch,
        shared_name,
        name or "maybe_shuffle_batch_join",
    )


# --- file name matching ---------------------------------------------------------------------------
def match_filenames_once(pattern: Any, name: str | None = None) -> Any:
    """A local variable holding the files matching ``pattern`` (a glob), listed once when it is
    initialized (``local_variables_initializer``), so later reads see the same list."""
    return variables.Variable(
        bytes_ops.matching_files(pattern),
        trainable=False,
        validate_shape=False,
        collections=[GraphKeys.LOCAL_VARIABLES],
        name=name or "matching_filenames",
    )
