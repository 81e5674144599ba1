"""CTC's label bookkeeping in ``tf.nn``: the greedy (best path) decoder and per-row unique
labels, composed from argmax, masks and cumulative sums.

Best-path decoding takes the most likely class at every time step, then (with
``merge_repeated``) merges runs of the same class and drops the blank, the last class. A blank
between two equal labels keeps both, as in TensorFlow's kernel: the "previous label" a step
compares with is the previous step's argmax, blank included. The emitted labels of a row are
numbered by a cumulative sum of the emit mask, which places them in a SparseTensor.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> logits = tf.one_hot([[0], [0], [2], [0], [1]], 3)  # [time, batch, classes]; blank is 2
    >>> (decoded,), _ = tf.nn.ctc_greedy_decoder(logits, [5])
    >>> with tf.Session() as s: print(s.run(decoded.values))
    [0 0 1]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Tensor
from nbflow.framework.sparse_tensor import SparseTensor
from nbflow.ops import array_ops, math_ops
from nbflow.ops.functional_ops import map_fn
from nbflow.ops.gather_nd_ops import gather_nd
from nbflow.ops.scan_ops import cumsum
from nbflow.ops.sequence_ops import sequence_mask
from nbflow.ops.sort_ops import unique

__all__ = ["ctc_greedy_decoder", "ctc_unique_labels"]


def ctc_greedy_decoder(
    inputs: Any, sequence_length: Any, merge_repeated: bool = True, name: str | None = None
) -> tuple[list[SparseTensor], Tensor]:
    """Best-path decoding of [max_time, batch, num_classes] logits: ([decoded SparseTensor of
    int64 labels, [batch, longest decoding]], -(sum over time of the top logit) [batch, 1])."""
    with ops_lib.name_scope(name, "CTCGreedyDecoder", [inputs, sequence_length]):
        inputs = ops_lib.convert_to_tensor(inputs)
        inputs.shape.with_rank(3)
        dims = array_ops.shape(inputs, out_type=dtypes.int64)
        steps, blank = array_ops.shape(inputs)[0], dims[2] - 1
        labels = array_ops.transpose(math_ops.argmax(inputs, axis=2, output_type=dtypes.int64))
        in_sequence = sequence_mask(sequence_length, steps)
        emit = math_ops.logical_and(in_sequence, math_ops.not_equal(labels, blank))
        if merge_repeated:
            first = -array_ops.ones_like(labels[:, :1])
            previous = array_ops.concat([first, labels[:, :-1]], axis=1)
            emit = math_ops.logical_and(emit, math_ops.not_equal(labels, previous))
        emitted = math_ops.cast(emit, dtypes.int64)
        position = cumsum(emitted, axis=1) - 1
        where = array_ops.where(emit)
        indices = array_ops.stack([where[:, 0], gather_nd(position, where)], axis=1)
        longest = math_ops.reduce_max(
            array_ops.concat([math_ops.reduce_sum(emitted, axis=1), np.zeros([1], np.int64)], 0)
        )
        shape = array_ops.stack([array_ops.shape(labels, out_type=dtypes.int64)[0], longest])
        decoded = SparseTensor(indices, gather_nd(labels, where), shape)
        top = array_ops.transpose(math_ops.reduce_max(inputs, axis=2))
        top = top * math_ops.cast(in_sequence, top.dtype.base_dtype)
        neg_sum_logits = -math_ops.reduce_sum(top, axis=1, keepdims=True)
        return [decoded], neg_sum_logits


def ctc_unique_labels(labels: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Per row of [batch, max_len] ``labels``: the distinct labels in order of first
    appearance, zero-padded to max_len, and for each entry the index of its label there."""
    with ops_lib.name_scope(name, "ctc_unique_labels", [labels]):
        labels = ops_lib.convert_to_tensor(labels)
        max_len = array_ops.shape(labels)[1]

        def row(x: Tensor) -> tuple[Tensor, Tensor]:
            values, index = unique(x)
            padded = array_ops.pad(values, [[0, max_len - array_ops.size(values)]])
            return array_ops.reshape(padded, [max_len]), index

        return map_fn(row, labels, dtype=(labels.dtype.base_dtype, dtypes.int32))
