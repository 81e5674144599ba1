"""HistogramSummary counts on a background thread: the same bytes, errors naming the node, the
values of when it started, and no hang when its step is cancelled."""

import threading

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors
from nbflow.framework import protos
from nbflow.ops import histogram, summary_ops
from nbflow.runtime.executor import InlineExecutor

from tests.summary.test_histogram import reference_histogram

RUNNERS = ["inline", "parallel"]  # the straight-line runner and the dataflow executor


@pytest.fixture(autouse=True, params=[True, False], ids=["background", "in_line"])
def in_background(request, monkeypatch):
    """Every test runs with the histogram counted on the worker and in the kernel's thread."""
    monkeypatch.setattr(summary_ops, "histograms_in_background", request.param)
    return request.param


def _session(runner):
    sess = tf.Session()
    sess._executor_choice = runner
    return sess


def _histogram(serialized, tag):
    (value,) = [v for v in protos.Summary.FromString(serialized).value if v.tag == tag]
    return value.histo


@pytest.fixture
def blocked_worker():
    """The summary worker busy with a job that waits for the returned event (set on exit)."""
    release, started = threading.Event(), threading.Event()

    def job():
        started.set()
        release.wait(30)

    summary_ops._worker.submit(job, lambda result=None, error=None: None)
    assert started.wait(10), "the summary worker never took the blocking job"
    yield release
    release.set()


@pytest.mark.parametrize("runner", RUNNERS)
def test_background_histogram_gives_the_synchronous_bytes_and_the_reference_buckets(runner):
    weights = (np.random.default_rng(3).standard_normal((784, 100)) * 0.05).astype(np.float32)
    loss = tf.constant(0.25, name="loss_value")
    w = tf.Variable(weights, name="weights")
    merged = tf.summary.merge([tf.summary.scalar("loss", loss), tf.summary.histogram("w", w)])
    with _session(runner) as sess:
        sess.run(tf.global_variables_initializer())
        serialized = sess.run(merged)
    seen, expected = _histogram(serialized, "w"), reference_histogram(weights)
    assert seen.SerializeToString() == histogram.histogram_bytes(weights)  # the synchronous path
    assert (seen.min, seen.max, seen.num) == (expected.min, expected.max, expected.num)
    assert (seen.bucket_limit, seen.bucket) == (expected.bucket_limit, expected.bucket)
    np.testing.assert_allclose(
        [seen.sum, seen.sum_squares], [expected.sum, expected.sum_squares], rtol=1e-12
    )
    scalar = protos.Summary(value=[protos.Summary.Value(tag="loss", simple_value=0.25)])
    assert serialized.startswith(scalar.SerializeToString())  # merged in input order


def test_straight_line_step_starts_the_histogram_before_the_step_and_joins_it_at_its_reader():
    x = tf.placeholder(tf.float32, [4], name="x")
    y = tf.square(x, name="y")
    h = tf.summary.histogram("hist", x)
    merged = tf.summary.merge([tf.summary.scalar("s", tf.reduce_sum(y)), h])
    with _session("inline") as sess:
        sess.run(merged, {x: np.arange(4, dtype=np.float32)})
        (step,) = sess._steps.values()
    assert isinstance(step.runner, InlineExecutor)
    lines = step.runner.source.splitlines()
    start = next(k for k, line in enumerate(lines) if "= _Pending()" in line)
    join = next(k for k, line in enumerate(lines) if ".wait(ctx, deadline)" in line)
    (node,) = [n.index for n in step.runner.plan.nodes if n.op is y.op]
    square = next(k for k, line in enumerate(lines) if f"# node {node}:" in line)
    assert start < square < join  # created after the square, the histogram starts before it


@pytest.mark.parametrize("runner", RUNNERS)
def test_nan_fails_the_step_naming_the_histogram_node(runner):
    v = tf.Variable([1.0, 2.0], name="v")
    poison = tf.assign(v, [1.0, np.nan])
    h = tf.summary.histogram("weights", v)
    with _session(runner) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(poison)
        with pytest.raises(errors.InvalidArgumentError) as caught:
            sess.run(h)
    assert "Nan in summary histogram for: weights" in caught.value.message
    assert caught.value.op is h.op
    assert "[[node weights (HistogramSummary)" in caught.value.message
    with _session(runner) as sess:  # the worker survives a failed histogram
        sess.run(tf.global_variables_initializer())
        assert _histogram(sess.run(h), "weights").num == 2


@pytest.mark.parametrize("runner", RUNNERS)
def test_histogram_ordered_before_an_update_of_the_same_step_sees_the_old_values(runner):
    v = tf.Variable(np.ones(1000, np.float32), name="v")
    h = tf.summary.histogram("hist", v)
    with tf.control_dependencies([h]):
        update = tf.assign_add(v, np.full(1000, 10.0, np.float32))
    with _session(runner) as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(3):
            serialized, _ = sess.run([h, update])
            seen = _histogram(serialized, "hist")
            old = 1.0 + 10 * step
            assert (seen.min, seen.max, seen.sum) == (old, old, 1000 * old)


def test_histogram_beside_an_unordered_update_counts_one_consistent_snapshot():
    v = tf.Variable(np.zeros(200_000, np.float32), name="v")
    h = tf.summary.histogram("hist", v)
    update = tf.assign_add(v, np.ones(200_000, np.float32))
    with _session("parallel") as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(20):
            seen = _histogram(sess.run([h, update])[0], "hist")
            assert sum(seen.bucket) == 200_000 and seen.num == 200_000


@pytest.mark.parametrize("runner", RUNNERS)
def test_closing_the_session_ends_a_step_waiting_for_its_histogram(
    runner, in_background, blocked_worker
):
    if not in_background:
        pytest.skip("only a histogram on the worker can keep a step waiting")
    h = tf.summary.histogram("x", tf.constant([1.0, 2.0]))
    sess = _session(runner)
    outcome = []

    def run():
        try:
            outcome.append(sess.run(h))
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    waited = threading.Event()
    for _ in range(1000):  # until the step is running (it waits for the blocked worker)
        if sess._running:
            break
        waited.wait(0.01)
    assert sess._running, "the step never started"
    sess.close()
    thread.join(10)
    assert not thread.is_alive(), "the step hangs after Session.close"
    assert isinstance(outcome[0], errors.CancelledError)


def test_a_step_deadline_ends_the_wait_for_a_histogram(in_background, blocked_worker):
    if not in_background:
        pytest.skip("only a histogram on the worker can keep a step waiting")
    h = tf.summary.histogram("x", tf.constant([1.0, 2.0]))
    with _session("inline") as sess, pytest.raises(errors.DeadlineExceededError) as caught:
        sess.run(h, options=tf.RunOptions(timeout_in_ms=50))
    assert caught.value.op is h.op


def test_straight_line_histogram_counts_the_values_it_started_with_though_an_update_follows():
    v = tf.Variable(np.ones(200_000, np.float32), name="v")
    h = tf.summary.histogram("hist", v)
    update = tf.assign_add(v, np.ones(200_000, np.float32))  # not ordered after the histogram
    with _session("inline") as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(5):
            seen = _histogram(sess.run([h, update])[0], "hist")
            assert (seen.min, seen.max, seen.sum) == (
                1.0 + step,
                1.0 + step,
                200_000.0 * (1 + step),
            )
