"""Structured loop code (runtime/loop_compiler.py) keeps the dataflow semantics."""

import numpy as np
import pytest

import nbflow as tf
from nbflow.runtime import step as step_lib


@pytest.fixture(params=["structured", "tagged_frames"])
def executor(request, monkeypatch):
    if request.param == "tagged_frames":
        monkeypatch.setattr(step_lib, "structured_loops", False)
    return request.param


def test_indexing_by_loop_counter_matches_numpy(executor):
    xs = np.arange(60, dtype=np.float32).reshape(5, 4, 3)
    x = tf.placeholder(tf.float32, [5, 4, 3])

    def body(i, acc):
        # x[i] and x[-i - 1, i % 4] pack the counter into begin/end vectors every iteration
        return i + 1, acc + x[i] * 2.0 + x[-i - 1, i % 4][0]

    _, acc = tf.while_loop(lambda i, a: i < 5, body, [0, tf.zeros([4, 3])])
    expected = sum(xs[i] * 2.0 + xs[-i - 1, i % 4][0] for i in range(5))
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(acc, {x: xs}), expected)


def test_constant_assigned_in_a_loop_leaves_the_variable_updatable(executor):
    v = tf.Variable(0, name="v")

    def body(i):
        with tf.control_dependencies([tf.assign(v, tf.constant(7))]):
            return i + tf.constant(1)

    loop = tf.while_loop(lambda i: i < tf.constant(3), body, [tf.constant(0)])
    with tf.control_dependencies([loop]):
        bumped = tf.assign_add(v, 1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(bumped) == 8
        assert sess.run(bumped) == 8


def test_error_in_loop_body_names_the_node(executor):
    x = tf.placeholder(tf.float32, [3])
    _, y = tf.while_loop(
        lambda i, y: i < 2,
        lambda i, y: (i + 1, tf.check_numerics(y / (1.0 - tf.cast(i, tf.float32)), "div")),
        [0, x],
    )
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="CheckNumerics"):
            sess.run(y, {x: np.ones(3, np.float32)})
