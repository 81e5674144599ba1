"""CuPy kernel builders for the ops' ``compute_gpu`` methods.

Most ops need no GPU kernel: their ``compute`` over ``ctx.xp`` runs on CuPy as written. An op
declares ``compute_gpu`` next to its ``compute`` only where it pays, which on a GPU means fusing
what the generic kernel does in several launches (and several passes over memory) into one
``ElementwiseKernel`` (AddN of N tensors, sigmoid, the activation gradients). This module builds
and caches those kernels, so that ``ops/`` never imports CuPy: it is imported lazily here, on
the first call, which only a GPU device makes.
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def elementwise(params: str, out: str, body: str, name: str) -> Any:
    """A cached ``cupy.ElementwiseKernel(params, out, body, name)``."""
    import cupy  # noqa: PLC0415 - only reached with a GPU device

    return cupy.ElementwiseKernel(params, out, body, name)


@functools.lru_cache(maxsize=64)
def _sum_kernel(n: int) -> Any:
    params = ", ".join(f"T x{i}" for i in range(n))
    body = "y = " + " + ".join(f"x{i}" for i in range(n))
    return elementwise(params, "T y", body, f"nbflow_add_n_{n}")


def fused_sum(xp: Any, inputs: Any) -> Any:
    """The sum of same-shaped arrays in one pass over memory instead of N-1 additions."""
    arrays = [xp.asarray(x) for x in inputs]
    if len(arrays) == 1:
        return arrays[0].copy()
    if len(arrays) > 16 or any(a.shape != arrays[0].shape for a in arrays):
        return functools.reduce(xp.add, arrays)
    return _sum_kernel(len(arrays))(*arrays)
