"""``tf.queue``: TensorFlow 1.15's queue classes (also top-level: ``tf.queue.FIFOQueue`` is
``tf.FIFOQueue``); they live in ``nbflow.ops.queue_ops``."""

from nbflow.ops.queue_ops import (  # noqa: F401
    FIFOQueue,
    PaddingFIFOQueue,
    PriorityQueue,
    QueueBase,
    RandomShuffleQueue,
)
