"""``tf.metrics``: streaming metrics, each a ``(value, update_op)`` pair over local variables.

A metric keeps running sums in variables of the LOCAL_VARIABLES and METRIC_VARIABLES collections
(``accuracy/total``, ``accuracy/count``), zero after ``tf.local_variables_initializer()``. Running
``update_op`` adds one batch to the sums and returns the metric over every batch so far;
``value`` reads the sums without changing them. Re-running the local initializer starts over.

    acc, update_acc = tf.metrics.accuracy(labels=y, predictions=tf.argmax(logits, 1))
    sess.run(tf.local_variables_initializer())
    for batch in batches:
        sess.run(update_acc, {x: batch.x, y: batch.y})
    print(sess.run(acc))

The namespace only: the metrics live in ``metrics_impl`` (with the helpers the others share),
``metrics_confusion`` (per threshold and per class) and ``metrics_top_k`` (ranked).
"""

from nbflow.metrics_impl import *  # noqa: F401, F403 - the metrics of metrics_impl.__all__
from nbflow.metrics_impl import __all__ as _IMPL_NAMES
from nbflow.metrics_impl import (  # noqa: F401 - TF 1.15's later additions, listed below
    mean_cosine_distance,
    mean_relative_error,
    mean_tensor,
    percentage_below,
)

# Metrics from per-class and per-threshold counts, and ranked ones (issue 16, api-inputs).
from nbflow.metrics_confusion import (  # noqa: F401 - built on metrics_impl
    false_negatives_at_thresholds,
    false_positives_at_thresholds,
    mean_iou,
    mean_per_class_accuracy,
    precision_at_thresholds,
    recall_at_thresholds,
    sensitivity_at_specificity,
    specificity_at_sensitivity,
    true_negatives_at_thresholds,
    true_positives_at_thresholds,
)
from nbflow.metrics_top_k import (  # noqa: F401
    average_precision_at_k,
    precision_at_k,
    precision_at_top_k,
    recall_at_k,
    recall_at_top_k,
    sparse_average_precision_at_k,
    sparse_precision_at_k,
)

__all__ = _IMPL_NAMES + [
    "average_precision_at_k",
    "false_negatives_at_thresholds",
    "false_positives_at_thresholds",
    "mean_cosine_distance",
    "mean_iou",
    "mean_per_class_accuracy",
    "mean_relative_error",
    "mean_tensor",
    "percentage_below",
    "precision_at_k",
    "precision_at_thresholds",
    "precision_at_top_k",
    "recall_at_k",
    "recall_at_thresholds",
    "recall_at_top_k",
    "sensitivity_at_specificity",
    "sparse_average_precision_at_k",
    "sparse_precision_at_k",
    "specificity_at_sensitivity",
    "true_negatives_at_thresholds",
    "true_positives_at_thresholds",
]
