"""Kernels that wait (queues, readers, mutexes) in the straight-line runner (runtime/executor.py).

A step whose waiting kernels form one chain runs as generated code: each waiting kernel after
everything that does not depend on it, started and joined where it stands. Every test that
states a behaviour runs under both runners: the straight-line one ("auto" picks it) and the
dataflow executor ("parallel"), which must agree.
"""

import threading
import time

import numpy as np
import pytest

import nbflow as tf
from nbflow.runtime.drivers import DataflowExecutor
from nbflow.runtime.executor import InlineExecutor

RUNNERS = ["auto", "parallel"]  # the straight-line runner and the dataflow executor


def _session(runner):
    sess = tf.Session()
    sess._executor_choice = runner
    return sess


def _runner_of(sess, op):
    (runner,) = [s.runner for key, s in sess._steps.items() if op.name in repr(key)]
    return runner


def _wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.001)


def test_a_reader_step_runs_in_a_straight_line_and_reads_every_record(tmp_path):
    rng = np.random.default_rng(0)
    tables = [rng.standard_normal((7, 3)).round(4) for _ in range(2)]
    paths = []
    for k, table in enumerate(tables):
        path = tmp_path / f"part{k}.csv"
        path.write_text("".join(",".join(f"{v:g}" for v in row) + "\n" for row in table))
        paths.append(str(path))
    files = tf.train.string_input_producer(paths, shuffle=False, num_epochs=1)
    _, line = tf.TextLineReader().read(files)
    record = tf.stack(tf.decode_csv(line, [[0.0]] * 3))
    records = tf.FIFOQueue(100, tf.float32, shapes=[[3]])
    enqueue = records.enqueue([record])  # the reader's dequeue, then this enqueue: one chain
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        for _ in range(14):
            sess.run(enqueue)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(enqueue)  # one epoch: the reader's queue is closed and empty
        assert isinstance(_runner_of(sess, enqueue), InlineExecutor)
        got = sess.run(records.dequeue_many(14))
        coord.request_stop()
        coord.join(threads)
    np.testing.assert_allclose(got, np.concatenate(tables), rtol=1e-6)


def test_waiting_kernels_that_are_no_chain_keep_the_dataflow_executor():
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    enqueue, dequeue = q.enqueue([tf.constant(5.0)]), q.dequeue()
    with tf.Session() as sess:
        # neither depends on the other: the dequeue must be able to wait while the enqueue runs
        _, got = sess.run([enqueue, dequeue], options=tf.RunOptions(timeout_in_ms=5000))
        assert got == np.float32(5.0)
        (step,) = sess._steps.values()
        assert isinstance(step.runner, DataflowExecutor)


@pytest.mark.parametrize("runner", RUNNERS)
def test_while_a_step_waits_in_a_queue_what_does_not_depend_on_it_has_run(runner):
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    v = tf.Variable(0.0)
    marked = tf.assign(v, 5.0)
    dequeue = q.dequeue()
    enqueue = q.enqueue([tf.constant(2.0)])
    sess = _session(runner)
    sess.run(v.initializer)
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.update(got=sess.run([dequeue, marked])))
    thread.start()
    _wait_until(lambda: sess.run(v.value()) == 5.0)  # the assign ran; the dequeue still waits
    assert thread.is_alive()
    sess.run(enqueue)
    thread.join(10)
    assert outcome["got"] == [np.float32(2.0), np.float32(5.0)]
    sess.close()


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_queue_closed_in_the_same_step_ends_its_dequeue(runner):
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    with _session(runner) as sess, pytest.raises(tf.errors.OutOfRangeError, match="closed"):
        sess.run([q.dequeue(), q.close()], options=tf.RunOptions(timeout_in_ms=5000))


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_deadline_names_the_waiting_node_and_withdraws_its_waiter(runner):
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    dequeue = tf.identity(q.dequeue(name="take"), name="took") * 2.0
    with _session(runner) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError) as caught:
            sess.run(dequeue, options=tf.RunOptions(timeout_in_ms=100))
        assert "still waiting in 'take' (QueueDequeueV2)" in caught.value.message
        assert caught.value.op.name == "take"
        sess.run(q.enqueue([tf.constant(3.0)]))  # no stale waiter takes this element
        assert sess.run(dequeue) == np.float32(6.0)


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_step_that_fails_after_taking_a_mutex_gives_it_up(runner):
    cs = tf.CriticalSection()
    x = tf.placeholder(tf.float32, [None])
    checked = cs.execute(lambda: tf.check_numerics(x, "bad input"))
    with _session(runner) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad input") as caught:
            sess.run(checked, {x: [np.nan]})
        got = sess.run(checked, {x: [1.0]}, options=tf.RunOptions(timeout_in_ms=5000))
        np.testing.assert_allclose(got, [1.0])
        del caught  # its traceback holds the failed step's frame: no matter, the mutex is free
