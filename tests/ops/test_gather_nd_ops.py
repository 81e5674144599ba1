"""gather_nd, scatter_nd, segment_sum, reverse_sequence and sequence_mask against NumPy,
with their static shapes, gradients and run-time errors."""

import numpy as np
import pytest

import nbflow as tf


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


# --- gather_nd / scatter_nd -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "params_shape, indices",
    [
        ((3, 4), [[0, 1], [2, 3]]),
        ((3, 4), [[2], [0]]),
        ((2, 3, 4), [[[1, 2]], [[0, 0]]]),
        ((2, 3), [1, 2]),
        ((4, 2), np.zeros((0, 1), np.int32)),
    ],
)
def test_gather_nd_matches_numpy_indexing(rng, params_shape, indices):
    params = rng.standard_normal(params_shape)
    indices = np.asarray(indices, np.int32)
    y = tf.gather_nd(params, indices)
    expected = params[tuple(np.moveaxis(indices, -1, 0))]
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_array_equal(run(y), expected)


def test_gather_nd_with_empty_coordinates_repeats_params():
    params = np.arange(6).reshape(2, 3)
    got = run(tf.gather_nd(params, np.zeros((2, 0), np.int32)))
    np.testing.assert_array_equal(got, np.stack([params, params]))


def test_gather_nd_out_of_range_index_raises_invalid_argument_naming_the_node():
    indices = tf.placeholder(tf.int32, [None, 2])
    y = tf.gather_nd(tf.zeros([3, 4]), indices, name="pick")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"does not index.*node pick") as info:
        run(y, {indices: [[0, 0], [3, 1]]})
    assert "indices[1] = [3, 1]" in str(info.value)
    assert "[3, 4]" in str(info.value)


def test_gather_nd_index_deeper_than_params_raises_at_construction():
    with pytest.raises(ValueError, match="must be <= params.rank"):
        tf.gather_nd(tf.zeros([3]), [[0, 1]])


def test_scatter_nd_adds_duplicates_like_numpy_add_at(rng):
    indices = np.array([[0, 1], [2, 0], [0, 1]], np.int64)
    updates = rng.standard_normal((3, 5))
    y = tf.scatter_nd(indices, updates, [3, 2, 5])
    expected = np.zeros((3, 2, 5))
    np.add.at(expected, tuple(indices.T), updates)
    assert y.shape.as_list() == [3, 2, 5]
    np.testing.assert_allclose(run(y), expected)


def test_scatter_nd_out_of_range_raises_invalid_argument():
    indices = tf.placeholder(tf.int32, [None, 1])
    y = tf.scatter_nd(indices, [1.0, 2.0], [4], name="spread")
    with pytest.raises(tf.errors.InvalidArgumentError, match="spread"):
        run(y, {indices: [[1], [-1]]})


def test_scatter_nd_with_mismatched_updates_raises_at_construction():
    with pytest.raises(ValueError, match="updates.shape"):
        tf.scatter_nd([[0], [1]], tf.zeros([3]), [4])


def test_gather_nd_gradient_scatters_and_adds_repeated_coordinates():
    params = tf.constant(np.arange(6.0).reshape(2, 3))
    y = tf.gather_nd(params, [[1, 2], [0, 0], [1, 2]])
    (g,) = tf.gradients(tf.reduce_sum(y * tf.constant([1.0, 2.0, 3.0], tf.float64)), [params])
    np.testing.assert_array_equal(run(tf.convert_to_tensor(g)), [[2.0, 0, 0], [0, 0, 4.0]])


# --- segment_sum ----------------------------------------------------------------------------------
def test_segment_sum_matches_numpy_and_leaves_gaps_zero(rng):
    data = rng.standard_normal((5, 2))
    ids = np.array([0, 0, 2, 3, 3])
    y = tf.segment_sum(data, ids)
    expected = np.zeros((4, 2))
    np.add.at(expected, ids, data)
    assert y.shape.as_list() == [4, 2]
    np.testing.assert_allclose(run(y), expected)


def test_segment_sum_of_unsorted_ids_raises_invalid_argument():
    ids = tf.placeholder(tf.int32, [3])
    y = tf.segment_sum([1.0, 2.0, 3.0], ids, name="seg")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"not increasing.*seg"):
        run(y, {ids: [0, 2, 1]})


def test_unsorted_segment_sum_is_exported():
    got = run(tf.unsorted_segment_sum([1, 2, 3], [1, 0, 1], 2))
    assert got.tolist() == [2, 4]


# --- reverse_sequence / sequence_mask -------------------------------------------------------------
def numpy_reverse_sequence(x, lengths, seq_axis, batch_axis):
    out = x.copy()
    for b, n in enumerate(lengths):
        src = [slice(None)] * x.ndim
        src[batch_axis], src[seq_axis] = b, slice(0, n)
        dst = list(src)
        out[tuple(dst)] = np.flip(x[tuple(src)], axis=seq_axis - (batch_axis < seq_axis))
    return out


@pytest.mark.parametrize("seq_axis, batch_axis", [(1, 0), (0, 1), (2, 0)])
def test_reverse_sequence_matches_numpy(rng, seq_axis, batch_axis):
    x = rng.standard_normal((3, 4, 5))
    lengths = rng.integers(0, x.shape[seq_axis] + 1, x.shape[batch_axis])
    y = tf.reverse_sequence(x, lengths, seq_axis=seq_axis, batch_axis=batch_axis)
    assert y.shape.as_list() == [3, 4, 5]
    expected = numpy_reverse_sequence(x, lengths, seq_axis, batch_axis)
    np.testing.assert_array_equal(run(y), expected)


def test_reverse_sequence_accepts_tf1_seq_dim_names():
    got = run(tf.reverse_sequence([[1, 2, 3], [4, 5, 6]], [2, 3], seq_dim=1, batch_dim=0))
    assert got.tolist() == [[2, 1, 3], [6, 5, 4]]


def test_reverse_sequence_with_too_long_length_raises_invalid_argument():
    lengths = tf.placeholder(tf.int32, [2])
    y = tf.reverse_sequence(tf.zeros([2, 3]), lengths, 1, 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="seq_lengths"):
        run(y, {lengths: [1, 4]})


def test_reverse_sequence_gradient_reverses_the_upstream_gradient():
    x = tf.constant(np.arange(6.0).reshape(2, 3))
    y = tf.reverse_sequence(x, [2, 3], 1, 0)
    weights = tf.constant(np.arange(6.0).reshape(2, 3) + 1)
    (g,) = tf.gradients(tf.reduce_sum(y * weights), [x])
    np.testing.assert_array_equal(run(g), [[2, 1, 3], [6, 5, 4]])


def test_sequence_mask_matches_numpy_and_has_static_width():
    lengths = np.array([[1, 3], [0, 2]])
    y = tf.sequence_mask(lengths, 4)
    assert y.shape.as_list() == [2, 2, 4]
    np.testing.assert_array_equal(run(y), np.arange(4) < lengths[..., None])


def test_sequence_mask_defaults_to_longest_length_and_casts():
    y = tf.sequence_mask(tf.constant([2, 0, 3]), dtype=tf.float32)
    assert y.dtype == tf.float32
    np.testing.assert_array_equal(run(y), [[1, 1, 0], [0, 0, 0], [1, 1, 1]])
