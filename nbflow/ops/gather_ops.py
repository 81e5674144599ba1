"""Ops that pick or scatter rows by index: GatherV2, UnsortedSegmentSum, DynamicPartition and
DynamicStitch, OneHot; and ``boolean_mask`` (a gather at the true positions of a mask).

Gather's gradient along axis 0 is an ``IndexedSlices`` (the rows touched, not a dense tensor);
along other axes it is a segment sum, as in TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.indexed_slices import IndexedSlices
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops.constant_ops import (
    _check_axis,
    _create,
    _create1,
    _int_tensor,
    _range,
    _value,
    _zeros_for,
    ones_like,
    range,
    zeros_like,
)
from nbflow.ops.join_ops import concat, stack
from nbflow.ops.select_ops import where
from nbflow.ops.shape_ops import broadcast_to, rank, reshape, shape, size, squeeze, transpose

Tensor = ops_lib.Tensor


# --- gathering and scattering ---------------------------------------------------------------------
class GatherV2(OpDef):
    """The slices of ``params`` along ``axis`` at ``indices``:
    ``out.shape = params.shape[:axis] + indices.shape + params.shape[axis + 1:]``."""

    inputs = ("params", "indices", "axis")
    attrs = {"batch_dims": 0}
    type_attrs = {"Tparams": 0, "Tindices": 1, "Taxis": 2}
    samples = [
        Sample(params=(5, 3), indices=np.array([2, 0, 2], np.int32), axis=np.array(0, np.int32)),
        Sample(
            params=(3, 4), indices=np.array([[3, 1], [0, 0]], np.int64), axis=np.array(1, np.int32)
        ),
        Sample(params=(2, 3, 2), indices=np.array([], np.int32), axis=np.array(-2, np.int32)),
        Sample(params=(4,), indices=np.array(1, np.int32), axis=np.array(0, np.int32)),
    ]

    def infer(self, params: TensorSpec, indices: TensorSpec, axis: TensorSpec, batch_dims: int):
        a: Any  # the axis: its value, then the checked int
        a, dims, idx = _value(axis), params.shape.dims, indices.shape.dims
        dtype = params.dtype.base_dtype
        if batch_dims:
            raise ValueError("batch_dims other than 0 are not supported by GatherV2")
        if a is None or dims is None or idx is None:
            return TensorSpec(TensorShape(None), dtype)
        a = _check_axis(int(a), len(dims))
        return TensorSpec(TensorShape(dims[:a] + idx + dims[a + 1 :]), dtype)

    def compute(self, ctx: KernelContext, params: Any, indices: Any, axis: Any, batch_dims: int):
        axis = int(axis)
        n = params.shape[axis]
        if indices.ndim == 0:  # one slice (an input producer's record): no reductions to check
            if not 0 <= int(indices) < n:
                raise ValueError(f"indices = {int(indices)} is not in [0, {n})")
        elif indices.size and (indices.min() < 0 or indices.max() >= n):
            bad = indices[(indices < 0) | (indices >= n)].reshape(-1)[0]
            raise ValueError(f"indices = {bad} is not in [0, {n})")
        return params.take(indices, axis)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        params, indices, axis = op.inputs
        a = ops_lib.constant_value(axis)
        if a is not None and params.shape.ndims is not None:
            a = int(a) % params.shape.ndims
        if a == 0 and params.shape.is_fully_defined() and indices.shape.ndims == 1:
            # The common embedding case: every shape is static, so the sparse gradient is the
            # upstream gradient itself, indexed by ``indices``: no shape arithmetic at run time.
            # int32, as TensorFlow's gather gradient gives it
            dense_shape = ops_lib.convert_to_tensor(np.array(params.shape.as_list(), np.int32))
            return [IndexedSlices(grad, indices, dense_shape), None, None]
        params_shape = shape(params, out_type=dtypes.int64)
        flat_indices = reshape(indices, [-1])
        n = stack([size(indices, out_type=dtypes.int64)])
        if a == 0:
            values = reshape(grad, concat([n, params_shape[1:]], 0))
            dense_shape = shape(params, out_type=dtypes.int32)  # TensorFlow's dtype
            return [IndexedSlices(values, flat_indices, dense_shape), None, None]
        # Dense: bring the gathered axis to the front, segment-sum, move it back (as TF does).
        if a is None:
            a = axis
        outer, inner = params_shape[:a], params_shape[a:][1:]
        grad = reshape(grad, concat([outer, n, inner], 0))
        outer_dims = size(outer)
        inner_axes = range(outer_dims + 1, rank(grad))
        perm = concat([stack([outer_dims]), range(outer_dims), inner_axes], 0)
        summed = unsorted_segment_sum(transpose(grad, perm), flat_indices, params_shape[a])
        back = concat([range(outer_dims) + 1, [0], inner_axes], 0)
        return [transpose(summed, back), None, None]


def gather(
    params: Any,
    indices: Any,
    validate_indices: Any = None,
    name: str | None = None,
    axis: Any = 0,
    batch_dims: int = 0,
) -> Tensor:
    """The slices of ``params`` along ``axis`` at ``indices``.

    >>> import nbflow as tf
    >>> tf.gather(tf.zeros([5, 3]), [0, 2]).shape
    TensorShape([2, 3])
    """
    if isinstance(params, variables.Variable):
        params = params.value()
    gather_rows = getattr(params, "_nbflow_gather", None)  # a RaggedTensor: RaggedGather
    if gather_rows is not None:
        return gather_rows(indices, axis, batch_dims, name)
    inputs = [ops_lib.convert_to_tensor(params), _int_tensor(indices), _int_tensor(axis)]
    return _create1("GatherV2", inputs, {"batch_dims": batch_dims}, name=name)


class UnsortedSegmentSum(OpDef):
    """Sums of the rows of ``data`` by ``segment_ids`` into ``num_segments`` rows
    (negative ids are dropped)."""

    inputs = ("data", "segment_ids", "num_segments")
    samples = [
        Sample(
            data=(5, 2),
            segment_ids=np.array([0, 2, 0, 1, 2], np.int32),
            num_segments=np.array(4, np.int32),
        ),
        Sample(
            data=(2, 3),
            segment_ids=np.array([[1, 0, 1], [0, 0, 2]], np.int32),
            num_segments=np.array(3, np.int32),
        ),
        Sample(
            data=(0, 3),
            segment_ids=np.array([], np.int32),
            num_segments=np.array(2, np.int64),
            input_dtype=np.int32,
        ),
    ]

    def infer(self, data: TensorSpec, segment_ids: TensorSpec, num_segments: TensorSpec):
        n = _value(num_segments)
        dims, ids = data.shape.dims, segment_ids.shape.ndims
        dtype = data.dtype.base_dtype
        if dims is None or ids is None:
            return TensorSpec(TensorShape(None), dtype)
        if not data.shape[:ids].is_compatible_with(segment_ids.shape):
            raise ValueError(
                f"data.shape = {data.shape} does not start with segment_ids.shape = "
                f"{segment_ids.shape}"
            )
        return TensorSpec(TensorShape([None if n is None else int(n)] + dims[ids:]), dtype)

    def compute(self, ctx: KernelContext, data: Any, segment_ids: Any, num_segments: Any) -> Any:
        xp = ctx.xp
        n = int(num_segments)
        out = xp.zeros((n,) + data.shape[segment_ids.ndim :], dtype=data.dtype)
        ids = segment_ids.reshape(-1)
        rows = data.reshape((ids.size,) + out.shape[1:])
        if ids.size and ids.max() >= n:
            raise ValueError(
                f"segment_ids[{int(ids.argmax())}] = {int(ids.max())} is out of range [0, {n})"
            )
        keep = ids >= 0
        if not keep.all():
            ids, rows = ids[keep], rows[keep]
        xp.add.at(out, ids, rows)
        return out

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        ids = op.inputs[1]
        is_positive = math_ops.greater_equal(ids, zeros_like(ids))
        gathered = gather(grad, math_ops.maximum(ids, zeros_like(ids)))
        mask = broadcast_to(
            reshape(
                is_positive,
                concat([shape(is_positive), ones_like(shape(gathered)[rank(ids) :])], 0),
            ),
            shape(gathered),
        )
        return [where(mask, gathered, zeros_like(gathered)), None, None]


def unsorted_segment_sum(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """Row sums of ``data`` grouped by ``segment_ids`` into ``num_segments`` rows."""
    inputs = [ops_lib.convert_to_tensor(data), _int_tensor(segment_ids), _int_tensor(num_segments)]
    return _create1("UnsortedSegmentSum", inputs, name=name)


class DynamicPartition(OpDef):
    """``data`` split into ``num_partitions`` parts by the partition index of each row."""

    inputs = ("data", "partitions")
    attrs = {"num_partitions": REQUIRED}
    samples = [
        Sample(data=(5, 2), partitions=np.array([0, 1, 0, 2, 1], np.int32), num_partitions=3),
        Sample(
            data=(2, 3), partitions=np.array([[1, 0, 1], [0, 0, 1]], np.int32), num_partitions=2
        ),
    ]

    def output_count(self, attrs: dict[str, Any]) -> int:
        return attrs["num_partitions"]

    def infer(self, data: TensorSpec, partitions: TensorSpec, num_partitions: int):
        dims, p = data.shape.dims, partitions.shape.ndims
        dtype = data.dtype.base_dtype
        if dims is None or p is None:
            return [TensorSpec(TensorShape(None), dtype)] * num_partitions
        if not data.shape[:p].is_compatible_with(partitions.shape):
            raise ValueError(
                f"data.shape = {data.shape} does not start with partitions.shape = "
                f"{partitions.shape}"
            )
        return [TensorSpec(TensorShape([None] + dims[p:]), dtype)] * num_partitions

    def compute(self, ctx: KernelContext, data: Any, partitions: Any, num_partitions: int) -> Any:
        p = partitions.reshape(-1)
        if p.size and (p.min() < 0 or p.max() >= num_partitions):
            raise ValueError(f"partitions must be in [0, {num_partitions}), got {p.tolist()}")
        rows = data.reshape((p.size,) + data.shape[partitions.ndim :])
        out = [rows[p == i] for i in _range(num_partitions)]
        return out[0] if num_partitions == 1 else out

    def gradient(self, op: Any, *grads: Any) -> list[Any]:
        data, partitions = op.inputs
        n = op.get_attr("num_partitions")
        original = reshape(range(size(partitions)), shape(partitions))
        parts = dynamic_partition(original, partitions, n)
        stitched = dynamic_stitch(parts, _zeros_for(grads, op.outputs))
        return [reshape(stitched, shape(data)), None]


def dynamic_partition(data: Any, partitions: Any, num_partitions: int, name: str | None = None):
    """The rows of ``data`` in ``num_partitions`` lists, by ``partitions``."""
    inputs = [ops_lib.convert_to_tensor(data), _int_tensor(partitions)]
    return _create("DynamicPartition", inputs, {"num_partitions": num_partitions}, name).outputs


class DynamicStitch(OpDef):
    """Interleave ``data`` into one tensor: ``out[indices[m][i]] = data[m][i]``."""

    inputs = ("indices*", "data*")
    samples = [
        Sample(
            indices=[np.array([0, 2], np.int32), np.array([[1], [3]], np.int32)],
            data=[(2, 3), (2, 1, 3)],
        ),
        Sample(
            indices=[np.array([1, 0], np.int32), np.array([], np.int32)],
            data=[(2,), (0,)],
            input_dtype=np.int32,
        ),
    ]

    def infer(self, indices: list[TensorSpec], data: list[TensorSpec]) -> TensorSpec:
        dtype = data[0].dtype.base_dtype
        rest = TensorShape(None)
        for idx, d in zip(indices, data):
            if idx.shape.ndims is None or d.shape.ndims is None:
                continue
            rest = rest.merge_with(d.shape[idx.shape.ndims :])
        values = [_value(i) for i in indices]
        n = None
        if all(v is not None for v in values):
            n = max((int(v.max()) + 1 for v in values if v is not None and v.size), default=0)
        return TensorSpec(TensorShape([n]).concatenate(rest), dtype)

    def compute(self, ctx: KernelContext, indices: Any, data: Any) -> Any:
        n = max((int(i.max()) + 1 for i in indices if i.size), default=0)
        d0 = data[0]
        rest = d0.shape[indices[0].ndim :]
        out = ctx.xp.zeros((n,) + rest, dtype=d0.dtype)
        for idx, d in zip(indices, data):
            out[idx.reshape(-1)] = d.reshape((idx.size,) + rest)
        return out

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        n = op.get_attr("N")
        indices = op.inputs[:n]
        return [None] * n + [gather(grad, i) for i in indices]

    def must_run_on_cpu(self, attrs: dict[str, Any]) -> bool:
        return attrs.get("T") is dtypes.int32


def dynamic_stitch(indices: list[Any], data: list[Any], name: str | None = None) -> Tensor:
    """One tensor built from ``data`` with ``out[indices[m][i]] = data[m][i]``."""
    indices = [_int_tensor(i) for i in indices]
    data = [ops_lib.convert_to_tensor(d) for d in data]
    return _create1("DynamicStitch", [indices, data], name=name)


parallel_dynamic_stitch = dynamic_stitch


class OneHot(OpDef):
    """One-hot vectors for ``indices``: ``on_value`` at the index, ``off_value`` elsewhere."""

    inputs = ("indices", "depth", "on_value", "off_value")
    attrs = {"axis": -1}
    samples = [
        Sample(
            indices=np.array([0, 2, 5, -1], np.int32),
            depth=np.array(3, np.int32),
            on_value=np.float64(1.0),
            off_value=np.float64(0.0),
        ),
        Sample(
            indices=np.array([[0, 1], [1, 0]], np.int64),
            depth=np.array(2, np.int32),
            on_value=np.float64(5.0),
            off_value=np.float64(-1.0),
            axis=0,
        ),
    ]

    def infer(self, indices, depth, on_value, off_value, axis: int) -> TensorSpec:
        d, dims = _value(depth), indices.shape.dims
        dtype = on_value.dtype.base_dtype
        if dims is None:
            return TensorSpec(TensorShape(None), dtype)
        a = len(dims) if axis == -1 else axis
        if not 0 <= a <= len(dims):
            raise ValueError(
                f"Expected axis to be -1 or between [0, {len(dims)}).  But received: {axis}"
            )
        return TensorSpec(TensorShape(dims[:a] + [None if d is None else int(d)] + dims[a:]), dtype)

    def compute(self, ctx: KernelContext, indices, depth, on_value, off_value, axis: int):
        xp = ctx.xp
        if int(depth) < 0:
            raise ValueError(f"depth must be non-negative, got: {int(depth)}")
        a = indices.ndim if axis == -1 else axis
        classes = xp.arange(int(depth)).reshape((-1,) + (1,) * (indices.ndim - a))
        hot = xp.expand_dims(indices, a) == classes
        return xp.where(hot, on_value, off_value).astype(on_value.dtype, copy=False)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [None, None, None, None]


def one_hot(
    indices: Any,
    depth: Any,
    on_value: Any = None,
    off_value: Any = None,
    axis: int | None = None,
    dtype: Any = None,
    name: str | None = None,
) -> Tensor:
    """One-hot vectors of length ``depth`` for ``indices`` (default float32 1/0)."""
    with ops_lib.name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        on_known = on_value is not None
        off_known = off_value is not None
        if dtype is None:
            for v in (on_value, off_value):
                if isinstance(v, Tensor):
                    dtype = v.dtype.base_dtype
                    break
            else:
                dtype = (
                    ops_lib.convert_to_tensor(on_value if on_known else off_value).dtype
                    if on_known or off_known
                    else dtypes.float32
                )
        dtype = dtypes.as_dtype(dtype)
        on = ops_lib.convert_to_tensor(on_value if on_known else 1, dtype=dtype, name="on_value")
        off = ops_lib.convert_to_tensor(
            off_value if off_known else 0, dtype=dtype, name="off_value"
        )
        if on.dtype.base_dtype is not off.dtype.base_dtype:
            raise TypeError(
                f"dtype {on.dtype} of on_value does not match dtype {off.dtype} of off_value"
            )
        inputs = [_int_tensor(indices), _int_tensor(depth), on, off]
        return _create1("OneHot", inputs, {"axis": -1 if axis is None else axis}, name=scope)


def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask", axis: Any = None):
    """The elements (rows, for a lower-rank mask) of ``tensor`` where ``mask`` is true."""
    with ops_lib.name_scope(name, values=[tensor, mask]):
        tensor = ops_lib.convert_to_tensor(tensor, name="tensor")
        mask = ops_lib.convert_to_tensor(mask, name="mask")
        k = mask.shape.ndims
        if k is None:
            raise ValueError(
                "Number of mask dimensions must be specified, even if some dimensions are None"
            )
        if k == 0:
            raise ValueError("mask cannot be scalar.")
        a = 0 if axis is None else int(axis)
        if tensor.shape.ndims is not None:
            tensor.shape[a : a + k].assert_is_compatible_with(mask.shape)
        dims = shape(tensor)
        leading = reshape(_prod(dims[a : a + k]), [1])
        flat = reshape(tensor, concat([dims[:a], leading, dims[a + k :]], 0))
        indices = squeeze(where(reshape(mask, [-1])), axis=[1])
        return gather(flat, indices, axis=a)


def _prod(x: Tensor) -> Tensor:
    return math_ops.reduce_prod(x)


# --- IndexedSlices to a dense tensor --------------------------------------------------------------
def _dense_rows(dense_shape: Tensor) -> Any:
    """The number of rows of the dense tensor, as a scalar tensor (or a Python int if known)."""
    known = ops_lib.constant_value(dense_shape)
    if known is not None:
        return int(known[0])
    return gather(dense_shape, 0)


def densify(slices: IndexedSlices, name: str | None = None) -> Tensor:
    """The dense tensor an IndexedSlices stands for (duplicate indices add up)."""
    if slices.dense_shape is None:
        raise ValueError(
            f"Tensor conversion requested for IndexedSlices without dense_shape: {slices!r}"
        )
    return unsorted_segment_sum(
        slices.values,
        slices.indices,
        _dense_rows(slices.dense_shape),
        name=name or "IndexedSlicesToDense",
    )


def _convert_indexed_slices(
    value: IndexedSlices, dtype: Any = None, name: str | None = None, as_ref: bool = False
) -> Tensor:
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(
            f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for IndexedSlices "
            f"with dtype {value.dtype.name}: {value!r}"
        )
    return densify(value, name=name)


ops_lib.register_tensor_conversion_function(IndexedSlices, _convert_indexed_slices)


# Modules that import this one, bound once its definitions exist (the gradients and
# composites above call into them).
from nbflow.ops import math_ops, variables  # noqa: E402
