"""Cumulative sums and products against NumPy: axes, exclusive, reverse, gradients."""

import numpy as np
import pytest

import nbflow as tf


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def numpy_cumulative(fn, x, axis, exclusive, reverse, identity):
    if reverse:
        x = np.flip(x, axis)
    out = fn(x, axis=axis)
    if exclusive:
        out = np.concatenate(
            [np.full_like(np.take(out, [0], axis), identity), np.delete(out, -1, axis)], axis
        )
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_and_cumprod_match_numpy(rng, axis, exclusive, reverse):
    x = rng.standard_normal((3, 4))
    got_sum, got_prod = run(
        [
            tf.cumsum(x, axis, exclusive=exclusive, reverse=reverse),
            tf.cumprod(x, axis, exclusive=exclusive, reverse=reverse),
        ]
    )
    np.testing.assert_allclose(got_sum, numpy_cumulative(np.cumsum, x, axis, exclusive, reverse, 0))
    np.testing.assert_allclose(
        got_prod, numpy_cumulative(np.cumprod, x, axis, exclusive, reverse, 1)
    )


def test_cumsum_keeps_integer_dtype_and_static_shape():
    y = tf.cumsum(tf.constant([[1, 2, 3]], tf.int32), axis=1, exclusive=True)
    assert y.dtype == tf.int32 and y.shape.as_list() == [1, 3]
    got = run(y)
    assert got.dtype == np.int32
    assert got.tolist() == [[0, 1, 3]]


def test_cumsum_of_empty_axis_is_empty():
    assert run(tf.cumsum(tf.zeros([0, 2]), 0, exclusive=True)).shape == (0, 2)


def test_cumsum_axis_out_of_range_raises_at_construction():
    with pytest.raises(ValueError, match="out of range"):
        tf.cumsum(tf.zeros([2, 3]), axis=2)


def test_cumprod_gradient_through_a_loss(rng):
    x = rng.uniform(0.5, 2.0, (2, 3))
    xt = tf.constant(x)
    (g,) = tf.gradients(tf.reduce_sum(tf.cumprod(xt, 1, reverse=True)), [xt])
    # d/dx_ij sum_k prod_{l>=k} x_il = sum_{k<=j} prod_{l>=k, l!=j} x_il
    expected = np.zeros_like(x)
    for i in range(2):
        for j in range(3):
            for k in range(j + 1):
                expected[i, j] += np.prod([x[i, l] for l in range(k, 3) if l != j])
    np.testing.assert_allclose(run(g), expected)
