"""Gradient clipping: clip_by_value, clip_by_norm, global_norm and clip_by_global_norm.

Composed from primitives as in TensorFlow, so their gradients come for free; IndexedSlices
are clipped on their values and stay sparse.
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.framework.indexed_slices import IndexedSlices
from nbflow.ops import array_ops, math_ops
from nbflow.ops.nn_ops import l2_loss

Tensor = ops_lib.Tensor


def _values(t: Any) -> Tensor:
    return t.values if isinstance(t, IndexedSlices) else ops_lib.convert_to_tensor(t)


def _like(t: Any, values: Tensor) -> Any:
    return (
        IndexedSlices(values, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else values
    )


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None):
    """Elementwise min(max(t, clip_value_min), clip_value_max).

    >>> import nbflow as tf
    >>> tf.Session().run(tf.clip_by_value([-2.0, 0.5, 3.0], -1.0, 1.0)).tolist()
    [-1.0, 0.5, 1.0]
    """
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "clip_by_value"):
        values = _values(t)
        clipped = math_ops.minimum(values, clip_value_max)
        clipped = math_ops.maximum(clipped, clip_value_min)
        return _like(t, clipped)


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Any:
    """t * clip_norm / max(l2norm(t), clip_norm): rescale t when its L2 norm exceeds clip_norm."""
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "clip_by_norm"):
        values = _values(t)
        clip_norm = ops_lib.convert_to_tensor(clip_norm, dtype=values.dtype.base_dtype)
        l2sum = math_ops.reduce_sum(values * values, axes, keepdims=True)
        # sqrt's gradient at 0 is infinite: take the root of a safe value where the sum is 0.
        positive = math_ops.greater(l2sum, 0)
        safe = array_ops.where(positive, l2sum, array_ops.ones_like(l2sum))
        norm = array_ops.where(positive, math_ops.sqrt(safe), l2sum)
        clipped = values * clip_norm / math_ops.maximum(norm, clip_norm)
        return _like(t, clipped)


def global_norm(t_list: Any, name: str | None = None) -> Tensor:
    """sqrt(sum of l2norm(t)^2 over t_list); None entries are ignored."""
    tensors = [t for t in t_list if t is not None]
    if not tensors:
        raise ValueError("global_norm needs at least one tensor")
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "global_norm"):
        halves = []
        for t in tensors:
            values = _values(t)
            with graph.colocate_with(values.op):
                halves.append(l2_loss(values))
        total = math_ops.add_n(halves) if len(halves) > 1 else halves[0]
        two = array_ops.constant(2.0, dtype=total.dtype.base_dtype)
        return math_ops.sqrt(total * two, name="global_norm")


def clip_by_global_norm(
    t_list: Any, clip_norm: Any, use_norm: Any = None, name: str | None = None
) -> tuple[list[Any], Tensor]:
    """Scale every tensor by clip_norm / max(global_norm, clip_norm); returns (list, norm)."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError("t_list should be a sequence")
    t_list = list(t_list)
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "clip_by_global_norm"):
        norm = use_norm if use_norm is not None else global_norm(t_list)
        dtype = norm.dtype.base_dtype
        clip_norm = ops_lib.convert_to_tensor(clip_norm, dtype=dtype)
        one = array_ops.constant(1.0, dtype=dtype)
        scale = clip_norm * math_ops.minimum(one / norm, one / clip_norm)
        clipped: list[Any] = []
        for t in t_list:
            if t is None:
                clipped.append(None)
                continue
            values = _values(t)
            with graph.colocate_with(values.op):
                clipped.append(_like(t, array_ops.identity(values * scale)))
        return clipped, norm
