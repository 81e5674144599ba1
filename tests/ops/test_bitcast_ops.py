"""tf.bitcast against NumPy's views (TensorFlow's byte order on x86) and tf.timestamp."""

import time

import numpy as np
import pytest

import nbflow as tf


@pytest.mark.parametrize(
    "value, dtype, expected_shape",
    [
        (np.float32(1.0), tf.int32, ()),
        (np.arange(6, dtype=np.int32).reshape(2, 3), tf.uint8, (2, 3, 4)),
        (np.arange(16, dtype=np.uint8).reshape(2, 8), tf.float64, (2,)),
        (np.array([1.5, -2.0]), tf.uint64, (2,)),
        (np.array([[1, 2], [3, 4]], np.int16), tf.int32, (2,)),
    ],
)
def test_bitcast_reinterprets_bytes_as_numpy_views(value, dtype, expected_shape):
    out = tf.bitcast(tf.constant(value), dtype)
    assert out.shape.as_list() == list(expected_shape)
    got = tf.Session().run(out)
    expected = np.ascontiguousarray(value).reshape(-1).view(dtype.as_numpy_dtype)
    np.testing.assert_array_equal(got, expected.reshape(expected_shape))
    assert got.dtype == dtype.as_numpy_dtype


def test_bitcast_refuses_shapes_that_do_not_fit():
    with pytest.raises(ValueError, match="last dimension must be 4"):
        tf.bitcast(tf.constant(np.zeros((2, 3), np.uint8)), tf.float32)
    with pytest.raises(ValueError, match="scalar"):
        tf.bitcast(tf.constant(np.uint8(1)), tf.float32)
    with pytest.raises(TypeError, match="string"):
        tf.bitcast(tf.constant(b"ab"), tf.uint8)


def test_timestamp_is_the_wall_clock_at_run_time():
    t = tf.timestamp()
    assert t.dtype == tf.float64 and t.shape.as_list() == []
    with tf.Session() as sess:
        before = time.time()
        first = sess.run(t)
        second = sess.run(t)
        after = time.time()
    assert before <= first <= second <= after
