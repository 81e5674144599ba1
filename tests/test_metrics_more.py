"""The remaining tf.metrics against NumPy re-implementations of TensorFlow's definitions, over
two streamed batches."""

import numpy as np
import pytest

import nbflow as tf

RNG = np.random.default_rng(0)


def _stream(metric_fn, batches):
    """Feed each batch (a dict placeholder name -> value) to the update op; return the update
    results and the final value."""
    placeholders = {
        key: tf.placeholder(tf.as_dtype(np.asarray(v).dtype), np.shape(v))
        for key, v in batches[0].items()
    }
    value, update = metric_fn(**placeholders)
    updates = []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for batch in batches:
            updates.append(sess.run(update, {placeholders[k]: v for k, v in batch.items()}))
        return updates, sess.run(value)


def _concat(batches, key):
    return np.concatenate([b[key] for b in batches])


def test_mean_iou_and_per_class_accuracy():
    batches = [
        {"labels": RNG.integers(0, 4, 12), "predictions": RNG.integers(0, 4, 12)} for _ in range(2)
    ]
    labels, predictions = _concat(batches, "labels"), _concat(batches, "predictions")
    cm = np.zeros((5, 5))
    np.add.at(cm, (labels, predictions), 1)  # class 4 never appears
    union = cm.sum(0) + cm.sum(1) - np.diag(cm)
    expected_iou = np.mean(np.diag(cm)[union > 0] / union[union > 0])
    _, iou = _stream(lambda **kw: tf.metrics.mean_iou(num_classes=5, **kw), batches)
    assert iou == pytest.approx(expected_iou)
    per_class = [
        np.mean(predictions[labels == c] == c) if (labels == c).any() else 0 for c in range(5)
    ]
    _, accuracy = _stream(
        lambda **kw: tf.metrics.mean_per_class_accuracy(num_classes=5, **kw), batches
    )
    assert accuracy == pytest.approx(np.mean(per_class), rel=1e-6)


def test_counts_and_rates_at_thresholds():
    thresholds = [0.2, 0.5, 0.8]
    batches = [
        {"labels": RNG.random(20) < 0.5, "predictions": RNG.random(20).astype(np.float32)}
        for _ in range(2)
    ]
    labels, predictions = _concat(batches, "labels"), _concat(batches, "predictions")
    positive = predictions[None, :] > np.array(thresholds)[:, None]
    tp = (positive & labels).sum(1)
    fp = (positive & ~labels).sum(1)
    fn = (~positive & labels).sum(1)
    tn = (~positive & ~labels).sum(1)
    for fn_name, expected in [
        ("true_positives_at_thresholds", tp),
        ("false_positives_at_thresholds", fp),
        ("true_negatives_at_thresholds", tn),
        ("false_negatives_at_thresholds", fn),
        ("precision_at_thresholds", tp / (tp + fp + 1e-7)),
        ("recall_at_thresholds", tp / (tp + fn + 1e-7)),
    ]:
        tf.reset_default_graph()
        metric = getattr(tf.metrics, fn_name)
        _, got = _stream(lambda **kw: metric(thresholds=thresholds, **kw), batches)  # noqa: B023
        np.testing.assert_allclose(got, expected, rtol=1e-5, err_msg=fn_name)


def _numpy_rates(labels, predictions, num_thresholds=200):
    eps = 1e-7
    thresholds = (
        [-eps] + [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)] + [1 + eps]
    )
    positive = predictions[None, :] > np.array(thresholds)[:, None]
    tp = (positive & labels).sum(1).astype(float)
    fp = (positive & ~labels).sum(1)
    fn = (~positive & labels).sum(1)
    tn = (~positive & ~labels).sum(1).astype(float)
    return tp, fp, fn, tn


def test_sensitivity_at_specificity_and_back():
    batches = [
        {"labels": RNG.random(30) < 0.4, "predictions": RNG.random(30).astype(np.float32)}
        for _ in range(2)
    ]
    labels, predictions = _concat(batches, "labels"), _concat(batches, "predictions")
    tp, fp, fn, tn = _numpy_rates(labels, predictions)
    spec = tn / (tn + fp + 1e-7)
    i = np.argmin(np.abs(spec - 0.7))
    _, got = _stream(
        lambda **kw: tf.metrics.sensitivity_at_specificity(specificity=0.7, **kw), batches
    )
    assert got == pytest.approx(tp[i] / (tp[i] + fn[i] + 1e-7), rel=1e-5)
    tf.reset_default_graph()
    sens = tp / (tp + fn + 1e-7)
    gap = np.abs(sens - 0.6)
    j = np.nonzero(gap == gap.min())[0][-1]
    _, got = _stream(
        lambda **kw: tf.metrics.specificity_at_sensitivity(sensitivity=0.6, **kw), batches
    )
    assert got == pytest.approx(tn[j] / (tn[j] + fp[j] + 1e-7), rel=1e-5)
    with pytest.raises(ValueError, match="range"):
        tf.metrics.sensitivity_at_specificity([True], [0.5], specificity=1.5)


def test_precision_recall_and_average_precision_at_k():
    scores = [RNG.random((6, 5)).astype(np.float32) for _ in range(2)]
    labels = [RNG.integers(-1, 5, (6, 2)) for _ in range(2)]  # -1: padding, ignored
    batches = [{"labels": l, "predictions": s} for l, s in zip(labels, scores)]
    all_scores, all_labels = np.concatenate(scores), np.concatenate(labels)
    k = 2
    top = np.argsort(-all_scores, axis=1, kind="stable")[:, :k]
    tp = fp = fn = 0
    ap = []
    for row, lab in zip(top, all_labels):
        valid = [x for x in lab if x >= 0]
        hits = [p in valid for p in row]
        tp += sum(hits)
        fp += k - sum(hits)
        fn += sum(x not in row for x in valid)
        precisions = np.cumsum(hits) / np.arange(1, k + 1)
        n = min(len(valid), k)
        ap.append((precisions * hits).sum() / n if n else 0.0)
    _, precision = _stream(lambda **kw: tf.metrics.precision_at_k(k=k, **kw), batches)
    tf.reset_default_graph()
    _, recall = _stream(lambda **kw: tf.metrics.recall_at_k(k=k, **kw), batches)
    tf.reset_default_graph()
    _, average = _stream(lambda **kw: tf.metrics.average_precision_at_k(k=k, **kw), batches)
    assert precision == pytest.approx(tp / (tp + fp))
    assert recall == pytest.approx(tp / (tp + fn))
    assert average == pytest.approx(np.mean(ap))
    tf.reset_default_graph()
    _, class_recall = _stream(lambda **kw: tf.metrics.recall_at_k(k=k, class_id=3, **kw), batches)
    has = (all_labels == 3).any(1)
    predicted = (top == 3).any(1)
    assert class_recall == pytest.approx((has & predicted).sum() / has.sum())


def test_simple_means():
    a = RNG.standard_normal((2, 8, 3)).astype(np.float32)
    b = RNG.standard_normal((2, 8, 3)).astype(np.float32)
    batches = [{"labels": a[i], "predictions": b[i]} for i in range(2)]
    _, cosine = _stream(lambda **kw: tf.metrics.mean_cosine_distance(dim=1, **kw), batches)
    assert cosine == pytest.approx(1 - np.mean((a * b).sum(-1)), rel=1e-5)
    tf.reset_default_graph()
    normalizer = np.abs(a) + 0.5
    normalizer[0, 0, 0] = 0.0
    batches = [{"labels": a[i], "predictions": b[i], "normalizer": normalizer[i]} for i in range(2)]
    _, relative = _stream(tf.metrics.mean_relative_error, batches)
    expected = np.where(
        normalizer == 0, 0, np.abs(a - b) / np.where(normalizer == 0, 1, normalizer)
    )
    assert relative == pytest.approx(expected.mean(), rel=1e-5)
    tf.reset_default_graph()
    _, below = _stream(
        lambda **kw: tf.metrics.percentage_below(threshold=0.3, **kw),
        [{"values": a[0]}, {"values": a[1]}],
    )
    assert below == pytest.approx(np.mean(a < 0.3))
    tf.reset_default_graph()
    _, elementwise = _stream(tf.metrics.mean_tensor, [{"values": a[0]}, {"values": a[1]}])
    np.testing.assert_allclose(elementwise, a.mean(0), rtol=1e-6)


def test_precision_at_top_k_takes_ids():
    ids = np.array([[0, 3], [2, 1]], np.int64)
    labels = np.array([[3, -1], [4, 2]], np.int64)
    batches = [{"labels": labels, "predictions_idx": ids}]
    _, precision = _stream(tf.metrics.precision_at_top_k, batches)
    assert precision == pytest.approx(2 / 4)
    tf.reset_default_graph()
    _, recall = _stream(tf.metrics.recall_at_top_k, batches)
    assert recall == pytest.approx(2 / 3)
