"""tf.fft/ifft (1-3 D) against numpy.fft, and their gradients against float64 finite differences
of a real loss of the real and imaginary parts."""

import numpy as np
import pytest

import nbflow as tf

CASES = [
    (tf.fft, np.fft.fftn, 1),
    (tf.ifft, np.fft.ifftn, 1),
    (tf.fft2d, np.fft.fftn, 2),
    (tf.ifft2d, np.fft.ifftn, 2),
    (tf.fft3d, np.fft.fftn, 3),
    (tf.ifft3d, np.fft.ifftn, 3),
]


@pytest.mark.parametrize("op, reference, rank", CASES)
def test_transforms_match_numpy(op, reference, rank, rng):
    shape = (2,) + (3, 4, 2)[:rank]
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    y = op(tf.constant(x))
    assert y.dtype == tf.complex64 and y.shape.as_list() == list(shape)
    expected = reference(x, axes=tuple(range(-rank, 0)))
    np.testing.assert_allclose(tf.Session().run(y), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op, reference, rank", CASES)
def test_gradients_match_finite_differences(op, reference, rank, rng):
    shape = (3, 2, 2)[:rank]
    xr, xi = rng.standard_normal(shape), rng.standard_normal(shape)
    a, b = rng.standard_normal(shape), rng.standard_normal(shape)
    axes = tuple(range(-rank, 0))

    def loss(re, im):
        y = reference(re + 1j * im, axes=axes)
        return np.sum(y.real * a + y.imag * b)

    pr, pi = tf.placeholder(tf.float64, shape), tf.placeholder(tf.float64, shape)
    y = op(tf.complex(pr, pi))
    graph_loss = tf.reduce_sum(tf.real(y) * a + tf.imag(y) * b)
    gr, gi = tf.gradients(graph_loss, [pr, pi])
    got_r, got_i = tf.Session().run([gr, gi], {pr: xr, pi: xi})
    eps = 1e-6
    for got, which in ((got_r, 0), (got_i, 1)):
        numeric = np.zeros(shape)
        for idx in np.ndindex(*shape):
            d = np.zeros(shape)
            d[idx] = eps
            args_plus = (xr + d, xi) if which == 0 else (xr, xi + d)
            args_minus = (xr - d, xi) if which == 0 else (xr, xi - d)
            numeric[idx] = (loss(*args_plus) - loss(*args_minus)) / (2 * eps)
        np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)


def test_fft_refuses_real_input_and_too_few_dimensions():
    with pytest.raises(TypeError, match="complex"):
        tf.fft(tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        tf.fft2d(tf.constant(np.zeros(3, np.complex64)))
    assert tf.spectral.fft is tf.fft
