"""What the benchmark suites share: medians over repeats, one result record, TensorFlow v1."""

from __future__ import annotations

import os
import platform
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any
from collections.abc import Callable


def _cpuinfo() -> dict[str, str]:
    """The first processor's entries of /proc/cpuinfo (empty where there is none)."""
    entries: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                entries[key.strip()] = value.strip()
    except OSError:
        pass
    return entries


def cpu_model() -> str:
    """The host CPU's model name with its family and model (the README's figures name it: the
    host changes day to day, and one vendor's name covers several generations)."""
    info = _cpuinfo()
    if "model name" not in info:
        return platform.processor() or platform.machine()
    return f"{info['model name']} (family {info.get('cpu family')} model {info.get('model')})"


_AVX512_KERNELS = ("SkylakeX", "Cooperlake", "SapphireRapids")  # OpenBLAS's names


def blas_kernels() -> str:
    """Which kernels NumPy's BLAS runs, and whether that is less than the CPU offers.

    OpenBLAS picks its kernels for the CPU it finds unless ``OPENBLAS_CORETYPE`` names others.
    Some environments pin that variable (this project's machines set ``Haswell``: AVX2), which
    on an AVX-512 CPU halves NumPy's GEMM rate while TensorFlow's oneDNN still uses AVX-512.
    Every ratio that involves a GEMM depends on it, so each run's header says it.
    """
    import numpy  # noqa: F401 - loads the BLAS that threadpoolctl then finds
    from threadpoolctl import threadpool_info

    blas = [lib for lib in threadpool_info() if lib.get("user_api") == "blas"]
    if not blas:
        return "no BLAS found by threadpoolctl"
    lib = blas[0]
    text = f"{lib['internal_api']} {lib.get('version')} kernels {lib.get('architecture')}"
    pinned = os.environ.get("OPENBLAS_CORETYPE")
    if pinned:
        text += f" (OPENBLAS_CORETYPE={pinned})"
    avx512_cpu = "avx512f" in _cpuinfo().get("flags", "").split()
    if avx512_cpu and lib.get("architecture") not in _AVX512_KERNELS:
        text += "; the CPU has AVX-512, these kernels do not use it"
    return text


def run_header() -> str:
    """The lines a bench run's output starts with: when, on what CPU, with which BLAS kernels."""
    return (
        f"# {time.strftime('%Y-%m-%d %H:%M %Z')}, {cpu_model()}, {os.cpu_count()} CPUs\n"
        f"# NumPy's BLAS: {blas_kernels()}"
    )


@dataclass
class Result:
    """One measured figure: a workload run by one framework."""

    suite: str
    workload: str
    framework: str
    value: float  # in `unit`, higher is better unless `lower_is_better`
    unit: str
    repeats: int
    spread: tuple[float, float]  # 10th and 90th percentile of the repeats
    lower_is_better: bool = False
    note: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def rate(
    fn: Callable[[], object],
    work_per_call: float = 1.0,
    min_time: float = 0.2,
    repeats: int = 7,
    warmup: int = 3,
) -> tuple[float, tuple[float, float]]:
    """Median rate (work units per second) of ``fn`` over ``repeats`` timed batches.

    Each batch runs ``fn`` enough times to last ``min_time`` seconds, so timer resolution and
    loop overhead do not dominate fast calls.
    """
    for _ in range(warmup):
        fn()
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time / 4:
            break
        calls *= 4
    calls = max(1, int(calls * (min_time / max(elapsed, 1e-9))))
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - start
        rates.append(calls * work_per_call / elapsed)
    return statistics.median(rates), _spread(rates)


def _spread(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    lo = ordered[max(0, int(0.1 * (len(ordered) - 1)))]
    hi = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return lo, hi


def tensorflow_v1() -> Any:
    """TensorFlow's ``tf.compat.v1`` in graph mode, the API nbflow copies (TensorFlow is not an
    nbflow dependency: it is imported only for a TensorFlow run)."""
    import tensorflow as tf2

    tf = tf2.compat.v1
    tf.disable_eager_execution()
    return tf


def free_ports(count: int) -> list[int]:
    """``count`` TCP ports on 127.0.0.1 that are free now (for servers started next)."""
    import socket

    sockets = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports
