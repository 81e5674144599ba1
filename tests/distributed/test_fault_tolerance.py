"""Fault tolerance for real: kill the parameter server's worker process mid-training."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors
from nbflow.distributed import Cluster
from nbflow.train.device_setter import replica_device_setter

from tests.distributed.conftest import linear_model, regression_batch

SPEC = {"ps": 1, "worker": 1}


@pytest.fixture(scope="module")
def cluster():
    with Cluster.local(n_workers=2, memory_limit="1GiB", spec=SPEC, health_interval=0.5) as c:
        yield c


def test_killed_ps_worker_fails_the_step_naming_the_task_then_training_recovers(cluster, tmp_path):
    with tf.device(replica_device_setter(cluster=SPEC, worker_device="/job:worker/task:0")):
        x, y, loss, w, b = linear_model()
        global_step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=global_step)
    ps = cluster.tasks["/job:ps/replica:0/task:0"]
    assert ps.address != cluster.tasks["/job:worker/replica:0/task:0"].address
    rng = np.random.default_rng(0)
    history: list[tuple[int, float]] = []  # (global step before the update, loss)
    failures: list[errors.OpError] = []
    killed_at = None
    hooks = [tf.train.StopAtStepHook(last_step=40)]

    class Watch(tf.train.SessionRunHook):
        def after_create_session(self, session, coord):  # noqa: ARG002 - hook protocol
            failures.append(None)  # one session per (re)creation

    with tf.train.MonitoredTrainingSession(
        master=cluster.target,
        checkpoint_dir=str(tmp_path),
        save_checkpoint_steps=10,
        hooks=hooks + [Watch()],
        save_summaries_steps=None,
        save_summaries_secs=None,
        log_step_count_steps=0,
    ) as sess:
        while not sess.should_stop():
            xs, ys = regression_batch(rng)
            step, value, _ = sess.run([global_step, loss, train], {x: xs, y: ys})
            history.append((int(step), float(value)))
            if killed_at is None and step == 24:
                killed_at = step
                os.kill(ps.pid, signal.SIGKILL)  # the nanny restarts the process

    sessions = failures.count(None)
    assert sessions == 2  # the first session, and one recreated after the kill
    new_ps = cluster.tasks["/job:ps/replica:0/task:0"]
    assert new_ps.incarnation != ps.incarnation and new_ps.restarts == 1
    steps = [s for s, _ in history]
    resumed = steps.index(24) + 1
    # The step after the kill restarted from the checkpoint at step 20 (saved at 21 updates).
    assert steps[resumed] in (20, 21)
    before = dict(history[:resumed])
    assert history[resumed][1] == pytest.approx(before[steps[resumed]], rel=0.5)
    assert steps[-1] in (39, 40) and history[-1][1] < 0.05 * history[0][1]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("-40")


def test_a_lost_task_is_reported_unhealthy_and_a_step_on_it_is_unavailable(cluster):
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="lonely")
    sess = tf.Session(cluster.target)
    sess.run(v.initializer)
    ps = cluster.tasks["/job:ps/replica:0/task:0"]
    os.kill(ps.pid, signal.SIGKILL)
    with pytest.raises((errors.UnavailableError, errors.AbortedError)) as info:
        for _ in range(1000):  # until the kill lands; each run is a real step
            sess.run(v)
    assert "/job:ps/replica:0/task:0" in str(info.value)
    # The ps task may share its worker with the worker task after the first test's recovery.
    recreated = cluster.ensure_tasks()
    assert recreated == [] or "/job:ps/replica:0/task:0" in recreated
    assert all(cluster.check_health().values())
    sess.close()
