"""The hook protocol of monitored sessions: what a hook sees around every ``run()``.

    class PrintLoss(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(loss)          # fetched along with the caller's fetches
        def after_run(self, run_context, run_values):
            print(run_values.results)

Order of calls: ``begin`` (graph still editable), ``after_create_session`` (for each new
session, also after recovery), then per step ``before_run`` / ``after_run``, and ``end``.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class SessionRunHook:
    """Base class: override the calls you need."""

    def begin(self) -> None:
        """Called once before the graph is finalized: add ops here."""

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Called when a session is created or recreated (after restore or init)."""

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        """Return SessionRunArgs to add fetches, feeds or options to the coming run."""
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Called with the results of the fetches this hook asked for."""

    def end(self, session: Any) -> None:
        """Called at the end of the session (not when it ends in an exception)."""


class SessionRunArgs(NamedTuple):
    """What a hook adds to a run: fetches, feeds and RunOptions."""

    fetches: Any
    feed_dict: dict | None = None
    options: Any = None


class SessionRunValues(NamedTuple):
    """The results of a hook's fetches, plus the run's options and metadata."""

    results: Any
    options: Any
    run_metadata: Any


class SessionRunContext:
    """The run being made: its original arguments, the session, and a way to ask to stop."""

    def __init__(self, original_args: SessionRunArgs, session: Any):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        return self._original_args

    @property
    def session(self) -> Any:
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        """Ask the monitored session to stop after this step."""
        self._stop_requested = True
