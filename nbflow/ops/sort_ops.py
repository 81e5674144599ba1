"""Sorting and counting: ``tf.sort``/``tf.argsort`` (built on TopKV2), Unique (``tf.unique``),
Bincount (``tf.bincount``) and HistogramFixedWidth (``tf.histogram_fixed_width``).

As in TensorFlow, a sort is a top-k over the whole sorted axis (moved last by a transpose when
needed); an ascending sort is a descending one of the negated values. TopKV2 keeps the lower
index first among equal values, so every sort is stable and its gradient is TopKV2's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops.constant_ops import _check_axis, _create, _create1, _int_tensor, _value
from nbflow.ops import math_ops
from nbflow.ops.shape_ops import reshape, shape, transpose
from nbflow.ops.join_ops import concat

Tensor = ops_lib.Tensor


# --- sorting --------------------------------------------------------------------------------------
def _sort(values: Any, axis: Any, direction: str, name: str, want_indices: bool) -> Tensor:
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    with ops_lib.name_scope(name, "sort", [values]):
        values = ops_lib.convert_to_tensor(values, name="values")
        dtype = values.dtype.base_dtype
        if not (dtype.is_floating or dtype.is_integer):
            raise TypeError(f"sort needs a real number tensor, got {dtype}")
        rank = values.shape.ndims
        if rank is None:
            raise ValueError("sort needs a tensor of known rank")
        if rank == 0:
            raise ValueError("sort needs a tensor of rank >= 1, got a scalar")
        if isinstance(axis, Tensor):
            axis = ops_lib.constant_value(axis)
            if axis is None:
                raise ValueError("sort: axis must be a Python int or a constant tensor")
        a = _check_axis(int(axis), rank)
        perm = list(range(rank))
        perm[a], perm[-1] = perm[-1], perm[a]
        x = values if a == rank - 1 else transpose(values, perm)
        ascending = direction == "ASCENDING"
        if ascending:  # the largest of the flipped values are the smallest of the values
            x = _flip(x, dtype)
        k = x.shape[-1]
        k_tensor = _int_tensor(k) if k is not None else shape(x)[-1]
        top, indices = _create("TopKV2", [x, k_tensor], {"sorted": True}).outputs
        out = indices if want_indices else (_flip(top, dtype) if ascending else top)
        out = out if a == rank - 1 else transpose(out, perm)
        return math_ops.cast(out, dtypes.int32) if want_indices else out


def _flip(x: Tensor, dtype: dtypes.DType) -> Tensor:
    """An order-reversing bijection: ``-x``, or ``max - x`` for unsigned integers."""
    if dtype.is_unsigned:
        return math_ops.subtract(ops_lib.convert_to_tensor(dtype.max, dtype=dtype), x)
    return math_ops.negative(x)


def sort(
    values: Any, axis: Any = -1, direction: str = "ASCENDING", name: str | None = None
) -> Tensor:
    """``values`` sorted along ``axis`` (stable; 'ASCENDING' or 'DESCENDING').

    >>> import nbflow as tf
    >>> tf.Session().run(tf.sort([3, 1, 2], direction="DESCENDING")).tolist()
    [3, 2, 1]
    """
    return _sort(values, axis, direction, name or "sort", want_indices=False)


def argsort(
    values: Any,
    axis: Any = -1,
    direction: str = "ASCENDING",
    stable: bool = False,
    name: str | None = None,
) -> Tensor:
    """The int32 indices that sort ``values`` along ``axis`` (always stable: equal values keep
    their order).

    >>> import nbflow as tf
    >>> tf.Session().run(tf.argsort([3, 1, 2, 1])).tolist()
    [1, 3, 2, 0]
    """
    return _sort(values, axis, direction, name or "argsort", want_indices=True)


# --- unique values and counts ---------------------------------------------------------------------
class Unique(OpDef):
    """The distinct values of a 1-D ``x`` in order of first appearance (``y``), and for each
    element of ``x`` its position in ``y`` (``idx``): ``x == y[idx]``."""

    inputs = ("x",)
    attrs = {"out_idx": dtypes.int32}
    num_outputs = 2
    differentiable = False
    samples = [
        Sample(x=np.array([1, 1, 2, 4, 4, 4, 7, 8, 8], np.int32)),
        Sample(x=np.array([5.0, -1.0, 5.0, 0.5], np.float32), out_idx=dtypes.int64),
        Sample(x=np.array([], np.int64)),
    ]

    def infer(self, x: TensorSpec, out_idx: dtypes.DType) -> list[TensorSpec]:
        shape = x.shape.with_rank(1)
        return [TensorSpec(TensorShape([None]), x.dtype.base_dtype), TensorSpec(shape, out_idx)]

    def compute(self, ctx: KernelContext, x: Any, out_idx: dtypes.DType) -> tuple[Any, Any]:
        xp = ctx.xp
        if x.ndim != 1:
            raise ValueError(f"unique expects a 1-D vector, got shape {list(x.shape)}")
        values, first, inverse = xp.unique(x, return_index=True, return_inverse=True)
        order = xp.argsort(first, kind="stable")  # sorted values -> order of first appearance
        position = xp.empty_like(order)
        position[order] = xp.arange(order.size)
        return values[order], position[inverse.reshape(-1)].astype(out_idx.np)


def unique(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The distinct values of ``x`` in order of appearance, and each element's index into them.

    >>> import nbflow as tf
    >>> y, idx = tf.unique([4, 2, 4, 9])
    >>> [v.tolist() for v in tf.Session().run([y, idx])]
    [[4, 2, 9], [0, 1, 0, 2]]
    """
    attrs = {"out_idx": dtypes.as_dtype(out_idx)}
    op = _create("Unique", [ops_lib.convert_to_tensor(x, name="x")], attrs, name=name)
    return op.outputs[0], op.outputs[1]


class Bincount(OpDef):
    """How often each value in ``[0, size)`` occurs in ``arr`` (values from ``size`` on are
    ignored); with non-empty ``weights``, the sum of the weights at each value instead."""

    inputs = ("arr", "size", "weights")
    differentiable = False
    samples = [
        Sample(
            arr=np.array([1, 1, 3, 0, 7], np.int32),
            size=np.array(5, np.int32),
            weights=np.array([], np.int32),
        ),
        Sample(
            arr=np.array([[2, 0], [2, 2]], np.int32),
            size=np.array(4, np.int32),
            weights=np.array([[0.5, 1.0], [2.0, -1.0]], np.float32),
        ),
        Sample(
            arr=np.array([], np.int32), size=np.array(0, np.int32), weights=np.array([], np.int64)
        ),
    ]

    def infer(self, arr: TensorSpec, size: TensorSpec, weights: TensorSpec) -> TensorSpec:
        size.shape.with_rank(0)
        n = _value(size)
        return TensorSpec(TensorShape([None if n is None else int(n)]), weights.dtype.base_dtype)

    def compute(self, ctx: KernelContext, arr: Any, size: Any, weights: Any) -> Any:
        xp = ctx.xp
        n = int(size)
        if n < 0:
            raise ValueError(f"size ({n}) must be non-negative")
        values = arr.reshape(-1)
        if values.size and int(values.min()) < 0:
            raise ValueError(f"Input arr must be non-negative! got {int(values.min())}")
        keep = values < n
        if weights.size:
            if weights.shape != arr.shape:
                raise ValueError(
                    f"weights shape {list(weights.shape)} must match arr shape {list(arr.shape)}"
                )
            w = weights.reshape(-1)[keep]
            counts = xp.bincount(values[keep], weights=w, minlength=n)
        else:
            counts = xp.bincount(values[keep], minlength=n)
        return counts[:n].astype(weights.dtype)


def bincount(
    arr: Any,
    weights: Any = None,
    minlength: Any = None,
    maxlength: Any = None,
    dtype: Any = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """Counts of each value of the non-negative ints ``arr`` (or sums of ``weights``), of
    length ``max(arr) + 1`` clamped to ``[minlength, maxlength]``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.bincount([1, 1, 3])).tolist()
    [0, 2, 0, 1]
    """
    with ops_lib.name_scope(name, "bincount", [arr, weights, minlength, maxlength]) as scope:
        arr = ops_lib.convert_to_tensor(arr, dtype=dtypes.int32, name="arr")
        # max(arr) + 1, or 0 for an empty arr: the -1 keeps the reduction from being empty.
        size = math_ops.reduce_max(concat([reshape(arr, [-1]), [-1]], 0)) + 1
        if minlength is not None:
            size = math_ops.maximum(ops_lib.convert_to_tensor(minlength, dtypes.int32), size)
        if maxlength is not None:
            size = math_ops.minimum(ops_lib.convert_to_tensor(maxlength, dtypes.int32), size)
        if weights is None:
            weights = ops_lib.convert_to_tensor(np.zeros(0, dtypes.as_dtype(dtype).np))
        else:
            weights = ops_lib.convert_to_tensor(weights, name="weights")
        return _create1("Bincount", [arr, size, weights], name=scope)


class HistogramFixedWidth(OpDef):
    """Counts of ``values`` in ``nbins`` equal bins over ``value_range``; values below the
    range count in the first bin, values above it in the last."""

    inputs = ("values", "value_range", "nbins")
    attrs = {"dtype": dtypes.int32}
    differentiable = False
    samples = [
        Sample(
            values=np.array([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0], np.float32),
            value_range=np.array([0.0, 5.0], np.float32),
            nbins=np.array(5, np.int32),
        ),
        Sample(
            values=np.array([[1, 2], [3, 9]], np.int32),
            value_range=np.array([0, 10], np.int32),
            nbins=np.array(3, np.int32),
            dtype=dtypes.int64,
        ),
    ]

    def infer(self, values: TensorSpec, value_range: TensorSpec, nbins: TensorSpec, dtype):
        value_range.shape.with_rank(1).merge_with(TensorShape([2]))
        nbins.shape.with_rank(0)
        n = _value(nbins)
        return TensorSpec(TensorShape([None if n is None else int(n)]), dtype)

    def compute(self, ctx: KernelContext, values: Any, value_range: Any, nbins: Any, dtype):
        xp = ctx.xp
        n = int(nbins)
        lo, hi = (float(v) for v in value_range.tolist())
        if n <= 0:
            raise ValueError(f"nbins should be a positive number, but got '{n}'")
        if not lo < hi:
            raise ValueError(
                f"value_range should satisfy value_range[0] < value_range[1], got [{lo}, {hi}]"
            )
        scaled = (values.reshape(-1).astype(np.float64) - lo) / (hi - lo) * n
        bins = xp.clip(xp.floor(scaled), 0, n - 1).astype(np.int64)
        return xp.bincount(bins, minlength=n).astype(dtype.np)


def histogram_fixed_width(
    values: Any, value_range: Any, nbins: Any = 100, dtype: Any = dtypes.int32, name=None
) -> Tensor:
    """Counts of ``values`` in ``nbins`` equal-width bins spanning ``value_range``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.histogram_fixed_width([0.0, 1.0, 4.5], [0.0, 5.0], nbins=5)).tolist()
    [1, 1, 0, 0, 1]
    """
    with ops_lib.name_scope(name, "histogram_fixed_width", [values, value_range, nbins]) as scope:
        values = ops_lib.convert_to_tensor(values, name="values")
        value_range = ops_lib.convert_to_tensor(value_range, values.dtype.base_dtype)
        nbins = ops_lib.convert_to_tensor(nbins, dtypes.int32, name="nbins")
        attrs = {"dtype": dtypes.as_dtype(dtype)}
        return _create1("HistogramFixedWidth", [values, value_range, nbins], attrs, name=scope)
