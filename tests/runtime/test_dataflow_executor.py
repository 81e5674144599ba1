"""The dataflow executor: frames, iterations, dead values, async kernels and deadlines."""

import threading

import numpy as np
import pytest

import nbflow as tf
from nbflow.framework.op_def import OpDef, TensorSpec
from nbflow.runtime import step as step_lib


class _ParkUntilReleased(OpDef):
    """Test op: an async identity that completes when the test releases it."""

    inputs = ("x",)
    is_async = True
    stateful = True
    differentiable = False
    waiting: list = []

    def infer(self, x):
        return TensorSpec(x.shape, x.dtype)

    def compute(self, ctx, x, done):
        _ParkUntilReleased.waiting.append((x, done))
        ctx.cancellation.register(lambda: done(error=tf.errors.CancelledError(None, None, "c")))


@pytest.fixture
def tagged_frames(monkeypatch):
    """Run control flow on the frame-tagged dataflow path, not as structured loop code."""
    monkeypatch.setattr(step_lib, "structured_loops", False)


def _run_generic(sess, fetches, feed_dict=None):
    return sess.run(fetches, feed_dict)


@pytest.mark.parametrize("parallel_iterations", [1, 2, 10])
def test_loop_on_tagged_frames_matches_python(parallel_iterations, tagged_frames):
    n = tf.placeholder(tf.int32, [])
    i, acc = tf.while_loop(
        lambda i, a: i < n,
        lambda i, a: (i + 1, a * 2 + i),
        [tf.constant(0), tf.constant(1)],
        parallel_iterations=parallel_iterations,
    )
    expected = 1
    for k in range(9):
        expected = expected * 2 + k
    with tf.Session() as sess:
        assert _run_generic(sess, [i, acc], {n: 9}) == [9, expected]


def test_nested_loops_and_conds_on_tagged_frames(tagged_frames):
    def outer(i, acc):
        inner = tf.while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a + j), [0, acc])[1]
        return i + 1, tf.cond(i > 2, lambda: inner - 1, lambda: inner + 100)

    r = tf.while_loop(lambda i, a: i < 5, outer, [tf.constant(0), tf.constant(0)])[1]
    acc = 0
    for i in range(5):
        acc += sum(range(i))
        acc = acc - 1 if i > 2 else acc + 100
    with tf.Session() as sess:
        assert _run_generic(sess, r) == acc


def test_iterations_overlap_up_to_parallel_iterations(tagged_frames):
    """Each iteration parks on an async op; the next iteration's counter does not wait for it,
    so two iterations park at once with parallel_iterations=2, never three."""
    _ParkUntilReleased.waiting = []

    def body(i, acc):
        parked = tf.get_default_graph().create_op("_ParkUntilReleased", [i]).outputs[0]
        return i + 1, acc + parked

    r = tf.while_loop(
        lambda i, a: i < 6, body, [tf.constant(0), tf.constant(0)], parallel_iterations=2
    )[1]
    done = threading.Event()
    result, most = [], []
    with tf.Session() as sess:
        thread = threading.Thread(target=lambda: (result.append(sess.run(r)), done.set()))
        thread.start()
        released = 0
        while released < 6 and not done.wait(0.005):
            parked = list(_ParkUntilReleased.waiting)
            most.append(len(parked))
            if len(parked) == 2 or (parked and released == 4):
                _ParkUntilReleased.waiting.clear()
                for x, cont in parked:
                    cont(x)
                    released += 1
        thread.join(10)
    assert result == [sum(range(6))]
    assert max(most) == 2


def test_dead_branch_fetch_is_an_error_and_merge_takes_live_value(tagged_frames):
    p = tf.placeholder(tf.bool, [])
    f, t = tf.get_default_graph().create_op("Switch", [tf.constant(3.0), p]).outputs
    m = tf.get_default_graph().create_op("Merge", [[f * 2.0, t * 10.0]]).outputs[0]
    with tf.Session() as sess:
        assert sess.run(m, {p: True}) == 30.0
        assert _run_generic(sess, m, {p: False}) == 6.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="no value"):
            sess.run(t * 1.0, {p: False})


def test_deadline_cancels_a_parked_async_kernel():
    _ParkUntilReleased.waiting = []
    x = tf.get_default_graph().create_op("_ParkUntilReleased", [tf.constant(1.0)]).outputs[0]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(x, options=tf.RunOptions(timeout_in_ms=100))


def test_structured_loop_honours_deadline():
    r = tf.while_loop(lambda i: i >= 0, lambda i: i + 1, [tf.constant(0)])
    with tf.Session() as sess, pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(r, options=tf.RunOptions(timeout_in_ms=100))


def test_parallel_plan_releases_values_and_matches_numpy():
    a = tf.placeholder(tf.float32, [4, 4])
    b = tf.matmul(a, a)
    c = tf.matmul(a, a + 1.0)
    d = b + c
    v = np.arange(16, dtype=np.float32).reshape(4, 4)
    with tf.Session() as sess:
        for _ in range(20):
            np.testing.assert_allclose(sess.run(d, {a: v}), v @ v + v @ (v + 1))
