"""Queues: blocking (async) enqueue/dequeue, close, deadlines and the queue kinds."""

import threading

import numpy as np
import pytest

import nbflow as tf


def _in_thread(fn):
    out = {}

    def run():
        try:
            out["value"] = fn()
        except Exception as e:  # noqa: BLE001 - handed to the test
            out["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def _wait_for(predicate, timeout=10.0):
    done = threading.Event()
    for _ in range(int(timeout / 0.005)):
        if predicate():
            return True
        done.wait(0.005)
    return predicate()


def test_fifo_queue_orders_elements_and_reports_size():
    q = tf.FIFOQueue(10, [tf.int32, tf.float32], shapes=[[], [2]])
    enq = q.enqueue_many([[1, 2, 3], [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]])
    a, b = q.dequeue()
    many = q.dequeue_many(2)
    with tf.Session() as sess:
        sess.run(enq)
        assert sess.run(q.size()) == 3
        first = sess.run([a, b])
        assert first[0] == 1 and list(first[1]) == [1.0, 1.0]
        ints, floats = sess.run(many)
        np.testing.assert_array_equal(ints, [2, 3])
        assert floats.shape == (2, 2)
        assert a.shape == tf.TensorShape([]) and many[1].shape.as_list() == [2, 2]


def test_consumer_blocks_until_producer_enqueues():
    q = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
    x = tf.placeholder(tf.float32, [])
    enq, deq = q.enqueue([x]), q.dequeue()
    with tf.Session() as sess:
        consumer, out = _in_thread(lambda: [sess.run(deq) for _ in range(5)])
        for v in range(5):
            sess.run(enq, {x: float(v)})
        consumer.join(10)
        assert out["value"] == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_full_queue_blocks_producer_until_consumer_dequeues():
    q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
    enq = q.enqueue_many([[1, 2, 3]])
    deq = q.dequeue()
    with tf.Session() as sess:
        producer, out = _in_thread(lambda: sess.run(enq))
        assert _wait_for(lambda: sess.run(q.size()) == 1)
        assert producer.is_alive()
        got = [sess.run(deq) for _ in range(3)]
        producer.join(10)
        assert got == [1, 2, 3] and "error" not in out


def test_close_wakes_blocked_dequeue_with_out_of_range_and_drains_first():
    q = tf.FIFOQueue(5, [tf.int32], shapes=[[]])
    deq = q.dequeue()
    with tf.Session() as sess:
        sess.run(q.enqueue(7))
        assert sess.run(deq) == 7
        consumer, out = _in_thread(lambda: sess.run(deq))
        sess.run(q.close())
        consumer.join(10)
        assert isinstance(out["error"], tf.errors.OutOfRangeError)
        assert sess.run(q.is_closed())
        with pytest.raises(tf.errors.CancelledError, match="closed"):
            sess.run(q.enqueue(1))


def test_close_cancel_pending_enqueues_fails_blocked_producer():
    q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
    with tf.Session() as sess:
        sess.run(q.enqueue(1))
        producer, out = _in_thread(lambda: sess.run(q.enqueue(2)))
        assert _wait_for(lambda: len(sess._device.resources.items("")) >= 0 and producer.is_alive())
        sess.run(q.close(cancel_pending_enqueues=True))
        producer.join(10)
        assert isinstance(out["error"], tf.errors.CancelledError)
        assert sess.run(q.dequeue_up_to(5)).tolist() == [1]


def test_blocked_dequeue_times_out_and_its_waiter_is_withdrawn():
    q = tf.FIFOQueue(3, [tf.int32], shapes=[[]])
    deq = q.dequeue()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(deq, options=tf.RunOptions(timeout_in_ms=50))
        sess.run(q.enqueue(5))
        assert sess.run(q.size()) == 1  # no stale waiter took the element
        assert sess.run(deq) == 5


def test_hundred_blocked_steps_do_not_starve_the_pool():
    q = tf.FIFOQueue(200, [tf.int32], shapes=[[]])
    deq = q.dequeue()
    results = []
    lock = threading.Lock()
    with tf.Session() as sess:
        sess.run(q.size())

        def consume():
            value = sess.run(deq)
            with lock:
                results.append(int(value))

        threads = [threading.Thread(target=consume) for _ in range(100)]
        for t in threads:
            t.start()
        # With 100 dequeues parked, other steps still run on the same pool.
        assert sess.run(tf.constant(2) * 3) == 6
        sess.run(q.enqueue_many([list(range(100))]))
        for t in threads:
            t.join(20)
    assert sorted(results) == list(range(100))


def test_dequeue_up_to_returns_a_short_last_batch_after_close():
    q = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
    batch = q.dequeue_up_to(4)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2, 3, 4, 5, 6]]))
        sess.run(q.close())
        assert sess.run(batch).tolist() == [1, 2, 3, 4]
        assert sess.run(batch).tolist() == [5, 6]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(batch)


def _shuffled(seed):
    tf.reset_default_graph()
    q = tf.RandomShuffleQueue(20, 5, [tf.int32], shapes=[[]], seed=seed)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([list(range(20))]))
        sess.run(q.close())
        return sess.run(q.dequeue_up_to(20)).tolist()


def test_random_shuffle_queue_is_seeded_and_keeps_min_after_dequeue():
    a, b = _shuffled(1), _shuffled(1)
    assert a == b and sorted(a) == list(range(20)) and a != list(range(20))
    q = tf.RandomShuffleQueue(10, 3, [tf.int32], shapes=[[]], seed=2)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2, 3]]))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue(), options=tf.RunOptions(timeout_in_ms=50))
        sess.run(q.enqueue(4))
        assert sess.run(q.dequeue()) in (1, 2, 3, 4)


def test_padding_fifo_queue_pads_variable_dimensions():
    q = tf.PaddingFIFOQueue(5, [tf.int32], shapes=[[None]])
    x = tf.placeholder(tf.int32, [None])
    with tf.Session() as sess:
        sess.run(q.enqueue([x]), {x: [1]})
        sess.run(q.enqueue([x]), {x: [2, 3, 4]})
        np.testing.assert_array_equal(sess.run(q.dequeue_many(2)), [[1, 0, 0], [2, 3, 4]])


def test_priority_queue_dequeues_smallest_priority_first():
    q = tf.PriorityQueue(10, [tf.string], shapes=[[]])
    with tf.Session() as sess:
        sess.run(q.enqueue_many([np.array([3, 1, 2], np.int64), [b"c", b"a", b"b"]]))
        prio, values = sess.run(q.dequeue_many(3))
        assert prio.tolist() == [1, 2, 3] and list(values) == [b"a", b"b", b"c"]
