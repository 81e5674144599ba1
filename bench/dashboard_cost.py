"""What showing steps on the Dask dashboard costs a step (``nbflow/distributed/dashboard.py``).

The scalar null step of OSDI Figure 7 (1 ps, 1 worker) on ``Cluster.local``, with the tasks'
``StepLog.record`` turned on and off in alternating blocks (ABBA, one process, so a busy
machine's noise falls on both alike): median wall time per step and the CPU time each process
spent per step, read from /proc; the flush of a worker's totals on its event loop; and
``StepLog.record`` alone, timed in a loop.
Run it with ``python -m bench.dashboard_cost``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time

from bench.dask_transport import _cpu_seconds
from bench.distributed import _null_step_graphs
from nbflow.distributed.dashboard import FLUSH_S, StepLog


def _set_record(dask_worker, on: bool) -> None:
    steps = dask_worker._nbflow_host.steps
    if on:
        steps.__dict__.pop("record", None)
    else:
        steps.record = lambda *args: None


async def _time_flush(dask_worker, n: int = 200) -> float:
    """Seconds one flush of the worker's totals takes (on its event loop, as the timer runs it)."""
    steps = dask_worker._nbflow_host.steps
    start = time.perf_counter()
    for _ in range(n):
        steps.flush()
    return (time.perf_counter() - start) / n


def null_step_ab(cycles: int = 16, block: int = 100) -> None:
    import nbflow as tf
    from nbflow.distributed import Cluster

    with Cluster.local(n_workers=2, memory_limit="2GiB", spec={"ps": 1, "worker": 1}) as cluster:
        pids = {"client": os.getpid(), **{t.job: t.pid for t in cluster.tasks.values()}}
        ((graph, init, step, _, _),) = _null_step_graphs(tf, "scalar", 1, 1)
        times: dict[bool, list[float]] = {True: [], False: []}
        cpu = {on: dict.fromkeys(pids, 0.0) for on in (True, False)}
        with tf.Session(cluster.target, graph=graph) as sess:
            sess.run(init)
            for cycle in range(cycles):
                for on in (True, False) if cycle % 2 == 0 else (False, True):
                    cluster.client.run(_set_record, on=on)
                    for _ in range(5):
                        sess.run(step)
                    before = {p: _cpu_seconds(pid) for p, pid in pids.items()}
                    for _ in range(block):
                        start = time.perf_counter()
                        sess.run(step)
                        times[on].append(time.perf_counter() - start)
                    for p, pid in pids.items():
                        cpu[on][p] += _cpu_seconds(pid) - before[p]
            flush_s = max(cluster.client.run(_time_flush).values())
        n = cycles * block
        for on in (True, False):
            spent = " ".join(f"{p} {cpu[on][p] / n * 1e3:.3f}" for p in pids)
            label = "dashboard totals on " if on else "dashboard totals off"
            print(
                f"{label}: {statistics.median(times[on]) * 1e3:.3f} ms/step (median of {n}); "
                f"CPU ms/step: {spent}"
            )
    print(f"StepLog.flush (one event of the totals, every {FLUSH_S} s): {flush_s * 1e6:.0f} us")
    print("load average", os.getloadavg())


def record_alone(n: int = 200_000) -> None:
    class Worker:
        def log_event(self, topic, msg) -> None:
            pass

    async def go() -> float:
        log = StepLog(Worker(), flush_s=3600)
        start = time.perf_counter()
        for _ in range(n):
            log.record("/job:ps/replica:0/task:0", "incarnation", 1e-4, 5e-5)
        return (time.perf_counter() - start) / n

    print(f"StepLog.record alone: {asyncio.run(go()) * 1e9:.0f} ns a step")


if __name__ == "__main__":
    record_alone()
    null_step_ab()
