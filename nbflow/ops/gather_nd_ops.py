"""Indexing by coordinate tuples: GatherNd (``tf.gather_nd``) and ScatterNd (``tf.scatter_nd``).

The last axis of ``indices`` holds coordinates into the leading axes of ``params`` (or of the
scattered ``shape``); each coordinate picks an element or, for a shorter one, a whole slice:

    out.shape = indices.shape[:-1] + params.shape[indices.shape[-1]:]

The two are each other's gradient: GatherNd's is a ScatterNd of the upstream gradient (duplicate
coordinates add up), ScatterNd's a GatherNd of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops.constant_ops import _create1, _int_tensor, _shape_from_spec
from nbflow.ops.shape_ops import shape
from nbflow.ops.variables import Variable

Tensor = ops_lib.Tensor


def _nd_shape(indices: TensorShape, inner: TensorShape) -> TensorShape:
    """``indices.shape[:-1] + inner``, where ``inner`` is the sliced part of params' shape."""
    if indices.ndims is None:
        return TensorShape(None)
    return indices[:-1].concatenate(inner)


def _index_depth(indices: TensorShape) -> int | None:
    if indices.ndims is None:
        return None
    return indices.with_rank_at_least(1)[-1]


def _flat_coordinates(xp: Any, indices: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """The columns of ``indices`` reshaped to [n, depth], checked against ``shape``."""
    depth = indices.shape[-1]
    n = int(np.prod(indices.shape[:-1], dtype=np.int64))
    flat = indices.reshape(n, depth)
    if depth > len(shape):
        raise ValueError(
            f"index innermost dimension length must be <= params rank; saw: {depth} vs. "
            f"{len(shape)}"
        )
    limits = xp.asarray(np.array(shape[:depth], dtype=np.int64))
    bad = (flat < 0) | (flat >= limits)
    if flat.size and bool(bad.any()):
        row = int(xp.argmax(bad.any(axis=1)))
        position = np.unravel_index(row, indices.shape[:-1]) if indices.ndim > 1 else ()
        where = ",".join(str(int(p)) for p in position)
        raise ValueError(
            f"indices[{where}] = {[int(v) for v in flat[row].tolist()]} does not index into "
            f"param shape {list(shape)}"
        )
    return tuple(flat[:, j] for j in range(depth))


class GatherNd(OpDef):
    """The elements or slices of ``params`` at the coordinates in the last axis of ``indices``."""

    inputs = ("params", "indices")
    samples = [
        Sample(params=(3, 4), indices=np.array([[0, 1], [2, 3], [0, 1]], np.int32)),
        Sample(params=(3, 4), indices=np.array([[[2]], [[0]]], np.int64)),
        Sample(params=(2, 3, 2), indices=np.array([1, 2], np.int32)),
        Sample(params=(2, 3), indices=np.zeros((2, 0), np.int32)),
        Sample(params=(4, 2), indices=np.zeros((0, 1), np.int32)),
    ]

    def infer(self, params: TensorSpec, indices: TensorSpec) -> TensorSpec:
        dtype = params.dtype.base_dtype
        depth = _index_depth(indices.shape)
        if depth is None or params.shape.ndims is None:
            return TensorSpec(TensorShape(None), dtype)
        if depth > params.shape.ndims:
            raise ValueError(
                f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                f"{indices.shape} and params shape: {params.shape}"
            )
        return TensorSpec(_nd_shape(indices.shape, params.shape[depth:]), dtype)

    def compute(self, ctx: KernelContext, params: Any, indices: Any) -> Any:
        xp = ctx.xp
        depth = indices.shape[-1]
        out_shape = indices.shape[:-1] + params.shape[depth:]
        coordinates = _flat_coordinates(xp, indices, params.shape)
        if depth == 0:  # an empty coordinate picks all of params
            n = int(np.prod(indices.shape[:-1], dtype=np.int64))
            return xp.broadcast_to(params, (n,) + params.shape).reshape(out_shape).copy()
        return params[coordinates].reshape(out_shape)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        params, indices = op.inputs
        return [scatter_nd(indices, grad, shape(params, out_type=indices.dtype)), None]


def gather_nd(params: Any, indices: Any, name: str | None = None, batch_dims: int = 0) -> Tensor:
    """The slices of ``params`` at the coordinates in the last axis of ``indices``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.gather_nd([[1, 2], [3, 4]], [[1, 0], [0, 1]])).tolist()
    [3, 2]
    """
    if batch_dims:
        raise ValueError("gather_nd: batch_dims other than 0 are not supported")

    if isinstance(params, Variable):
        params = params.value()
    inputs = [ops_lib.convert_to_tensor(params, name="params"), _int_tensor(indices)]
    return _create1("GatherNd", inputs, name=name)


class ScatterNd(OpDef):
    """A zero tensor of ``shape`` with ``updates`` added at the coordinates in ``indices``
    (duplicates add up)."""

    inputs = ("indices", "updates", "shape")
    samples = [
        Sample(
            indices=np.array([[4], [3], [1], [7]], np.int32),
            updates=(4,),
            shape=np.array([8], np.int32),
        ),
        Sample(
            indices=np.array([[0, 1], [2, 0], [0, 1]], np.int64),
            updates=(3, 2),
            shape=np.array([3, 2, 2], np.int64),
        ),
        Sample(
            indices=np.array([[[1]], [[0]]], np.int32),
            updates=(2, 1, 3),
            shape=np.array([2, 3], np.int32),
        ),
        Sample(
            indices=np.zeros((0, 1), np.int32),
            updates=(0, 2),
            shape=np.array([3, 2], np.int32),
        ),
    ]

    def infer(self, indices: TensorSpec, updates: TensorSpec, shape: TensorSpec) -> TensorSpec:
        dtype = updates.dtype.base_dtype
        out = _shape_from_spec(shape)
        depth = _index_depth(indices.shape)
        if depth is None or out.ndims is None:
            return TensorSpec(out, dtype)
        if depth > out.ndims:
            raise ValueError(
                f"indices.shape[-1] = {depth} must be <= the rank of shape, {out.ndims}"
            )
        expected = _nd_shape(indices.shape, out[depth:])
        if not updates.shape.is_compatible_with(expected):
            raise ValueError(
                f"updates.shape = {updates.shape} must be indices.shape[:-1] + shape[{depth}:] "
                f"= {expected}"
            )
        return TensorSpec(out, dtype)

    def compute(self, ctx: KernelContext, indices: Any, updates: Any, shape: Any) -> Any:
        xp = ctx.xp
        dims = tuple(int(d) for d in shape.tolist())
        depth = indices.shape[-1]
        expected = indices.shape[:-1] + dims[depth:]
        if updates.shape != expected:
            raise ValueError(
                f"updates.shape = {list(updates.shape)} must be indices.shape[:-1] + "
                f"shape[{depth}:] = {list(expected)}"
            )
        out = xp.zeros(dims, dtype=updates.dtype)
        coordinates = _flat_coordinates(xp, indices, dims)
        rows = updates.reshape((-1,) + dims[depth:])
        if depth == 0:
            return out + rows.sum(axis=0)
        xp.add.at(out, coordinates, rows)
        return out

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [None, gather_nd(grad, op.inputs[0]), None]


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    """A zero tensor of ``shape`` with ``updates`` added at ``indices``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.scatter_nd([[1], [3]], [5, 7], [4])).tolist()
    [0, 5, 0, 7]
    """
    indices = _int_tensor(indices)
    updates = ops_lib.convert_to_tensor(updates, name="updates")
    shape = ops_lib.convert_to_tensor(shape, dtype=indices.dtype.base_dtype, name="shape")
    return _create1("ScatterNd", [indices, updates, shape], name=name)
