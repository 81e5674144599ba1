"""Tasks on a real LocalCluster: placement on Dask workers, cross-task steps, PS training."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors
from nbflow.distributed import DistributedSession
from nbflow.runtime.config import RunMetadata, RunOptions
from nbflow.train.device_setter import replica_device_setter
from nbflow.train.server_lib import ClusterSpec, Server

from tests.distributed.conftest import linear_model, regression_batch

SPEC = ClusterSpec({"ps": 2, "worker": 2})


def test_tasks_are_spread_over_the_dask_workers_and_listed_in_the_summary(cluster):
    workers = {t.address for t in cluster.tasks.values()}
    assert len(workers) == 2
    ps = [t for t in cluster.tasks.values() if t.job == "ps"]
    assert ps[0].address != ps[1].address  # parameter servers first, on different workers
    assert cluster.check_health() == {name: True for name in cluster.tasks}
    text = cluster.summary()
    for name, task in cluster.tasks.items():
        assert name in text and task.address in text
    assert "<table>" in cluster._repr_html_()


def test_session_target_runs_a_step_whose_edges_cross_tasks(cluster):
    with tf.device("/job:ps/task:1"):
        v = tf.Variable(np.arange(4, dtype=np.float32), name="v")
    with tf.device("/job:worker/task:1"):
        x = tf.placeholder(tf.float32, [4])
        y = tf.reduce_sum(v * x)
    with tf.Session(cluster.target) as sess:
        assert isinstance(sess, DistributedSession)
        sess.run(v.initializer)
        options = RunOptions(output_partition_graphs=True)
        metadata = RunMetadata()
        got = sess.run(y, {x: np.ones(4, np.float32)}, options=options, run_metadata=metadata)
    assert got == pytest.approx(6.0)
    by_device = {g["device"]: {n["op"] for n in g["node"]} for g in metadata.partition_graphs}
    assert "_Send" in by_device["/job:ps/replica:0/task:1/device:CPU:0"]
    assert "_Recv" in by_device["/job:worker/replica:0/task:1/device:CPU:0"]


def test_variables_live_on_their_task_across_sessions(cluster):
    with tf.device("/job:ps/task:0"):
        counter = tf.Variable(0, name="counter")
        bump = tf.assign_add(counter, 1)
    with tf.Session(cluster.target) as sess:
        sess.run(counter.initializer)
        for _ in range(3):
            sess.run(bump)
    with tf.Session(cluster.target) as again:
        assert again.run(counter) == 3


def test_an_error_on_a_task_names_the_task_and_the_node(cluster):
    with tf.device("/job:ps/task:0"):
        never = tf.Variable(1.0, name="never_initialized")
    with tf.device("/job:worker/task:0"):
        doubled = never * 2.0
    with tf.Session(cluster.target) as sess:
        with pytest.raises(errors.FailedPreconditionError) as info:
            sess.run(doubled)
    assert "/job:ps/replica:0/task:0" in str(info.value)
    assert "never_initialized" in str(info.value)


def test_step_timing_splits_compute_and_communication(cluster):
    with tf.device("/job:ps/task:0"):
        a = tf.Variable(np.ones((200, 200), np.float32), name="timing_a")
    with tf.device("/job:worker/task:0"):
        b = tf.matmul(a, a)
    with tf.Session(cluster.target) as sess:
        sess.run(a.initializer)
        sess.run(b)
        timing = sess.last_step_timing
    assert timing.total >= timing.compute > 0
    assert timing.communication == pytest.approx(timing.total - timing.compute)
    assert set(timing.tasks) == {"/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"}
    assert "communication" in str(timing)


def test_server_target_is_a_session_target(cluster):
    server = Server(SPEC, job_name="worker", task_index=0, cluster=cluster)
    assert server.target == cluster.target
    with tf.device("/job:worker/task:0"):
        c = tf.constant(2.0) * 3.0
    with tf.Session(server.target) as sess:
        assert sess.run(c) == 6.0


def test_between_graph_replicas_train_one_model_asynchronously(cluster):
    """Two client loops (threads), each with its own graph and session, update shared PS
    variables (OSDI §4.4, asynchronous replication)."""
    graphs, init_ops = [], []
    steps = 60

    def build(task: int):
        graph = tf.Graph()
        with graph.as_default():
            setter = replica_device_setter(cluster=SPEC, worker_device=f"/job:worker/task:{task}")
            with tf.device(setter):
                x, y, loss, w, b = linear_model()
                global_step = tf.train.get_or_create_global_step()
                train = tf.train.GradientDescentOptimizer(0.1).minimize(
                    loss, global_step=global_step
                )
            init = tf.global_variables_initializer()
        assert w.device.startswith("/job:ps/task:0") and b.device.startswith("/job:ps/task:1")
        return graph, (x, y, loss, train, global_step), init

    built = [build(i) for i in range(2)]
    graphs = [g for g, _, _ in built]
    init_ops = [i for _, _, i in built]
    with tf.Session(cluster.target, graph=graphs[0]) as chief:
        chief.run(init_ops[0])
    losses: dict[int, list[float]] = {0: [], 1: []}

    def replica(task: int) -> None:
        _, (x, y, loss, train, _), _ = built[task]
        rng = np.random.default_rng(task)
        with tf.Session(cluster.target, graph=graphs[task]) as sess:
            for _ in range(steps):
                xs, ys = regression_batch(rng)
                losses[task].append(sess.run([loss, train], {x: xs, y: ys})[0])

    threads = [threading.Thread(target=replica, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    global_step = built[0][1][4]
    with tf.Session(cluster.target, graph=graphs[0]) as sess:
        assert sess.run(global_step) == 2 * steps
    for task in range(2):
        assert losses[task][-1] < 0.05 * losses[task][0]


def test_in_graph_replication_averages_tower_gradients(cluster):
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(np.zeros((3, 1), np.float32), name="tower_w")
    opt = tf.train.GradientDescentOptimizer(0.2)
    feeds, grads, losses = [], [], []
    for task in range(2):
        with tf.device(f"/job:worker/task:{task}"):
            x = tf.placeholder(tf.float32, [None, 3])
            y = tf.placeholder(tf.float32, [None, 1])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            grads.append(opt.compute_gradients(loss, [w])[0][0])
            feeds.append((x, y))
            losses.append(loss)
    with tf.device("/job:ps/task:0"):
        train = opt.apply_gradients([(tf.add_n(grads) / 2.0, w)])
    rng = np.random.default_rng(3)
    with tf.Session(cluster.target) as sess:
        sess.run(w.initializer)
        for _ in range(80):
            feed = {}
            for x, y in feeds:
                xs, ys = regression_batch(rng)
                feed[x], feed[y] = xs, ys - 0.3
            sess.run(train, feed)
        final = sess.run(w)
    np.testing.assert_allclose(final.ravel(), [1.0, -2.0, 0.5], atol=0.05)
