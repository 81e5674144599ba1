"""Monitored sessions: hooks, checkpoint restore at start-up, summaries and recovery."""

import io
import logging
import time

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors


def _training_graph():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(np.zeros(2, np.float32), name="w")
    loss = tf.reduce_sum(w, name="loss")
    train_op = tf.group(tf.assign_add(w, np.ones(2, np.float32)), tf.assign_add(step, np.int64(1)))
    return step, w, loss, train_op


def _train(sess, train_op):
    runs = 0
    while not sess.should_stop():
        sess.run(train_op)
        runs += 1
    return runs


def test_stop_at_step_and_checkpoints_then_resume_from_the_latest(tmp_path):
    step, w, _, train_op = _training_graph()
    hooks = [tf.train.StopAtStepHook(last_step=10)]
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path), save_checkpoint_steps=4, hooks=hooks
    ) as sess:
        assert _train(sess, train_op) == 10
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-10")
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert [p.rsplit("-", 1)[1] for p in state.all_model_checkpoint_paths][-3:] == ["4", "8", "10"]
    tf.reset_default_graph()
    step, w, _, train_op = _training_graph()
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path), hooks=[tf.train.StopAtStepHook(num_steps=3)]
    ) as sess:
        assert sess.run(step) == 10  # restored, not initialized
        assert _train(sess, train_op) == 3
        np.testing.assert_array_equal(sess.run(w), [13.0, 13.0])


def test_summary_saver_and_step_counter_write_event_logs(tmp_path):
    step, _, loss, train_op = _training_graph()
    tf.summary.scalar("train_loss", loss)
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path),
        save_summaries_steps=2,
        log_step_count_steps=2,
        hooks=[tf.train.StopAtStepHook(last_step=6)],
    ) as sess:
        _train(sess, train_op)
    reader = tf.summary.read_logdir(str(tmp_path))
    scalars = reader.scalars(".")
    assert len(scalars["train_loss"].steps) == 3 and list(scalars["train_loss"].steps) == sorted(
        scalars["train_loss"].steps
    )
    assert "global_step/sec" in scalars and reader.graph(".") is not None


def test_nan_tensor_hook_raises_or_requests_stop():
    x = tf.placeholder(tf.float32, [])
    tf.train.get_or_create_global_step()
    with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(x)]) as sess:
        sess.run(x, {x: 1.0})
        with pytest.raises(tf.train.NanLossDuringTrainingError):
            sess.run(x, {x: np.nan})
    with tf.train.MonitoredSession(
        hooks=[tf.train.NanTensorHook(x, fail_on_nan_loss=False)]
    ) as sess:
        sess.run(x, {x: np.nan})
        assert sess.should_stop()


def test_logging_tensor_hook_logs_every_n_iterations(caplog):
    _, _, loss, train_op = _training_graph()
    hook = tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=2)
    with caplog.at_level(logging.INFO, logger="nbflow.train"):
        with tf.train.MonitoredSession(hooks=[hook, tf.train.StopAtStepHook(last_step=5)]) as sess:
            _train(sess, train_op)
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("loss = ")]
    assert len(logged) == 3


def test_progress_bar_hook_shows_steps_per_second_and_loss():
    _, _, loss, train_op = _training_graph()
    out = io.StringIO()
    bar = tf.train.ProgressBarHook(last_step=4, loss=loss, file=out, mininterval=0)
    with tf.train.MonitoredSession(hooks=[bar, tf.train.StopAtStepHook(last_step=4)]) as sess:
        _train(sess, train_op)
    text = out.getvalue()
    assert "4/4" in text and "steps/s" in text and "loss=" in text
    assert bar.latest_loss in (6.0, 8.0)  # read before or after the last update


class _FailOnce(tf.train.SessionRunHook):
    """Simulates a lost parameter server: one run fails with a recoverable error."""

    def __init__(self, error, at_run):
        self.error, self.at_run, self.runs, self.sessions = error, at_run, 0, 0

    def after_create_session(self, session, coord):
        self.sessions += 1

    def before_run(self, run_context):
        self.runs += 1
        if self.runs == self.at_run:
            raise self.error(None, None, "connection to /job:ps/task:0 lost")


@pytest.mark.parametrize("error", [errors.AbortedError, errors.UnavailableError])
def test_recovers_from_aborted_or_unavailable_by_restoring_the_latest_checkpoint(tmp_path, error):
    step, w, _, train_op = _training_graph()
    failing = _FailOnce(error, at_run=6)
    hooks = [tf.train.StopAtStepHook(last_step=8), failing]
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path), save_checkpoint_steps=3, hooks=hooks
    ) as sess:
        runs = _train(sess, train_op)
        final = sess.run(w)
    assert failing.sessions == 2  # the session was recreated
    # 5 steps ran, a checkpoint at step 3 was restored, then training reached step 8
    assert runs == 5 + 5
    np.testing.assert_array_equal(final, [8.0, 8.0])


def test_singular_monitored_session_does_not_recover_and_exposes_the_raw_session():
    _training_graph()
    with tf.train.SingularMonitoredSession(hooks=[_FailOnce(errors.AbortedError, 1)]) as sess:
        assert isinstance(sess.raw_session(), tf.Session)
        with pytest.raises(errors.AbortedError):
            sess.run(tf.train.get_global_step())


def test_out_of_range_ends_the_session_quietly_and_hooks_see_the_end():
    _, _, loss, _ = _training_graph()
    final = tf.train.FinalOpsHook(loss)
    with tf.train.MonitoredSession(hooks=[final]) as sess:
        raise errors.OutOfRangeError(None, None, "input exhausted")
    assert sess.should_stop() and final.final_ops_values == 0.0


def test_scaffold_finalizes_the_graph_and_run_step_fn_can_stop():
    step, _, _, train_op = _training_graph()
    scaffold = tf.train.Scaffold()
    with tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=scaffold)) as sess:
        assert tf.get_default_graph().finalized and scaffold.saver is not None

        def step_fn(context):
            context.run_with_hooks(train_op)
            context.request_stop()
            return context.session.run(step)

        assert sess.run_step_fn(step_fn) == 1
        assert sess.should_stop()


def test_checkpoint_saver_listener_sees_every_save(tmp_path):
    _, _, _, train_op = _training_graph()

    class Listener(tf.train.CheckpointSaverListener):
        steps = []

        def after_save(self, session, global_step_value):
            self.steps.append(global_step_value)

    saver = tf.train.Saver()
    hook = tf.train.CheckpointSaverHook(
        str(tmp_path), save_steps=2, saver=saver, listeners=[Listener()]
    )
    with tf.train.MonitoredSession(hooks=[hook, tf.train.StopAtStepHook(last_step=5)]) as sess:
        _train(sess, train_op)
    assert Listener.steps == [0, 2, 4, 5]


class _FlakyCreator:
    """Makes sessions whose first ``failing`` runs raise UnavailableError (a lost task)."""

    def __init__(self, failing: int, fail_creation: bool = False):
        self.failing = failing
        self.fail_creation = fail_creation
        self.created = 0
        self.runs = 0

    def create_session(self):
        self.created += 1
        if self.fail_creation and self.created > 1:
            raise errors.UnavailableError(None, None, "The Dask scheduler tcp://x is gone")
        creator = self

        class Flaky(tf.Session):
            def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
                creator.runs += 1
                if creator.runs <= creator.failing:
                    raise errors.UnavailableError(None, None, f"lost task, run {creator.runs}")
                return super().run(fetches, feed_dict, options, run_metadata)

        return Flaky()


def test_recovery_retries_with_back_off_then_gives_up(monkeypatch):
    from nbflow.train import monitored_session

    monkeypatch.setattr(monitored_session, "RECOVERY_BACKOFF_S", 0.01)
    c = tf.constant(3.0)
    # Three failures in a row: three new sessions (waiting 0.01 s, then 0.02 s), then it runs.
    creator = _FlakyCreator(failing=3)
    with tf.train.MonitoredSession(session_creator=creator) as sess:
        assert sess.run(c) == 3.0
    assert creator.created == 4
    # A failure that never ends (the scheduler is gone for good) is raised after the bound,
    # having waited 0.01 + 0.02 + ... + 0.64 s between the attempts.
    creator = _FlakyCreator(failing=1, fail_creation=True)
    start = time.monotonic()
    with pytest.raises(errors.UnavailableError, match="scheduler"):
        with tf.train.MonitoredSession(session_creator=creator) as sess:
            sess.run(c)
    assert creator.created == 1 + monitored_session.RECOVERY_ATTEMPTS
    assert time.monotonic() - start >= 0.01 * (2 ** (monitored_session.RECOVERY_ATTEMPTS - 1) - 1)
