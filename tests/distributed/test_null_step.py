"""The short path of a step: small messages, steps on the message loop, no thread hops."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

import nbflow as tf
from nbflow.distributed.wire import decode, encode
from nbflow.runtime.config import RunMetadata, RunOptions


def _registered(dask_worker):
    """Whether each registered subgraph can run on its worker's message loop."""
    host = dask_worker._nbflow_host
    return {
        (task, handle): registered.loop_drivers is not None
        for task, server in host.tasks.items()
        for handle, registered in server.graphs.items()
    }


def test_small_values_travel_inline_and_keep_dtype_shape_and_scalar_kind():
    for value in (np.float32(2.5), np.arange(6, dtype=np.int64).reshape(2, 3), np.zeros(0, bool)):
        packed = encode(value)
        assert type(packed) is list
        back = decode(tuple(packed), writable=True)  # Dask's msgpack reads lists as tuples
        assert type(back) is type(value) and back.dtype == value.dtype
        np.testing.assert_array_equal(back, value)
    assert not decode(encode(np.ones(3))).flags.writeable
    assert type(encode(np.ones(1 << 15))) is not list  # 256 KB: Dask's own frames


def test_null_step_runs_on_the_tasks_message_loops_without_a_control_message(cluster):
    with tf.device("/job:ps/task:0"):
        weight = tf.Variable(2.0, name="null_weight")
        count = tf.Variable(0.0, name="null_count")
    with tf.device("/job:worker/task:0"):
        value = tf.reduce_sum(weight) * 0.0 + 1.0
    with tf.device("/job:ps/task:0"):
        update = tf.assign_add(count, value)
    step = tf.group(update)  # a NoOp on the session's task, waiting for the ps
    options, metadata = RunOptions(output_partition_graphs=True), RunMetadata()
    with tf.Session(cluster.target) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(4):
            sess.run(step, options=options, run_metadata=metadata)
        assert sess.run(count) == 4.0
    ops = {n["op"] for g in metadata.partition_graphs for n in g["node"]}
    assert "_ControlSend" not in ops and "_Send" in ops
    on_loop = {}
    for found in cluster.client.run(_registered).values():
        on_loop.update(found)
    assert on_loop and all(on_loop.values())


def test_feeds_and_fetches_small_and_large_come_back_equal_and_writable(cluster):
    with tf.device("/job:ps/task:1"):
        x = tf.placeholder(tf.float32, [None])
        doubled = x * 2.0
    small, large = np.arange(5, dtype=np.float32), np.arange(100_000, dtype=np.float32)
    with tf.Session(cluster.target) as sess:
        for fed in (small, large):
            got = sess.run(doubled, {x: fed})
            np.testing.assert_array_equal(got, fed * 2)
            assert got.flags.writeable
            got[0] = 7.0


def test_a_step_runs_from_a_thread_whose_event_loop_is_busy_running_it(cluster):
    with tf.device("/job:ps/task:1"):
        v = tf.Variable(3.0, name="loop_v")
    with tf.device("/job:worker/task:1"):
        y = v * 2.0
    with tf.Session(cluster.target) as sess:
        sess.run(v.initializer)

        async def cell():  # a Jupyter cell runs inside the kernel's event loop
            return sess.run(y)

        assert asyncio.run(cell()) == 6.0
        results = []
        threads = [threading.Thread(target=lambda: results.append(sess.run(y))) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [6.0] * 3


def test_a_step_past_its_deadline_fails_on_every_task_and_the_next_one_runs(cluster):
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(2, [tf.float32], shapes=[[]], name="deadline_queue")
        item = queue.dequeue()  # blocks on a driver thread of the ps
    with tf.device("/job:worker/task:0"):
        doubled = item * 2.0  # its Recv parks on the worker's message loop
    with tf.Session(cluster.target) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(doubled, options=tf.RunOptions(timeout_in_ms=200))
        sess.run(queue.enqueue(3.0))
        assert sess.run(queue.size()) == 1  # no stale waiter took the element
        assert sess.run(doubled) == 6.0


def _loop_drivers(dask_worker):
    """The kind of driver of each partition of each subgraph that runs on the message loop."""
    host = dask_worker._nbflow_host
    return {
        (task, handle): [type(d).__name__ for d in registered.loop_drivers or ()]
        if registered.on_loop
        else []
        for task, server in host.tasks.items()
        for handle, registered in server.graphs.items()
    }


def test_tasks_trading_values_back_and_forth_run_in_line_on_their_loops(cluster):
    # worker -> ps -> worker -> ps: each task's Recv waits on the other task for a Send of its
    # own that nothing in its own graph orders before it (multi_device.order_by_transfers)
    with tf.device("/job:ps/task:0"):
        x = tf.placeholder(tf.float32, [3], name="pp_x")
    with tf.device("/job:worker/task:0"):
        first = x + 1.0
    with tf.device("/job:ps/task:0"):
        back = first * 2.0
    with tf.device("/job:worker/task:0"):
        second = back + 1.0
    with tf.device("/job:ps/task:0"):
        result = second * 3.0
    xs = np.array([0.0, 1.0, -2.0], np.float32)
    with tf.Session(cluster.target) as sess:
        for k in range(6):  # past the first runs, which go to a driver thread
            np.testing.assert_allclose(sess.run(result, {x: xs + k}), ((xs + k + 1) * 2 + 1) * 3)
    drivers = {}
    for found in cluster.client.run(_loop_drivers).values():
        drivers.update({key: kinds for key, kinds in found.items() if kinds})
    assert drivers and all(kinds == ["ResumableInline"] for kinds in drivers.values()), drivers
