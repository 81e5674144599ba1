"""``tf.metrics`` of ranked predictions: precision, recall and average precision at ``k``.

``predictions`` score every class (``[batch, num_classes]``); the top ``k`` are the predicted
classes of an example (``*_at_top_k`` take those indices directly). ``labels`` give each example's
true classes: ``[batch]`` (one each), ``[batch, num_labels]`` (ids; ids outside
``[0, num_classes)``, such as a -1 pad, are ignored) or a ``SparseTensor``. Matches are found by
comparing every predicted id with every label id, so no ``num_classes``-wide table is built::

    prec, update = tf.metrics.precision_at_k(labels, logits, k=5)

With ``class_id`` only that class counts: precision is then the fraction of examples predicting
it that have it (NaN until one does), recall the fraction of examples having it that predict it.
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.sparse_tensor import SparseTensor
from nbflow.metrics_impl import _collect, metric_variable
from nbflow.nn_impl import top_k
from nbflow.ops import array_ops, math_ops, state_ops, variable_scope
from nbflow.ops.scan_ops import cumsum
from nbflow.ops.sparse_ops import sparse_tensor_to_dense
from nbflow.ops.weights_broadcast_ops import broadcast_weights

Tensor = ops_lib.Tensor

__all__ = [
    "average_precision_at_k",
    "precision_at_k",
    "precision_at_top_k",
    "recall_at_k",
    "recall_at_top_k",
    "sparse_average_precision_at_k",
    "sparse_precision_at_k",
]


def _label_ids(labels: Any, predictions_idx: Tensor, num_classes: Any) -> tuple[Tensor, Tensor]:
    """Label ids [batch, num_labels] (int64) and whether each is a valid class id."""
    if isinstance(labels, SparseTensor):
        labels = sparse_tensor_to_dense(labels, default_value=-1)
    labels = math_ops.cast(ops_lib.convert_to_tensor(labels), dtypes.int64)
    if labels.shape.ndims == len(predictions_idx.shape) - 1:
        labels = array_ops.expand_dims(labels, -1)
    valid = labels >= 0
    if num_classes is not None:
        valid = math_ops.logical_and(valid, labels < num_classes)
    return labels, valid


def _matches(predictions_idx: Tensor, labels: Tensor, valid: Tensor) -> tuple[Tensor, Tensor]:
    """For each predicted id, whether it is a label; for each label, whether it is predicted."""
    equal = math_ops.logical_and(
        math_ops.equal(
            array_ops.expand_dims(predictions_idx, -1), array_ops.expand_dims(labels, -2)
        ),
        array_ops.expand_dims(valid, -2),
    )  # [batch, k, num_labels]
    return math_ops.reduce_any(equal, -1), math_ops.reduce_any(equal, -2)


def _per_example_counts(
    predictions_idx: Tensor, labels: Any, class_id: int | None, num_classes: Any
) -> dict[str, Tensor]:
    """tp, fp, fn of each example (float64)."""
    predictions_idx = math_ops.cast(predictions_idx, dtypes.int64)
    labels, valid = _label_ids(labels, predictions_idx, num_classes)
    if class_id is not None:
        predicted = math_ops.reduce_any(math_ops.equal(predictions_idx, class_id), -1)
        labelled = math_ops.reduce_any(
            math_ops.logical_and(math_ops.equal(labels, class_id), valid), -1
        )
        cases = {
            "tp": math_ops.logical_and(predicted, labelled),
            "fp": math_ops.logical_and(predicted, math_ops.logical_not(labelled)),
            "fn": math_ops.logical_and(math_ops.logical_not(predicted), labelled),
        }
        return {k: math_ops.cast(v, dtypes.float64) for k, v in cases.items()}
    hit, found = _matches(predictions_idx, labels, valid)

    def count(condition: Tensor) -> Tensor:
        return math_ops.reduce_sum(math_ops.cast(condition, dtypes.float64), -1)

    return {
        "tp": count(hit),
        "fp": count(math_ops.logical_not(hit)),
        "fn": count(math_ops.logical_and(valid, math_ops.logical_not(found))),
    }


def _streaming(
    predictions_idx: Tensor,
    labels: Any,
    k: Any,
    class_id: int | None,
    num_classes: Any,
    weights: Any,
    miss: str,
    metrics_collections: Any,
    updates_collections: Any,
) -> tuple[Tensor, Tensor]:
    counts = _per_example_counts(predictions_idx, labels, class_id, num_classes)
    suffix = f"at_{k}" if class_id is None else f"at_{k}_class{class_id}"
    totals, updates = {}, {}
    for key in ("tp", miss):
        values = counts[key]
        if weights is not None:
            w = math_ops.cast(ops_lib.convert_to_tensor(weights), dtypes.float64)
            values = values * broadcast_weights(array_ops.reshape(w, [-1]), values)
        name = {"tp": "true_positive", "fp": "false_positive", "fn": "false_negative"}[key]
        variable = metric_variable([], dtypes.float64, name=f"{name}_{suffix}")
        updates[key] = state_ops.assign_add(variable, math_ops.reduce_sum(values))
        totals[key] = ops_lib.convert_to_tensor(variable)
    value = math_ops.truediv(totals["tp"], totals["tp"] + totals[miss], name="value")
    update_op = math_ops.truediv(updates["tp"], updates["tp"] + updates[miss], name="update_op")
    return _collect(value, update_op, metrics_collections, updates_collections)


def _top_k_ids(predictions: Any, k: int) -> tuple[Tensor, Any]:
    predictions = ops_lib.convert_to_tensor(predictions)
    num_classes = predictions.shape.as_list()[-1] if predictions.shape.ndims else None
    return top_k(predictions, k).indices, num_classes


def _at_k(kind: str, miss: str, doc: str):
    """``precision_at_k`` (``miss`` "fp") or ``recall_at_k`` (``miss`` "fn")."""

    def at_k(
        labels: Any,
        predictions: Any,
        k: int,
        class_id: int | None = None,
        weights: Any = None,
        metrics_collections: list[str] | None = None,
        updates_collections: list[str] | None = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope.variable_scope(name, f"{kind}_at_{k}"):
            ids, num_classes = _top_k_ids(predictions, k)
            return _streaming(
                ids,
                labels,
                k,
                class_id,
                num_classes,
                weights,
                miss,
                metrics_collections,
                updates_collections,
            )

    at_k.__name__ = f"{kind}_at_k"
    at_k.__doc__ = doc
    return at_k


def _at_top_k(kind: str, miss: str, doc: str):
    """``precision_at_top_k`` or ``recall_at_top_k``: ``_at_k`` given the top-k ids."""

    def at_top_k(
        labels: Any,
        predictions_idx: Any,
        k: int | None = None,
        class_id: int | None = None,
        weights: Any = None,
        metrics_collections: list[str] | None = None,
        updates_collections: list[str] | None = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        ids = ops_lib.convert_to_tensor(predictions_idx)
        k = k if k is not None else ids.shape.as_list()[-1]
        with variable_scope.variable_scope(name, f"{kind}_at_top_{k}"):
            return _streaming(
                ids[:, :k],
                labels,
                k,
                class_id,
                None,
                weights,
                miss,
                metrics_collections,
                updates_collections,
            )

    at_top_k.__name__ = f"{kind}_at_top_k"
    at_top_k.__doc__ = doc
    return at_top_k


precision_at_k = _at_k(
    "precision",
    "fp",
    "How many of the top-``k`` predicted classes are labels: ``tp / (tp + fp)``.",
)
recall_at_k = _at_k(
    "recall", "fn", "How many labels are among the top-``k`` predicted classes: ``tp / (tp + fn)``."
)
precision_at_top_k = _at_top_k(
    "precision",
    "fp",
    "``precision_at_k`` given the top-k class ids ``[batch, k]`` instead of scores.",
)
recall_at_top_k = _at_top_k(
    "recall", "fn", "``recall_at_k`` given the top-k class ids ``[batch, k]`` instead of scores."
)


sparse_precision_at_k = precision_at_k


def average_precision_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    weights: Any = None,
    metrics_collections: list[str] | None = None,
    updates_collections: list[str] | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean over examples of average precision at ``k``: the precision at each rank that
    holds a label, summed, over ``min(k, number of labels)``."""
    if k < 1:
        raise ValueError(f"Invalid k={k}.")
    with variable_scope.variable_scope(name, f"average_precision_at_{k}"):
        ids, num_classes = _top_k_ids(predictions, k)
        ids = math_ops.cast(ids, dtypes.int64)
        label_ids, valid = _label_ids(labels, ids, num_classes)
        hit, _ = _matches(ids, label_ids, valid)
        relevant = math_ops.cast(hit, dtypes.float64)  # [batch, k]
        ranks = math_ops.cast(array_ops.range(1, k + 1), dtypes.float64)
        precision_sum = math_ops.reduce_sum(cumsum(relevant, axis=-1) / ranks * relevant, -1)
        num_labels = math_ops.reduce_sum(math_ops.cast(valid, dtypes.float64), -1)
        relevant_count = math_ops.minimum(num_labels, float(k))
        per_example = array_ops.where(
            relevant_count > 0,
            precision_sum / math_ops.maximum(relevant_count, 1.0),
            array_ops.zeros_like(precision_sum),
        )
        if weights is None:
            counts = array_ops.ones_like(per_example)
        else:
            w = math_ops.cast(ops_lib.convert_to_tensor(weights), dtypes.float64)
            counts = broadcast_weights(array_ops.reshape(w, [-1]), per_example)
        total = metric_variable([], dtypes.float64, name=f"total_{k}")
        count = metric_variable([], dtypes.float64, name=f"max_{k}")
        update_total = state_ops.assign_add(total, math_ops.reduce_sum(per_example * counts))
        update_count = state_ops.assign_add(count, math_ops.reduce_sum(counts))
        value = math_ops.truediv(total, count, name="value")
        update_op = math_ops.truediv(update_total, update_count, name="update_op")
        return _collect(value, update_op, metrics_collections, updates_collections)


sparse_average_precision_at_k = average_precision_at_k
