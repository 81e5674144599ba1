"""Sorted segment reductions: SegmentSum (``tf.segment_sum``).

``segment_ids`` is a sorted 1-D tensor naming, for each row of ``data``, the output row it adds
into; the output has ``max(segment_ids) + 1`` rows (ids that never occur give zero rows). The
unsorted variant, which takes ``num_segments`` instead, is UnsortedSegmentSum in gather_ops; the
other reductions (max, min, mean, prod) of both kinds are in segment_reductions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops.constant_ops import _create1, _int_tensor, _value
from nbflow.ops.gather_ops import gather

Tensor = ops_lib.Tensor


class SegmentSum(OpDef):
    """Sums of the rows of ``data`` over runs of equal, sorted ``segment_ids``."""

    inputs = ("data", "segment_ids")
    samples = [
        Sample(data=(5, 2), segment_ids=np.array([0, 0, 1, 3, 3], np.int32)),
        Sample(data=(3,), segment_ids=np.array([0, 1, 1], np.int64)),
        Sample(data=(4, 2, 2), segment_ids=np.array([1, 1, 1, 2], np.int32)),
        Sample(data=(0, 3), segment_ids=np.array([], np.int32)),
        Sample(data=(3, 2), segment_ids=np.array([0, 2, 2], np.int32), input_dtype=np.int32),
    ]

    def infer(self, data: TensorSpec, segment_ids: TensorSpec) -> TensorSpec:
        dtype = data.dtype.base_dtype
        segment_ids.shape.with_rank(1)
        if data.shape.ndims is None:
            return TensorSpec(TensorShape(None), dtype)
        data.shape.with_rank_at_least(1)
        if not data.shape[:1].is_compatible_with(segment_ids.shape):
            raise ValueError(
                f"segment_ids.shape = {segment_ids.shape} should match the first dimension of "
                f"data.shape = {data.shape}"
            )
        ids = _value(segment_ids)
        n = None if ids is None else (int(ids.max()) + 1 if ids.size else 0)
        return TensorSpec(TensorShape([n]).concatenate(data.shape[1:]), dtype)

    def compute(self, ctx: KernelContext, data: Any, segment_ids: Any) -> Any:
        xp = ctx.xp
        n = sorted_segment_count(xp, data, segment_ids)
        out = xp.zeros((n,) + data.shape[1:], dtype=data.dtype)
        xp.add.at(out, segment_ids, data)
        return out

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [gather(grad, op.inputs[1]), None]


def sorted_segment_count(xp: Any, data: Any, segment_ids: Any) -> int:
    """The number of output rows, ``max(segment_ids) + 1``, after checking the ids are sorted."""
    if data.shape[:1] != segment_ids.shape:
        raise ValueError(
            f"segment_ids.shape = {list(segment_ids.shape)} should match the first "
            f"dimension of data.shape = {list(data.shape)}"
        )
    if not segment_ids.size:
        return 0
    if int(segment_ids.min()) < 0:
        raise ValueError(f"segment ids must be >= 0, got {int(segment_ids.min())}")
    steps = xp.diff(segment_ids)
    if bool((steps < 0).any()):
        at = int(xp.argmax(steps < 0)) + 1
        raise ValueError(
            f"segment ids are not increasing: segment_ids[{at}] = "
            f"{int(segment_ids[at])} follows {int(segment_ids[at - 1])}"
        )
    return int(segment_ids.max()) + 1


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Sums of the rows of ``data`` grouped by the sorted ``segment_ids``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.segment_sum([1, 2, 3, 4], [0, 0, 2, 2])).tolist()
    [3, 0, 7]
    """
    inputs = [ops_lib.convert_to_tensor(data, name="data"), _int_tensor(segment_ids)]
    return _create1("SegmentSum", inputs, name=name)
