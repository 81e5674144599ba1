"""A device: where kernels run. It names itself, exposes its array module ``xp`` (NumPy for
CPU, CuPy for GPU), holds its resources, allocates buffers and copies them to and from host
memory (OSDI §2.2, "a common device abstraction").

Several CPU devices may live in one process (``ConfigProto(device_count={'CPU': 4})``): they
share host memory, so a transfer between two of them hands over the array without copying, as
TensorFlow's in-process CPU devices do. GPU devices (``nbflow.devices.gpu``) appear only when
CuPy imports and finds a CUDA device; CuPy is imported nowhere else.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from nbflow.devices.spec import DeviceSpec
from nbflow.framework.resources import ResourceManager


class Device:
    """One device of a task, e.g. ``/job:localhost/replica:0/task:0/device:CPU:0``."""

    def __init__(self, name: str, xp: Any = np, resources: ResourceManager | None = None):
        self.spec = DeviceSpec.from_string(name)
        self.name = self.spec.to_string()
        self.device_type = self.spec.device_type or "CPU"
        self.xp = xp
        self.resources = resources if resources is not None else ResourceManager()

    @property
    def is_host(self) -> bool:
        """Whether values on this device are host (NumPy) arrays."""
        return True

    def allocate(self, shape: Any, dtype: Any) -> Any:
        """An uninitialised buffer on this device."""
        return self.xp.empty(shape, dtype=dtype)

    def to_host(self, value: Any) -> Any:
        """A host (NumPy) copy of a value that lives on this device."""
        return value

    def from_host(self, value: Any) -> Any:
        """A copy of a host value on this device."""
        return value

    def copy_from(self, value: Any, source: Device) -> Any:
        """``value``, produced on ``source``, made usable on this device.

        Host devices share memory, so between them this hands the array over unchanged.
        """
        if source.is_host:
            return self.from_host(value)
        return self.from_host(source.to_host(value))

    def adapt_kernel(self, op: Any, kernel: Any) -> Any:
        """The kernel as this device runs it (GPU devices keep constants resident)."""
        return kernel

    def synchronize(self) -> None:
        """Wait for work queued on the device (a no-op on CPU)."""

    def memory_bytes(self, value: Any) -> int:
        return int(getattr(value, "nbytes", 0) or 0)

    def __repr__(self) -> str:
        return f"<Device {self.name}>"


def local_cpu_devices(count: int = 1, job: str = "localhost", task: int = 0) -> list[Device]:
    return [Device(f"/job:{job}/replica:0/task:{task}/device:CPU:{i}") for i in range(count)]


def local_devices(
    device_count: dict[str, int] | None = None,
    visible_gpus: str = "",
    job: str = "localhost",
    task: int = 0,
) -> list[Device]:
    """The devices of this process: ``device_count['CPU']`` CPU devices (default 1) and the GPUs
    CuPy finds (at most ``device_count['GPU']``; ``visible_gpus`` like "0,2" selects them)."""
    counts = device_count or {}
    devices = local_cpu_devices(max(1, counts.get("CPU", 1)), job, task)
    wanted = counts.get("GPU")
    if wanted == 0:
        return devices
    devices.extend(gpu.local_gpu_devices(wanted, visible_gpus, job, task))
    return devices


# Buffers up to this size come from the heap, and up to this much freed memory stays there.
_HEAP_ALLOCATION_LIMIT = 64 << 20
_RETAINED_FREE_MEMORY = 256 << 20
_retaining = False


def retain_freed_host_memory() -> bool:
    """Let glibc keep freed host buffers for the next step instead of returning them to the OS.

    A training step allocates the same large arrays (activations, gradients, im2col buffers)
    every time. By default glibc maps each buffer over 128 KB fresh from the OS and unmaps it
    when freed, so every step pays the page faults of touching new memory again (measured
    here: 20-25% of the CNN benchmark's step). TensorFlow's own allocator keeps its memory;
    this makes ``malloc`` do the same for buffers up to 64 MB, keeping up to 256 MB free in
    the heap (the process's resident size stays at its peak). Returns whether it applied (glibc
    only; once per process).

    A session applies it in its process, and the nbflow plugin in every Dask worker that hosts
    tasks. There it matters most: Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_``
    set, and setting any of glibc's thresholds switches off its own adaptation (which otherwise
    raises the mmap threshold to the size of the blocks a program frees), so every array over
    128 KB, e.g. the 313 KB weights a Figure 1 step sends each way, was a fresh mapping: about
    0.7 ms each against 25 µs from the heap, a quarter of a worker task's CPU per step.
    """
    global _retaining
    if _retaining:
        return True
    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        applied = libc.mallopt(m_mmap_threshold, _HEAP_ALLOCATION_LIMIT) == 1
        applied = applied and libc.mallopt(m_trim_threshold, _RETAINED_FREE_MEMORY) == 1
    except (OSError, AttributeError):  # not glibc: leave the allocator as it is
        return False
    _retaining = applied
    return applied


def limit_intra_op_threads(threads: int) -> None:
    """Cap the threads BLAS uses inside one kernel (``intra_op_parallelism_threads``).

    NumPy's BLAS pool is one per process, so this applies to every session of the process, as
    the last setting wins. Where other work shares the cores, a cap of 1 avoids BLAS threads
    spinning against each other (measured here: 25x slower Figure 1 steps without it under an
    oversubscribed load).
    """
    if threads <= 0:
        return

    threadpool_limits(limits=threads, user_api="blas")


# local_devices adds the GPUs that gpu.py (a Device subclass over CuPy) finds.
from nbflow.devices import gpu  # noqa: E402
