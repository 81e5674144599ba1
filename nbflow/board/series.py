"""Downsampling a series for display while keeping its extremes.

A chart a few hundred pixels wide cannot show a million points, but dropping points at random
hides spikes (a loss that diverged for one step). ``downsample_min_max`` cuts the series into
equal buckets by index and keeps each bucket's first, minimum, maximum and last point, so every
extreme survives and the line keeps its shape (the M4 scheme).
"""

from __future__ import annotations

import numpy as np


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
