"""The weights helpers shared by tf.losses and tf.metrics."""

import numpy as np
import pytest

import nbflow as tf
from nbflow.ops.weights_broadcast_ops import (
    assert_broadcastable,
    broadcast_weights,
    div_no_nan,
    match_weights_rank,
    remove_squeezable_dimensions,
)


def test_div_no_nan_is_zero_where_the_denominator_is_zero_and_so_is_its_gradient():
    x = tf.constant([1.0, 2.0, 3.0])
    y = tf.constant([0.0, 4.0, 0.0])
    quotient = div_no_nan(x, y)
    grad_x, grad_y = tf.gradients(tf.reduce_sum(quotient), [x, y])
    with tf.Session() as sess:
        got, gx, gy = sess.run([quotient, grad_x, grad_y])
    np.testing.assert_array_equal(got, [0.0, 0.5, 0.0])
    np.testing.assert_array_equal(gx, [0.0, 0.25, 0.0])
    np.testing.assert_array_equal(gy, [0.0, -2.0 / 16, 0.0])


def test_weights_broadcast_from_scalars_and_size_one_dimensions():
    values = tf.zeros([3, 2])
    with tf.Session() as sess:
        got = sess.run(broadcast_weights(tf.constant([[1.0], [2.0], [0.0]]), values))
    np.testing.assert_array_equal(got, [[1, 1], [2, 2], [0, 0]])
    assert_broadcastable(tf.constant(2.0), values)
    with pytest.raises(ValueError, match="broadcast"):
        assert_broadcastable(tf.zeros([2]), values)


def test_trailing_size_one_dimensions_are_squeezed_to_the_expected_rank_difference():
    labels, predictions = remove_squeezable_dimensions(tf.zeros([4, 1]), tf.zeros([4]))
    assert labels.shape.as_list() == [4] and predictions.shape.as_list() == [4]
    labels, logits = remove_squeezable_dimensions(tf.zeros([4, 1]), tf.zeros([4, 3]), 1)
    assert labels.shape.as_list() == [4] and logits.shape.as_list() == [4, 3]
    assert match_weights_rank(tf.zeros([4]), tf.zeros([4, 3])).shape.as_list() == [4, 1]
    assert match_weights_rank(tf.zeros([4, 1]), tf.zeros([4])).shape.as_list() == [4]
