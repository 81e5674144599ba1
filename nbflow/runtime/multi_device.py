"""Running a partitioned step: one runner per device, joined only by Send/Recv.

``PartitionRunner`` is the one partition runner: a local multi-device step (``run``) and a
task's share of a cluster step (``run_partitions`` with the task's rendezvous) both go
through it. For one step it makes one ``KernelContext`` per device (its ``xp``, its
resources, the shared rendezvous), then runs every partition's runner at once. Partitions
without a Recv never wait on another device, so the calling thread runs them (their Sends fill
the rendezvous); partitions with Recvs run on their own runners, all but one started from
driver threads that only wait.

Errors and cancellation: the first error aborts the rendezvous, which fails every parked Recv
and cancels every partition's context, so the other devices stop too; the step raises the root
error, not the cancellations it caused. Cancelling the step's own context (``Session.close``,
a deadline, a master's abort) aborts the rendezvous with that reason. Fetched values come back
as host arrays, by step fetch index.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from nbflow import errors
from nbflow.devices.device import Device
from nbflow.framework.op_def import KernelContext
from nbflow.runtime.plan import Plan
from nbflow.runtime.rendezvous import LocalRendezvous

_drivers: ThreadPoolExecutor | None = None
_drivers_lock = threading.Lock()


def _driver_pool() -> ThreadPoolExecutor:
    """Threads that start a partition's runner and wait for it (they run no kernels)."""
    global _drivers
    with _drivers_lock:
        if _drivers is None:
            _drivers = ThreadPoolExecutor(64, thread_name_prefix="nbflow-partition")
        return _drivers


@dataclass
class PartitionRun:
    """One device's compiled share of a step."""

    device: Device
    runner: Any  # a step.StepRunner
    feed_indices: list[int]  # step feed index of each plan feed
    fetch_indices: list[int]  # step fetch index of each plan fetch
    plan: Plan

    @property
    def waits(self) -> bool:
        """Has Recvs (or other async kernels): may wait on other devices."""
        return self.plan.has_async


class PartitionRunner:
    """Runs the partitions of a step concurrently (see the module docstring)."""

    can_wait = True

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
    def plans(self) -> list[tuple[str, Plan]]:
        return [(p.device.name, p.plan) for p in self.parts]

    def run(self, ctx: KernelContext, feeds: tuple, deadline: float | None = None) -> tuple:
        """A local step: its own rendezvous; results in the step's fetch order."""
        rendezvous = LocalRendezvous(ctx.step_id, self.devices)
        values = self.run_partitions(ctx, rendezvous, feeds, deadline)
        results: list[Any] = [None] * self.num_fetches
        for i, value in values.items():
            results[i] = value
        for i, k in self.fed_fetches:
            results[i] = feeds[k]
        return tuple(results)

    def run_partitions(
        self,
        ctx: KernelContext,
        rendezvous: LocalRendezvous,
        feeds: Sequence[Any] | Mapping[int, Any],
        deadline: float | None,
    ) -> dict[int, Any]:
        """Run every partition for one step through ``rendezvous``; returns the fetched values
        (on the host) by step fetch index. ``feeds`` is indexed by step feed index."""
        values: dict[int, Any] = {}
        failures: list[BaseException] = []
        contexts = {}
        for part in self.parts:
            device = part.device
            pctx = KernelContext(
                device.name, device.xp, device.resources, ctx.step_id, rendezvous, ctx.options
            )
            pctx.stats = ctx.stats
            rendezvous.when_aborted(pctx.cancellation.cancel)
            contexts[device.name] = pctx

        def run_part(part: PartitionRun) -> None:
            device = part.device
            try:
                if device.is_host:
                    pfeeds = tuple(feeds[i] for i in part.feed_indices)
                else:
                    pfeeds = tuple(device.from_host(feeds[i]) for i in part.feed_indices)
                out = part.runner.run(contexts[device.name], pfeeds, deadline)
                if not device.is_host:
                    out = tuple(device.to_host(v) for v in out)
            except BaseException as exc:  # noqa: BLE001 - re-raised below, after the others
                failures.append(exc)
                rendezvous.abort(
                    errors.CancelledError(None, None, f"Step cancelled: {device.name} failed")
                )
                return
            for i, value in zip(part.fetch_indices, out):
                values[i] = value

        cancellation = ctx.cancellation
        token = cancellation.register(lambda: rendezvous.abort(cancellation.reason()))
        if token is None:
            rendezvous.abort(cancellation.reason())
        try:
            pool = _driver_pool()
            pending = [pool.submit(run_part, part) for part in self._background]
            for part in self._foreground:
                run_part(part)
            for future in pending:
                future.result()
        finally:
            cancellation.deregister(token)
        if failures:
            raise next(
                (e for e in failures if not isinstance(e, errors.CancelledError)), failures[0]
            )
        return values
