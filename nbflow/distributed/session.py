"""``DistributedSession``: a ``tf.Session`` whose partitions run on a cluster's tasks.

It is a ``Session`` in every respect — fetch and feed handling, the step cache, the master's
graph work (``runtime.master.compile_step``), deadlines and cancellation — except where
partitions run, which is what it overrides (``_place_partitions``). ``tf.Session(target)``
returns one for an ``nbflow://`` target once ``nbflow.distributed`` is imported (it registers
the scheme).

The first ``run`` of a step signature groups the compiled partitions by task
(``master.task_shares``) and registers each task's share with the task (``nbflow_register``),
once. Every ``run`` then sends one ``nbflow_run`` message per participating task,
concurrently, with only the feeds that task needs (small arrays inline, ``wire.encode``) and a
step id unique across clients; tensors between tasks move task to task. The reply of each task
carries its fetched values and its timings. The messages go on the calling thread's own
connections (``channel.Channels``), not through the Dask client's event-loop thread;
``direct = False`` sends them through ``client.sync`` and the client's rpc instead (what
``bench/dask_transport.py`` compares).

Failures: a task whose message fails (its worker died, the connection dropped) is
``UnavailableError`` naming the task and its worker, or the scheduler when that is what was
lost; a task that reports an error makes the master abort the step on the others
(``nbflow_abort``), and the step raises the root error — not the cancellations it caused. The
step's cancellation — ``close()``, ``Session.reset``, or the cluster's health check finding one
of its tasks stopped (``Cluster.watch_step``) — wakes the waiting loop from any thread and
aborts the step on its tasks the same way, skipping tasks known lost (a stopped process answers
nothing). A deadline does too. A session whose cluster recreated a task since it compiled a
step recompiles and re-registers (new routes, new handles). ``MonitoredTrainingSession``
recovers by making a new session, which first recreates lost tasks, or a lost Dask cluster
nbflow made (``Cluster.ensure_tasks``).

``last_step_timing`` splits the last step's wall time into compute (the slowest task's run
time minus the time its Recvs waited) and communication (the rest: messages, transfers).
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from nbflow import errors
from nbflow.devices.device import Device
from nbflow.distributed.channel import Channels
from nbflow.distributed.cluster import Cluster, cluster_for_target
from nbflow.distributed.master import TaskShare, task_shares
from nbflow.distributed.wire import (
    SMALL_BYTES,
    decode,
    encode,
    feed_key,
    is_raw,
    write_tensor,
)
from nbflow.framework.op_def import KernelContext
from nbflow.framework.ops import Graph
from nbflow.runtime.config import ConfigProto
from nbflow.runtime.master import CompiledStep
from nbflow.runtime.session import Session, Step

_MASTER_ID = random.getrandbits(30)
_step_counter = itertools.count(1)


def next_global_step_id() -> int:
    """A step id no other client of the cluster uses at the same time."""
    return (_MASTER_ID << 32) | (next(_step_counter) & 0xFFFFFFFF)


@dataclass
class StepTiming:
    """Where the time of one step went (seconds)."""

    total: float
    compute: float
    communication: float
    tasks: dict[str, tuple[float, float]] = field(default_factory=dict)  # task: (run, recv wait)

    def __str__(self) -> str:
        return (
            f"step {self.total * 1e3:.2f} ms = compute {self.compute * 1e3:.2f} ms + "
            f"communication {self.communication * 1e3:.2f} ms"
        )


Call = Callable[[str, dict[str, Any]], Awaitable[Any]]  # (worker address, message) -> reply


class DistributedSession(Session):
    """A session against a ``Cluster`` (see the module docstring)."""

    # A kept tensor would live on whichever task ran GetSessionHandle, and nothing routes the
    # readers there yet: fetching a handle raises UnimplementedError (Session.run).
    supports_session_handles = False

    for_cluster = True
    direct = True  # steps on the calling thread's own connections, not through client.sync

    def __init__(
        self,
        target: Cluster | str = "",
        graph: Graph | None = None,
        config: ConfigProto | None = None,
        task: str | None = None,
        recreate_lost_tasks: bool = True,
    ):
        cluster = target if isinstance(target, Cluster) else cluster_for_target(target)
        self._cluster = cluster
        self._task = task
        self._generation = cluster.generation
        self.last_step_timing: StepTiming | None = None
        if recreate_lost_tasks:
            cluster.ensure_tasks()
        super().__init__("", graph, config)
        self._new_step_id = next_global_step_id

    def _open_devices(self, target: str) -> list[Device]:
        return self._cluster.devices(self._task)

    @property
    def sess_str(self) -> str:
        return self._cluster.target

    @property
    def cluster(self) -> Cluster:
        return self._cluster

    def _step_signature(self, fetches: Any, feed_dict: dict | None) -> tuple:
        if self._cluster.generation != self._generation:  # a task was recreated: re-register
            with self._lock:
                self._steps.clear()
                self._generation = self._cluster.generation
                self._devices = self._cluster.devices(self._task)
        return super()._step_signature(fetches, feed_dict)

    def _place_partitions(self, compiled: CompiledStep, traced: bool) -> Step:
        """Where partitions run, here: each task's share registered with its task."""
        routes = self._cluster.routes()
        shares = task_shares(compiled, routes)
        self._cluster.client.sync(self._register, shares, routes)
        runner = _ClusterRunner(self, shares, compiled)
        partition_ops = [(p.device.name, p.ops) for p in compiled.partitions]
        return Step(runner, self._device, [], partition_ops, compiled.measured, False)

    def _release(self) -> None:
        pass  # the tasks own the resources; Session.reset clears their containers

    async def _register(self, shares: list[TaskShare], routes: dict[str, str]) -> None:
        rpc = self._cluster.client.rpc

        async def one(share: Any) -> None:
            address = routes[share.task]
            try:
                reply = await rpc(address).nbflow_register(
                    task=share.task, handle=share.handle, spec=share.spec
                )
            except Exception as exc:  # noqa: BLE001 - the worker is gone
                raise self._unavailable(share.task, address, exc) from None
            if reply.get("status") == "error":
                raise getattr(errors, reply["error"], errors.InternalError)(
                    None, None, reply["message"]
                )

        await asyncio.gather(*(one(s) for s in shares))

    def _run_step(
        self,
        shares: list[TaskShare],
        compiled: CompiledStep,
        ctx: KernelContext,
        feeds: tuple,
        deadline: float | None,
    ) -> tuple:
        if self._cluster.scheduler_lost:
            raise self._cluster.scheduler_error()
        lost = self._cluster.lost_tasks([s.task for s in shares])
        if lost:
            raise errors.UnavailableError(
                None,
                None,
                f"Task {lost[0]} failed its health check (worker "
                f"{self._cluster.tasks[lost[0]].address}); recreate the session to recover",
            )
        start = time.perf_counter()
        step_id = ctx.step_id
        timeout = None if deadline is None else max(0.001, deadline - time.monotonic())
        watch = self._cluster.watch_step([s.task for s in shares], ctx.cancellation)
        try:
            if self.direct:
                channels = self._cluster.channels
                replies = channels.run(
                    self._run_async(shares, step_id, feeds, timeout, channels.call, ctx, channels)
                )
            else:
                replies = self._cluster.client.sync(
                    self._run_async, shares, step_id, feeds, timeout, self._rpc_call, ctx
                )
        finally:
            self._cluster.unwatch_step(watch)
        results: list[Any] = [None] * compiled.num_fetches
        slowest = (0.0, 0.0)
        tasks = {}
        for share, reply in zip(shares, replies):
            for i, value in reply["values"]:
                results[i] = decode(value, writable=True)
            run_s, wait_s = reply["run_s"], reply["recv_wait_s"]
            tasks[share.task] = (run_s, wait_s)
            if run_s - wait_s > slowest[0] - slowest[1]:
                slowest = (run_s, wait_s)
        for i, k in compiled.fed_fetches:
            results[i] = feeds[k]
        total = time.perf_counter() - start
        compute = max(0.0, slowest[0] - slowest[1])
        self.last_step_timing = StepTiming(total, compute, max(0.0, total - compute), tasks)
        return tuple(results)

    async def _rpc_call(self, address: str, message: dict[str, Any]) -> Any:
        """``Call`` through the Dask client's rpc (on its event loop)."""
        kwargs = dict(message)
        return await getattr(self._cluster.client.rpc(address), kwargs.pop("op"))(**kwargs)

    async def _run_async(
        self,
        shares: list[TaskShare],
        step_id: int,
        feeds: tuple,
        timeout: float | None,
        call: Call,
        ctx: KernelContext,
        channels: Channels | None = None,
    ) -> list[dict]:
        """Send the step to its tasks and gather their replies. The first failure aborts the
        step on the tasks still running; so does the step's cancellation (``close()``, or the
        health check finding one of its tasks lost), which wakes this loop from any thread.
        With ``channels``, a large numeric feed to a task on this machine goes on its Unix
        socket (``Channels.plane``) and the message names it (``plane_feeds``)."""
        loop = asyncio.get_running_loop()
        cancelled: asyncio.Future = loop.create_future()

        def set_cancelled() -> None:
            if not cancelled.done():
                cancelled.set_result(None)

        def wake() -> None:  # any thread: close(), the health check
            loop.call_soon_threadsafe(set_cancelled)

        token = ctx.cancellation.register(wake)
        if token is None:
            raise _cancelled(ctx.cancellation.reason())
        routes = self._cluster.routes()
        calls: dict[asyncio.Future, TaskShare] = {}
        writes: dict[asyncio.Future, TaskShare] = {}  # feeds handed to a Unix socket
        for share in shares:
            address = routes[share.task]
            inline, on_plane = [], []
            for i in share.feed_indices:
                value = feeds[i]
                if channels is None or not is_raw(value) or value.nbytes <= SMALL_BYTES:
                    inline.append([i, encode(value)])
                    continue
                plane = await channels.plane(address)
                if plane is None or plane.closed():
                    inline.append([i, encode(value)])
                    continue
                key = feed_key(share.task, step_id, i)
                written, _ = write_tensor(plane.stream, share.task, step_id, key, value)
                writes[asyncio.ensure_future(written)] = share
                on_plane.append(i)
            message = {
                "op": "nbflow_run",
                "task": share.task,
                "handle": share.handle,
                "step_id": step_id,
                "feeds": inline,
                "plane_feeds": on_plane,
                "timeout": timeout,
            }
            calls[asyncio.ensure_future(call(address, message))] = share
        replies: dict[str, dict] = {}
        failures: list[errors.OpError] = []
        pending = set(calls) | set(writes)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while pending and not failures:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                done, _ = await asyncio.wait(
                    pending | {cancelled}, timeout=wait, return_when=asyncio.FIRST_COMPLETED
                )
                if not done:
                    failures.append(
                        errors.DeadlineExceededError(
                            None, None, f"Timed out after {timeout:.3f} s waiting for the step"
                        )
                    )
                elif cancelled in done:
                    failures.append(_cancelled(ctx.cancellation.reason()))
                for future in done - {cancelled}:
                    pending.discard(future)
                    share = calls.get(future) or writes[future]
                    try:
                        reply = future.result()
                    except Exception as exc:  # noqa: BLE001 - the task's worker is unreachable
                        if future in writes and channels is not None:
                            channels.drop_plane(routes[share.task])
                        failures.append(self._unavailable(share.task, routes[share.task], exc))
                        continue
                    if future in writes:
                        continue
                    if reply.get("status") == "ok":
                        replies[share.task] = reply
                    else:
                        kind = getattr(errors, reply["error"], errors.InternalError)
                        failures.append(kind(None, None, reply["message"]))
            if failures:
                # Abort the step where it still runs, except on tasks known lost (a stalled
                # process answers nothing); their calls are dropped with their connections.
                running = {calls[f].task: calls[f] for f in pending if f in calls}
                lost = set(self._cluster.lost_tasks(list(running)))
                live = [share for task, share in running.items() if task not in lost]
                await self._abort(step_id, live, routes, failures[0], call)
                for future in pending:
                    future.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
        finally:
            ctx.cancellation.deregister(token)
        if failures:
            raise next(
                (e for e in failures if not isinstance(e, errors.CancelledError)), failures[0]
            )
        return [replies[s.task] for s in shares]

    async def _abort(
        self,
        step_id: int,
        shares: list,
        routes: dict[str, str],
        cause: errors.OpError,
        call: Call | None = None,
    ) -> None:
        call = call or self._rpc_call
        message = f"Step aborted: {cause.message}"

        async def one(share: Any) -> None:
            abort = {"op": "nbflow_abort", "task": share.task, "step_id": step_id}
            try:
                await asyncio.wait_for(call(routes[share.task], {**abort, "message": message}), 5.0)
            except Exception:  # noqa: BLE001 - that task is gone too; its call fails by itself
                pass

        await asyncio.gather(*(one(s) for s in shares))

    def _unavailable(self, task: str, address: str, exc: BaseException) -> errors.OpError:
        """A task's message failed: its worker is gone, or all of them with the scheduler."""
        if self._cluster.scheduler_lost:
            return self._cluster.scheduler_error()
        return errors.UnavailableError(
            None,
            None,
            f"Task {task} is unavailable (Dask worker {address}): {type(exc).__name__}: {exc}",
        )

    @staticmethod
    def reset(target: str, containers: list[str] | None = None, config: Any = None) -> None:
        cluster_for_target(target).reset(containers)


def _cancelled(reason: BaseException) -> errors.OpError:
    """The error of a cancelled step: the one it was cancelled with, else ``CancelledError``."""
    if isinstance(reason, errors.OpError):
        return reason
    return errors.CancelledError(None, None, f"Step cancelled: {reason}")


class _ClusterRunner:
    """A cluster step's runner: one message per task (``DistributedSession._run_step``)."""

    can_wait = True

    def __init__(self, session: DistributedSession, shares: list[TaskShare], compiled: Any):
        self.session = session
        self.shares = shares
        self.compiled = compiled

    def run(self, ctx: KernelContext, feeds: tuple, deadline: float | None = None) -> tuple:
        return self.session._run_step(self.shares, self.compiled, ctx, feeds, deadline)


def session_for_target(target: str, graph: Graph | None = None, config: Any = None) -> Any:
    """What ``tf.Session(target)`` returns for an ``nbflow://`` target."""
    return DistributedSession(target, graph=graph, config=config)
