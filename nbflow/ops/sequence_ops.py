"""Ops for batches of variable-length sequences: ReverseSequence (``tf.reverse_sequence``) and
``tf.sequence_mask``.

A batch of sequences is a tensor with a batch axis and a time (sequence) axis, plus a vector of
lengths; positions past a sequence's length are padding. ``reverse_sequence`` reverses each
sequence's first ``length`` steps and leaves the padding where it is; ``sequence_mask`` marks
the steps that are not padding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.ops.constant_ops import _check_axis, _create1, _int_tensor
from nbflow.ops import math_ops
from nbflow.ops.constant_ops import range
from nbflow.ops.shape_ops import expand_dims

Tensor = ops_lib.Tensor


class ReverseSequence(OpDef):
    """Each slice ``input[b]`` along ``batch_dim`` with its first ``seq_lengths[b]`` steps
    along ``seq_dim`` reversed."""

    inputs = ("input", "seq_lengths")
    attrs = {"seq_dim": 1, "batch_dim": 0}
    samples = [
        Sample(input=(3, 4), seq_lengths=np.array([4, 0, 2], np.int64)),
        Sample(input=(5, 2, 3), seq_lengths=np.array([3, 5], np.int32), seq_dim=0, batch_dim=1),
        Sample(input=(2, 3, 4), seq_lengths=np.array([1, 4], np.int32), seq_dim=2),
        Sample(input=(2, 3), seq_lengths=np.array([3, 2], np.int32), input_dtype=np.int32),
    ]

    def infer(self, input: TensorSpec, seq_lengths: TensorSpec, seq_dim: int, batch_dim: int):
        seq_lengths.shape.with_rank(1)
        n = input.shape.ndims
        if n is not None:
            s, b = _check_axis(seq_dim, n, "seq_dim"), _check_axis(batch_dim, n, "batch_dim")
            if s == b:
                raise ValueError(f"seq_dim and batch_dim must differ, both are {s}")
            if not input.shape[b : b + 1].is_compatible_with(seq_lengths.shape):
                raise ValueError(
                    f"len(seq_lengths) must equal input.dims({b}); seq_lengths: "
                    f"{seq_lengths.shape}, input: {input.shape}"
                )
        return TensorSpec(input.shape, input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, seq_lengths: Any, seq_dim: int, batch_dim):
        xp = ctx.xp
        s, b = seq_dim % input.ndim, batch_dim % input.ndim
        steps = input.shape[s]
        if seq_lengths.shape != (input.shape[b],):
            raise ValueError(
                f"len(seq_lengths) != input.dims({b}): ({seq_lengths.shape[0]} vs. "
                f"{input.shape[b]})"
            )
        if seq_lengths.size and (int(seq_lengths.min()) < 0 or int(seq_lengths.max()) > steps):
            raise ValueError(
                f"seq_lengths must be in [0, input.dims({s}) = {steps}], got {seq_lengths.tolist()}"
            )
        shape_t, shape_b = [1] * input.ndim, [1] * input.ndim
        shape_t[s], shape_b[b] = steps, input.shape[b]
        t = xp.arange(steps).reshape(shape_t)
        lengths = seq_lengths.astype(np.int64).reshape(shape_b)
        source = xp.where(t < lengths, lengths - 1 - t, t)
        return xp.take_along_axis(input, xp.broadcast_to(source, input.shape), axis=s)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        seq_dim, batch_dim = op.get_attr("seq_dim"), op.get_attr("batch_dim")
        return [reverse_sequence(grad, op.inputs[1], seq_dim, batch_dim), None]


def reverse_sequence(
    input: Any,
    seq_lengths: Any,
    seq_axis: int | None = None,
    batch_axis: int | None = None,
    name: str | None = None,
    seq_dim: int | None = None,
    batch_dim: int | None = None,
) -> Tensor:
    """``input`` with the first ``seq_lengths[b]`` steps of each sequence ``b`` reversed.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.reverse_sequence([[1, 2, 3], [4, 5, 6]], [2, 3], 1, 0)).tolist()
    [[2, 1, 3], [6, 5, 4]]
    """
    seq = seq_axis if seq_axis is not None else seq_dim
    batch = batch_axis if batch_axis is not None else batch_dim
    if seq is None:
        raise TypeError("reverse_sequence() needs seq_axis")
    inputs = [ops_lib.convert_to_tensor(input, name="input"), _int_tensor(seq_lengths)]
    attrs = {"seq_dim": int(seq), "batch_dim": 0 if batch is None else int(batch)}
    return _create1("ReverseSequence", inputs, attrs, name=name)


def sequence_mask(
    lengths: Any, maxlen: Any = None, dtype: Any = dtypes.bool, name: str | None = None
) -> Tensor:
    """``mask[..., j] = j < lengths[...]``, with ``maxlen`` columns (default ``max(lengths)``).

    >>> import nbflow as tf
    >>> tf.Session().run(tf.sequence_mask([1, 3], 4)).tolist()
    [[True, False, False, False], [True, True, True, False]]
    """
    with ops_lib.name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = _int_tensor(lengths)
        if maxlen is None:
            maxlen = math_ops.maximum(math_ops.reduce_max(lengths), 0)
        elif isinstance(maxlen, Tensor):
            if maxlen.shape.ndims is not None and maxlen.shape.ndims != 0:
                raise ValueError(f"maxlen must be scalar for sequence_mask, got {maxlen.shape}")
            maxlen = math_ops.cast(maxlen, lengths.dtype.base_dtype)
        else:
            maxlen = ops_lib.convert_to_tensor(maxlen, lengths.dtype.base_dtype, name="maxlen")
        steps = range(0, maxlen, 1, dtype=lengths.dtype.base_dtype)
        mask = math_ops.less(steps, expand_dims(lengths, -1))
        dtype = dtypes.as_dtype(dtype)
        return mask if dtype is dtypes.bool else math_ops.cast(mask, dtype)
