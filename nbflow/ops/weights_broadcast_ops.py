"""Weights for losses and metrics: checking and broadcasting them, squeezing labels, safe means.

``tf.losses`` and ``tf.metrics`` take optional ``weights`` that must broadcast to the per-example
values (a scalar, or the values' rank with each dimension 1 or equal), and labels that may carry
a trailing dimension of size 1 (``[batch, 1]`` against ``[batch]``). Both follow TensorFlow 1.x's
``weights_broadcast_ops`` and ``confusion_matrix.remove_squeezable_dimensions``; ranks are
checked when the graph is built, so shapes must be known statically for the squeezes.

    weights = broadcast_weights(weights, losses)   # weights * ones_like(losses)
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.ops import array_ops, math_ops

Tensor = ops_lib.Tensor


def assert_broadcastable(weights: Tensor, values: Tensor) -> None:
    """ValueError unless ``weights`` is a scalar or has ``values``' rank, each dim 1 or equal."""
    w, v = weights.shape, values.shape
    if w.dims is None or v.dims is None or w.ndims == 0:
        return
    if w.ndims != v.ndims:
        raise ValueError(
            f"weights can not be broadcast to values: weights rank {w.ndims} ({w}) must be 0 "
            f"or equal to values rank {v.ndims} ({v})"
        )
    for wd, vd in zip(w.dims, v.dims):
        if wd.value not in (None, 1) and vd.value is not None and wd.value != vd.value:
            raise ValueError(f"weights {w} can not be broadcast to values {v}")


def broadcast_weights(weights: Any, values: Tensor) -> Tensor:
    """``weights`` broadcast to the shape of ``values`` (``weights * ones_like(values)``)."""
    weights = ops_lib.convert_to_tensor(weights, dtype=values.dtype.base_dtype)
    assert_broadcastable(weights, values)
    if weights.shape.is_fully_defined() and weights.shape == values.shape:
        return weights
    return math_ops.multiply(weights, array_ops.ones_like(values), name="broadcast_weights")


def _rank(t: Tensor) -> int | None:
    return t.shape.ndims


def remove_squeezable_dimensions(
    labels: Tensor, predictions: Tensor, expected_rank_diff: int = 0
) -> tuple[Tensor, Tensor]:
    """Drop a trailing size-1 dimension so that rank(predictions) - rank(labels) is as expected."""
    lr, pr = _rank(labels), _rank(predictions)
    if lr is None or pr is None:
        return labels, predictions
    diff = pr - lr
    if diff == expected_rank_diff + 1 and predictions.shape[-1] == 1:
        predictions = array_ops.squeeze(predictions, [-1])
    elif diff == expected_rank_diff - 1 and labels.shape[-1] == 1:
        labels = array_ops.squeeze(labels, [-1])
    return labels, predictions


def match_weights_rank(weights: Any, values: Tensor) -> Tensor | None:
    """``weights`` with a trailing size-1 dimension dropped, or added, to match ``values``."""
    if weights is None:
        return None
    weights = ops_lib.convert_to_tensor(weights)
    wr, vr = _rank(weights), _rank(values)
    if wr is None or vr is None or wr == 0:
        return weights
    if wr == vr + 1 and weights.shape.dims[-1].value == 1:
        return array_ops.squeeze(weights, [-1])
    if wr == vr - 1:
        return array_ops.expand_dims(weights, -1)
    return weights


def div_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y``, or 0 where ``y`` is 0 (``tf.div_no_nan``; no NaN reaches the gradient either).

    >>> import nbflow as tf
    >>> from nbflow.ops.weights_broadcast_ops import div_no_nan
    >>> tf.Session().run(div_no_nan([1.0, 2.0], [0.0, 4.0])).tolist()
    [0.0, 0.5]
    """
    x = ops_lib.convert_to_tensor(x)
    y = ops_lib.convert_to_tensor(y, dtype=x.dtype.base_dtype)
    if not x.dtype.base_dtype.is_floating:
        raise TypeError(f"div_no_nan needs floating point values, got {x.dtype.name}")
    nonzero = math_ops.not_equal(y, math_ops.cast(0, y.dtype.base_dtype))
    quotient = math_ops.divide(x, array_ops.where_v2(nonzero, y, array_ops.ones_like(y)))
    return array_ops.where_v2(nonzero, quotient, array_ops.zeros_like(quotient), name=name)
