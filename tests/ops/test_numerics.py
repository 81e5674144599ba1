"""check_numerics and add_check_numerics_ops: a NaN or Inf names the op that produced it."""

import numpy as np
import pytest

import nbflow as tf


def test_check_numerics_passes_finite_values_through():
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(tf.check_numerics([1.0, 2.0], "fine")), [1.0, 2.0])


@pytest.mark.parametrize("value, kind", [(np.nan, "NaN"), (np.inf, "Inf"), (-np.inf, "Inf")])
def test_check_numerics_raises_naming_the_op(value, kind):
    x = tf.placeholder(tf.float32, [2])
    checked = tf.check_numerics(x, "my message", name="guard")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(checked, {x: [1.0, value]})
    message = str(info.value)
    assert f"my message : Tensor had {kind} values" in message
    assert "guard" in message


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_add_check_numerics_ops_names_the_first_bad_op():
    x = tf.placeholder(tf.float32, [2], name="x")
    logged = tf.log(x, name="log_of_x")  # log(-1) is NaN
    doubled = tf.multiply(logged, 2.0, name="doubled")  # also NaN, but later
    check = tf.add_check_numerics_ops()
    with tf.Session() as sess:
        sess.run([doubled, check], {x: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="log_of_x:0 : Tensor had NaN"):
            sess.run([doubled, check], {x: [1.0, -1.0]})


def test_check_numerics_gradient_checks_the_gradient():
    x = tf.constant([1.0, 0.0])
    y = tf.reduce_sum(tf.sqrt(tf.check_numerics(x, "input")))
    (g,) = tf.gradients(y, x)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="detected in gradient"):
            sess.run(g)
