"""Monitored sessions: a training loop's session with hooks, checkpoint restore and recovery.

    with tf.train.MonitoredTrainingSession(checkpoint_dir="/tmp/run", hooks=[
            tf.train.StopAtStepHook(last_step=1000)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)

Creating one finalizes the graph (``Scaffold``: init op, ready op, saver, summary op), then a
session creator makes the session: it restores the latest checkpoint of ``checkpoint_dir`` if
there is one, else runs the init op. Every ``run`` gathers the hooks' extra fetches and feeds,
runs once, and hands each hook its results. When ``run`` fails with AbortedError or
UnavailableError (a lost worker or parameter server), the session is closed and recreated, which
restores the latest checkpoint, and the step is retried (OSDI §4.3).

Recovery is bounded, unlike TensorFlow's endless loop: a failure that recurs
(``RECOVERY_ATTEMPTS`` recoveries in a row with no successful step between them, e.g. a Dask
scheduler that is gone for good) waits ``RECOVERY_BACKOFF_S`` seconds before the first retry,
twice as long before each next one (at most ``RECOVERY_BACKOFF_MAX_S``), and then raises the
last error. A step that succeeds resets the count.
"""

from __future__ import annotations

import logging
import time
from typing import Any
from collections.abc import Callable, Sequence

from nbflow import errors
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import GraphKeys
from nbflow.ops import control_flow_ops, summary_ops, variables
from nbflow.runtime.config import RunMetadata
from nbflow.train import basic_session_run_hooks as hooks_lib
from nbflow.train import saver as saver_lib
from nbflow.train.session_manager import SessionManager
from nbflow.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

_log = logging.getLogger("nbflow.train")
USE_DEFAULT = object()


class Scaffold:
    """The ops a monitored session needs; ``finalize`` fills in defaults and freezes the graph."""

    def __init__(
        self,
        init_op: Any = None,
        init_feed_dict: dict | None = None,
        init_fn: Callable[[Scaffold, Any], None] | None = None,
        ready_op: Any = None,
        ready_for_local_init_op: Any = None,
        local_init_op: Any = None,
        summary_op: Any = None,
        saver: Any = None,
        copy_from_scaffold: Scaffold | None = None,
    ):
        if copy_from_scaffold is not None:
            init_op = init_op or copy_from_scaffold.init_op
            init_feed_dict = init_feed_dict or copy_from_scaffold.init_feed_dict
            init_fn = init_fn or copy_from_scaffold._user_init_fn
            ready_op = ready_op or copy_from_scaffold.ready_op
            local_init_op = local_init_op or copy_from_scaffold.local_init_op
            summary_op = summary_op or copy_from_scaffold.summary_op
            saver = saver or copy_from_scaffold.saver
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._user_init_fn: Callable[..., Any] | None = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self) -> None:
        """Create the default ops that were not given, then finalize the graph."""
        graph = ops_lib.get_default_graph()
        # On a finalized graph (a second monitored session) the defaults come from the
        # collections the first scaffold filled; nothing new is created.
        if self._init_op is None:
            self._init_op = self.get_or_default(
                "init_op", GraphKeys.INIT_OP, variables.global_variables_initializer
            )
        if self._ready_op is None:
            self._ready_op = self.get_or_default(
                "ready_op", GraphKeys.READY_OP, variables.report_uninitialized_variables
            )
        if self._local_init_op is None:
            self._local_init_op = self.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op
            )
        if self._summary_op is None:
            self._summary_op = self.get_or_default(
                "summary_op", GraphKeys.SUMMARY_OP, summary_ops.merge_all
            )
        if self._saver is None:
            savers = ops_lib.get_collection(GraphKeys.SAVERS)
            if len(savers) > 1:
                raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}.")
            self._saver = savers[0] if savers else saver_lib.Saver(sharded=True, allow_empty=True)
        if not graph.finalized:
            graph.finalize()

    @staticmethod
    def get_or_default(arg_name: str, collection_key: str, default_constructor: Callable) -> Any:
        found = ops_lib.get_collection(collection_key)
        if found:
            if len(found) > 1:
                raise RuntimeError(
                    f"More than one item in the collection {collection_key}. Please indicate "
                    f"which one to use by passing it to the tf.Scaffold constructor as: "
                    f"tf.Scaffold({arg_name}=item to use)"
                )
            return found[0]
        op = default_constructor()
        if op is not None:
            ops_lib.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op() -> Any:
        return control_flow_ops.group(variables.local_variables_initializer())

    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    init_fn = property(lambda self: self._init_fn)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    local_init_op = property(lambda self: self._local_init_op)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)


class SessionCreator:
    """Makes the session a MonitoredSession wraps: subclasses define ``create_session()``."""

    def create_session(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement create_session()")


class _SessionCreator(SessionCreator):
    """What both session creators share: a scaffold, the master and the session config."""

    def __init__(self, scaffold: Scaffold | None, master: str, config: Any):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config

    def _session_manager(self) -> SessionManager:
        """Finalize the scaffold; a SessionManager for its ops on the default graph."""
        self._scaffold.finalize()
        return SessionManager(
            local_init_op=self._scaffold.local_init_op,
            ready_op=self._scaffold.ready_op,
            graph=ops_lib.get_default_graph(),
        )


class ChiefSessionCreator(_SessionCreator):
    """Creates the chief's session: restores the latest checkpoint or initializes."""

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
    ):
        super().__init__(scaffold, master, config)
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self) -> Any:
        return self._session_manager().prepare_session(
            self._master,
            saver=self._scaffold.saver,
            checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config,
            init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict,
            init_fn=self._scaffold.init_fn,
        )


class WorkerSessionCreator(_SessionCreator):
    """Creates a non-chief worker's session: waits until the chief has initialized the model."""

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: Any = None,
        max_wait_secs: float = 30 * 60,
    ):
        super().__init__(scaffold, master, config)
        self._max_wait_secs = max_wait_secs

    def create_session(self) -> Any:
        manager = self._session_manager()
        return manager.wait_for_session(self._master, self._config, self._max_wait_secs)


class StepContext:
    """What ``run_step_fn``'s function gets: the raw session, hooked runs, a stop request."""

    def __init__(self, session: Any, run_with_hooks: Callable[..., Any]):
        self._session = session
        self._run_with_hooks = run_with_hooks
        self._stop = False

    @property
    def session(self) -> Any:
        return self._session

    def run_with_hooks(self, *args: Any, **kwargs: Any) -> Any:
        return self._run_with_hooks(*args, **kwargs)

    def request_stop(self) -> None:
        self._stop = True


_RECOVERABLE = (errors.AbortedError, errors.UnavailableError)
RECOVERY_ATTEMPTS = 8  # recoveries in a row, with no step between them, before giving up
RECOVERY_BACKOFF_S = 0.25  # the wait before the second of them; doubled each time after
RECOVERY_BACKOFF_MAX_S = 8.0


class _MonitoredSession:
    """Hooks around every run, recovery by recreating the session, and the stop protocol."""

    def __init__(
        self,
        session_creator: Any,
        hooks: Sequence[SessionRunHook] | None,
        should_recover: bool,
        stop_grace_period_secs: float = 120,
    ):
        self._graph = ops_lib.get_default_graph()
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._session_creator = session_creator
        self._should_recover = should_recover
        self._stop_requested = False
        self._closed = False
        self._sess: Any = None
        self._failures = 0  # recoverable failures since the last successful step
        self._create_session()

    @property
    def graph(self) -> ops_lib.Graph:
        return self._graph

    def _create_session(self) -> None:
        with self._graph.as_default():
            while True:
                try:
                    self._sess = self._session_creator.create_session()
                    break
                except _RECOVERABLE as e:
                    if not self._should_recover:
                        raise
                    _log.info("An error was raised while a session was being created: %s", e)
                    self._back_off(e)
            for hook in self._hooks:
                hook.after_create_session(self._sess, None)

    def _back_off(self, error: errors.OpError) -> None:
        """Count a recoverable failure; wait before the next attempt, or give up (raise)."""
        self._failures += 1
        if self._failures > RECOVERY_ATTEMPTS:
            _log.error("Giving up after %d recovery attempts in a row", RECOVERY_ATTEMPTS)
            raise error
        if self._failures > 1:
            time.sleep(min(RECOVERY_BACKOFF_MAX_S, RECOVERY_BACKOFF_S * 2 ** (self._failures - 2)))

    def run(
        self,
        fetches: Any,
        feed_dict: dict | None = None,
        options: Any = None,
        run_metadata: Any = None,
    ) -> Any:
        """Run ``fetches`` with the hooks' additions; retried on a new session if recoverable."""
        if self._closed:
            raise RuntimeError("Run called even after should_stop requested.")
        while True:
            try:
                outputs = self._run_with_hooks(fetches, feed_dict, options, run_metadata)
                self._failures = 0
                return outputs
            except _RECOVERABLE as e:
                if not self._should_recover:
                    raise
                _log.info(
                    "An error was raised. This may be due to a preemption in a connected "
                    "worker or parameter server. The current session will be closed and a new "
                    "session will be created. Error: %s",
                    e,
                )
                self._close_session()
                self._back_off(e)
                self._create_session()

    def _run_with_hooks(
        self, fetches: Any, feed_dict: dict | None, options: Any, run_metadata: Any
    ) -> Any:
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), self._sess)
        all_fetches: dict[Any, Any] = {"caller": fetches}
        feeds = dict(feed_dict or {})
        for i, hook in enumerate(self._hooks):
            request = hook.before_run(context)
            if request is None:
                continue
            if request.fetches is not None:
                all_fetches[i] = request.fetches
            for key, value in (request.feed_dict or {}).items():
                if key in feeds:
                    raise RuntimeError(f"Same tensor is fed by a SessionRunHook and user: {key}")
                feeds[key] = value
            if request.options is not None and options is None:
                options = request.options
        if options is not None and run_metadata is None:
            run_metadata = RunMetadata()  # a hook asked for a trace: it reads it in after_run
        outputs = self._sess.run(
            all_fetches, feed_dict=feeds or None, options=options, run_metadata=run_metadata
        )
        for i, hook in enumerate(self._hooks):
            hook.after_run(context, SessionRunValues(outputs.get(i), options, run_metadata))
        self._stop_requested = self._stop_requested or context.stop_requested
        return outputs["caller"]

    def run_step_fn(self, step_fn: Callable[[StepContext], Any]) -> Any:
        """Run ``step_fn(step_context)``; it may use the raw session or run with hooks."""
        context = StepContext(self._sess, self.run)
        result = step_fn(context)
        if context._stop:
            self._stop_requested = True
        return result

    def should_stop(self) -> bool:
        return self._stop_requested or self._closed

    def _close_session(self) -> None:
        if self._sess is not None:
            try:
                self._sess.close()
            except Exception:  # noqa: BLE001 - the session may already be broken
                pass
            self._sess = None

    def close(self) -> None:
        self._close_internal(None)

    def _close_internal(self, exception_type: type | None) -> None:
        if self._closed:
            return
        try:
            if exception_type is None and self._sess is not None:
                for hook in self._hooks:
                    hook.end(self._sess)
        finally:
            self._close_session()
            self._closed = True

    def __enter__(self) -> _MonitoredSession:
        return self

    def __exit__(self, exception_type: Any, exception_value: Any, traceback: Any) -> bool:
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None  # the end of the input ends training quietly


class MonitoredSession(_MonitoredSession):
    """A session with hooks that recovers from AbortedError/UnavailableError."""

    def __init__(
        self,
        session_creator: Any = None,
        hooks: Sequence[SessionRunHook] | None = None,
        stop_grace_period_secs: float = 120,
    ):
        super().__init__(
            session_creator or ChiefSessionCreator(), hooks, True, stop_grace_period_secs
        )


class SingularMonitoredSession(_MonitoredSession):
    """A monitored session for a single process: no recovery, and access to the raw session."""

    def __init__(
        self,
        hooks: Sequence[SessionRunHook] | None = None,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: Any = None,
        checkpoint_dir: str | None = None,
        stop_grace_period_secs: float = 120,
        checkpoint_filename_with_path: str | None = None,
    ):
        creator = ChiefSessionCreator(
            scaffold=scaffold,
            master=master,
            config=config,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
        )
        super().__init__(creator, hooks, False, stop_grace_period_secs)

    def raw_session(self) -> Any:
        return self._sess


def MonitoredTrainingSession(  # noqa: N802 - TensorFlow's name
    master: str = "",
    is_chief: bool = True,
    checkpoint_dir: str | None = None,
    scaffold: Scaffold | None = None,
    hooks: Sequence[SessionRunHook] | None = None,
    chief_only_hooks: Sequence[SessionRunHook] | None = None,
    save_checkpoint_secs: Any = USE_DEFAULT,
    save_summaries_steps: Any = USE_DEFAULT,
    save_summaries_secs: Any = USE_DEFAULT,
    config: Any = None,
    stop_grace_period_secs: float = 120,
    log_step_count_steps: int = 100,
    max_wait_secs: float = 7200,
    save_checkpoint_steps: Any = USE_DEFAULT,
    summary_dir: str | None = None,
) -> MonitoredSession:
    """A MonitoredSession set up for training: the chief restores or initializes, and saves
    checkpoints (default every 600 s), summaries (every 100 steps) and steps/sec."""
    save_summaries_steps, save_summaries_secs = _every(
        save_summaries_steps, save_summaries_secs, 100, None
    )
    save_checkpoint_steps, save_checkpoint_secs = _every(
        save_checkpoint_steps, save_checkpoint_secs, None, 600
    )
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator: SessionCreator = WorkerSessionCreator(scaffold, master, config, max_wait_secs)
        return MonitoredSession(creator, list(hooks or []), stop_grace_period_secs)
    all_hooks: list[SessionRunHook] = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(
                hooks_lib.StepCounterHook(
                    output_dir=summary_dir, every_n_steps=log_step_count_steps
                )
            )
        if (save_summaries_steps and save_summaries_steps > 0) or (
            save_summaries_secs and save_summaries_secs > 0
        ):
            all_hooks.append(
                hooks_lib.SummarySaverHook(
                    scaffold=scaffold,
                    save_steps=save_summaries_steps,
                    save_secs=save_summaries_secs,
                    output_dir=summary_dir,
                )
            )
    if checkpoint_dir and (
        (save_checkpoint_secs and save_checkpoint_secs > 0)
        or (save_checkpoint_steps and save_checkpoint_steps > 0)
    ):
        all_hooks.append(
            hooks_lib.CheckpointSaverHook(
                checkpoint_dir,
                save_steps=save_checkpoint_steps,
                save_secs=save_checkpoint_secs,
                scaffold=scaffold,
            )
        )
    all_hooks.extend(hooks or [])
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)


def _every(steps: Any, secs: Any, default_steps: Any, default_secs: Any) -> tuple[Any, Any]:
    """A (steps, secs) period of MonitoredTrainingSession: the defaults when neither is given,
    else what was given (the other one None)."""
    if steps is USE_DEFAULT and secs is USE_DEFAULT:
        return default_steps, default_secs
    return (None if steps is USE_DEFAULT else steps), (None if secs is USE_DEFAULT else secs)
