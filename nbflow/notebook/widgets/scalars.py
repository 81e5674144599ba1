"""Scalar charts in a notebook output, drawn by the nbflow Board's own chart view.

The page renders with the panel's TypeScript ``ScalarsView`` (bundled by ``front_end``): one
chart per tag with the runs overlaid, smoothing applied to the full series before
downsampling, step / relative / wall-time axes, log scale, a tag filter and CSV download. The
kernel only keeps the raw points and sends them (``series``, the fields of the Board's
``scalars`` route; a NaN or infinite value is sent as null, a gap, as the route does);
``smoothing`` and ``x_axis`` are synced both ways with the chart's toolbar.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import traitlets

from nbflow.board.series import number_json
from nbflow.notebook.widgets.front_end import BoardWidget

AXES = ("step", "relative", "wall")


class ScalarsWidget(BoardWidget):
    """Scalar series by (run, tag), drawn as the Board draws them; ``extend`` adds points."""

    bundle = "scalars.js"
    series = traitlets.List(traitlets.Dict()).tag(sync=True)
    smoothing = traitlets.Float(0.6, min=0.0, max=0.99).tag(sync=True)
    x_axis = traitlets.Enum(list(AXES), "step").tag(sync=True)

    def __init__(self, **kwargs: Any):
        self._points: dict[tuple[str, str], dict[str, list]] = {}
        self._lock = threading.Lock()
        super().__init__(**kwargs)

    def extend(
        self,
        run: str,
        tag: str,
        steps: Sequence[int],
        wall_times: Sequence[float],
        values: Sequence[float],
        *,
        restart: bool = False,
    ) -> None:
        """Append points to a series (``restart``: replace it, e.g. a run that started over)."""
        with self._lock:
            key = (run, tag)
            points = self._points.get(key)
            if points is None or restart:
                points = self._points[key] = {"steps": [], "wall_times": [], "values": []}
            points["steps"] += [int(s) for s in steps]
            points["wall_times"] += [float(w) for w in wall_times]
            points["values"] += [number_json(float(v)) for v in values]  # NaN: a gap, as the Board
            self.series = [
                {"run": r, "tag": t, **{k: list(v) for k, v in p.items()}}
                for (r, t), p in sorted(self._points.items())
            ]

    def points_of(self, run: str, tag: str) -> dict[str, list]:
        """The raw points of one series: ``steps``, ``wall_times`` and ``values``."""
        return self._points[(run, tag)]

    @property
    def tags(self) -> list[str]:
        return sorted({t for _, t in self._points})

    @property
    def num_points(self) -> int:
        return sum(len(p["steps"]) for p in self._points.values())
