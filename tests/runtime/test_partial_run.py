"""``Session.partial_run``: a step in pieces, each op run once, with TensorFlow's errors (the
messages as TensorFlow 2.21's ``tf.compat.v1.Session`` gives them for the same calls)."""

from __future__ import annotations

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors


def test_the_documented_example_feeds_in_two_pieces():
    """TensorFlow's own example: r1 = a + b, then r2 = r1 * c."""
    with tf.Graph().as_default():
        a, b, c = (tf.placeholder(tf.float32, shape=[]) for _ in range(3))
        r1 = tf.add(a, b)
        r2 = tf.multiply(r1, c)
        with tf.Session() as sess:
            h = sess.partial_run_setup([r1, r2], [a, b, c])
            res = sess.partial_run(h, r1, feed_dict={a: 1, b: 2})
            assert res == 3
            res = sess.partial_run(h, r2, feed_dict={c: res})
            assert res == 9


def test_a_random_draw_and_a_dequeue_happen_once_across_pieces():
    rng = np.random.default_rng(3)
    offset = rng.normal(size=3).astype(np.float32)
    with tf.Graph().as_default():
        noise = tf.random_uniform([3], seed=1)
        queue = tf.FIFOQueue(10, tf.float32, shapes=[[]])
        fill = queue.enqueue_many([[1.0, 2.0, 3.0]])
        item = queue.dequeue()
        p = tf.placeholder(tf.float32, [3])
        first = [noise * 1.0, item * 2.0]
        second = [noise + p, item + 10.0]
        with tf.Session() as sess:
            sess.run(fill)
            h = sess.partial_run_setup(first + second, [p])
            drawn, doubled = sess.partial_run(h, first)
            shifted, item_plus = sess.partial_run(h, second, {p: offset})
            left = sess.run(queue.size())
    np.testing.assert_allclose(shifted, drawn + offset, rtol=1e-6)
    assert doubled == 2.0 and item_plus == 11.0  # the same item: one dequeue
    assert left == 2


def test_a_variable_update_runs_once_although_two_pieces_read_it():
    with tf.Graph().as_default():
        v = tf.Variable(0.0)
        inc = tf.assign_add(v, 1.0)
        q = tf.placeholder(tf.float32, [])
        a, b = inc * 2.0, inc + q
        with tf.Session() as sess:
            sess.run(v.initializer)
            h = sess.partial_run_setup([a, b], [q])
            assert sess.partial_run(h, a) == 2.0
            assert sess.partial_run(h, b, {q: 5.0}) == 6.0
            assert sess.run(v) == 1.0


def test_fetches_and_feeds_outside_the_setup_or_repeated_are_refused():
    with tf.Graph().as_default():
        a, b = tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [])
        s, d, other = a + b, a - b, a * b
        with tf.Session() as sess:
            h = sess.partial_run_setup([s, d], [a, b])
            with pytest.raises(
                errors.InvalidArgumentError,
                match="The fetch mul.* was not specified in partial_run_setup",
            ):
                sess.partial_run(h, other, {a: 1.0, b: 2.0})
            assert sess.partial_run(h, s, {a: 1.0, b: 2.0}) == 3.0
            with pytest.raises(errors.InvalidArgumentError, match="already been fetched"):
                sess.partial_run(h, s)
            with pytest.raises(errors.InvalidArgumentError, match="already been fed"):
                sess.partial_run(h, d, {a: 4.0})
            assert sess.partial_run(h, d) == -1.0  # the failed pieces changed nothing
            with pytest.raises(errors.InvalidArgumentError, match="not one of this session"):
                sess.partial_run(h, d)  # every fetch made: the run is over
            h2 = sess.partial_run_setup([s], [a])
            with pytest.raises(errors.InvalidArgumentError, match="The feed .* was not specified"):
                sess.partial_run(h2, s, {a: 1.0, b: 2.0})
            with pytest.raises(errors.InvalidArgumentError, match="must feed a value"):
                sess.partial_run(h2, s, {a: 1.0})  # b was never allowed, and is needed


def test_a_control_dependency_on_an_op_run_earlier_is_met_without_running_it_again():
    """A later piece whose op depends, by a control edge, on an update an earlier piece ran:
    the update's kept output stands for it, so it runs once (TensorFlow 2.21 cancels this)."""
    with tf.Graph().as_default():
        v = tf.Variable(0.0)
        inc = tf.assign_add(v, 1.0)
        q = tf.placeholder(tf.float32, [])
        with tf.control_dependencies([inc]):
            z = tf.identity(q)
        with tf.Session() as sess:
            sess.run(v.initializer)
            h = sess.partial_run_setup([inc.op, z], [q])
            sess.partial_run(h, inc.op)  # the op only: its output is kept all the same
            assert sess.partial_run(h, z, {q: 2.0}) == 2.0
            assert sess.run(v) == 1.0


def test_a_control_dependency_on_an_enqueue_run_earlier_is_refused_not_run_twice():
    """An enqueue has no output to stand for it: running it again would enqueue twice."""
    with tf.Graph().as_default():
        queue = tf.FIFOQueue(10, tf.float32, shapes=[[]])
        put = queue.enqueue([1.0])
        q = tf.placeholder(tf.float32, [])
        with tf.control_dependencies([put]):
            z = tf.identity(q)
        with tf.Session() as sess:
            h = sess.partial_run_setup([put, z], [q])
            sess.partial_run(h, put)
            with pytest.raises(errors.UnimplementedError, match="fifo_queue_enqueue"):
                sess.partial_run(h, z, {q: 2.0})
            assert sess.run(queue.size()) == 1
