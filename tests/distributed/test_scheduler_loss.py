"""An external Dask scheduler that dies: steps and new sessions fail fast, naming it.

Dask has no scheduler fail-over: when the scheduler process dies, its workers close, and the
nbflow tasks on them with them. A cluster nbflow did not make cannot be made anew, so every
step, and every new session, raises ``UnavailableError`` naming the scheduler's address at
once (``MonitoredTrainingSession`` retries that a bounded number of times; see
tests/train/test_monitored_session.py). The gateway case, where nbflow made the cluster and
the recovery makes a new one, is in test_gateway.py.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

import nbflow as tf
from nbflow import errors
from nbflow.distributed import Cluster


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def external_scheduler():
    """A `dask scheduler` and two `dask worker` processes on 127.0.0.1 (plain TCP)."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    port = address.rsplit(":", 1)[1]
    cli = [sys.executable, "-m"]
    scheduler = subprocess.Popen(
        [*cli, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", port]
        + ["--no-dashboard"],
        stderr=subprocess.DEVNULL,
    )
    workers = [
        subprocess.Popen(
            [*cli, "distributed.cli.dask_worker", address, "--nthreads", "1"]
            + ["--no-dashboard", "--host", "127.0.0.1"],
            stderr=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]
    try:
        yield address, scheduler
    finally:
        for process in [*workers, scheduler]:
            process.kill()
            process.wait(timeout=30)


def test_a_dead_scheduler_fails_steps_and_new_sessions_at_once_naming_it(external_scheduler):
    address, scheduler = external_scheduler
    cluster = Cluster.from_address(
        address, security=False, spec={"ps": 1, "worker": 1}, health_interval=0.5
    )
    try:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v")
        with tf.device("/job:worker/task:0"):
            doubled = v * 2.0
        sess = tf.Session(cluster.target)
        sess.run(v.initializer)
        assert sess.run(doubled) == 2.0
        scheduler.kill()
        killed = time.monotonic()
        with pytest.raises(errors.UnavailableError) as info:
            while time.monotonic() - killed < 30:  # until the loss shows
                sess.run(doubled)
        assert time.monotonic() - killed < 5
        assert "scheduler" in info.value.message and address in info.value.message
        started = time.monotonic()
        with pytest.raises(errors.UnavailableError, match="scheduler"):
            tf.Session(cluster.target)
        assert time.monotonic() - started < 2  # no wait for workers that cannot come
    finally:
        cluster.close()
