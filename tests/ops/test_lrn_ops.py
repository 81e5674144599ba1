"""Local response normalization against a NumPy loop, and its gradient against float64 finite
differences (the registry-wide tests also check LRN's samples)."""

import numpy as np
import pytest

import nbflow as tf
from tests.gradient_check import check_op_gradient
from nbflow.framework.op_def import registered_ops


def _numpy_lrn(x, radius, bias, alpha, beta):
    out = np.empty_like(x)
    depth = x.shape[-1]
    for d in range(depth):
        window = x[..., max(0, d - radius) : min(depth, d + radius + 1)]
        out[..., d] = x[..., d] / (bias + alpha * (window**2).sum(-1)) ** beta
    return out


@pytest.mark.parametrize("radius,bias,alpha,beta", [(5, 1.0, 1.0, 0.5), (1, 2.0, 1e-4, 0.75)])
def test_lrn_matches_numpy(radius, bias, alpha, beta):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 9)).astype(np.float32)
    out = tf.nn.lrn(x, radius, bias, alpha, beta)
    assert out.shape.as_list() == [2, 3, 4, 9]
    np.testing.assert_allclose(
        tf.Session().run(out),
        _numpy_lrn(x.astype(np.float64), radius, bias, alpha, beta),
        rtol=1e-5,
    )


def test_lrn_gradient_matches_finite_differences():
    for sample in registered_ops()["LRN"].samples:
        check_op_gradient(sample)


def test_lrn_gradient_through_tf_gradients():
    x = tf.constant(np.random.default_rng(2).standard_normal((1, 2, 2, 6)))
    y = tf.nn.local_response_normalization(x, depth_radius=2, alpha=0.5, beta=0.75)
    (grad,) = tf.gradients(tf.reduce_sum(y * y), [x])
    value, dx = tf.Session().run([x, grad])
    eps, numeric = 1e-6, np.zeros_like(value)
    for index in np.ndindex(value.shape):
        up, down = value.copy(), value.copy()
        up[index] += eps
        down[index] -= eps
        f = lambda v: (_numpy_lrn(v, 2, 1.0, 0.5, 0.75) ** 2).sum()  # noqa: E731
        numeric[index] = (f(up) - f(down)) / (2 * eps)
    np.testing.assert_allclose(dx, numeric, rtol=1e-5, atol=1e-7)


def test_random_crop_takes_a_window_of_the_input():
    value = np.arange(5 * 6 * 3).reshape(5, 6, 3)
    crop = tf.random_crop(value, [2, 3, 3], seed=7)
    with tf.Session() as sess:
        crops = [sess.run(crop) for _ in range(20)]
    offsets = set()
    for c in crops:
        assert c.shape == (2, 3, 3)
        y, x = divmod(int(c[0, 0, 0]) // 3, 6)
        np.testing.assert_array_equal(c, value[y : y + 2, x : x + 3])
        offsets.add((y, x))
    assert len(offsets) > 3  # it moves
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(tf.image.random_crop(value, [6, 1, 1]))
