"""tf.metrics: streaming (value, update_op) pairs over several batches against NumPy."""

import numpy as np
import pytest

import nbflow as tf

BATCHES, BATCH = 4, 25


def _stream(metric, feeds):
    """Run the update op once per batch; return every update's result and the final value."""
    value, update_op = metric
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(value) == pytest.approx(0.0)  # nothing seen yet, and no NaN
        updates = [sess.run(update_op, feed) for feed in feeds]
        return updates, sess.run(value)


@pytest.fixture
def batches(rng):
    """Labels, predictions, scores in [0, 1] and weights for a few batches."""
    labels = rng.integers(0, 2, size=(BATCHES, BATCH))
    scores = np.clip(0.35 * labels + rng.uniform(0, 0.65, size=labels.shape), 0, 1)
    predictions = (scores > 0.5).astype(np.int64)
    weights = rng.choice([0.0, 0.5, 1.0, 2.0], size=labels.shape)
    return labels, predictions, scores.astype(np.float32), weights.astype(np.float32)


def _placeholders(dtypes):
    return [tf.placeholder(dtype, [None]) for dtype in dtypes]


def _prefix_means(values, weights):
    sums, counts = np.cumsum((values * weights).sum(1)), np.cumsum(weights.sum(1))
    return sums / counts


# --- means ----------------------------------------------------------------------------------------
def test_metric_variables_are_local_zero_initialised_and_named_by_scope():
    value, update_op = tf.metrics.accuracy([1, 2], [1, 3])
    tf.metrics.accuracy([1], [1])
    names = [v.op.name for v in tf.local_variables()]
    assert names == ["accuracy/total", "accuracy/count", "accuracy_1/total", "accuracy_1/count"]
    assert tf.get_collection(tf.GraphKeys.METRIC_VARIABLES) == tf.local_variables()
    assert tf.global_variables() == [] and tf.trainable_variables() == []
    assert value.op.name == "accuracy/value" and update_op.op.name == "accuracy/update_op"


def test_streaming_weighted_mean_matches_numpy_and_restarts_after_local_init(rng):
    values = rng.normal(size=(BATCHES, BATCH)).astype(np.float32)
    weights = rng.uniform(size=(BATCHES, BATCH)).astype(np.float32)
    x, w = _placeholders([tf.float32, tf.float32])
    mean, update_op = tf.metrics.mean(x, weights=w)
    feeds = [{x: v, w: wt} for v, wt in zip(values, weights)]
    updates, final = _stream((mean, update_op), feeds)
    np.testing.assert_allclose(updates, _prefix_means(values, weights), rtol=1e-5)
    assert final == pytest.approx(updates[-1])
    with tf.Session() as sess:  # a fresh initialisation forgets the earlier batches
        sess.run(tf.local_variables_initializer())
        sess.run(update_op, feeds[-1])
        assert sess.run(mean) == pytest.approx(_prefix_means(values[-1:], weights[-1:])[0], 1e-5)


def test_unweighted_mean_of_a_fed_float32_placeholder():
    x = tf.placeholder(tf.float32, [None])
    updates, final = _stream(tf.metrics.mean(x), [{x: [1.0, 2.0]}, {x: [6.0]}])
    assert updates == [1.5, 3.0] and final == 3.0


def test_streaming_accuracy_matches_numpy(batches):
    labels, predictions, _, weights = batches
    y, p, w = _placeholders([tf.int64, tf.int64, tf.float32])
    accuracy = tf.metrics.accuracy(y, p, weights=w)
    feeds = [{y: a, p: b, w: c} for a, b, c in zip(labels, predictions, weights)]
    updates, final = _stream(accuracy, feeds)
    expected = _prefix_means((labels == predictions).astype(np.float64), weights)
    np.testing.assert_allclose(updates, expected, rtol=1e-5)
    assert final == pytest.approx(expected[-1], rel=1e-5)


def test_accuracy_squeezes_column_labels_and_casts_predictions():
    labels = np.array([[1], [2], [3], [4]])
    predictions = np.array([1.0, 2.0, 0.0, 4.0], np.float32)
    updates, _ = _stream(tf.metrics.accuracy(labels, predictions), [None])
    assert updates == [pytest.approx(0.75)]


@pytest.mark.parametrize(
    "metric, reference",
    [
        (tf.metrics.mean_squared_error, lambda e: e**2),
        (tf.metrics.mean_absolute_error, np.abs),
    ],
)
def test_streaming_regression_errors_match_numpy(rng, metric, reference):
    labels = rng.normal(size=(BATCHES, BATCH)).astype(np.float32)
    predictions = rng.normal(size=(BATCHES, BATCH)).astype(np.float32)
    y, p = _placeholders([tf.float32, tf.float32])
    updates, _ = _stream(metric(y, p), [{y: a, p: b} for a, b in zip(labels, predictions)])
    expected = _prefix_means(reference(labels - predictions), np.ones_like(labels))
    np.testing.assert_allclose(updates, expected, rtol=1e-5)


def test_root_mean_squared_error_is_sqrt_of_streaming_mse(rng):
    labels, predictions = rng.normal(size=(2, BATCHES, BATCH)).astype(np.float32)
    y, p = _placeholders([tf.float32, tf.float32])
    rmse = tf.metrics.root_mean_squared_error(y, p)
    updates, _ = _stream(rmse, [{y: a, p: b} for a, b in zip(labels, predictions)])
    mse = _prefix_means((labels - predictions) ** 2, np.ones_like(labels))
    np.testing.assert_allclose(updates, np.sqrt(mse), rtol=1e-5)


# --- confusion counts, precision, recall ----------------------------------------------------------
def _prefix_counts(labels, predictions, weights):
    tp = np.cumsum(((labels == 1) & (predictions == 1)) * weights, axis=0).sum(1)
    fp = np.cumsum(((labels == 0) & (predictions == 1)) * weights, axis=0).sum(1)
    fn = np.cumsum(((labels == 1) & (predictions == 0)) * weights, axis=0).sum(1)
    tn = np.cumsum(((labels == 0) & (predictions == 0)) * weights, axis=0).sum(1)
    return tp, fp, fn, tn


@pytest.mark.parametrize("weighted", [False, True])
def test_streaming_precision_recall_and_counts_match_numpy(batches, weighted):
    labels, predictions, _, weights = batches
    weights = weights if weighted else np.ones_like(weights)
    y, p, w = _placeholders([tf.int64, tf.int64, tf.float32])
    metrics = [
        tf.metrics.precision(y, p, weights=w),
        tf.metrics.recall(y, p, weights=w),
        tf.metrics.true_positives(y, p, weights=w),
        tf.metrics.false_positives(y, p, weights=w),
        tf.metrics.false_negatives(y, p, weights=w),
        tf.metrics.true_negatives(y, p, weights=w),
    ]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        updates = [
            sess.run([m[1] for m in metrics], {y: a, p: b, w: c})
            for a, b, c in zip(labels, predictions, weights)
        ]
        values = sess.run([m[0] for m in metrics])
    tp, fp, fn, tn = _prefix_counts(labels, predictions, weights)
    expected = np.stack([tp / (tp + fp), tp / (tp + fn), tp, fp, fn, tn], axis=1)
    np.testing.assert_allclose(np.array(updates), expected, rtol=1e-5)
    np.testing.assert_allclose(values, expected[-1], rtol=1e-5)


def test_precision_and_recall_variables_and_zero_denominators():
    precision, update_precision = tf.metrics.precision([0, 0], [0, 0])
    recall, update_recall = tf.metrics.recall([0, 0], [1, 1])
    names = [v.op.name for v in tf.local_variables()]
    assert names == [
        "precision/true_positives/count",
        "precision/false_positives/count",
        "recall/true_positives/count",
        "recall/false_negatives/count",
    ]
    assert _stream((precision, update_precision), [None])[0] == [0.0]
    assert _stream((recall, update_recall), [None])[0] == [0.0]


# --- auc ------------------------------------------------------------------------------------------
def _np_confusion(labels, scores, weights, thresholds):
    positive = scores[None, :] > np.asarray(thresholds)[:, None]
    label = labels[None, :].astype(bool)
    count = lambda mask: (mask * weights[None, :]).sum(1)  # noqa: E731
    return (
        count(label & positive),
        count(label & ~positive),
        count(~label & ~positive),
        count(~label & positive),
    )


def _np_auc(labels, scores, weights, num_thresholds, curve, method):
    """TensorFlow 1.x's auc from confusion counts at evenly spaced thresholds."""
    eps = 1e-6
    inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    tp, fn, tn, fp = _np_confusion(labels, scores, weights, [-eps, *inner, 1 + eps])
    if curve == "PR" and method == "careful_interpolation":
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = np.maximum(p[:-1] - p[1:], 0)
        slope = np.divide(dtp, dp, out=np.zeros_like(dtp), where=dp != 0)
        intercept = tp[1:] - slope * p[1:]
        ratio = np.divide(p[:-1], p[1:], out=np.ones_like(dtp), where=(p[:-1] > 0) & (p[1:] > 0))
        denominator = tp[1:] + fn[1:]
        increment = slope * (dtp + intercept * np.log(ratio))
        return np.divide(
            increment, denominator, out=np.zeros_like(dtp), where=denominator != 0
        ).sum()
    recall = (tp + eps) / (tp + fn + eps)
    if curve == "ROC":
        x, y = fp / (fp + tn + eps), recall
    else:
        x, y = recall, (tp + eps) / (tp + fp + eps)
    heights = {
        "trapezoidal": (y[:-1] + y[1:]) / 2,
        "minoring": np.minimum(y[:-1], y[1:]),
        "majoring": np.maximum(y[:-1], y[1:]),
    }[method]
    return ((x[:-1] - x[1:]) * heights).sum()


@pytest.mark.parametrize(
    "curve, method",
    [
        ("ROC", "trapezoidal"),
        ("ROC", "minoring"),
        ("ROC", "majoring"),
        ("PR", "trapezoidal"),
        ("PR", "careful_interpolation"),
    ],
)
def test_streaming_auc_matches_numpy(batches, curve, method):
    labels, _, scores, weights = batches
    y, s, w = _placeholders([tf.int64, tf.float32, tf.float32])
    auc = tf.metrics.auc(y, s, weights=w, num_thresholds=50, curve=curve, summation_method=method)
    updates, final = _stream(auc, [{y: a, s: b, w: c} for a, b, c in zip(labels, scores, weights)])
    expected = [
        _np_auc(labels[: i + 1].ravel(), scores[: i + 1].ravel(), weights[: i + 1].ravel(), 50,
                curve, method)
        for i in range(BATCHES)
    ]  # fmt: skip
    np.testing.assert_allclose(updates, expected, rtol=1e-4, atol=1e-6)
    assert final == pytest.approx(expected[-1], rel=1e-4)


def test_roc_auc_with_many_thresholds_approaches_the_rank_statistic(batches):
    labels, _, scores, _ = batches
    labels, scores = labels.ravel(), scores.ravel()
    updates, _ = _stream(tf.metrics.auc(labels, scores, num_thresholds=2000), [None])
    positives, negatives = scores[labels == 1], scores[labels == 0]
    wins = (positives[:, None] > negatives[None, :]) + 0.5 * (positives[:, None] == negatives)
    assert updates[0] == pytest.approx(wins.mean(), abs=2e-3)
    assert [v.op.name for v in tf.local_variables()] == [
        "auc/true_positives",
        "auc/false_negatives",
        "auc/true_negatives",
        "auc/false_positives",
    ]


def test_metrics_and_updates_collections_receive_value_and_update_op():
    value, update_op = tf.metrics.mean(
        [1.0, 3.0], metrics_collections=["my_metrics"], updates_collections=["my_updates"]
    )
    assert tf.get_collection("my_metrics") == [value]
    assert tf.get_collection("my_updates") == [update_op]
    with pytest.raises(ValueError, match="curve"):
        tf.metrics.auc([1], [0.5], curve="DET")
