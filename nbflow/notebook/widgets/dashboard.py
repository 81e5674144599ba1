"""The live summary dashboard: scalars, histograms over time and images, updated while training
runs in another thread of the kernel (whitepaper §9.1, "Visualization of Summary Data").

A background thread calls ``poll()`` every ``interval`` seconds: it reads the source (the event
logs of a log directory, tailed incrementally, or a ``MemorySource``) and sends only what is new
to the page. Scalars are drawn by the nbflow Board's own chart view (``ScalarsWidget``:
smoothing, step / relative / wall-time axes, log scale, tag filter, CSV, as in the JupyterLab
panel), histograms over time by its Histograms and Distributions views (``HistogramsWidget``,
shown once a histogram arrives), images by its images view (``ImagesWidget``, a step slider per
image tag). There is one Stop button: with a
``TrainingRun`` attached it is the run's (beside Pause; it stops the run, and polling ends with
it), otherwise it stops polling.
"""

from __future__ import annotations

import io
import threading
from typing import Any

import ipywidgets as widgets
import numpy as np
from PIL import Image as PILImage

from nbflow.notebook.logs import as_source
from nbflow.notebook.widgets.controls import RunControls
from nbflow.notebook.widgets.histograms import HistogramsWidget
from nbflow.notebook.widgets.images import ImagesWidget
from nbflow.notebook.widgets.scalars import ScalarsWidget


class SummaryDashboard(widgets.VBox):
    """Scalars, histograms and images of a log directory (or source), live."""

    def __init__(
        self,
        logdir_or_source: Any,
        *,
        run: Any = None,
        interval: float = 1.0,
        smoothing: float = 0.6,
        x_axis: str = "step",
        start: bool = True,
    ):
        self.source = as_source(logdir_or_source)
        self.training = run
        self.interval = interval
        self.scalars = ScalarsWidget(smoothing=smoothing, x_axis=x_axis)
        self.stop_button = widgets.Button(description="Stop", icon="stop", button_style="danger")
        self.status = widgets.Label("waiting for data")
        self.histograms = HistogramsWidget()
        self.histogram_box = widgets.VBox()  # holds self.histograms once one arrives
        self.images = ImagesWidget()
        self.image_box = widgets.VBox()  # holds self.images once one arrives
        self._seen: dict[tuple[str, str, str], int] = {}
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.polls = 0
        if run is not None:  # one Stop: the run's controls, which also end the polling
            run_controls = RunControls(run)
            self.stop_button = run_controls.stop_button
            controls = widgets.HBox([run_controls, self.status])
        else:
            self.stop_button.on_click(lambda _b: self.stop())
            controls = widgets.HBox([self.stop_button, self.status])
        super().__init__([controls, self.scalars, self.histogram_box, self.image_box])
        self.poll()
        if start:
            self.start()

    # --- polling ------------------------------------------------------------------------------
    def start(self) -> None:
        """Poll in a background thread until stopped (or the training run ended)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="nbflow-dashboard", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except Exception as e:  # noqa: BLE001 - shown in the widget, polling goes on
                self.status.value = f"error reading logs: {e}"
            if self.training is not None and self.training.done:
                self.poll()
                self.status.value += " — run " + self.training.status
                break

    def stop(self) -> None:
        """Stop polling, and stop the attached training run."""
        self._stop.set()
        if self.training is not None:
            self.training.stop()
        self.stop_button.disabled = True
        self.status.value = "stopped"

    @property
    def polling(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def poll(self) -> int:
        """Read new points from the source into the charts; returns how many were new."""
        with self._lock:
            new = 0
            for run, data in sorted(self.source.read().items()):
                for tag, series in list(data.scalars.items()):
                    new += self._add(self.scalars, None, run, tag, series)
                for tag, series in list(data.histograms.items()):
                    new += self._add(self.histograms, self.histogram_box, run, tag, series)
                for tag, series in list(data.images.items()):
                    new += self._add(self.images, self.image_box, run, tag, series)
            self.polls += 1
            if new:
                self.status.value = f"{self.points} points"
            return new

    @property
    def points(self) -> int:
        return self.scalars.num_points

    def _fresh(self, kind: str, run: str, tag: str, series: Any) -> tuple[int, int]:
        """The range of new points; (0, n) again when the series shrank (a restarted run)."""
        key = (kind, run, tag)
        start, end = self._seen.get(key, 0), len(series.steps)
        self._seen[key] = end
        return (0 if end < start else start), end

    def _add(self, widget: Any, box: Any, run: str, tag: str, series: Any) -> int:
        """Hand a series' new points to ``widget`` (shown in ``box`` once it has any)."""
        start, end = self._fresh(widget.bundle, run, tag, series)
        if end <= start:
            return 0
        if box is not None and not box.children:
            box.children = [widget]
        widget.extend(
            run,
            tag,
            series.steps[start:end],
            series.wall_times[start:end],
            series.values[start:end],
            restart=start == 0,
        )
        return end - start


def png_bytes(array: Any) -> bytes:
    """Encode an HxW or HxWxC uint8 array as PNG (for ``MemorySource.add_image``)."""
    buf = io.BytesIO()
    PILImage.fromarray(np.asarray(array, dtype=np.uint8)).save(buf, format="PNG")
    return buf.getvalue()
