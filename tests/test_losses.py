"""tf.losses against NumPy: per-element losses, weights, every Reduction, the collections."""

import numpy as np
import pytest

import nbflow as tf

Reduction = tf.losses.Reduction
N, D = 6, 4


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def _np_reduce(losses, weights, reduction):
    weights = np.broadcast_to(np.asarray(weights, np.float64), losses.shape)
    weighted = losses * weights
    total = weighted.sum()
    counts = {
        Reduction.SUM: 1.0,
        Reduction.MEAN: weights.sum(),
        Reduction.SUM_BY_NONZERO_WEIGHTS: float((weights != 0).sum()),
        Reduction.SUM_OVER_BATCH_SIZE: float(losses.size),
    }
    if reduction == Reduction.NONE:
        return weighted
    return total / counts[reduction] if counts[reduction] else 0.0


def _log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def _sigmoid_xent(z, x):
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


@pytest.fixture
def data(rng):
    labels = rng.integers(0, 2, size=(N, D)).astype(np.float32)
    predictions = rng.uniform(0.05, 0.95, size=(N, D)).astype(np.float32)
    logits = rng.normal(0, 2, size=(N, D)).astype(np.float32)
    return labels, predictions, logits


# Each case: (tf.losses call on (labels, predictions, logits, weights, reduction), NumPy losses).
CASES = {
    "mean_squared_error": (
        lambda l, p, x, **kw: tf.losses.mean_squared_error(l, p, **kw),
        lambda l, p, x: (p - l) ** 2,
    ),
    "absolute_difference": (
        lambda l, p, x, **kw: tf.losses.absolute_difference(l, p, **kw),
        lambda l, p, x: np.abs(p - l),
    ),
    "huber_loss": (
        lambda l, p, x, **kw: tf.losses.huber_loss(l, x, delta=1.5, **kw),
        lambda l, p, x: np.where(
            np.abs(x - l) <= 1.5, 0.5 * (x - l) ** 2, 1.5 * (np.abs(x - l) - 0.75)
        ),
    ),
    "log_loss": (
        lambda l, p, x, **kw: tf.losses.log_loss(l, p, **kw),
        lambda l, p, x: -l * np.log(p + 1e-7) - (1 - l) * np.log(1 - p + 1e-7),
    ),
    "hinge_loss": (
        lambda l, p, x, **kw: tf.losses.hinge_loss(l, x, **kw),
        lambda l, p, x: np.maximum(0, 1 - (2 * l - 1) * x),
    ),
    "sigmoid_cross_entropy": (
        lambda l, p, x, **kw: tf.losses.sigmoid_cross_entropy(l, x, **kw),
        lambda l, p, x: _sigmoid_xent(l, x),
    ),
    "sigmoid_cross_entropy_smoothed": (
        lambda l, p, x, **kw: tf.losses.sigmoid_cross_entropy(l, x, label_smoothing=0.2, **kw),
        lambda l, p, x: _sigmoid_xent(l * 0.8 + 0.1, x),
    ),
}
WEIGHTS = {
    "scalar": 2.0,
    "rows": np.array([[1.0], [0.0], [2.0], [0.5], [0.0], [3.0]], np.float32),
    "elements": np.where(np.arange(N * D).reshape(N, D) % 3 == 0, 0.0, 1.5).astype(np.float32),
}
REDUCTIONS = [
    Reduction.SUM_BY_NONZERO_WEIGHTS,
    Reduction.MEAN,
    Reduction.SUM,
    Reduction.SUM_OVER_BATCH_SIZE,
    Reduction.NONE,
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weights", WEIGHTS, ids=str)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_elementwise_losses_match_numpy(data, case, weights, reduction):
    build, reference = CASES[case]
    labels, predictions, logits = data
    loss = build(labels, predictions, logits, weights=WEIGHTS[weights], reduction=reduction)
    expected = _np_reduce(
        reference(*(a.astype(np.float64) for a in data)), WEIGHTS[weights], reduction
    )
    np.testing.assert_allclose(_run(loss), expected, rtol=2e-5, atol=1e-6)
    assert tf.losses.get_losses() == [loss]


def test_default_reduction_is_sum_by_nonzero_weights():
    loss = tf.losses.compute_weighted_loss([[1.0, 2.0], [3.0, 4.0]], weights=[[0.0], [2.0]])
    assert _run(loss) == pytest.approx((6 + 8) / 2)
    assert loss.op.name == "weighted_loss/value"


@pytest.mark.parametrize("reduction", REDUCTIONS[:4])
def test_all_zero_weights_give_zero_not_nan(reduction):
    loss = tf.losses.mean_squared_error([1.0, 2.0], [3.0, 5.0], weights=0.0, reduction=reduction)
    assert _run(loss) == 0.0


def test_softmax_cross_entropy_with_label_smoothing_matches_numpy(rng):
    onehot = np.eye(D, dtype=np.float32)[rng.integers(0, D, N)]
    logits = rng.normal(size=(N, D)).astype(np.float32)
    weights = rng.uniform(size=N).astype(np.float32)
    plain = tf.losses.softmax_cross_entropy(onehot, logits, weights=weights)
    smooth = tf.losses.softmax_cross_entropy(onehot, logits, label_smoothing=0.1)
    per_row = -(onehot * _log_softmax(logits)).sum(-1)
    smoothed = onehot * 0.9 + 0.1 / D
    got_plain, got_smooth = _run([plain, smooth])
    assert got_plain == pytest.approx((per_row * weights).sum() / N, rel=1e-5)
    assert got_smooth == pytest.approx(-(smoothed * _log_softmax(logits)).sum(-1).mean(), rel=1e-5)


@pytest.mark.parametrize("label_shape", [(N,), (N, 1)])
def test_sparse_softmax_cross_entropy_squeezes_labels_and_weights(rng, label_shape):
    classes = rng.integers(0, D, N)
    logits = rng.normal(size=(N, D)).astype(np.float32)
    weights = np.array([1, 0, 2, 1, 0, 1], np.float32).reshape(label_shape)
    loss = tf.losses.sparse_softmax_cross_entropy(
        classes.reshape(label_shape), logits, weights=weights
    )
    per_row = -_log_softmax(logits)[np.arange(N), classes]
    assert _run(loss) == pytest.approx((per_row * weights.ravel()).sum() / 4, rel=1e-5)


def test_cosine_distance_is_one_minus_dot_product(rng):
    a = rng.normal(size=(N, D))
    b = rng.normal(size=(N, D))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    loss = tf.losses.cosine_distance(a.astype(np.float32), b.astype(np.float32), axis=1)
    assert _run(loss) == pytest.approx(np.mean(1 - (a * b).sum(1)), rel=1e-5)


def test_losses_keep_the_input_dtype_after_reducing_in_float32():
    loss = tf.losses.compute_weighted_loss(np.array([1.0, 2.0]), reduction=Reduction.SUM)
    assert loss.dtype == tf.float64 and _run(loss) == 3.0


def test_loss_collection_and_total_loss_with_regularization():
    with tf.variable_scope("net"):
        w = tf.get_variable(
            "w", initializer=tf.constant([1.0, 2.0]), regularizer=lambda v: tf.reduce_sum(v * v)
        )
    first = tf.losses.absolute_difference([0.0, 0.0], w)
    tf.losses.mean_squared_error([0.0], [3.0], loss_collection=None)
    tf.losses.add_loss(tf.constant(10.0))
    losses = tf.losses.get_losses()
    assert len(losses) == 2 and losses[0] is first  # loss_collection=None stays out
    assert tf.losses.get_losses(scope="absolute_difference") == [first]
    assert len(tf.losses.get_regularization_losses()) == 1
    total, no_reg = tf.losses.get_total_loss(), tf.losses.get_total_loss(False)
    reg = tf.losses.get_regularization_loss()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([total, no_reg, reg])
    assert got == pytest.approx([1.5 + 10 + 5, 11.5, 5.0])
    assert total.op.name == "total_loss"


def test_regularization_loss_is_zero_without_regularizers_and_total_loss_needs_losses():
    assert _run(tf.losses.get_regularization_loss()) == 0.0
    with pytest.raises(ValueError, match="No losses"):
        tf.losses.get_total_loss()


def test_invalid_reduction_and_unbroadcastable_weights_raise():
    with pytest.raises(ValueError, match="Invalid Reduction"):
        tf.losses.compute_weighted_loss([1.0], reduction="mean")
    with pytest.raises(ValueError, match="broadcast"):
        tf.losses.compute_weighted_loss(np.ones((3, 2)), weights=np.ones((2, 3)))
    with pytest.raises(ValueError, match="broadcast"):
        tf.losses.compute_weighted_loss(np.ones((3, 2)), weights=np.ones(3))
    with pytest.raises(ValueError, match="labels"):
        tf.losses.mean_squared_error(None, [1.0])


def test_losses_are_differentiable_through_the_reduction(rng):
    logits = tf.Variable(rng.normal(size=(N, D)).astype(np.float32))
    loss = tf.losses.sparse_softmax_cross_entropy(rng.integers(0, D, N), logits)
    (grad,) = tf.gradients(loss, [logits])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, value = sess.run([grad, logits])
    probabilities = np.exp(_log_softmax(value))
    assert np.abs(got).sum() > 0 and np.allclose(got.sum(1), 0, atol=1e-6)
    assert np.all(got <= probabilities / N + 1e-6)
