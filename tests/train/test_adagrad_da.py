"""AdagradDAOptimizer against TensorFlow's (tests/fixtures/tf/adagrad_da.json, written by
tests/fixtures/make_adagrad_da.py) and against the update rule in float64 NumPy."""

import json
import os

import numpy as np
import pytest

import nbflow as tf

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf", "adagrad_da.json")
C = np.array([0.5, -1.0, 0.004])


def _run(kind, dtype=tf.float32, steps=3):
    gs = tf.train.get_or_create_global_step()
    v = tf.Variable(np.array([1.0, 2.0, -0.5]), dtype=dtype)
    x = tf.gather(v, [0, 1, 2]) if kind == "sparse" else v
    loss = tf.reduce_sum(x * tf.constant(C, dtype)) + tf.reduce_sum(x * x)
    train = tf.train.AdagradDAOptimizer(0.1, gs, 0.1, 0.01, 0.02).minimize(loss, global_step=gs)
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
            out.append(sess.run(v))
        assert sess.run(gs) == steps
    return out


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_adagrad_da_matches_tensorflow(kind):
    with open(FIXTURE) as f:
        expected = json.load(f)[kind]
    np.testing.assert_allclose(_run(kind), expected, rtol=1e-5, atol=1e-7)


def test_adagrad_da_follows_the_dual_averaging_rule_in_float64():
    # Python-float hyperparameters become float32 tensors, then the variable's dtype (as TF).
    lr, l1, l2 = (float(np.float32(h)) for h in (0.1, 0.01, 0.02))
    v = np.array([1.0, 2.0, -0.5])
    ga, gga = np.zeros(3), np.full(3, 0.1)
    got = _run("dense", tf.float64, steps=4)
    for step, value in enumerate(got, start=1):
        g = C + 2 * v
        ga, gga = ga + g, gga + g * g
        shrunk = np.sign(ga) * np.maximum(np.abs(ga) - l1 * step, 0)
        v = -lr * shrunk / (l2 * step * lr + np.sqrt(gga))
        np.testing.assert_allclose(value, v, rtol=1e-12)


def test_adagrad_da_rejects_a_non_positive_accumulator():
    with pytest.raises(ValueError, match="must be positive"):
        tf.train.AdagradDAOptimizer(0.1, tf.train.get_or_create_global_step(), 0.0)
