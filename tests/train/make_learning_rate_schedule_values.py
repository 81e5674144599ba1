"""Prints the expected values of tests/train/test_learning_rate_schedules.py (TensorFlow only)."""

import tensorflow as tf

t = tf.compat.v1
steps = [0, 7, 10, 25, 33, 70, 150]


def v(f):
    return [round(float(f(s)()), 9) for s in steps]


print(
    "restarts =",
    v(lambda s: t.train.cosine_decay_restarts(0.1, s, 10, t_mul=2.0, m_mul=0.5, alpha=0.1)),
)
print("restarts_t1 =", v(lambda s: t.train.cosine_decay_restarts(0.1, s, 10, t_mul=1.0, m_mul=0.9)))
print(
    "linear =",
    v(lambda s: t.train.linear_cosine_decay(0.1, s, 100, num_periods=2, alpha=0.1, beta=0.01)),
)
print("cosine =", v(lambda s: t.train.cosine_decay(0.1, s, 100, alpha=0.2)))
print("inverse =", v(lambda s: t.train.inverse_time_decay(0.1, s, 10, 0.5, staircase=True)))
print("natural =", v(lambda s: t.train.natural_exp_decay(0.1, s, 10, 0.5)))
