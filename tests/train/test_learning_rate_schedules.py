"""The other TF 1.15 learning-rate decays against values TensorFlow 2.21's tf.compat.v1 gave.

The expected numbers were printed by make_learning_rate_schedule_values.py (run with a TensorFlow):

    t = tf.compat.v1; steps = [0, 7, 10, 25, 33, 70, 150]
    [float(t.train.cosine_decay_restarts(0.1, s, 10, t_mul=2.0, m_mul=0.5, alpha=0.1)())
     for s in steps]   # and likewise for each row below
"""

import numpy as np
import pytest

import nbflow as tf

STEPS = [0, 7, 10, 25, 33, 70, 150]
TENSORFLOW = {
    "restarts": [
        0.100000001,
        0.028549666,
        0.055000003,
        0.016590098,
        0.032189161,
        0.02125,
        0.015625,
    ],
    "restarts_t1": [
        0.100000001,
        0.02061074,
        0.089999996,
        0.040499996,
        0.057874769,
        0.047829684,
        0.020589104,
    ],
    "linear": [0.111000001, 0.085327335, 0.066450849, 0.001, 0.01887068, 0.004819662, 0.011],
    "cosine": [
        0.100000001,
        0.099036671,
        0.098042265,
        0.088284276,
        0.080361657,
        0.036488593,
        0.020000001,
    ],
    "inverse": [
        0.100000001,
        0.100000001,
        0.06666667,
        0.050000001,
        0.039999999,
        0.022222223,
        0.011764706,
    ],
    "natural": [
        0.100000001,
        0.070468806,
        0.060653068,
        0.028650481,
        0.019204993,
        0.003019739,
        5.5308e-05,
    ],
}
SCHEDULES = {
    "restarts": lambda s: tf.train.cosine_decay_restarts(
        0.1, s, 10, t_mul=2.0, m_mul=0.5, alpha=0.1
    ),
    "restarts_t1": lambda s: tf.train.cosine_decay_restarts(0.1, s, 10, t_mul=1.0, m_mul=0.9),
    "linear": lambda s: tf.train.linear_cosine_decay(
        0.1, s, 100, num_periods=2, alpha=0.1, beta=0.01
    ),
    "cosine": lambda s: tf.train.cosine_decay(0.1, s, 100, alpha=0.2),
    "inverse": lambda s: tf.train.inverse_time_decay(0.1, s, 10, 0.5, staircase=True),
    "natural": lambda s: tf.train.natural_exp_decay(0.1, s, 10, 0.5),
}


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_decay_matches_tensorflow(schedule):
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int64, [])
        rate = SCHEDULES[schedule](step)
        with tf.Session() as sess:
            got = [sess.run(rate, {step: s}) for s in STEPS]
    np.testing.assert_allclose(got, TENSORFLOW[schedule], rtol=1e-5, atol=1e-7)


def test_noisy_linear_cosine_decay_stays_near_its_noiseless_form_late():
    with tf.Graph().as_default():
        noisy = tf.train.noisy_linear_cosine_decay(0.1, 10**6, 100, initial_variance=1e-12)
        exact = tf.train.linear_cosine_decay(0.1, 10**6, 100)
        with tf.Session() as sess:
            a, b = sess.run([noisy, exact])
    np.testing.assert_allclose(a, b, rtol=1e-4)
    assert tf.train.piecewise_constant_decay is tf.train.piecewise_constant
