"""Gradient clipping against NumPy: by value, by norm, by global norm; sparse stays sparse."""

import numpy as np
import pytest

import nbflow as tf


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_clip_by_value():
    out = _run(tf.clip_by_value(tf.constant([-3.0, 0.5, 7.0]), -1.0, 2.0))
    np.testing.assert_allclose(out, [-1.0, 0.5, 2.0])


@pytest.mark.parametrize("clip, axes", [(1.0, None), (100.0, None), (1.0, [1])])
def test_clip_by_norm(clip, axes, rng):
    x = rng.standard_normal((3, 4)) * 3
    out = _run(tf.clip_by_norm(tf.constant(x), clip, axes=axes))
    norm = np.sqrt((x**2).sum(axis=None if axes is None else tuple(axes), keepdims=True))
    np.testing.assert_allclose(out, x * clip / np.maximum(norm, clip))


def test_clip_by_norm_of_zeros_has_finite_gradient():
    x = tf.zeros([3])
    (g,) = tf.gradients(tf.reduce_sum(tf.clip_by_norm(x, 1.0)), x)
    assert np.all(np.isfinite(_run(g)))


def test_global_norm_and_clip_by_global_norm(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal(4)
    norm = np.sqrt((a**2).sum() + (b**2).sum())
    clipped, got_norm = tf.clip_by_global_norm([tf.constant(a), None, tf.constant(b)], 1.0)
    assert clipped[1] is None
    ca, cb, n, gn = _run([clipped[0], clipped[2], got_norm, tf.global_norm([a, b])])
    assert n == pytest.approx(norm) and gn == pytest.approx(norm)
    np.testing.assert_allclose(ca, a / norm)
    np.testing.assert_allclose(cb, b / norm)


def test_clipping_indexed_slices_keeps_them_sparse():
    slices = tf.IndexedSlices(tf.constant([[3.0, 4.0]]), tf.constant([2]), tf.constant([5, 2]))
    clipped = tf.clip_by_norm(slices, 1.0)
    assert isinstance(clipped, tf.IndexedSlices)
    (by_global,), _ = tf.clip_by_global_norm([slices], 1.0)
    assert isinstance(by_global, tf.IndexedSlices)
    np.testing.assert_allclose(_run(clipped).values, [[0.6, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(_run(by_global).values, [[0.6, 0.8]], rtol=1e-6)
