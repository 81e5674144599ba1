"""Pause / resume / stop buttons for a background ``TrainingRun``; they respond while the
training cell runs because the loop runs in another thread of the kernel."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from nbflow.notebook.training import TrainingRun


class RunControls(widgets.HBox):
    def __init__(self, run: TrainingRun, **kwargs: Any):
        self.run = run
        self.pause_button = widgets.Button(description="Pause", icon="pause")
        self.stop_button = widgets.Button(description="Stop", icon="stop", button_style="danger")
        self.status = widgets.Label()
        self.pause_button.on_click(self._toggle_pause)
        self.stop_button.on_click(lambda _b: run.stop())
        super().__init__([self.pause_button, self.stop_button, self.status], **kwargs)
        run.on_change(lambda _r: self._update())
        self._update()

    def _toggle_pause(self, _button: Any) -> None:
        if self.run.status == "paused":
            self.run.resume()
        else:
            self.run.pause()

    def _update(self) -> None:
        status = self.run.status
        self.status.value = f"{self.run.name}: {status} (step {self.run.step})"
        self.pause_button.description = "Resume" if status == "paused" else "Pause"
        finished = self.run.done
        self.pause_button.disabled = finished
        self.stop_button.disabled = finished
