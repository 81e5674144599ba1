"""A task process's memory allocator, tuned for steps that allocate the same arrays every time.

A training step allocates the same large arrays every time it runs: each received tensor, each
activation and gradient, each temporary of an optimizer's update. NumPy takes their memory
from the C library's ``malloc``. glibc serves a request of at least ``M_MMAP_THRESHOLD`` bytes
(128 KiB to start with) with a fresh ``mmap`` of zeroed pages and gives them back to the
system on ``free``, and it trims the top of its heap back to the system once more than
``M_TRIM_THRESHOLD`` bytes lie free there. By default both thresholds adapt: freeing an
``mmap``-ed block of n bytes raises the first to n (up to 32 MiB on 64-bit systems) and the
second to 2n, so that a program that keeps allocating blocks of one size soon serves them from
the heap it keeps.

Dask's nanny starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536``, so that a worker holding
data returns freed memory to the system at once. Setting any of these parameters switches the
adaptation off: in an nbflow task every array above 128 KiB is then a new mapping, faulted in a
page at a time and unmapped when the step drops it. That is about 0.7 ms for one 313 KB array
(the first layer's weights of the OSDI Figure 1 MLP, which a step sends each way), against
25 µs from the heap, and it was a third of a worker task's CPU time per step.

TensorFlow's servers never meet this: their tensors come from TensorFlow's own allocators. An
nbflow task instead sets the two thresholds to what glibc's own adaptation reaches for the
largest blocks it adapts to: ``mallopt(M_MMAP_THRESHOLD, 32 MiB)`` and ``mallopt(M_TRIM_THRESHOLD,
64 MiB)``. Arrays up to 32 MiB then come from the heap and are reused step after step; larger
ones are still mapped and returned at once; at most 64 MiB of freed memory stays with the
process. ``NbflowPlugin`` applies this in every Dask worker that hosts tasks (local, external
scheduler or gateway). ``NBFLOW_MALLOC=system`` in a worker's environment keeps the
allocator as Dask configured it. Other C libraries (musl, macOS) are left alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform

# glibc's <malloc.h>
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # glibc's own rule when it raises the mmap threshold


def tune_for_steps() -> bool:
    """Set glibc's mmap and trim thresholds for a process that runs steps (see the module
    docstring); whether they were set. A no-op elsewhere or with ``NBFLOW_MALLOC=system``."""
    if os.environ.get("NBFLOW_MALLOC", "").lower() == "system":
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    return bool(
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        and libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
