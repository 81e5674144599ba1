"""Running a partitioned step: one runner per device, joined only by Send/Recv.

``PartitionRunner`` is the one partition runner: a local multi-device step (``run``) and a
task's share of a cluster step (``run_partitions`` with the task's rendezvous) both go
through it. For one step it makes one ``KernelContext`` per device (its ``xp``, its
resources, the shared rendezvous), then runs every partition's runner at once. Partitions
without a Recv never wait on another device, so the calling thread runs them (their Sends fill
the rendezvous); partitions with Recvs run on their own runners, all but one started from
driver threads that only wait.

Where no cores are spare for kernels side by side (``step.partition_runner``: two cores, or
one inter-op thread) and every partition's only async kernels are Recvs, a local step runs in
the calling thread alone. Each partition is straight-line generated code
(``executor.ResumableInline``) that runs its nodes in the order ``order_by_transfers`` gives
it: its Sends and Recvs as they come in one order of the whole step
(``partition.transfer_orders``), so no partition waits on another in a cycle. A Recv whose
value is not there yet parks it (the function yields), and the Send that delivers the value
resumes it on the spot. The step is over when the last partition returns, with no
thread hand-off (bench/devices.py: a 1 KB Send/Recv step ~6x as many times a second as through
the driver threads, the Figure 1 MLP split over two CPU devices ~1.6x).

A task's share of a cluster step runs the same way on the task's message loop, where a Recv is
completed by a message from another process: the master, which alone sees every partition,
sends each its list of transfers with its registration (``distributed/master.py``). A
partition without that list runs on the dataflow walk (``drivers.CallerDriver``).

Errors and cancellation: the first error aborts the rendezvous, which fails every parked Recv
and cancels every partition's context, so the other devices stop too; the step raises the root
error, not the cancellations it caused. Cancelling the step's own context (``Session.close``,
a deadline, a master's abort) aborts the rendezvous with that reason. Fetched values come back
as host arrays, by step fetch index.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from nbflow import errors
from nbflow.devices.device import Device
from nbflow.framework.op_def import KernelContext
from nbflow.runtime.partition import topological, transfer_key
from nbflow.runtime.plan import Plan, PlanNode
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
        in_caller: list[Any] | None = None,
    ):
        self.parts = parts
        self.num_fetches = num_fetches
        self.fed_fetches = fed_fetches  # (fetch index, feed index) of fetched fed tensors
        self.devices = devices
        self.in_caller = in_caller  # a ResumableInline per partition: a step in one thread
        waiting = [p for p in parts if p.waits]
        self._background = waiting[:-1]
        self._foreground = [p for p in parts if not p.waits] + waiting[-1:]

    @property
    def plans(self) -> list[tuple[str, Plan]]:
        return [(p.device.name, p.plan) for p in self.parts]

    def run(self, ctx: KernelContext, feeds: tuple, deadline: float | None = None) -> tuple:
        """A local step: its own rendezvous; results in the step's fetch order."""
        rendezvous = LocalRendezvous(ctx.step_id, self.devices)
        if self.in_caller is not None:
            values = self._run_in_caller(ctx, rendezvous, feeds)
        else:
            values = self.run_partitions(ctx, rendezvous, feeds, deadline)
        results: list[Any] = [None] * self.num_fetches
        for i, value in values.items():
            results[i] = value
        for i, k in self.fed_fetches:
            results[i] = feeds[k]
        return tuple(results)

    def _run_in_caller(
        self, ctx: KernelContext, rendezvous: LocalRendezvous, feeds: tuple
    ) -> dict[int, Any]:
        """Every partition driven in this thread (``start_partitions``): a Send delivers to a
        parked Recv by calling its continuation, which resumes that partition here, so the step
        is over when the last partition returns, with no thread hand-off."""
        outcome: list[tuple[dict[int, Any] | None, BaseException | None]] = []
        assert self.in_caller is not None
        self.start_partitions(
            ctx, rendezvous, feeds, self.in_caller, lambda *result: outcome.append(result)
        )
        if not outcome:  # every Send of the step ran in this thread: each Recv has its value
            raise errors.InternalError(None, None, "A partition of the step did not finish")
        values, error = outcome[0]
        if error is not None:
            raise error
        assert values is not None
        return values

    def run_partitions(
        self,
        ctx: KernelContext,
        rendezvous: LocalRendezvous,
        feeds: Sequence[Any] | Mapping[int, Any],
        deadline: float | None,
    ) -> dict[int, Any]:
        """Run every partition for one step through ``rendezvous``; returns the fetched values
        (on the host) by step fetch index. ``feeds`` is indexed by step feed index."""
        join = _Join(self, ctx, rendezvous)
        contexts = join.contexts()

        def run_part(part: PartitionRun, pctx: KernelContext) -> None:
            try:
                out = part.runner.run(pctx, _part_feeds(part, feeds), deadline)
            except BaseException as exc:  # noqa: BLE001 - re-raised below, after the others
                join.finished(part, None, exc)
                return
            join.finished(part, out, None)

        try:
            pool = _driver_pool()
            pending = [pool.submit(run_part, p, contexts[p.device.name]) for p in self._background]
            for part in self._foreground:
                run_part(part, contexts[part.device.name])
            for future in pending:
                future.result()
        finally:
            join.close()
        return join.result()

    def start_partitions(
        self,
        ctx: KernelContext,
        rendezvous: LocalRendezvous,
        feeds: Sequence[Any] | Mapping[int, Any],
        drivers: list[Any],
        done: Callable[[dict[int, Any] | None, BaseException | None], None],
    ) -> None:
        """``run_partitions`` without blocking: each partition driven in the calling thread by
        its ``executor.CallerDriver`` (``drivers``, in partition order); ``done(values, None)``
        or ``done(None, root error)`` once every partition has finished."""
        join = _Join(self, ctx, rendezvous)
        contexts = join.contexts()
        left = [len(self.parts)]

        def finished(part: PartitionRun, out: tuple | None, error: BaseException | None) -> None:
            join.finished(part, out, error)
            left[0] -= 1
            if left[0]:
                return
            join.close()
            try:
                values = join.result()
            except BaseException as exc:  # noqa: BLE001 - the step's root error
                done(None, exc)
                return
            done(values, None)

        for part, driver in zip(self.parts, drivers):
            try:
                pfeeds = _part_feeds(part, feeds)
            except BaseException as exc:  # noqa: BLE001 - reported through ``done``
                finished(part, None, exc)
                continue
            driver.start(contexts[part.device.name], pfeeds, partial(finished, part))


def order_by_transfers(plan: Plan, transfers: list[str]) -> list[PlanNode] | None:
    """``plan``'s nodes in a topological order that runs its Sends and Recvs in the order of
    ``transfers``: their ``transfer_key``s as they come in one order of the whole step's
    partitions together (``partition.transfer_orders``). None where one of the plan's transfers
    is not listed, or the plan's own edges contradict the list.

    Why it is enough for partitions in different processes, each running its own nodes in such
    an order and parking at a Recv whose value is not there yet: suppose they all park. Take
    the parked Recv that comes first in the step's order; its Send comes earlier still, and has
    not run, so its partition is parked at a Recv that comes before that Send in the partition's
    order, hence in the step's order: earlier than the first one, which cannot be."""
    rank = {key: k for k, key in enumerate(transfers)}
    preds = {
        n.index: [src[1] for src in n.sources if src[0] == "node"] + n.control_sources
        for n in plan.nodes
    }
    ranked = []
    for node in plan.nodes:
        if node.op.op_def.is_send or node.op.op_def.is_recv:
            k = rank.get(transfer_key(node.op))
            if k is None:
                return None
            ranked.append((k, node.index))
    ranked.sort()
    for (_, before), (_, after) in zip(ranked, ranked[1:]):
        preds[after].append(before)  # the transfers in the step's order
    succs: dict[int, list[int]] = {i: [] for i in preds}
    for i, inputs in preds.items():
        for b in inputs:
            succs[b].append(i)
    order = topological(list(preds), preds, succs)
    return None if order is None else [plan.nodes[i] for i in order]


def _part_feeds(part: PartitionRun, feeds: Sequence[Any] | Mapping[int, Any]) -> tuple:
    device = part.device
    if device.is_host:
        return tuple(feeds[i] for i in part.feed_indices)
    return tuple(device.from_host(feeds[i]) for i in part.feed_indices)


class _Join:
    """One step's partitions joined: per-device contexts cancelled with the rendezvous, the
    step's cancellation aborting it, fetched values collected, the root error kept."""

    def __init__(self, runner: PartitionRunner, ctx: KernelContext, rendezvous: LocalRendezvous):
        self.runner = runner
        self.ctx = ctx
        self.rendezvous = rendezvous
        self.values: dict[int, Any] = {}
        self.failures: list[BaseException] = []
        cancellation = ctx.cancellation
        self.token = cancellation.register(lambda: rendezvous.abort(cancellation.reason()))
        if self.token is None:
            rendezvous.abort(cancellation.reason())

    def contexts(self) -> dict[str, KernelContext]:
        ctx, rendezvous = self.ctx, self.rendezvous
        out = {}
        for part in self.runner.parts:
            device = part.device
            pctx = KernelContext(
                device.name, device.xp, device.resources, ctx.step_id, rendezvous, ctx.options
            )
            pctx.stats = ctx.stats
            rendezvous.when_aborted(pctx.cancellation.cancel)
            out[device.name] = pctx
        return out

    def finished(self, part: PartitionRun, out: tuple | None, error: BaseException | None) -> None:
        if error is not None:
            self.failures.append(error)
            self.rendezvous.abort(
                errors.CancelledError(None, None, f"Step cancelled: {part.device.name} failed")
            )
            return
        assert out is not None
        device = part.device
        for i, value in zip(part.fetch_indices, out):
            self.values[i] = value if device.is_host else device.to_host(value)

    def close(self) -> None:
        self.ctx.cancellation.deregister(self.token)

    def result(self) -> dict[int, Any]:
        if self.failures:
            raise next(
                (e for e in self.failures if not isinstance(e, errors.CancelledError)),
                self.failures[0],
            )
        return self.values
