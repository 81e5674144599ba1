"""Histograms over time in a notebook output, drawn by the nbflow Board's own views.

The page renders with the panel's TypeScript ``HistogramsView`` (each step's histogram stacked,
TensorBoard's "offset" view) and ``DistributionsView`` (percentile bands over steps), bundled by
``front_end``; a toolbar switches between them (``mode``, synced both ways). The kernel keeps
the histograms and sends them in the JSON the Board's ``histograms`` route serves
(``nbflow.board.series.histogram_json``): re-binning and percentiles happen on the page.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import traitlets

from nbflow.board.series import histogram_json
from nbflow.notebook.widgets.front_end import BoardWidget

MODES = ("histograms", "distributions")


class HistogramsWidget(BoardWidget):
    """Histogram series by (run, tag), drawn as the Board draws them; ``extend`` adds steps."""

    bundle = "histograms.js"
    series = traitlets.List(traitlets.Dict()).tag(sync=True)
    mode = traitlets.Enum(list(MODES), "histograms").tag(sync=True)

    def __init__(self, **kwargs: Any):
        self._series: dict[tuple[str, str], dict[str, list]] = {}
        self._lock = threading.Lock()
        super().__init__(**kwargs)

    def extend(
        self,
        run: str,
        tag: str,
        steps: Sequence[int],
        wall_times: Sequence[float],
        values: Sequence[Any],
        *,
        restart: bool = False,
    ) -> None:
        """Append histograms (``nbflow.summary.reader.HistogramValue``) to a series
        (``restart``: replace it, e.g. a run that started over)."""
        with self._lock:
            key = (run, tag)
            series = self._series.get(key)
            if series is None or restart:
                series = self._series[key] = {"steps": [], "wall_times": [], "values": []}
            series["steps"] += [int(s) for s in steps]
            series["wall_times"] += [float(w) for w in wall_times]
            series["values"] += [histogram_json(h) for h in values]
            self.series = [
                {"run": r, "tag": t, **{k: list(v) for k, v in s.items()}}
                for (r, t), s in sorted(self._series.items())
            ]

    @property
    def num_histograms(self) -> int:
        return sum(len(s["steps"]) for s in self._series.values())
