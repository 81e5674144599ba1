"""SyncReplicasOptimizer on a real LocalCluster: between-graph replicas (threads, one session
each) aggregate through per-variable accumulators and a token queue on the ps tasks (OSDI §4.4).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import nbflow as tf
from nbflow.distributed import Cluster
from nbflow.train.coordinator import Coordinator
from nbflow.train.device_setter import replica_device_setter
from nbflow.train.server_lib import ClusterSpec
from nbflow.train.sync_replicas_optimizer import SyncReplicasOptimizer

SPEC = ClusterSpec({"ps": 2, "worker": 3})
TIMEOUT = 60


@pytest.fixture(scope="module")
def cluster():
    with Cluster.local(
        n_workers=2, threads_per_worker=1, memory_limit="1GiB", spec={"ps": 2, "worker": 3}
    ) as c:
        yield c


def build_replica(task: int, m: int, n: int):
    """loss = sum(w * c): the gradient of w is the fed c, so aggregates are easy to predict."""
    graph = tf.Graph()
    with graph.as_default():
        with tf.device(
            replica_device_setter(cluster=SPEC, worker_device=f"/job:worker/task:{task}")
        ):
            w = tf.Variable(np.zeros(2, np.float32), name="sync_w")
            global_step = tf.train.get_or_create_global_step()
            c = tf.placeholder(tf.float32, [2], name="c")
            opt = SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0), m, n)
            train = opt.minimize(tf.reduce_sum(w * c), global_step=global_step)
            hook = opt.make_session_run_hook(is_chief=task == 0, num_tokens=0)
            hook.begin()
        init = tf.global_variables_initializer()
    assert w.device.startswith("/job:ps/task:0") and global_step.device.startswith("/job:ps/task:1")
    return graph, hook, init, train, c, w, global_step


def start_replicas(cluster, m: int, n: int):
    """Sessions for n replicas; the chief's hook starts the aggregation thread."""
    cluster.reset()  # the token queue and accumulators are shared by name across tests
    built = [build_replica(r, m, n) for r in range(n)]
    coord = Coordinator()
    chief = tf.Session(cluster.target, graph=built[0][0])
    chief.run(built[0][2])
    built[0][1].after_create_session(chief, coord)
    sessions = []
    for r, (graph, hook, *_rest) in enumerate(built):
        sess = tf.Session(cluster.target, graph=graph)
        if r:
            hook.after_create_session(sess, coord)
        sessions.append(sess)
    return built, chief, coord, sessions


def stop(chief, coord, sessions) -> None:
    coord.request_stop()
    for sess in sessions:
        sess.close()
    chief.close()  # cancels the aggregation step blocked in take_grad
    for t in coord._registered:
        t.join(TIMEOUT)
        assert not t.is_alive()


def run_threads(fn, n: int, sessions: list, barrier: threading.Barrier | None = None) -> None:
    """Run ``fn(r)`` for each replica; the first failure cancels the others' steps."""
    errors: list[BaseException] = []

    def guarded(r: int) -> None:
        try:
            fn(r)
        except BaseException as e:  # noqa: BLE001 - re-raised in the test thread
            errors.append(e)
            if barrier is not None:
                barrier.abort()
            for sess in sessions:
                sess.close()  # cancels steps blocked on the token queue

    threads = [threading.Thread(target=guarded, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
        assert not t.is_alive(), "a replica hangs"
    if errors:
        raise errors[0]


def test_global_step_advances_once_per_aggregate_by_the_mean_gradient(cluster):
    built, chief, coord, sessions = start_replicas(cluster, m=2, n=2)
    steps = 4
    rng = np.random.default_rng(0)
    grads = rng.normal(size=(steps, 2, 2)).astype(np.float32)  # [step, replica]
    in_step = threading.Barrier(2, timeout=TIMEOUT)
    seen: list[tuple[int, np.ndarray]] = []

    def replica(r: int) -> None:
        _, _, _, train, c, w, global_step = built[r]
        for i in range(steps):
            sess = sessions[r]
            token = sess.run(train, {c: grads[i, r]})
            assert token == i + 1  # released only by the aggregate of step i
            in_step.wait()  # both replicas finished step i: one gradient each
            if r == 0:
                seen.append((sess.run(global_step), sess.run(w)))

    try:
        run_threads(replica, 2, sessions, in_step)
    finally:
        stop(chief, coord, sessions)
    expected = -np.cumsum(grads.mean(axis=1), axis=0)
    assert [s for s, _ in seen] == list(range(1, steps + 1))
    np.testing.assert_allclose(np.stack([v for _, v in seen]), expected, rtol=1e-5, atol=1e-6)


def test_backup_worker_takes_the_first_m_and_drops_the_stragglers_stale_gradients(cluster):
    """3 replicas, m = 2: the straggler only runs once the others moved past its local step,
    so each of its gradients is stale; the aggregates go on without it."""
    built, chief, coord, sessions = start_replicas(cluster, m=2, n=3)
    target = 6
    fast_grad, straggler_grad = np.float32([1.0, -2.0]), np.float32([100.0, 100.0])
    progress = threading.Condition()
    newest = [0]  # the highest token a fast replica got: the aggregates applied so far
    fast_done = [0]
    straggler_steps = []

    def fast(r: int) -> None:
        _, _, _, train, c, _, _ = built[r]
        token = 0
        try:
            while token < target:
                token = int(sessions[r].run(train, {c: fast_grad}))
                with progress:
                    newest[0] = max(newest[0], token)
                    progress.notify_all()
        finally:
            with progress:
                fast_done[0] += 1
                progress.notify_all()

    def straggler() -> None:
        _, _, _, train, c, _, _ = built[2]
        local_step = 0
        while True:
            with progress:  # the deliberate slowness: wait until its step is over
                progress.wait_for(lambda: newest[0] > local_step or fast_done[0] == 2, TIMEOUT)
                if fast_done[0] == 2:
                    return
            local_step = int(sessions[2].run(train, {c: straggler_grad}))
            straggler_steps.append(local_step)

    def replica(r: int) -> None:
        if r < 2:
            fast(r)
        else:
            straggler()

    try:
        run_threads(replica, 3, sessions)
        global_step, w = built[0][6], built[0][5]
        final_step, final_w = sessions[0].run([global_step, w])
    finally:
        stop(chief, coord, sessions)
    assert final_step == target
    assert straggler_steps  # it ran, and none of its gradients got in:
    np.testing.assert_allclose(final_w, -target * fast_grad, rtol=1e-6)


def test_sync_replicas_optimizer_rejects_misuse():
    with tf.Graph().as_default():
        w = tf.Variable(1.0)
        opt = SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2, 3)
        with pytest.raises(ValueError, match="Global step"):
            opt.minimize(w * 2.0)
        with pytest.raises(ValueError, match="after apply_gradients"):
            opt.get_init_tokens_op()
        step = tf.train.get_or_create_global_step()
        opt.minimize(w * 2.0, global_step=step)
        with pytest.raises(ValueError, match="Too few tokens"):
            opt.get_init_tokens_op(num_tokens=-2)
        assert opt.get_chief_queue_runner().enqueue_ops
