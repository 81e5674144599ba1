"""What the benchmark suites share: medians over repeats, one result record, TensorFlow v1."""

from __future__ import annotations

import platform
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any
from collections.abc import Callable


def cpu_model() -> str:
    """The host CPU's model name (the README's figures name it: the host changes day to day)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


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
