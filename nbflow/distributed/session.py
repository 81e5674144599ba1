"""``DistributedSession``: a ``tf.Session`` whose master runs here and whose steps run on tasks.

The first ``run`` of a step signature compiles it (``master.compile_step``) and registers each
task's share with the task (``nbflow_register``), once. Every ``run`` then sends one
``nbflow_run`` message per participating task, concurrently, with only the feeds that task
needs (small arrays inline, ``wire.encode``) and a step id unique across clients; tensors
between tasks move task to task. The reply of each task carries its fetched values and its
timings. The messages go on the calling thread's own connections (``channel.Channels``), not
through the Dask client's event-loop thread; ``direct = False`` sends them through
``client.sync`` and the client's rpc instead (what ``bench/dask_transport.py`` compares).

Failures: a task whose message fails (its worker died, the connection dropped) is
``UnavailableError`` naming the task; a task that reports an error makes the master abort the
step on the others (``nbflow_abort``), and the step raises the root error — not the
cancellations it caused. A session whose cluster recreated a task since it compiled a step
recompiles and re-registers (new routes, new handles). ``MonitoredTrainingSession`` recovers
by making a new session, which first recreates lost tasks (``Cluster.ensure_tasks``).

``last_step_timing`` splits the last step's wall time into compute (the slowest task's run
time minus the time its Recvs waited) and communication (the rest: messages, transfers).
"""

from __future__ import annotations

import asyncio
import itertools
import random
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from nbflow import errors
from nbflow.distributed.cluster import Cluster
from nbflow.distributed.master import CompiledStep, compile_step
from nbflow.distributed.wire import decode, encode
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Graph
from nbflow.runtime.config import ConfigProto, RunMetadata, RunOptions
from nbflow.runtime.placement import CostModel
from nbflow.runtime.session import BaseSession, _FetchHandler

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


@dataclass
class _RemoteStep:
    compiled: CompiledStep
    generation: int
    registered: bool = False


Call = Callable[[str, dict[str, Any]], Awaitable[Any]]  # (worker address, message) -> reply


class DistributedSession(BaseSession):
    """A session against a ``Cluster`` (see the module docstring)."""

    direct = True  # steps on the calling thread's own connections, not through client.sync

    def __init__(
        self,
        cluster: Cluster,
        graph: Graph | None = None,
        config: ConfigProto | None = None,
        task: str | None = None,
        recreate_lost_tasks: bool = True,
    ):
        self._graph = graph if graph is not None else ops_lib.get_default_graph()
        self._config = config or ConfigProto()
        self._closed = False
        self._opened = True
        self._cluster = cluster
        self._task = task
        self._cost_model = CostModel()
        self._fetch_cache: dict[Any, _FetchHandler] = {}
        self._feed_slots: dict = {}
        self._steps: dict[Any, _RemoteStep] = {}
        self._steps_version = self._graph._mutation_version
        self._lock = threading.RLock()
        self._in_flight: dict[int, tuple[list, dict[str, str]]] = {}  # step id: (shares, routes)
        self._default_context: Any = None
        self.last_step_timing: StepTiming | None = None
        if recreate_lost_tasks:
            cluster.ensure_tasks()
        self._devices = cluster.devices(task)

    @property
    def sess_str(self) -> str:
        return self._cluster.target

    @property
    def cluster(self) -> Cluster:
        return self._cluster

    def list_devices(self) -> list[Any]:
        return list(self._devices)

    # --- running -----------------------------------------------------------------------------
    def run(
        self,
        fetches: Any,
        feed_dict: dict | None = None,
        options: RunOptions | None = None,
        run_metadata: RunMetadata | None = None,
    ) -> Any:
        handler, step_key, feed_tensors, feed_values = self._step_signature(fetches, feed_dict)
        step = self._steps.get(step_key)
        if step is None or step.generation != self._cluster.generation:
            step = self._compile(handler, feed_tensors)
            self._steps[step_key] = step
        results = self._run_step(step, feed_values, self._timeout(options))
        if run_metadata is not None and options is not None and options.output_partition_graphs:
            run_metadata.partition_graphs = step.compiled.partition_graphs
        return handler.build(results)

    def _compile(self, handler: _FetchHandler, feeds: tuple) -> _RemoteStep:
        with self._lock:
            generation = self._cluster.generation
            self._devices = self._cluster.devices(self._task)
            compiled = compile_step(
                handler.tensors,
                handler.targets,
                list(feeds),
                self._devices,
                self._cluster.routes(),
                self._config,
                self._cost_model,
            )
            step = _RemoteStep(compiled, generation)
            routes = self._cluster.routes()
            self._cluster.client.sync(self._register, step.compiled, routes)
            step.registered = True
            return step

    async def _register(self, compiled: CompiledStep, routes: dict[str, str]) -> None:
        rpc = self._cluster.client.rpc

        async def one(share: Any) -> None:
            address = routes[share.task]
            try:
                reply = await rpc(address).nbflow_register(
                    task=share.task, handle=share.handle, spec=share.spec
                )
            except Exception as exc:  # noqa: BLE001 - the worker is gone
                raise _unavailable(share.task, address, exc) from None
            if reply.get("status") == "error":
                raise getattr(errors, reply["error"], errors.InternalError)(
                    None, None, reply["message"]
                )

        await asyncio.gather(*(one(s) for s in compiled.shares))

    def _run_step(self, step: _RemoteStep, feeds: tuple, timeout: float | None) -> tuple:
        compiled = step.compiled
        lost = self._cluster.lost_tasks([s.task for s in compiled.shares])
        if lost:
            raise errors.UnavailableError(
                None,
                None,
                f"Task {lost[0]} failed its health check (worker "
                f"{self._cluster.tasks[lost[0]].address}); recreate the session to recover",
            )
        start = time.perf_counter()
        step_id = next_global_step_id()
        self._in_flight[step_id] = (compiled.shares, self._cluster.routes())
        try:
            if self.direct:
                channels = self._cluster.channels
                replies = channels.run(
                    self._run_async(compiled, step_id, feeds, timeout, channels.call)
                )
            else:
                replies = self._cluster.client.sync(
                    self._run_async, compiled, step_id, feeds, timeout, self._rpc_call
                )
        finally:
            self._in_flight.pop(step_id, None)
        results: list[Any] = [None] * compiled.num_fetches
        slowest = (0.0, 0.0)
        tasks = {}
        for share, reply in zip(compiled.shares, replies):
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
        self, compiled: CompiledStep, step_id: int, feeds: tuple, timeout: float | None, call: Call
    ) -> list[dict]:
        routes = self._cluster.routes()
        calls = {}
        for share in compiled.shares:
            message = {
                "op": "nbflow_run",
                "task": share.task,
                "handle": share.handle,
                "step_id": step_id,
                "feeds": [[i, encode(feeds[i])] for i in share.feed_indices],
                "timeout": timeout,
            }
            calls[asyncio.ensure_future(call(routes[share.task], message))] = share
        replies: dict[str, dict] = {}
        failures: list[errors.OpError] = []
        pending = set(calls)
        deadline = None if timeout is None else time.monotonic() + timeout
        while pending:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            done, pending = await asyncio.wait(
                pending, timeout=wait, return_when=asyncio.FIRST_COMPLETED
            )
            if not done:
                failures.append(
                    errors.DeadlineExceededError(
                        None, None, f"Timed out after {timeout:.3f} s waiting for the step"
                    )
                )
                await self._abort(step_id, [calls[f] for f in pending], routes, failures[0], call)
                for f in pending:
                    f.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                break
            for future in done:
                share = calls[future]
                try:
                    reply = future.result()
                except Exception as exc:  # noqa: BLE001 - the task's worker is unreachable
                    error: errors.OpError = _unavailable(share.task, routes[share.task], exc)
                else:
                    if reply.get("status") == "ok":
                        replies[share.task] = reply
                        continue
                    kind = getattr(errors, reply["error"], errors.InternalError)
                    error = kind(None, None, reply["message"])
                first = not failures
                failures.append(error)
                if first:
                    await self._abort(step_id, [calls[f] for f in pending], routes, error, call)
        if failures:
            raise next(
                (e for e in failures if not isinstance(e, (errors.CancelledError,))),
                failures[0],
            )
        return [replies[s.task] for s in compiled.shares]

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

    # --- lifetime ----------------------------------------------------------------------------
    def close(self) -> None:
        """Close the session; steps still running (a blocked Dequeue, say) are cancelled."""
        if self._closed:
            return
        self._closed = True
        self._steps.clear()
        in_flight = list(self._in_flight.items())
        if not in_flight:
            return
        cause = errors.CancelledError(None, None, "Session closed while the step was running")

        async def cancel_all() -> None:
            await asyncio.gather(
                *(self._abort(i, shares, routes, cause) for i, (shares, routes) in in_flight)
            )

        try:
            self._cluster.client.sync(cancel_all)
        except Exception:  # noqa: BLE001 - the cluster is gone: nothing left to cancel
            pass

    @staticmethod
    def reset(target: str, containers: list[str] | None = None, config: Any = None) -> None:
        from nbflow.distributed.cluster import cluster_for_target

        cluster_for_target(target).reset(containers)


def _unavailable(task: str, address: str, exc: BaseException) -> errors.OpError:
    return errors.UnavailableError(
        None,
        None,
        f"Task {task} is unavailable (Dask worker {address}): {type(exc).__name__}: {exc}",
    )


def session_for_target(target: str, graph: Graph | None = None, config: Any = None) -> Any:
    """What ``tf.Session(target)`` returns for an ``nbflow://`` target."""
    from nbflow.distributed.cluster import cluster_for_target

    return DistributedSession(cluster_for_target(target), graph=graph, config=config)
