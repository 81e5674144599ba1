"""TF 1.15's remaining tf.sparse names (nbflow/sparse_tf1_names.py) against dense NumPy."""

import numpy as np
import pytest

import nbflow as tf

INDICES = np.array([[0, 1], [0, 3], [2, 0], [2, 2]])
VALUES = np.array([-3.0, -1.0, 4.0, 2.0])
SHAPE = np.array([3, 4])


def dense(indices=INDICES, values=VALUES, shape=SHAPE):
    out = np.zeros(shape, np.asarray(values).dtype)
    for i, v in zip(np.asarray(indices).reshape(len(values), -1), values):
        out[tuple(i)] = v
    return out


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


@pytest.fixture
def st():
    return tf.SparseTensor(INDICES, VALUES, SHAPE)


def to_numpy(sess, sparse):
    value = sess.run(sparse)
    return dense(value.indices, value.values, value.dense_shape)


def test_transpose_expand_dims_and_reset_shape(st):
    with tf.Session() as sess:
        np.testing.assert_array_equal(to_numpy(sess, tf.sparse.transpose(st)), dense().T)
        expanded = to_numpy(sess, tf.sparse.expand_dims(st, 1))
        np.testing.assert_array_equal(expanded, dense()[:, None, :])
        tight = sess.run(tf.sparse_reset_shape(st))
        np.testing.assert_array_equal(tight.dense_shape, [3, 4])
        np.testing.assert_array_equal(
            to_numpy(sess, tf.sparse.eye(2, 3, dtype=tf.float64)), np.eye(2, 3)
        )


def test_slice_and_split_cut_the_dense_tensor(st):
    with tf.Session() as sess:
        np.testing.assert_array_equal(
            to_numpy(sess, tf.sparse.slice(st, [1, 1], [5, 2])), dense()[1:, 1:3]
        )
        pieces = tf.sparse.split(sp_input=st, num_split=3, axis=1)
        got = [to_numpy(sess, p) for p in pieces]
    for part, want in zip(got, np.array_split(dense(), 3, axis=1)):
        np.testing.assert_array_equal(part, want)


def test_reduce_max_counts_only_present_entries(st):
    with tf.Session() as sess:
        rows, everything, kept = sess.run(
            [
                tf.sparse.reduce_max(st, 1),
                tf.sparse.reduce_max(st),
                tf.sparse_reduce_max_sparse(st, 1),
            ]
        )
    np.testing.assert_array_equal(rows, [-1.0, 0.0, 4.0])  # TensorFlow: row 1 has no entry -> 0
    assert everything == 4.0
    np.testing.assert_array_equal(kept.indices, [[0], [2]])
    np.testing.assert_array_equal(kept.values, [-1.0, 4.0])


def test_maximum_and_minimum_over_the_union_of_entries(st):
    other = tf.SparseTensor([[0, 1], [1, 1]], np.array([-5.0, 7.0]), SHAPE)
    b = dense([[0, 1], [1, 1]], [-5.0, 7.0])
    with tf.Session() as sess:
        np.testing.assert_array_equal(
            to_numpy(sess, tf.sparse.maximum(st, other)), np.maximum(dense(), b)
        )
        np.testing.assert_array_equal(
            to_numpy(sess, tf.sparse.minimum(st, other)), np.minimum(dense(), b)
        )


def test_merge_and_to_indicator_use_ids_as_the_last_index():
    ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], np.array([4, 1, 2], np.int64), [2, 2])
    weights = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], np.array([0.5, 1.5, 2.5]), [2, 2])
    with tf.Session() as sess:
        merged = to_numpy(sess, tf.sparse.merge(ids, weights, 5))
        indicator = sess.run(tf.sparse.to_indicator(ids, 5))
    want = np.zeros((2, 5))
    want[0, 4], want[0, 1], want[1, 2] = 0.5, 1.5, 2.5
    np.testing.assert_array_equal(merged, want)
    np.testing.assert_array_equal(indicator, want > 0)


def test_segment_reductions_of_gathered_rows():
    data = np.arange(12.0).reshape(4, 3)
    indices, segments = np.array([0, 2, 3, 1]), np.array([0, 0, 1, 1])
    rows = data[indices]
    want_sum = np.stack([rows[:2].sum(0), rows[2:].sum(0)])
    with tf.Session() as sess:
        got_sum, got_mean, got_sqrt = sess.run(
            [
                tf.sparse.segment_sum(data, indices, segments),
                tf.sparse_segment_mean(data, indices, segments),
                tf.sparse.segment_sqrt_n(data, indices, segments),
            ]
        )
    np.testing.assert_allclose(got_sum, want_sum)
    np.testing.assert_allclose(got_mean, want_sum / 2)
    np.testing.assert_allclose(got_sqrt, want_sum / np.sqrt(2))


def test_mask_drops_the_masked_slices():
    slices = tf.IndexedSlices(tf.constant(np.arange(6.0).reshape(3, 2)), tf.constant([12, 26, 37]))
    masked = tf.sparse.mask(slices, tf.constant([26]))
    with tf.Session() as sess:
        indices, values = sess.run([masked.indices, masked.values])
    np.testing.assert_array_equal(indices, [12, 37])
    np.testing.assert_array_equal(values, [[0, 1], [4, 5]])
