"""Running a partitioned step: one executor per device, joined only by Send/Recv.

``PartitionedExecutor.run`` makes the step's ``LocalRendezvous`` and one ``KernelContext`` per
device (its ``xp``, its resources, the shared rendezvous), then runs every partition's plan at
once. Partitions without a Recv never wait on another device, so the calling thread runs them
(their Sends fill the rendezvous); partitions with Recvs run on their dataflow executors, all
but one started from driver threads that only wait. The first error aborts the rendezvous, which
fails every parked Recv, so the other devices stop too; the step raises the root error, not the
cancellations it caused. Fetched values come back as host arrays, in the step's fetch order.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from nbflow import errors
from nbflow.devices.device import Device
from nbflow.framework.op_def import KernelContext
from nbflow.runtime.rendezvous import LocalRendezvous

_drivers: ThreadPoolExecutor | None = None
_drivers_lock = threading.Lock()


def _driver_pool() -> ThreadPoolExecutor:
    """Threads that start a partition's executor and wait for it (they run no kernels)."""
    global _drivers
    with _drivers_lock:
        if _drivers is None:
            _drivers = ThreadPoolExecutor(64, thread_name_prefix="nbflow-partition")
        return _drivers


@dataclass
class PartitionRun:
    """One device's compiled share of a step."""

    device: Device
    executor: Any
    parallel: bool  # a dataflow executor (takes a timeout) rather than the inline one
    waits: bool  # has Recvs: may wait on other devices
    feed_indices: list[int]
    fetch_indices: list[int]
    plan: Any


class PartitionedExecutor:
    """Runs the partitions of a step concurrently (see the module docstring)."""

    def __init__(
        self,
        parts: list[PartitionRun],
        num_fetches: int,
        fed_fetches: list[tuple[int, int]],
        devices: dict[str, Device],
    ):
        self.parts = parts
        self.num_fetches = num_fetches
        self.fed_fetches = fed_fetches  # (fetch index, feed index) of fetched fed tensors
        self.devices = devices
        waiting = [p for p in parts if p.waits]
        self._background = waiting[:-1]
        self._foreground = [p for p in parts if not p.waits] + waiting[-1:]

    @property
    def plans(self) -> list[tuple[str, Any]]:
        return [(p.device.name, p.plan) for p in self.parts]

    def run(self, ctx: KernelContext, feeds: tuple, timeout: float | None = None) -> tuple:
        rendezvous = LocalRendezvous(ctx.step_id, self.devices)
        results: list[Any] = [None] * self.num_fetches
        failures: list[BaseException] = []

        def run_part(part: PartitionRun) -> None:
            device = part.device
            pctx = KernelContext(
                device.name, device.xp, device.resources, ctx.step_id, rendezvous, ctx.options
            )
            pctx.stats = ctx.stats
            try:
                if device.is_host:
                    pfeeds = tuple(feeds[i] for i in part.feed_indices)
                else:
                    pfeeds = tuple(device.from_host(feeds[i]) for i in part.feed_indices)
                if part.parallel:
                    out = part.executor.run(pctx, pfeeds, timeout)
                else:
                    out = part.executor.run(pctx, pfeeds)
                if not device.is_host:
                    out = tuple(device.to_host(v) for v in out)
            except BaseException as exc:  # noqa: BLE001 - re-raised below, after the others
                failures.append(exc)
                rendezvous.abort(
                    errors.CancelledError(None, None, f"Step cancelled: {device.name} failed")
                )
                return
            for i, value in zip(part.fetch_indices, out):
                results[i] = value

        pool = _driver_pool()
        pending = [pool.submit(run_part, part) for part in self._background]
        for part in self._foreground:
            run_part(part)
        for future in pending:
            future.result()
        if failures:
            raise next(
                (e for e in failures if not isinstance(e, errors.CancelledError)), failures[0]
            )
        for i, k in self.fed_fetches:
            results[i] = feeds[k]
        return tuple(results)
