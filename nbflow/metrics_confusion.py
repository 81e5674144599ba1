"""``tf.metrics`` read from running confusion counts: per class, or per threshold.

``mean_iou`` and ``mean_per_class_accuracy`` keep per-class sums (a ``num_classes`` square
confusion matrix, or correct/total vectors) in local variables; the metric is a mean over
classes of a ratio of those sums. The ``*_at_thresholds`` metrics keep, for each threshold ``t``,
the counts of true/false positives/negatives when "positive" means ``prediction > t`` (the same
tables as ``auc``); ``sensitivity_at_specificity`` and ``specificity_at_sensitivity`` pick the
threshold whose one rate is closest to the target and report the other one there::

    iou, update_iou = tf.metrics.mean_iou(labels, predictions, num_classes=21)
    prec, update_prec = tf.metrics.precision_at_thresholds(labels, probs, [0.25, 0.5, 0.75])
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.metrics_impl import (
    _collect,
    _confusion_at_thresholds,
    _even_thresholds,
    _prepare,
    metric_variable,
)
from nbflow.ops import array_ops, math_ops, state_ops, variable_scope
from nbflow.ops.scan_ops import cumsum
from nbflow.ops.weights_broadcast_ops import broadcast_weights, div_no_nan

Tensor = ops_lib.Tensor

__all__ = [
    "false_negatives_at_thresholds",
    "false_positives_at_thresholds",
    "mean_iou",
    "mean_per_class_accuracy",
    "precision_at_thresholds",
    "recall_at_thresholds",
    "sensitivity_at_specificity",
    "specificity_at_sensitivity",
    "true_negatives_at_thresholds",
    "true_positives_at_thresholds",
]

_KEPSILON = 1e-7  # TensorFlow's guard against 0/0 in rates at thresholds


def _flat_weights(weights: Any, like: Tensor) -> Tensor | None:
    if weights is None:
        return None
    return array_ops.reshape(broadcast_weights(math_ops.cast(weights, dtypes.float32), like), [-1])


# --- per class ---------------------------------------------------------------------------------
def mean_iou(
    labels: Any,
    predictions: Any,
    num_classes: int,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean over classes of intersection over union, ``tp / (tp + fp + fn)`` per class,
    from a running confusion matrix (classes never seen nor predicted are left out)."""
    with variable_scope.variable_scope(name, "mean_iou"):
        labels, predictions, weights = _prepare(labels, predictions, weights)
        total_cm = metric_variable(
            [num_classes, num_classes], dtypes.float64, name="total_confusion_matrix"
        )
        flat_labels = math_ops.cast(array_ops.reshape(labels, [-1]), dtypes.int64)
        flat_predictions = math_ops.cast(array_ops.reshape(predictions, [-1]), dtypes.int64)
        cell = flat_labels * num_classes + flat_predictions
        counts = _flat_weights(weights, predictions)
        if counts is None:
            counts = array_ops.ones_like(flat_labels, dtype=dtypes.float32)
        batch_cm = math_ops.unsorted_segment_sum(
            math_ops.cast(counts, dtypes.float64), cell, num_classes * num_classes
        )
        update_op = state_ops.assign_add(
            total_cm, array_ops.reshape(batch_cm, [num_classes, num_classes])
        )

        def compute(cm: Tensor, name: str) -> Tensor:
            rows = math_ops.reduce_sum(cm, 0)
            cols = math_ops.reduce_sum(cm, 1)
            diag = math_ops.diag_part(cm)
            denominator = rows + cols - diag
            valid = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(denominator, 0), cm.dtype))
            safe = array_ops.where(denominator > 0, denominator, array_ops.ones_like(denominator))
            iou = diag / safe
            return array_ops.where(
                valid > 0,
                math_ops.reduce_sum(iou) / math_ops.maximum(valid, 1.0),
                valid * 0.0,
                name=name,
            )

        value = compute(ops_lib.convert_to_tensor(total_cm), "mean_iou")
        return _collect(
            value, compute(update_op, "update_op"), metrics_collections, updates_collections
        )


def mean_per_class_accuracy(
    labels: Any,
    predictions: Any,
    num_classes: int,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean over all ``num_classes`` of each class's accuracy (0 for a class never seen)."""
    with variable_scope.variable_scope(name, "mean_accuracy"):
        labels, predictions, weights = _prepare(labels, predictions, weights)
        if labels.dtype.base_dtype != predictions.dtype.base_dtype:
            predictions = math_ops.cast(predictions, labels.dtype.base_dtype)
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        flat_labels = math_ops.cast(array_ops.reshape(labels, [-1]), dtypes.int32)
        seen = _flat_weights(weights, predictions)
        if seen is None:
            seen = array_ops.ones_like(flat_labels, dtype=dtypes.float32)
        correct = math_ops.cast(
            math_ops.equal(array_ops.reshape(predictions, [-1]), array_ops.reshape(labels, [-1])),
            dtypes.float32,
        )
        update_total = state_ops.assign_add(
            total, math_ops.unsorted_segment_sum(seen, flat_labels, num_classes)
        )
        update_count = state_ops.assign_add(
            count, math_ops.unsorted_segment_sum(correct * seen, flat_labels, num_classes)
        )
        value = math_ops.reduce_mean(div_no_nan(count, total), name="mean_accuracy")
        update_op = math_ops.reduce_mean(div_no_nan(update_count, update_total), name="update_op")
        return _collect(value, update_op, metrics_collections, updates_collections)


# --- per threshold -----------------------------------------------------------------------------
def _count_at_thresholds(key: str, default_name: str):
    def counter(
        labels: Any,
        predictions: Any,
        thresholds: list[float],
        weights: Any = None,
        metrics_collections: list[str] | None = None,
        updates_collections: list[str] | None = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope.variable_scope(name, default_name):
            values, updates = _confusion_at_thresholds(labels, predictions, thresholds, weights)
            return _collect(values[key], updates[key], metrics_collections, updates_collections)

    counter.__name__ = default_name
    counter.__doc__ = (
        f"The running (weighted) count of {default_name.replace('_', ' ')}: one count per "
        "threshold, a prediction being positive when it is above it."
    )
    return counter


true_positives_at_thresholds = _count_at_thresholds("tp", "true_positives_at_thresholds")
false_positives_at_thresholds = _count_at_thresholds("fp", "false_positives_at_thresholds")
true_negatives_at_thresholds = _count_at_thresholds("tn", "true_negatives_at_thresholds")
false_negatives_at_thresholds = _count_at_thresholds("fn", "false_negatives_at_thresholds")


def _rate_at_thresholds(miss: str, default_name: str, doc: str):
    def rate(
        labels: Any,
        predictions: Any,
        thresholds: list[float],
        weights: Any = None,
        metrics_collections: list[str] | None = None,
        updates_collections: list[str] | None = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope.variable_scope(name, default_name):
            values, updates = _confusion_at_thresholds(labels, predictions, thresholds, weights)

            def compute(counts: dict[str, Tensor], name: str) -> Tensor:
                tp = counts["tp"]
                return math_ops.truediv(tp, _KEPSILON + tp + counts[miss], name=name)

            value, update_op = compute(values, "value"), compute(updates, "update_op")
            return _collect(value, update_op, metrics_collections, updates_collections)

    rate.__name__ = default_name
    rate.__doc__ = doc
    return rate


precision_at_thresholds = _rate_at_thresholds(
    "fp", "precision_at_thresholds", "``tp / (tp + fp)`` at each of ``thresholds``."
)
recall_at_thresholds = _rate_at_thresholds(
    "fn", "recall_at_thresholds", "``tp / (tp + fn)`` at each of ``thresholds``."
)


def _rate_at_other_rate(
    labels: Any,
    predictions: Any,
    target: float,
    weights: Any,
    num_thresholds: int,
    metrics_collections: Any,
    updates_collections: Any,
    name: str | None,
    default_name: str,
    sensitivity_given: bool,
) -> tuple[Tensor, Tensor]:
    if not 0 <= target <= 1:
        what = "sensitivity" if sensitivity_given else "specificity"
        raise ValueError(f"`{what}` must be in the range [0, 1], got {target}.")
    with variable_scope.variable_scope(name, default_name):
        thresholds = _even_thresholds(num_thresholds, _KEPSILON)
        values, updates = _confusion_at_thresholds(labels, predictions, thresholds, weights)

        def compute(counts: dict[str, Tensor], name: str) -> Tensor:
            tp, tn, fp, fn = counts["tp"], counts["tn"], counts["fp"], counts["fn"]
            if sensitivity_given:  # the last threshold closest to the sensitivity
                gap = math_ops.abs(tp / (tp + fn + _KEPSILON) - target)
                at_min = math_ops.cast(math_ops.equal(gap, math_ops.reduce_min(gap)), dtypes.int64)
                index = math_ops.argmax(cumsum(at_min), 0)
                index = math_ops.cast(index, dtypes.int32)
                return math_ops.truediv(tn[index], tn[index] + fp[index] + _KEPSILON, name=name)
            gap = math_ops.abs(tn / (tn + fp + _KEPSILON) - target)
            index = math_ops.cast(math_ops.argmin(gap, 0), dtypes.int32)  # the first closest
            return math_ops.truediv(tp[index], tp[index] + fn[index] + _KEPSILON, name=name)

        value, update_op = compute(values, "value"), compute(updates, "update_op")
        return _collect(value, update_op, metrics_collections, updates_collections)


def sensitivity_at_specificity(
    labels: Any,
    predictions: Any,
    specificity: float,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The sensitivity (recall) at the threshold whose specificity is closest to the target."""
    return _rate_at_other_rate(
        labels,
        predictions,
        specificity,
        weights,
        num_thresholds,
        metrics_collections,
        updates_collections,
        name,
        "sensitivity_at_specificity",
        sensitivity_given=False,
    )


def specificity_at_sensitivity(
    labels: Any,
    predictions: Any,
    sensitivity: float,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The specificity at the threshold whose sensitivity is closest to the target."""
    return _rate_at_other_rate(
        labels,
        predictions,
        sensitivity,
        weights,
        num_thresholds,
        metrics_collections,
        updates_collections,
        name,
        "specificity_at_sensitivity",
        sensitivity_given=True,
    )
