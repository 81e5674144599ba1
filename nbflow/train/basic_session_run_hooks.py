"""The standard hooks of monitored training (TensorFlow 1.x's ``basic_session_run_hooks``).

Each hook adds its fetches to the caller's ``run`` (usually the global step) and acts on the
results: stopping at a step, saving checkpoints and summaries, logging, counting steps per
second, failing on NaN losses, and drawing a tqdm progress bar in a terminal or a notebook.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any
from collections.abc import Callable

import numpy as np

from nbflow.framework import ops as ops_lib
from nbflow.framework import protos
from nbflow.framework.ops import GraphKeys
from nbflow.runtime.config import RunOptions
from nbflow.runtime.timeline import Timeline
from nbflow.train.training_util import get_global_step
from nbflow.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from nbflow.summary.writer import FileWriterCache

_log = logging.getLogger("nbflow.train")


def _require_global_step(hook: str) -> Any:
    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook}.")
    return step


class SecondOrStepTimer:
    """Triggers every ``every_secs`` seconds or every ``every_steps`` steps (exactly one)."""

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("exactly one of every_secs and every_steps should be provided.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self) -> None:
        self._last_time: float | None = None
        self._last_step: int | None = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_time + self._every_secs  # type: ignore[operator]
        return step >= self._last_step + self._every_steps  # type: ignore[operator]

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        """Record a trigger; returns (seconds, steps) since the previous one (None at first)."""
        now = time.time()
        last_time, last_step = self._last_time, self._last_step
        elapsed = (
            None if last_time is None or last_step is None else (now - last_time, step - last_step)
        )
        self._last_time, self._last_step = now, step
        return elapsed if elapsed is not None else (None, None)

    def last_triggered_step(self) -> int | None:
        return self._last_step


def _value(x: Any) -> int:
    return int(np.asarray(x))


# --- stopping ---------------------------------------------------------------------------------
class StopAtStepHook(SessionRunHook):
    """Requests a stop when the global step reaches ``last_step`` (or start + ``num_steps``)."""

    def __init__(self, num_steps: int | None = None, last_step: int | None = None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and num_steps < 0:
            raise ValueError("num_steps must be non-negative.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self) -> None:
        self._global_step = _require_global_step("StopAtStepHook")

    def after_create_session(self, session: Any, coord: Any) -> None:
        step = _value(session.run(self._global_step))
        if self._last_step is None:
            self._last_step = step + self._num_steps  # type: ignore[operator]
        if step >= self._last_step:
            self._stop_now = True
        else:
            self._stop_now = False

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        if getattr(self, "_stop_now", False):
            run_context.request_stop()
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = _value(run_values.results) + 1
        if step >= self._last_step:  # type: ignore[operator]
            step = _value(run_context.session.run(self._global_step))
            if step >= self._last_step:  # type: ignore[operator]
                run_context.request_stop()


class GlobalStepWaiterHook(SessionRunHook):
    """Delays this worker's first step until the global step reaches ``wait_until_step``.

    Workers of asynchronous training start after the chief has taken a few steps, so their
    stale gradients land on a model that has already moved. It polls the global step every
    0.5 s, logging the wait, and never waits again once the step was reached.
    """

    POLL_SECS = 0.5

    def __init__(self, wait_until_step: int):
        self._wait_until_step = wait_until_step

    def begin(self) -> None:
        self._worker_is_started = False
        self._global_step = _require_global_step("GlobalStepWaiterHook")

    def before_run(self, run_context: SessionRunContext) -> None:
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        _log.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged = None
        while not run_context.stop_requested:
            step = _value(run_context.session.run(self._global_step))
            if step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if step != last_logged:
                _log.info(
                    "Waiting for global step %d before starting training; now %d.",
                    self._wait_until_step,
                    step,
                )
                last_logged = step
            time.sleep(self.POLL_SECS)
        return None


class ProfilerHook(SessionRunHook):
    """Traces a step every ``save_steps`` steps or ``save_secs`` seconds (never the first step,
    which is dominated by setup) and writes its Chrome trace to ``output_dir/timeline-<step>.json``
    (open in chrome://tracing or Perfetto), and its RunMetadata to the summaries of
    ``output_dir`` for TensorBoard."""

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str = "",
        show_dataflow: bool = True,
        show_memory: bool = False,
    ):
        self._output_dir = output_dir
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        self._next_step: int | None = None
        self._global_step = _require_global_step("ProfilerHook")
        self._file_writer = FileWriterCache.get(self._output_dir)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        self._request_trace = self._next_step is not None and self._timer.should_trigger_for_step(
            self._next_step
        )
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._request_trace else None
        return SessionRunArgs({"global_step": self._global_step}, options=options)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        stale_step = _value(run_values.results["global_step"])
        if self._next_step is None:
            self._timer.update_last_triggered_step(stale_step)
        step = stale_step + 1
        metadata = run_values.run_metadata
        if self._request_trace and metadata is not None and metadata.step_stats is not None:
            step = _value(run_context.session.run(self._global_step))
            self._timer.update_last_triggered_step(step)
            trace = Timeline(metadata.step_stats).generate_chrome_trace_format(
                show_dataflow=self._show_dataflow, show_memory=self._show_memory
            )
            with open(self._output_file.format(step), "w") as f:
                f.write(trace)
            self._file_writer.add_run_metadata(metadata, f"step_{step}", step)
        self._next_step = step + 1


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails (NanLossDuringTrainingError) or stops when ``loss_tensor`` becomes NaN."""

    def __init__(self, loss_tensor: Any, fail_on_nan_loss: bool = True):
        self._loss = loss_tensor
        self._fail = fail_on_nan_loss

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._loss)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if np.isnan(run_values.results).any():
            if self._fail:
                _log.error("Model diverged with loss = NaN.")
                raise NanLossDuringTrainingError
            _log.warning("Model diverged with loss = NaN. Requesting stop.")
            run_context.request_stop()


# --- logging ----------------------------------------------------------------------------------
class LoggingTensorHook(SessionRunHook):
    """Logs the values of ``tensors`` every N steps or seconds (and optionally at the end)."""

    def __init__(
        self,
        tensors: Any,
        every_n_iter: int | None = None,
        every_n_secs: float | None = None,
        at_end: bool = False,
        formatter: Callable[[dict[str, Any]], str] | None = None,
    ):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError(
                "either at_end and/or exactly one of every_n_iter and every_n_secs "
                "must be provided."
            )
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = [t if isinstance(t, str) else t.name for t in tensors]
            tensors = {name: t for name, t in zip(self._tag_order, tensors)}
        else:
            self._tag_order = sorted(tensors)
        self._tensors = tensors
        self._formatter = formatter
        self._log_at_end = at_end
        self._timer = None if only_log_at_end else SecondOrStepTimer(every_n_secs, every_n_iter)
        self.last_logged: str | None = None

    def begin(self) -> None:
        if self._timer is not None:
            self._timer.reset()
        self._iter_count = 0
        graph = ops_lib.get_default_graph()
        self._current = {
            tag: graph.as_graph_element(t) if isinstance(t, str) else t
            for tag, t in self._tensors.items()
        }

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        self._should_trigger = self._timer is not None and self._timer.should_trigger_for_step(
            self._iter_count
        )
        return SessionRunArgs(self._current) if self._should_trigger else None

    def _log_tensors(self, values: dict[str, Any]) -> None:
        if self._formatter is not None:
            message = self._formatter(values)
        else:
            message = ", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order)
            if self._timer is not None:
                elapsed, _ = self._timer.update_last_triggered_step(self._iter_count)
                if elapsed is not None:
                    message += f" ({elapsed:.3f} sec)"
        self.last_logged = message
        _log.info("%s", message)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session: Any) -> None:
        if self._log_at_end:
            self._log_tensors(session.run(self._current))


class StepCounterHook(SessionRunHook):
    """Measures global steps per second; logs it and writes the ``global_step/sec`` summary."""

    def __init__(
        self,
        every_n_steps: int | None = 100,
        every_n_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
    ):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_n_secs, every_n_steps)
        self._output_dir = output_dir
        self._summary_writer = summary_writer
        self.last_rate: float | None = None

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step = _require_global_step("StepCounterHook")
        self._summary_tag = f"{self._global_step.op.name}/sec"

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = _value(run_values.results)
        if self._timer.should_trigger_for_step(step):
            elapsed, steps = self._timer.update_last_triggered_step(step)
            if elapsed is not None and steps is not None and elapsed > 0:
                self.last_rate = steps / elapsed
                _log.info("%s: %g", self._summary_tag, self.last_rate)
                if self._summary_writer is not None:
                    summary = protos.Summary(
                        value=[
                            protos.Summary.Value(tag=self._summary_tag, simple_value=self.last_rate)
                        ]
                    )
                    self._summary_writer.add_summary(summary, step)


# --- checkpoints and summaries ------------------------------------------------------------------
class CheckpointSaverListener:
    """Called around each checkpoint that CheckpointSaverHook saves."""

    def begin(self) -> None:
        pass

    def before_save(self, session: Any, global_step_value: int) -> None:
        pass

    def after_save(self, session: Any, global_step_value: int) -> bool | None:
        """Return True to request a stop of training."""
        return None

    def end(self, session: Any, global_step_value: int) -> None:
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint every N steps or seconds, at session creation and at the end."""

    def __init__(
        self,
        checkpoint_dir: str,
        save_secs: float | None = None,
        save_steps: int | None = None,
        saver: Any = None,
        checkpoint_basename: str = "model.ckpt",
        scaffold: Any = None,
        listeners: list[CheckpointSaverListener] | None = None,
        save_graph_def: bool = True,
    ):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._scaffold = scaffold
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._timer = SecondOrStepTimer(save_secs, save_steps)
        self._listeners = listeners or []
        self._save_graph_def = save_graph_def

    def begin(self) -> None:
        os.makedirs(self._checkpoint_dir, exist_ok=True)
        self._summary_writer = FileWriterCache.get(self._checkpoint_dir)
        self._global_step = _require_global_step("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session: Any, coord: Any) -> None:
        step = _value(session.run(self._global_step))
        if self._save_graph_def:
            self._summary_writer.add_graph(session.graph)
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        stale = _value(run_values.results)
        if self._timer.should_trigger_for_step(stale + 1):
            step = _value(run_context.session.run(self._global_step))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session: Any) -> None:
        step = _value(session.run(self._global_step))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)
        self._summary_writer.flush()

    def _get_saver(self) -> Any:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = ops_lib.get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(
                f"No items in collection {GraphKeys.SAVERS}. Please add a saver to the collection "
                "or provide a saver or scaffold."
            )
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}.")
        return savers[0]

    def _save(self, session: Any, step: int) -> bool:
        """Save; True when a listener asks to stop."""
        _log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        for listener in self._listeners:
            listener.before_save(session, step)
        path = self._get_saver().save(session, self._save_path, global_step=step)
        self._summary_writer.add_session_log(
            protos.SessionLog(status=protos.SessionLog.CHECKPOINT, checkpoint_path=path), step
        )
        stop = False
        for listener in self._listeners:
            stop = bool(listener.after_save(session, step)) or stop
        return stop


class SummarySaverHook(SessionRunHook):
    """Runs the summary ops every N steps or seconds and writes their results."""

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
        scaffold: Any = None,
        summary_op: Any = None,
    ):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(save_secs, save_steps)

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._next_step: int | None = None
        self._global_step = _require_global_step("SummarySaverHook")

    def _summary_ops(self) -> list[Any]:
        op = self._scaffold.summary_op if self._scaffold is not None else self._summary_op
        if op is None:
            return []
        return list(op) if isinstance(op, (list, tuple)) else [op]

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(
            self._next_step
        )
        requests: dict[str, Any] = {"global_step": self._global_step}
        if self._request_summary and self._summary_ops():
            requests["summary"] = self._summary_ops()
        return SessionRunArgs(requests)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._summary_writer is None:
            return
        step = _value(run_values.results["global_step"]) + 1
        if self._next_step is None:
            self._summary_writer.add_session_log(
                protos.SessionLog(status=protos.SessionLog.START), step
            )
        if self._request_summary:
            self._timer.update_last_triggered_step(step)
            for summary in run_values.results.get("summary", []):
                self._summary_writer.add_summary(summary, step)
        self._next_step = step + 1

    def end(self, session: Any = None) -> None:
        if self._summary_writer is not None:
            self._summary_writer.flush()


# --- small hooks --------------------------------------------------------------------------------
class FeedFnHook(SessionRunHook):
    """Adds ``feed_fn()`` to the feeds of every run."""

    def __init__(self, feed_fn: Callable[[], dict]):
        self.feed_fn = feed_fn

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` when the session ends; their values are ``final_ops_values``."""

    def __init__(self, final_ops: Any, final_ops_feed_dict: dict | None = None):
        self._final_ops = final_ops
        self._feed_dict = final_ops_feed_dict
        self.final_ops_values: Any = None

    def end(self, session: Any) -> None:
        if self._final_ops is not None:
            self.final_ops_values = session.run(self._final_ops, feed_dict=self._feed_dict)


class ProgressBarHook(SessionRunHook):
    """A tqdm progress bar (notebook widget or terminal) with steps/sec and the latest loss.

    hooks=[tf.train.ProgressBarHook(last_step=1000, loss=loss)]
    """

    def __init__(
        self,
        last_step: int | None = None,
        loss: Any = None,
        every_n_steps: int = 1,
        desc: str = "train",
        **tqdm_kwargs: Any,
    ):
        self._last_step = last_step
        self._loss = loss
        self._every = max(1, every_n_steps)
        self._desc = desc
        self._tqdm_kwargs = tqdm_kwargs
        self.bar: Any = None
        self.latest_loss: float | None = None

    def begin(self) -> None:
        self._global_step = get_global_step()
        self._count = 0

    def after_create_session(self, session: Any, coord: Any) -> None:
        from tqdm.auto import tqdm

        # The bar counts this process's runs from the global step at (re)creation; fetching
        # the step in every run would race with the train op's increment.
        start = _value(session.run(self._global_step)) if self._global_step is not None else 0
        if self.bar is None:
            self.bar = tqdm(
                total=self._last_step,
                initial=start,
                desc=self._desc,
                unit="step",
                **self._tqdm_kwargs,
            )
        else:
            self.bar.n = start  # a recovered session restarts from its checkpoint's step
        self._step = start
        self._start_time = time.monotonic()
        self._start_step = start

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        return SessionRunArgs({"loss": self._loss}) if self._loss is not None else None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        self._count += 1
        self._step += 1
        if run_values.results is not None:
            self.latest_loss = float(np.asarray(run_values.results["loss"]))
        if self._count % self._every:
            return
        self.bar.update(self._step - self.bar.n)
        elapsed = time.monotonic() - self._start_time
        rate = (self._step - self._start_step) / elapsed if elapsed > 0 else 0.0
        postfix = {"steps/s": f"{rate:.1f}"}
        if self.latest_loss is not None:
            postfix["loss"] = f"{self.latest_loss:.4g}"
        self.bar.set_postfix(postfix, refresh=False)

    def end(self, session: Any) -> None:
        if self.bar is not None:
            self.bar.close()
