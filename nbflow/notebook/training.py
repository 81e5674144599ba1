"""Training from a notebook cell without blocking the notebook.

``start_training(fn, logdir=...)`` runs ``fn(run)`` in a background thread of the kernel, so
the notebook stays usable, widgets keep updating and their buttons keep working while it trains.
The loop calls ``run.check()`` once per step (or passes ``run.hook()`` to a monitored session):
it blocks while the run is paused and returns False once a stop was asked for.

Provenance: the run writes ``nbflow_run.json`` into its log directory with the source, key and
arguments of the cell that started it, so a curve on the board traces back to the code.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ipywidgets
from IPython import get_ipython
from IPython.display import display
from tqdm.auto import tqdm
from tqdm.notebook import tqdm as notebook_tqdm

from nbflow.notebook.display import in_kernel
from nbflow.train.basic_session_run_hooks import ProgressBarHook
from nbflow.version import __version__

PROVENANCE_FILE = "nbflow_run.json"


@dataclass(frozen=True)
class CellProvenance:
    """The cell that started a run: its key, source and the run's arguments."""

    cell: str | None
    source: str
    arguments: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"cell": self.cell, "source": self.source, "arguments": self.arguments}


def current_cell() -> tuple[str | None, str]:
    """(cell id, source) of the cell executing now, from the kernel's request when there is one."""
    shell = get_ipython()
    if shell is None:
        return None, ""
    header = getattr(shell, "parent_header", None) or {}
    code = (header.get("content") or {}).get("code")
    metadata = header.get("metadata") or {}
    cell = metadata.get("cellId") or metadata.get("cell_id")
    if code is None:
        history = shell.user_ns.get("In") or [""]
        code = history[-1] if history else ""
    return cell, code


def write_provenance(logdir: str | Path, provenance: CellProvenance, name: str) -> Path:
    """Write the run's provenance JSON next to its event files (atomically)."""
    path = Path(logdir)
    path.mkdir(parents=True, exist_ok=True)
    record = {
        "run": name,
        "started": time.time(),
        "nbflow": __version__,
        "python": sys.version.split()[0],
        **provenance.to_json(),
    }
    target = path / PROVENANCE_FILE
    tmp = path / f".{PROVENANCE_FILE}.tmp"
    tmp.write_text(json.dumps(record, indent=1))
    os.replace(tmp, target)
    return target


class TrainingRun:
    """A training loop running in a background thread, with pause, resume and stop."""

    def __init__(
        self,
        target: Callable[[TrainingRun], Any],
        *,
        logdir: str | Path | None = None,
        name: str = "run",
        provenance: CellProvenance | None = None,
        output: Any = None,
    ):
        self.target = target
        # where the run's own displays go (its progress bar): an ``ipywidgets.Output`` shown in
        # the cell that started it; output from the training thread would otherwise land in
        # whichever cell runs at that moment
        self.output = output
        self.logdir = Path(logdir) if logdir is not None else None
        self.name = name
        self.provenance = provenance
        self.step = 0
        self.result: Any = None
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._done = threading.Event()
        self._listeners: list[Callable[[TrainingRun], None]] = []
        self._thread: threading.Thread | None = None

    # --- control ---------------------------------------------------------------------------
    @property
    def status(self) -> str:
        if self._done.is_set():
            if self.error is not None:
                return "failed"
            return "stopped" if self._stop.is_set() else "finished"
        if self._thread is None:
            return "created"
        if self._stop.is_set():
            return "stopping"
        return "running" if self._running.is_set() else "paused"

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    def pause(self) -> None:
        self._running.clear()
        self._notify()

    def resume(self) -> None:
        self._running.set()
        self._notify()

    def stop(self) -> None:
        self._stop.set()
        self._running.set()  # a paused loop must wake up to see the stop
        self._notify()

    def check(self) -> bool:
        """Call once per step: waits while paused; False once a stop was requested."""
        self.step += 1
        while not self._running.wait(0.1):
            if self._stop.is_set():
                break
        return not self._stop.is_set()

    def on_change(self, listener: Callable[[TrainingRun], None]) -> None:
        self._listeners.append(listener)

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener(self)

    # --- lifetime --------------------------------------------------------------------------
    def start(self) -> TrainingRun:
        if self._thread is not None:
            raise RuntimeError(f"run {self.name!r} was already started")
        if self.logdir is not None and self.provenance is not None:
            write_provenance(self.logdir, self.provenance, self.name)
        self._thread = threading.Thread(target=self._main, name=f"nbflow-{self.name}", daemon=True)
        self._thread.start()
        self._notify()
        return self

    def _main(self) -> None:
        _thread_run.run = self
        try:
            self.result = self.target(self)
        except BaseException as e:  # noqa: BLE001 - reported through status and error
            self.error = e
        finally:
            self._done.set()
            self._notify()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the loop to end; True if it did within ``timeout``."""
        return self._done.wait(timeout)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def hook(self) -> ControlHook:
        """A session-run hook that applies pause and stop to a monitored session's loop."""
        return ControlHook(self)

    def __repr__(self) -> str:
        return f"<TrainingRun {self.name!r} {self.status} step={self.step}>"


_thread_run = threading.local()


def current_run() -> TrainingRun | None:
    """The ``TrainingRun`` whose thread is calling, if any."""
    return getattr(_thread_run, "run", None)


class ControlHook:
    """``SessionRunHook`` protocol: waits while paused, asks the session to stop on stop."""

    def __init__(self, run: TrainingRun):
        self.run = run

    def begin(self) -> None:
        return None

    def after_create_session(self, session: Any, coord: Any) -> None:
        return None

    def before_run(self, run_context: Any) -> None:
        if not self.run.check():
            run_context.request_stop()
        return None

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if self.run.stop_requested:
            run_context.request_stop()

    def end(self, session: Any) -> None:
        return None


def start_training(
    target: Callable[[TrainingRun], Any],
    *,
    logdir: str | Path | None = None,
    name: str = "run",
    arguments: dict[str, Any] | None = None,
) -> TrainingRun:
    """Start ``target(run)`` in a background thread, recording the calling cell's code."""
    cell, source = current_cell()
    provenance = CellProvenance(cell, source, {k: repr(v) for k, v in (arguments or {}).items()})
    output = None
    if in_kernel():
        output = ipywidgets.Output()
        display(output)  # in this cell, now: the run's progress bar will appear here
    return TrainingRun(
        target, logdir=logdir, name=name, provenance=provenance, output=output
    ).start()


def progress_hook(total: int | None = None, loss: Any = None, every: int = 1) -> Any:
    """A progress bar (steps/sec, latest loss) for a monitored session or a plain loop
    (``update()`` per step), shown in the cell that started the run."""
    return NotebookProgressHook(last_step=total, loss=loss, every_n_steps=every)


class NotebookProgressHook(ProgressBarHook):
    """``tf.train.ProgressBarHook`` whose bar goes to the cell that started the run.

    In a ``TrainingRun``'s thread the bar is a tqdm notebook widget appended to the run's
    ``output`` (shown in the starting cell); elsewhere it is tqdm.auto's, as in TensorFlow.
    ``update()`` advances it from a plain loop without a session.
    """

    def after_create_session(self, session: Any, coord: Any) -> None:
        if self.bar is None:
            self.bar = self._make_bar()
        super().after_create_session(session, coord)

    def _make_bar(self) -> Any:
        run = current_run()
        if run is not None and run.output is not None:
            bar = notebook_tqdm(total=self._last_step, desc=run.name, unit="step", display=False)
            run.output.append_display_data(bar.container)
            return bar
        return tqdm(total=self._last_step, desc=self._desc, unit="step")

    def update(self, loss: Any = None) -> None:
        """Advance one step of a plain loop (no session)."""
        if self.bar is None:
            self.bar = self._make_bar()
        self.bar.update(1)
        if loss is not None and self.bar.n % self._every == 0:
            self.bar.set_postfix(loss=f"{float(loss):.4g}", refresh=False)

    def end(self, session: Any = None) -> None:
        super().end(session)
