"""Training shows on the Dask dashboard: the scheduler serves each task's steps."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request

import pytest
from distributed import Client

import nbflow as tf
from nbflow import errors
from nbflow.distributed import Cluster
from nbflow.distributed.dashboard import (
    PLUGIN_NAME,
    NbflowDashboard,
    StepLog,
    register_dashboard,
    render_page,
)

PS, WORKER = "/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"


@pytest.fixture(scope="module")
def cluster():
    with Cluster.local(
        n_workers=2,
        threads_per_worker=1,
        memory_limit="1GiB",
        dashboard=True,
        spec={"ps": 1, "worker": 1},
    ) as c:
        yield c


def _get(cluster: Cluster, path: str) -> tuple[str, str]:
    base = cluster.dashboard_link.rsplit("/status", 1)[0]
    assert base.startswith("http://127.0.0.1:"), base
    with urllib.request.urlopen(f"{base}/{path}", timeout=10) as reply:
        return reply.headers.get("Content-Type", ""), reply.read().decode()


def _wait_for_rows(cluster: Cluster, done, timeout: float = 20.0) -> dict[str, dict]:
    deadline = time.monotonic() + timeout
    while True:
        rows = {
            r["task"]: r for r in json.loads(_get(cluster, "json/nbflow-steps.json")[1])["tasks"]
        }
        if done(rows):
            return rows
        if time.monotonic() > deadline:
            raise AssertionError(f"dashboard rows after {timeout} s: {rows}")
        time.sleep(0.05)


def test_dashboard_shows_each_tasks_steps_and_lists_the_page_for_dask_labextension(cluster):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            count = tf.Variable(0.0, name="count")
        with tf.device("/job:worker/task:0"):
            value = tf.reduce_sum(count) * 0.0 + 1.0
        with tf.device("/job:ps/task:0"):
            step = tf.assign_add(count, value)
        with tf.Session(cluster.target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(7):
                sess.run(step)
            early = _wait_for_rows(cluster, lambda rows: {PS, WORKER} <= set(rows))
            for _ in range(5):
                sess.run(step)
    # The PS ran the initializer and 12 steps, the worker 12 steps.
    rows = _wait_for_rows(
        cluster, lambda rows: rows[PS]["steps"] >= 13 and rows[WORKER]["steps"] >= 12
    )
    assert early[WORKER]["steps"] <= 7  # counted as they ran, not at the session's end
    assert rows[PS]["mean_step_ms"] > 0 and rows[WORKER]["mean_recv_wait_ms"] > 0
    assert rows[PS]["worker"] != rows[WORKER]["worker"]  # each on its own Dask worker
    assert rows[PS]["errors"] == 0 and rows[PS]["last_error"] == ""

    kind, page = _get(cluster, "individual-nbflow-steps")
    assert kind.startswith("text/html")
    assert PS in page and WORKER in page and f"<td>{rows[PS]['steps']:,}</td>" in page

    plots = json.loads(_get(cluster, "individual-plots.json")[1])
    assert plots["Individual nbflow Steps"] == "/individual-nbflow-steps"
    assert "Individual Task Stream" in plots  # Dask's own panes are still listed


def test_a_failed_step_shows_as_the_tasks_last_error(cluster):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            x = tf.placeholder(tf.float32, [None], name="x")
            bad = tf.reshape(x, [3])
        with tf.Session(cluster.target) as sess:
            with pytest.raises(errors.InvalidArgumentError):
                sess.run(bad, feed_dict={x: [1.0, 2.0]})
    rows = _wait_for_rows(cluster, lambda rows: rows.get(PS, {}).get("errors", 0) >= 1)
    assert "InvalidArgumentError" in rows[PS]["last_error"]


def _dashboard_plugin_id(dask_scheduler) -> int:
    return id(dask_scheduler.plugins[PLUGIN_NAME])


def test_a_client_attaching_later_keeps_the_plugin_and_its_rows(cluster):
    def one_step() -> None:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                one = tf.constant(1.0) + 0.0
            with tf.Session(cluster.target) as sess:
                sess.run(one)

    one_step()
    before = _wait_for_rows(cluster, lambda rows: rows.get(PS, {}).get("steps", 0) >= 1)
    running = cluster.client.run_on_scheduler(_dashboard_plugin_id)
    with Client(str(cluster.client.scheduler.address), security=cluster.security) as other:
        register_dashboard(other)  # as a Cluster made for a second client does
    assert cluster.client.run_on_scheduler(_dashboard_plugin_id) == running
    one_step()
    _wait_for_rows(cluster, lambda rows: rows[PS]["steps"] > before[PS]["steps"])


class _Stream:
    """Carries a StepLog's events to a NbflowDashboard as Dask's worker-to-scheduler stream
    does (``Scheduler.log_worker_event`` adds the worker's address)."""

    def __init__(self, dashboard: NbflowDashboard, address: str):
        self.dashboard, self.address = dashboard, address

    def log_event(self, topic: str, msg: dict) -> None:
        self.dashboard.log_event(topic, {**msg, "worker": self.address})


def test_a_task_created_anew_counts_from_zero_and_keeps_its_step_rate():
    dashboard = NbflowDashboard()
    log = StepLog(_Stream(dashboard, "tls://127.0.0.1:1"), flush_s=3600)

    async def steps() -> None:
        for _ in range(3):
            log.record(PS, "first", 1e-3, 0.0)
        log.flush()
        log.record(PS, "second", 2e-3, 1e-3)  # the task was recreated in the same worker
        log.flush()
        await asyncio.sleep(0.01)
        log.record(PS, "second", 2e-3, 1e-3)
        log.flush()

    asyncio.run(steps())
    (row,) = dashboard.snapshot()
    assert (row["task"], row["incarnation"], row["steps"]) == (PS, "second", 2)
    assert row["mean_step_ms"] == pytest.approx(2.0) and row["mean_recv_wait_ms"] == pytest.approx(
        1.0
    )
    assert row["steps_per_s"] > 0


def test_page_escapes_what_it_shows():
    row = {
        "task": "<script>",
        "worker": "tls://127.0.0.1:1",
        "steps": 1234,
        "steps_per_s": 10.0,
        "mean_step_ms": 1.5,
        "mean_recv_wait_ms": 0.25,
        "errors": 0,
        "last_error": "",
    }
    page = render_page([row])
    assert "<td><script>" not in page and "<td>&lt;script&gt;</td>" in page
    assert "<td>1,234</td>" in page
    assert "no nbflow steps yet" in render_page([])
