"""Series as the Board serves them: downsampling that keeps extremes, and the JSON of values.

The Board's routes and the notebook's widgets send summaries in the same JSON (one schema end to
end, read by extension/src/model/): a histogram is ``histogram_json``'s dict, whether it came
from an event file or from ``nbflow.notebook.MemorySource``.

A chart a few hundred pixels wide cannot show a million points, but dropping points at random
hides spikes (a loss that diverged for one step). ``downsample_min_max`` cuts the series into
equal buckets by index and keeps each bucket's first, minimum, maximum and last point, so every
extreme survives and the line keeps its shape (the M4 scheme).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

DBL_MAX = 1.7976931348623157e308


def downsample_min_max(values: np.ndarray, max_points: int) -> np.ndarray:
    """Indices (sorted, unique) of at most ``max_points`` points keeping every bucket's extremes.

    >>> downsample_min_max(np.array([0., 5., 1., 2., -3., 4., 0., 1.]), 4).tolist()
    [0, 1, 4, 7]
    """
    n = len(values)
    if max_points <= 0 or n <= max_points:
        return np.arange(n)
    buckets = max(1, max_points // 4)
    edges = np.linspace(0, n, buckets + 1).astype(int)
    keep: list[int] = []
    safe = np.where(np.isnan(values), 0.0, values)
    for lo, hi in zip(edges[:-1], edges[1:]):
        if hi <= lo:
            continue
        chunk = safe[lo:hi]
        keep += [lo, lo + int(np.argmin(chunk)), lo + int(np.argmax(chunk)), hi - 1]
    indices = np.unique(np.array(keep))
    if len(indices) > max_points:  # tiny max_points: keep the global extremes and the ends
        indices = np.unique([0, int(np.argmin(safe)), int(np.argmax(safe)), n - 1])[:max_points]
    return indices


def number_json(x: Any) -> Any:
    """JSON has no NaN or infinity; a diverged loss becomes a gap (null) in the chart."""
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def histogram_json(h: Any) -> dict[str, Any]:
    """A histogram (``nbflow.summary.reader.HistogramValue``) as the Board's front end reads
    it: extension/src/model/histogram.ts's ``HistogramValue``."""
    return {
        "min": number_json(float(h.min)),
        "max": number_json(float(h.max)),
        "num": number_json(float(h.num)),
        "sum": number_json(float(h.sum)),
        "sum_squares": number_json(float(h.sum_squares)),
        # TensorBoard's last bucket limit is DBL_MAX (or inf); JSON needs it finite
        "bucket_limit": np.clip(
            np.asarray(h.bucket_limits, dtype=float), -DBL_MAX, DBL_MAX
        ).tolist(),
        "bucket": [number_json(x) for x in np.asarray(h.buckets, dtype=float).tolist()],
    }
