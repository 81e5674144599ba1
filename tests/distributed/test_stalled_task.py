"""A stalled task (SIGSTOP) aborts the steps in flight on it; training recovers from a checkpoint.

A stopped process keeps its connections open, so nothing fails by itself: only the health
check notices (its ping goes unanswered) and cancels the steps that involve the task.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

import numpy as np

import nbflow as tf
from nbflow import errors
from nbflow.distributed import Cluster
from nbflow.train.device_setter import replica_device_setter

from tests.distributed.conftest import linear_model, regression_batch

SPEC = {"ps": 1, "worker": 1}
PS = "/job:ps/replica:0/task:0"
HEALTH_TIMEOUT = 1.0


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


@contextlib.contextmanager
def stopped(pid: int):
    """SIGSTOP ``pid`` for the block; SIGCONT it whatever happens."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield time.monotonic()
    finally:
        os.kill(pid, signal.SIGCONT)


def training_graph():
    with tf.device(replica_device_setter(cluster=SPEC, worker_device="/job:worker/task:0")):
        x, y, loss, w, b = linear_model()
        global_step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=global_step)
    return x, y, loss, global_step, train


def test_the_health_check_aborts_a_step_blocked_on_a_stopped_ps_naming_it():
    with Cluster.local(
        n_workers=2,
        memory_limit="1GiB",
        spec=SPEC,
        health_interval=None,  # this test runs the health check itself, once the step waits
        health_timeout=HEALTH_TIMEOUT,
    ) as cluster:
        x, y, loss, global_step, train = training_graph()
        rng = np.random.default_rng(0)
        sess = tf.Session(cluster.target)
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            xs, ys = regression_batch(rng)
            sess.run(train, {x: xs, y: ys})
        ps = cluster.tasks[PS]
        outcome: list[BaseException | None] = []

        def step() -> None:
            try:
                sess.run(train, {x: xs, y: ys})
                outcome.append(None)
            except BaseException as e:  # noqa: BLE001 - examined below
                outcome.append(e)

        with stopped(ps.pid):
            runner = threading.Thread(target=step, daemon=True)
            runner.start()
            wait_until(lambda: cluster._steps, 10, "the step to be in flight")
            checked = time.monotonic()
            health = cluster.check_health()
            runner.join(timeout=10)
            aborted_after = time.monotonic() - checked
            assert not runner.is_alive(), "the step still waits on the stopped task"
        assert health[PS] is False
        error = outcome[0]
        assert isinstance(error, errors.UnavailableError), repr(error)
        assert PS in error.message and ps.address in error.message
        assert "health check" in error.message and "aborted" in error.message
        # The check itself waits up to the ping timeout; the abort follows at once.
        assert aborted_after < HEALTH_TIMEOUT + 3.0
        # Once the process runs again, so do steps (a new session re-registers nothing lost).
        wait_until(lambda: cluster.check_health()[PS], 10, "the ps to answer again")
        assert np.isfinite(sess.run(loss, {x: xs, y: ys}))
        sess.close()


def test_training_recovers_from_a_stopped_ps_within_the_health_check(tmp_path):
    interval = 0.5
    with Cluster.local(
        n_workers=2,
        memory_limit="1GiB",
        spec=SPEC,
        health_interval=interval,
        health_timeout=HEALTH_TIMEOUT,
    ) as cluster:
        x, y, loss, global_step, train = training_graph()
        ps = cluster.tasks[PS]
        rng = np.random.default_rng(1)
        sessions: list[float] = []
        history: list[tuple[int, float]] = []

        class Watch(tf.train.SessionRunHook):
            def after_create_session(self, session, coord):  # noqa: ARG002 - hook protocol
                sessions.append(time.monotonic())

        with contextlib.ExitStack() as stack:
            sess = stack.enter_context(
                tf.train.MonitoredTrainingSession(
                    master=cluster.target,
                    checkpoint_dir=str(tmp_path),
                    save_checkpoint_steps=10,
                    hooks=[tf.train.StopAtStepHook(last_step=30), Watch()],
                    save_summaries_steps=None,
                    save_summaries_secs=None,
                    log_step_count_steps=0,
                )
            )
            stopped_at = None
            while not sess.should_stop():
                xs, ys = regression_batch(rng)
                step, value, _ = sess.run([global_step, loss, train], {x: xs, y: ys})
                history.append((int(step), float(value)))
                if stopped_at is None and step == 14:
                    stack.enter_context(stopped(ps.pid))
                    stopped_at = time.monotonic()
        assert len(sessions) == 2  # the first session, and one made after the abort
        new_ps = cluster.tasks[PS]
        assert new_ps.address != ps.address  # recreated on the worker that still answers
        # Detection (interval + ping timeout) plus recreating the task and restoring.
        assert sessions[1] - stopped_at < interval + HEALTH_TIMEOUT + 15
        steps = [s for s, _ in history]
        resumed = steps.index(14) + 1
        assert steps[resumed] in (10, 11)  # back to the checkpoint of step 10
        assert steps[-1] in (29, 30) and history[-1][1] < 0.05 * history[0][1]
        assert tf.train.latest_checkpoint(str(tmp_path)).endswith("-30")


def test_a_busy_task_is_not_a_stalled_one():
    """A first step that computes for longer than the health timeout (a large variable's
    initializer; here three 2400x2400 matmuls on the ps) runs beside the message loop, which
    keeps answering the health check's pings: the step completes, nothing is aborted."""
    with Cluster.local(
        n_workers=1, memory_limit="1GiB", spec={"ps": 1}, health_interval=0.1, health_timeout=0.3
    ) as cluster:
        with tf.Graph().as_default():
            with tf.device(PS):
                a = tf.fill([2400, 2400], 1e-3)  # a small graph: all the time is computing
                b = tf.matmul(tf.matmul(tf.matmul(a, a), a), a)
                total = tf.reduce_sum(b)
            with tf.Session(cluster.target) as sess:
                started = time.monotonic()
                value = sess.run(total)
                busy_s = time.monotonic() - started
        # every entry of a^4 is 2400^3 * 1e-12
        assert np.isclose(value, 2400**2 * 2400**3 * 1e-12, rtol=1e-3)
        assert all(cluster.check_health().values())
        print(f"the step computed for {busy_s:.2f} s against a health timeout of 0.3 s")
