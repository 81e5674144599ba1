"""Cancellation and deadlines of steps blocked on remote tasks (a dequeue on the ps task)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors


def _blocked_dequeue():
    """A queue on the ps task that nothing fills, and a dequeue of it fetched on the worker."""
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(4, tf.float32, shapes=[[]], shared_name="q")
        dequeued = queue.dequeue()
    with tf.device("/job:worker/task:0"):
        doubled = dequeued * 2.0
    return queue, doubled


def _in_thread(fn):
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - the test inspects it
            outcome["error"] = e

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return outcome, thread


def _until_in_flight(cluster, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cluster._steps:  # the step's messages are out, its tasks watched
        assert time.monotonic() < deadline, "the step never started"
        time.sleep(0.005)


def test_close_cancels_a_step_blocked_on_a_remote_dequeue_within_a_second(cluster):
    queue, doubled = _blocked_dequeue()
    sess = tf.Session(cluster.target)
    outcome, thread = _in_thread(lambda: sess.run(doubled))
    _until_in_flight(cluster)
    closed_at = time.monotonic()
    sess.close()
    thread.join(timeout=1.0)
    assert not thread.is_alive(), "run() still blocked 1 s after close()"
    assert time.monotonic() - closed_at < 1.0
    assert isinstance(outcome.get("error"), errors.CancelledError), outcome
    # The dequeue on the ps task was withdrawn too: no stale waiter takes the next element.
    with tf.Session(cluster.target) as again:
        again.run(queue.enqueue(np.float32(4.0)))
        assert again.run(doubled, options=tf.RunOptions(timeout_in_ms=5000)) == 8.0


def test_a_deadline_ends_a_remote_dequeue_and_the_queue_still_works(cluster):
    queue, doubled = _blocked_dequeue()
    with tf.Session(cluster.target) as sess:
        started = time.monotonic()
        with pytest.raises(errors.DeadlineExceededError):
            sess.run(doubled, options=tf.RunOptions(timeout_in_ms=300))
        assert time.monotonic() - started < 3.0
        sess.run(queue.enqueue(np.float32(21.0)))
        assert sess.run(doubled) == 42.0  # no stale waiter took the element


def test_operation_timeout_is_the_default_deadline_of_distributed_steps(cluster):
    _, doubled = _blocked_dequeue()
    config = tf.ConfigProto(operation_timeout_in_ms=300)
    with tf.Session(cluster.target, config=config) as sess:
        with pytest.raises(errors.DeadlineExceededError):
            sess.run(doubled)


def test_session_reset_cancels_a_step_blocked_on_a_remote_dequeue(cluster):
    _, doubled = _blocked_dequeue()
    sess = tf.Session(cluster.target)
    outcome, thread = _in_thread(lambda: sess.run(doubled))
    _until_in_flight(cluster)
    reset_at = time.monotonic()
    tf.Session.reset(cluster.target)
    thread.join(timeout=2.0)
    assert not thread.is_alive(), "run() still blocked after Session.reset"
    assert time.monotonic() - reset_at < 2.0
    assert isinstance(outcome.get("error"), errors.CancelledError), outcome
    sess.close()
