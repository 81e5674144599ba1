"""sort, argsort, unique, bincount and histogram_fixed_width against NumPy."""

import numpy as np
import pytest

import nbflow as tf


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
def test_sort_and_argsort_match_numpy_stable_sort(rng, axis, direction):
    x = rng.integers(0, 4, (5, 6)).astype(np.float32)  # many ties: checks stability
    values, indices = run([tf.sort(x, axis, direction), tf.argsort(x, axis, direction)])
    key = x if direction == "ASCENDING" else -x
    expected = np.argsort(key, axis=axis, kind="stable")
    np.testing.assert_array_equal(indices, expected)
    assert indices.dtype == np.int32
    np.testing.assert_array_equal(values, np.take_along_axis(x, expected, axis))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float64])
def test_sort_keeps_dtype(rng, dtype):
    x = rng.integers(0, 100, 10).astype(dtype)
    y = tf.sort(x)
    assert y.dtype == tf.as_dtype(dtype) and y.shape.as_list() == [10]
    np.testing.assert_array_equal(run(y), np.sort(x))


def test_sort_of_unknown_length_runs():
    x = tf.placeholder(tf.float32, [None])
    np.testing.assert_array_equal(run(tf.sort(x), {x: [3.0, 1.0, 2.0]}), [1.0, 2.0, 3.0])


def test_sort_rejects_bad_direction_and_scalars():
    with pytest.raises(ValueError, match="direction"):
        tf.sort([1, 2], direction="UP")
    with pytest.raises(ValueError, match="rank >= 1"):
        tf.sort(3.0)


def test_sort_gradient_routes_to_the_sorted_positions():
    x = tf.constant([3.0, 1.0, 2.0])
    y = tf.sort(x)
    (g,) = tf.gradients(tf.reduce_sum(y * tf.constant([1.0, 10.0, 100.0])), [x])
    np.testing.assert_array_equal(run(g), [100.0, 1.0, 10.0])


@pytest.mark.parametrize(
    "values", [[1, 1, 2, 4, 4, 4, 7, 8, 8], [5, -1, 5, 0], [], [3.5, 3.5, -2.0]]
)
def test_unique_keeps_first_appearance_order(values):
    x = np.asarray(values, np.float32 if any(isinstance(v, float) for v in values) else np.int32)
    y, idx = tf.unique(x)
    got_y, got_idx = run([y, idx])
    _, first = np.unique(x, return_index=True)
    np.testing.assert_array_equal(got_y, x[np.sort(first)])
    np.testing.assert_array_equal(got_y[got_idx], x)
    assert got_idx.dtype == np.int32


def test_unique_with_int64_indices():
    _, idx = tf.unique([7, 7, 1], out_idx=tf.int64)
    assert idx.dtype == tf.int64
    assert run(idx).tolist() == [0, 0, 1]


def test_bincount_matches_numpy(rng):
    arr = rng.integers(0, 6, 20).astype(np.int32)
    weights = rng.standard_normal(20).astype(np.float32)
    counts, summed = run([tf.bincount(arr), tf.bincount(arr, weights=weights)])
    np.testing.assert_array_equal(counts, np.bincount(arr))
    assert counts.dtype == np.int32
    np.testing.assert_allclose(summed, np.bincount(arr, weights), rtol=1e-5)


def test_bincount_minlength_maxlength_and_empty_input():
    assert run(tf.bincount([1, 5], minlength=8)).tolist() == [0, 1, 0, 0, 0, 1, 0, 0]
    assert run(tf.bincount([1, 5, 2], maxlength=3)).tolist() == [0, 1, 1]
    assert run(tf.bincount(np.zeros(0, np.int32), minlength=2, dtype=tf.float32)).tolist() == [
        0.0,
        0.0,
    ]


def test_bincount_of_negative_values_raises_invalid_argument():
    arr = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        run(tf.bincount(arr, minlength=3), {arr: [1, -2]})


def test_histogram_fixed_width_matches_numpy_histogram_with_clipping(rng):
    values = rng.uniform(-1.0, 6.0, 100)
    got = run(tf.histogram_fixed_width(values, [0.0, 5.0], nbins=5))
    clipped = np.clip(values, 0.0, 5.0 - 1e-9)
    expected, _ = np.histogram(clipped, bins=5, range=(0.0, 5.0))
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.int32


def test_histogram_fixed_width_rejects_empty_range():
    with pytest.raises(tf.errors.InvalidArgumentError, match="value_range"):
        run(tf.histogram_fixed_width([1.0], [2.0, 2.0], nbins=3))
