"""Deadlines and cancellation, one mechanism for every runner (runtime/step.py)."""

import threading
import time

import numpy as np
import pytest

import nbflow as tf


def _empty_queue_dequeue():
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    return q, q.dequeue()


def _run_in_thread(fn):
    """Start ``fn`` in a thread; returns (started event, outcome dict, thread)."""
    started = threading.Event()
    outcome: dict = {}

    def target():
        started.set()
        try:
            outcome["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - the test inspects it
            outcome["error"] = e

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return started, outcome, thread


def _wait_until(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.001)


def test_close_cancels_a_run_blocked_in_a_dequeue_within_a_second():
    _, dequeue = _empty_queue_dequeue()
    sess = tf.Session()
    started, outcome, thread = _run_in_thread(lambda: sess.run(dequeue))
    assert started.wait(5)
    _wait_until(lambda: sess._running)  # the step is in flight (blocked in the Dequeue)
    closed_at = time.monotonic()
    sess.close()
    thread.join(timeout=1.0)
    assert not thread.is_alive(), "run() still blocked 1 s after close()"
    assert time.monotonic() - closed_at < 1.0
    assert isinstance(outcome.get("error"), tf.errors.CancelledError), outcome
    assert "closed" in str(outcome["error"])


def test_close_cancels_a_multi_device_run_blocked_in_a_dequeue():
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.device("/cpu:0"):
        _, dequeue = _empty_queue_dequeue()
    with tf.device("/cpu:1"):
        doubled = dequeue * 2.0
    sess = tf.Session(config=config)
    started, outcome, thread = _run_in_thread(lambda: sess.run(doubled))
    assert started.wait(5)
    _wait_until(lambda: sess._running)
    sess.close()
    thread.join(timeout=1.0)
    assert not thread.is_alive()
    assert isinstance(outcome.get("error"), tf.errors.CancelledError), outcome


def test_run_options_deadline_ends_a_blocked_dequeue_and_the_queue_still_works():
    q, dequeue = _empty_queue_dequeue()
    enqueue = q.enqueue([tf.constant(3.0)])
    with tf.Session() as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(dequeue, options=tf.RunOptions(timeout_in_ms=100))
        assert time.monotonic() - start < 2.0
        sess.run(enqueue)  # the cancelled dequeue left no stale waiter to take this element
        assert sess.run(dequeue) == np.float32(3.0)


def test_config_operation_timeout_is_the_default_deadline():
    _, dequeue = _empty_queue_dequeue()
    config = tf.ConfigProto(operation_timeout_in_ms=100)
    with tf.Session(config=config) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(dequeue)


def test_deadline_applies_across_devices():
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.device("/cpu:0"):
        _, dequeue = _empty_queue_dequeue()
    with tf.device("/cpu:1"):
        doubled = dequeue * 2.0
    with tf.Session(config=config) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(doubled, options=tf.RunOptions(timeout_in_ms=100))


def test_a_structured_loop_stops_at_its_deadline():
    i = tf.constant(0)
    loop = tf.while_loop(lambda i: i >= 0, lambda i: i + 1, [i])  # never ends by itself
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(loop, options=tf.RunOptions(timeout_in_ms=100))


def test_a_session_target_without_a_registered_scheme_is_refused():
    with pytest.raises(tf.errors.UnimplementedError, match="No session target registered"):
        tf.Session("nosuchscheme://host:1")


def test_session_is_always_a_session():
    with tf.Session() as sess:
        assert isinstance(sess, tf.Session)


def test_close_stops_a_structured_loop_that_would_never_end():
    i = tf.constant(0)
    loop = tf.while_loop(lambda i: i >= 0, lambda i: (i + 1) % 1000, [i])
    sess = tf.Session()
    started, outcome, thread = _run_in_thread(lambda: sess.run(loop))
    assert started.wait(5)
    _wait_until(lambda: sess._running)
    sess.close()
    thread.join(timeout=1.0)
    assert not thread.is_alive(), "the loop still ran 1 s after close()"
    assert isinstance(outcome.get("error"), tf.errors.CancelledError), outcome
