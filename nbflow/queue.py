"""``tf.queue``: TensorFlow 1.15's queue classes (also top-level: ``tf.queue.FIFOQueue`` is
``tf.FIFOQueue``); they live in ``nbflow.ops.data_flow_ops``."""

from nbflow.ops.data_flow_ops import (  # noqa: F401
    FIFOQueue,
    PaddingFIFOQueue,
    PriorityQueue,
    QueueBase,
    RandomShuffleQueue,
)
