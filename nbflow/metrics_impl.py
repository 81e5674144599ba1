"""``tf.metrics``' own streaming metrics and the helpers the others build on.

The namespace ``tf.metrics`` (``nbflow/metrics.py``) re-exports these with the per-threshold,
per-class (``metrics_confusion``) and ranked (``metrics_top_k``) metrics, which import this
module. Each metric is a ``(value, update_op)`` pair over local variables.

A metric keeps running sums in variables of the LOCAL_VARIABLES and METRIC_VARIABLES collections
(``accuracy/total``, ``accuracy/count``), zero after ``tf.local_variables_initializer()``. Running
``update_op`` adds one batch to the sums and returns the metric over every batch so far;
``value`` reads the sums without changing them. Re-running the local initializer starts over.

    acc, update_acc = tf.metrics.accuracy(labels=y, predictions=tf.argmax(logits, 1))
    sess.run(tf.local_variables_initializer())
    for batch in batches:
        sess.run(update_acc, {x: batch.x, y: batch.y})
    print(sess.run(acc))
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import GraphKeys
from nbflow.ops import array_ops, math_ops, state_ops, variable_scope
from nbflow.ops.variables import Variable
from nbflow.ops.weights_broadcast_ops import (
    broadcast_weights,
    div_no_nan,
    match_weights_rank,
    remove_squeezable_dimensions,
)

Tensor = ops_lib.Tensor


def metric_variable(shape: Any, dtype: Any, validate_shape: bool = True, name: str | None = None):
    """A zero-initialised, non-trainable variable in LOCAL_VARIABLES and METRIC_VARIABLES."""
    return Variable(
        lambda: array_ops.zeros(shape, dtype),
        trainable=False,
        collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
        validate_shape=validate_shape,
        name=name,
    )


def _collect(value: Tensor, update_op: Tensor, metrics_collections, updates_collections):
    if metrics_collections:
        ops_lib.add_to_collections(metrics_collections, value)
    if updates_collections:
        ops_lib.add_to_collections(updates_collections, update_op)
    return value, update_op


def _prepare(labels: Any, predictions: Any, weights: Any) -> tuple[Tensor, Tensor, Any]:
    """Tensors with a stray trailing size-1 dimension squeezed, and compatible shapes."""
    labels = ops_lib.convert_to_tensor(labels)
    predictions = ops_lib.convert_to_tensor(predictions)
    labels, predictions = remove_squeezable_dimensions(labels, predictions)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return labels, predictions, match_weights_rank(weights, predictions)


def _even_thresholds(num_thresholds: int, epsilon: float) -> list[float]:
    """``num_thresholds`` evenly spaced over [0, 1], the ends moved ``epsilon`` outwards so that
    predictions of exactly 0 and 1 fall inside."""
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - epsilon, *inner, 1.0 + epsilon]


# --- means ---------------------------------------------------------------------------------------
def _running_mean(
    total: Variable,
    count: Variable,
    added_total: Tensor,
    added_count: Tensor,
    metrics_collections: Any,
    updates_collections: Any,
) -> tuple[Tensor, Tensor]:
    """``total / count`` (0 while ``count`` is 0), and the update adding one batch to both."""
    update_total = state_ops.assign_add(total, added_total)
    update_count = state_ops.assign_add(count, added_count)
    value = div_no_nan(total, math_ops.maximum(count, 0.0), name="value")
    update_op = div_no_nan(update_total, math_ops.maximum(update_count, 0.0), name="update_op")
    return _collect(value, update_op, metrics_collections, updates_collections)


def mean(
    values: Any,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The (weighted) mean of every ``values`` seen: ``total / count``.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> x = tf.placeholder(tf.float32, [None])
    >>> value, update = tf.metrics.mean(x)
    >>> sess = tf.Session()
    >>> sess.run(tf.local_variables_initializer())
    >>> [float(sess.run(update, {x: batch})) for batch in ([1.0, 2.0], [6.0])]
    [1.5, 3.0]
    """
    with variable_scope.variable_scope(name, "mean"):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            weights = match_weights_rank(weights, values)
            weights = broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.reduce_sum(weights)
        return _running_mean(
            total,
            count,
            math_ops.reduce_sum(values),
            num_values,
            metrics_collections,
            updates_collections,
        )


def accuracy(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """How often ``predictions`` equals ``labels`` (the mean of ``predictions == labels``)."""
    labels, predictions, weights = _prepare(labels, predictions, weights)
    if labels.dtype.base_dtype != predictions.dtype.base_dtype:
        predictions = math_ops.cast(predictions, labels.dtype.base_dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The running mean of ``(labels - predictions) ** 2``."""
    labels, predictions, weights = _prepare(labels, predictions, weights)
    squared = math_ops.squared_difference(
        math_ops.cast(labels, dtypes.float32), math_ops.cast(predictions, dtypes.float32)
    )
    return mean(
        squared, weights, metrics_collections, updates_collections, name or "mean_squared_error"
    )


def mean_absolute_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The running mean of ``|labels - predictions|``."""
    labels, predictions, weights = _prepare(labels, predictions, weights)
    errors = math_ops.abs(
        math_ops.cast(predictions, dtypes.float32) - math_ops.cast(labels, dtypes.float32)
    )
    return mean(
        errors, weights, metrics_collections, updates_collections, name or "mean_absolute_error"
    )


def root_mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The square root of the running ``mean_squared_error``."""
    mse, update_mse = mean_squared_error(
        labels, predictions, weights, name=name or "root_mean_squared_error"
    )
    value, update_op = math_ops.sqrt(mse), math_ops.sqrt(update_mse)
    return _collect(value, update_op, metrics_collections, updates_collections)


# --- confusion counts, precision and recall ------------------------------------------------------
def _count_condition(
    condition: Tensor, weights: Any, metrics_collections, updates_collections
) -> tuple[Tensor, Tensor]:
    count = metric_variable([], dtypes.float32, name="count")
    values = math_ops.cast(condition, dtypes.float32)
    if weights is not None:
        values = math_ops.multiply(values, math_ops.cast(weights, dtypes.float32))
    value = array_ops.identity(count, name="value")
    update_op = state_ops.assign_add(count, math_ops.reduce_sum(values))
    return _collect(value, update_op, metrics_collections, updates_collections)


def _counter(default_name: str, label: bool, prediction: bool):
    def counter(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: list[str] | None = None,
        updates_collections: list[str] | None = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope.variable_scope(name, default_name):
            labels, predictions, weights = _prepare(
                math_ops.cast(labels, dtypes.bool), math_ops.cast(predictions, dtypes.bool), weights
            )
            is_label = labels if label else math_ops.logical_not(labels)
            is_prediction = predictions if prediction else math_ops.logical_not(predictions)
            condition = math_ops.logical_and(is_label, is_prediction)
            return _count_condition(condition, weights, metrics_collections, updates_collections)

    counter.__name__ = default_name
    counter.__doc__ = f"The running (weighted) count of {default_name.replace('_', ' ')}."
    return counter


true_positives = _counter("true_positives", True, True)
false_positives = _counter("false_positives", False, True)
true_negatives = _counter("true_negatives", False, False)
false_negatives = _counter("false_negatives", True, False)


def _ratio(hits: Tensor, misses: Tensor, name: str) -> Tensor:
    return div_no_nan(hits, hits + misses, name=name)


def _hit_rate(misses: Any, labels: Any, predictions: Any, weights: Any) -> tuple[Tensor, Tensor]:
    """``tp / (tp + misses)``, where ``misses`` counts false positives or false negatives."""
    tp, update_tp = true_positives(labels, predictions, weights)
    miss, update_miss = misses(labels, predictions, weights)
    return _ratio(tp, miss, "value"), _ratio(update_tp, update_miss, "update_op")


def precision(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """``tp / (tp + fp)`` over every batch so far (0 before any positive prediction)."""
    with variable_scope.variable_scope(name, "precision"):
        value, update_op = _hit_rate(false_positives, labels, predictions, weights)
        return _collect(value, update_op, metrics_collections, updates_collections)


def recall(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """``tp / (tp + fn)`` over every batch so far (0 before any positive label)."""
    with variable_scope.variable_scope(name, "recall"):
        value, update_op = _hit_rate(false_negatives, labels, predictions, weights)
        return _collect(value, update_op, metrics_collections, updates_collections)


# --- area under a curve --------------------------------------------------------------------------
_AUC_EPSILON = 1.0e-6


def _confusion_at_thresholds(
    labels: Tensor, predictions: Tensor, thresholds: list[float], weights: Any
) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """Per-threshold tp, fn, tn, fp counts: variables and their update ops.

    A prediction counts as positive at threshold t when it is greater than t; the [T, N] tables
    come from broadcasting predictions [1, N] against thresholds [T, 1].
    """
    labels, predictions, weights = _prepare(
        math_ops.cast(labels, dtypes.bool), math_ops.cast(predictions, dtypes.float32), weights
    )
    row = array_ops.reshape(predictions, [1, -1])
    pred_pos = math_ops.greater(row, array_ops.constant([[t] for t in thresholds], dtypes.float32))
    label_pos = array_ops.reshape(labels, [1, -1])
    if weights is not None:
        weights = broadcast_weights(math_ops.cast(weights, dtypes.float32), predictions)
        weights = array_ops.reshape(weights, [1, -1])
    conditions = {
        "tp": (label_pos, pred_pos),
        "fn": (label_pos, math_ops.logical_not(pred_pos)),
        "tn": (math_ops.logical_not(label_pos), math_ops.logical_not(pred_pos)),
        "fp": (math_ops.logical_not(label_pos), pred_pos),
    }
    names = {"tp": "true_positives", "fn": "false_negatives"}
    names.update({"tn": "true_negatives", "fp": "false_positives"})
    values, updates = {}, {}
    for key, (is_label, is_prediction) in conditions.items():
        variable = metric_variable([len(thresholds)], dtypes.float32, name=names[key])
        hits = math_ops.cast(math_ops.logical_and(is_label, is_prediction), dtypes.float32)
        if weights is not None:
            hits = hits * weights
        updates[key] = state_ops.assign_add(variable, math_ops.reduce_sum(hits, 1))
        values[key] = ops_lib.convert_to_tensor(variable)
    return values, updates


def _interpolate_pr_auc(tp: Tensor, fp: Tensor, fn: Tensor, n: int) -> Tensor:
    """PR AUC integrating precision along recall exactly between thresholds (Davis & Goadrich)."""
    dtp = tp[: n - 1] - tp[1:]
    p = tp + fp
    slope = div_no_nan(dtp, math_ops.maximum(p[: n - 1] - p[1:], 0.0))
    intercept = tp[1:] - slope * p[1:]
    both_positive = math_ops.logical_and(p[: n - 1] > 0, p[1:] > 0)
    ratio = div_no_nan(p[: n - 1], math_ops.maximum(p[1:], 0.0))
    safe_ratio = array_ops.where(both_positive, ratio, array_ops.ones_like(p[1:]))
    increments = div_no_nan(
        slope * (dtp + intercept * math_ops.log(safe_ratio)), math_ops.maximum(tp[1:] + fn[1:], 0.0)
    )
    return math_ops.reduce_sum(increments)


def _area(counts: dict[str, Tensor], curve: str, summation_method: str, n: int, name: str):
    tp, fn, tn, fp = counts["tp"], counts["fn"], counts["tn"], counts["fp"]
    if curve == "PR" and summation_method == "careful_interpolation":
        return array_ops.identity(_interpolate_pr_auc(tp, fp, fn, n), name=name)
    eps = _AUC_EPSILON
    recall_ = (tp + eps) / (tp + fn + eps)
    if curve == "ROC":
        x, y = fp / (fp + tn + eps), recall_
    else:
        x, y = recall_, (tp + eps) / (tp + fp + eps)
    left, right = y[: n - 1], y[1:]
    if summation_method == "minoring":
        heights = math_ops.minimum(left, right)
    elif summation_method == "majoring":
        heights = math_ops.maximum(left, right)
    else:
        heights = (left + right) / 2.0
    return math_ops.reduce_sum((x[: n - 1] - x[1:]) * heights, name=name)


def auc(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    curve: str = "ROC",
    name: str | None = None,
    summation_method: str = "trapezoidal",
    thresholds: list[float] | None = None,
) -> tuple[Tensor, Tensor]:
    """Area under the ROC or PR curve from confusion counts at ``num_thresholds`` thresholds.

    ``predictions`` are probabilities in [0, 1]; ``summation_method`` is 'trapezoidal',
    'careful_interpolation' (PR only; trapezoidal for ROC), 'minoring' or 'majoring'.
    """
    if curve not in ("ROC", "PR"):
        raise ValueError(f"curve must be either ROC or PR, {curve} unknown")
    methods = ("trapezoidal", "careful_interpolation", "minoring", "majoring")
    if summation_method not in methods:
        raise ValueError(f"Invalid summation_method: {summation_method}; expected one of {methods}")
    with variable_scope.variable_scope(name, "auc"):
        if thresholds is not None:
            thresholds = [0.0 - _AUC_EPSILON, *sorted(thresholds), 1.0 + _AUC_EPSILON]
        else:
            thresholds = _even_thresholds(num_thresholds, _AUC_EPSILON)
        n = len(thresholds)
        values, updates = _confusion_at_thresholds(labels, predictions, thresholds, weights)
        value = _area(values, curve, summation_method, n, "value")
        update_op = _area(updates, curve, summation_method, n, "update_op")
        return _collect(value, update_op, metrics_collections, updates_collections)


# --- more means: cosine distance, relative error, fraction below, elementwise -------------------
def mean_cosine_distance(
    labels: Any,
    predictions: Any,
    dim: int,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """``1 - mean(sum(labels * predictions, dim))``: for unit vectors, the mean cosine distance."""
    labels, predictions, weights = _prepare(labels, predictions, weights)
    products = math_ops.reduce_sum(
        math_ops.multiply(predictions, labels), axis=[dim], keepdims=True
    )
    mean_product, update_product = mean(products, weights, name=name or "mean_cosine_distance")
    value, update_op = 1.0 - mean_product, 1.0 - update_product
    return _collect(value, update_op, metrics_collections, updates_collections)


def mean_relative_error(
    labels: Any,
    predictions: Any,
    normalizer: Any,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean of ``|labels - predictions| / normalizer`` (0 where the normalizer is 0)."""
    labels, predictions, weights = _prepare(labels, predictions, weights)
    predictions, normalizer = remove_squeezable_dimensions(
        predictions, ops_lib.convert_to_tensor(normalizer)
    )
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    errors_ = math_ops.abs(labels - predictions)
    relative = array_ops.where(
        math_ops.equal(normalizer, 0.0),
        array_ops.zeros_like(labels),
        errors_
        / array_ops.where(
            math_ops.equal(normalizer, 0.0), array_ops.ones_like(normalizer), normalizer
        ),
    )
    return mean(
        relative,
        weights,
        metrics_collections,
        updates_collections,
        name or "mean_relative_error",
    )


def percentage_below(
    values: Any,
    threshold: float,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The fraction of ``values`` below ``threshold``."""
    below = math_ops.cast(math_ops.less(values, threshold), dtypes.float32)
    return mean(
        below,
        weights,
        metrics_collections,
        updates_collections,
        name or "percentage_below_threshold",
    )


def mean_tensor(
    values: Any,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The elementwise mean of every ``values`` seen (a tensor of ``values``' shape)."""
    with variable_scope.variable_scope(name, "mean"):
        values = math_ops.cast(values, dtypes.float32)
        if not values.shape.is_fully_defined():
            raise ValueError(f"mean_tensor needs a fully defined shape, got {values.shape}")
        total = metric_variable(values.shape.as_list(), dtypes.float32, name="total_tensor")
        count = metric_variable(values.shape.as_list(), dtypes.float32, name="count_tensor")
        num_values = array_ops.ones_like(values)
        if weights is not None:
            weights = broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
            values, num_values = math_ops.multiply(values, weights), weights
        return _running_mean(
            total, count, values, num_values, metrics_collections, updates_collections
        )


__all__ = [
    "accuracy",
    "auc",
    "false_negatives",
    "false_positives",
    "mean",
    "mean_absolute_error",
    "mean_squared_error",
    "metric_variable",
    "precision",
    "recall",
    "root_mean_squared_error",
    "true_negatives",
    "true_positives",
]
