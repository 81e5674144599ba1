"""ExponentialMovingAverage against a NumPy re-implementation of TensorFlow's update rule."""

import numpy as np
import pytest

import nbflow as tf


def _numpy_ema(values, start, decay, num_updates=None, zero_debias=False):
    """The shadow values after each update, as TensorFlow's moving_averages.py computes them."""
    shadow, biased, out = np.float64(start), 0.0, []
    for t, value in enumerate(values, start=1):
        d = (
            decay
            if num_updates is None
            else min(decay, (1 + num_updates[t - 1]) / (10 + num_updates[t - 1]))
        )
        if zero_debias:
            biased -= (biased - value) * (1 - d)
            shadow = biased / (1 - d**t)
        else:
            shadow -= (shadow - value) * (1 - d)
        out.append(shadow)
    return np.array(out)


def test_averages_follow_the_update_rule_with_num_updates():
    w = tf.Variable([1.0, -2.0], name="w")
    step = tf.Variable(0, name="step", trainable=False)
    ema = tf.train.ExponentialMovingAverage(0.99, num_updates=step)
    update = ema.apply([w])
    new_value = tf.placeholder(tf.float32, [2])
    assign = tf.group(tf.assign(w, new_value), tf.assign_add(step, 1))
    values = np.random.default_rng(0).standard_normal((6, 2)).astype(np.float32)
    got = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for v in values:
            sess.run(assign, {new_value: v})
            sess.run(update)
            got.append(sess.run(ema.average(w)))
    expected = np.stack(
        [_numpy_ema(values[:, k], [1.0, -2.0][k], 0.99, num_updates=range(1, 7)) for k in range(2)],
        axis=1,
    )
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_zero_debias_of_a_tensor_average():
    x = tf.placeholder(tf.float32, [], name="x")
    loss = x * 1.0
    ema = tf.train.ExponentialMovingAverage(0.9, zero_debias=True)
    update = ema.apply([loss])
    values = [3.0, 1.0, 4.0, 1.0, 5.0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = []
        for v in values:
            sess.run(update, {x: v})
            got.append(sess.run(ema.average(loss)))
    np.testing.assert_allclose(got, _numpy_ema(values, 0.0, 0.9, zero_debias=True), rtol=1e-5)
    assert got[0] == pytest.approx(3.0)  # debiased: the first average is the first value


def test_names_collections_and_variables_to_restore():
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", [2], initializer=tf.ones_initializer())
    counter = tf.Variable(0, name="counter", trainable=False)
    ema = tf.train.ExponentialMovingAverage(0.5)
    assert ema.average_name(w) == "layer/w/ExponentialMovingAverage"
    ema.apply([w])
    assert ema.average(w).op.name == "layer/w/ExponentialMovingAverage"
    assert ema.average(counter) is None
    assert tf.moving_average_variables() == [w]
    assert ema.average(w) not in tf.trainable_variables()
    restore = ema.variables_to_restore()
    assert restore["layer/w/ExponentialMovingAverage"] is w
    assert restore["counter"] is counter
    with pytest.raises(ValueError, match="already computed"):
        ema.apply([w])
    with pytest.raises(TypeError, match="half, float, or double"):
        ema.apply([counter])


def test_saver_restores_averages_into_the_variables(tmp_path):
    w = tf.Variable(2.0, name="w")
    ema = tf.train.ExponentialMovingAverage(0.5)
    update = ema.apply([w])
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(w, 4.0))
        sess.run(update)  # average: 2 - 0.5 * (2 - 4) = 3
        path = saver.save(sess, str(tmp_path / "model"))
    tf.reset_default_graph()
    w = tf.Variable(0.0, name="w")
    restorer = tf.train.Saver(tf.train.ExponentialMovingAverage(0.5).variables_to_restore())
    with tf.Session() as sess:
        restorer.restore(sess, path)
        assert sess.run(w) == pytest.approx(3.0)
