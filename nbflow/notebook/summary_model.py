"""Pure functions behind the summary dashboard: smoothing, time axes, histogram bands."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

AXES = ("step", "relative", "wall")
# Percentiles drawn as nested bands, as TensorBoard's distributions view does.
BAND_PERCENTILES = (0, 7, 16, 31, 50, 69, 84, 93, 100)


def smooth(values: Sequence[float], weight: float) -> list[float]:
    """TensorBoard's smoothing: an exponential moving average, debiased for its zero start."""
    if not 0.0 <= weight < 1.0:
        raise ValueError(f"smoothing weight must be in [0, 1), got {weight}")
    out, last, n = [], 0.0, 0
    for v in values:
        if not math.isfinite(v):
            out.append(v)
            continue
        last = last * weight + (1 - weight) * v
        n += 1
        out.append(last / (1 - weight**n) if weight else v)
    return out


def x_values(
    steps: Sequence[int], wall_times: Sequence[float], axis: str, start: float | None = None
) -> list[float]:
    """The x coordinates of points on a step, relative-time (hours) or wall-time (ms) axis."""
    if axis == "step":
        return [float(s) for s in steps]
    if axis == "relative":
        t0 = start if start is not None else (wall_times[0] if wall_times else 0.0)
        return [(w - t0) / 3600.0 for w in wall_times]
    if axis == "wall":
        return [w * 1000.0 for w in wall_times]  # Bokeh's datetime axis counts milliseconds
    raise ValueError(f"axis must be one of {AXES}, got {axis!r}")


def histogram_percentiles(
    hist: Any, percentiles: Sequence[float] = BAND_PERCENTILES
) -> list[float]:
    """Approximate percentiles of a bucketed histogram (linear inside each bucket)."""
    counts = np.asarray(_field(hist, "bucket", "buckets"), dtype=float)
    limits = np.asarray(_field(hist, "bucket_limit", "bucket_limits"), dtype=float)
    total = counts.sum()
    if total <= 0 or len(limits) == 0:
        return [float(hist.min)] * len(percentiles)
    lows = np.concatenate([[hist.min], np.minimum(limits[:-1], hist.max)])
    highs = np.clip(limits, hist.min, hist.max)
    cumulative = np.cumsum(counts)
    out = []
    for p in percentiles:
        target = total * p / 100.0
        k = int(np.searchsorted(cumulative, target, side="left"))
        k = min(k, len(counts) - 1)
        before = cumulative[k] - counts[k]
        frac = 0.0 if counts[k] == 0 else (target - before) / counts[k]
        out.append(float(lows[k] + (highs[k] - lows[k]) * min(max(frac, 0.0), 1.0)))
    out[0], out[-1] = float(hist.min), float(hist.max)
    return out


def _field(obj: Any, *names: str) -> Any:
    """The first attribute present (TensorBoard's proto names or nbflow.summary's plurals)."""
    for name in names:
        value = getattr(obj, name, None)
        if value is not None:
            return value
    return []
