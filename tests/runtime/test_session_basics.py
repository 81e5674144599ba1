import numpy as np
import pytest

import nbflow as tf


def test_run_feeds_placeholder_and_fetches_sum():
    a = tf.placeholder(tf.float32, [], name="a")
    c = a + tf.constant(2.0)
    with tf.Session() as sess:
        assert sess.run(c, {a: 3.0}) == pytest.approx(5.0)


def test_fetching_unfed_placeholder_names_it():
    a = tf.placeholder(tf.float32, [2], name="a")
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="'a'"):
        sess.run(a * 2.0)


def test_uninitialized_variable_is_failed_precondition_and_session_survives():
    v = tf.Variable(tf.constant([1.0, 2.0]), name="v")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value v"):
            sess.run(v)
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_wrong_feed_shape_raises_value_error():
    a = tf.placeholder(tf.float32, [2], name="a")
    with tf.Session() as sess, pytest.raises(ValueError, match="Cannot feed value of shape"):
        sess.run(a, {a: [1.0, 2.0, 3.0]})


def test_closed_session_raises_runtime_error():
    sess = tf.Session()
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(tf.constant(1.0))


def test_control_dependency_on_a_fed_placeholder_is_met_by_the_feed():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        with tf.control_dependencies([x]):
            y = tf.constant(2.0) * 3.0
        with tf.control_dependencies([x.op]):
            z = tf.identity(y)
        with tf.Session() as sess:
            assert sess.run([y, z], {x: 1.0}) == [6.0, 6.0]
            with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
                sess.run(z)
