"""A task server: one TensorFlow task (``/job:ps/task:0``) living inside a Dask worker.

A ``TaskServer`` owns its devices (each with its resource manager, so variables, queues and
accumulators live here between steps and sessions) and the subgraphs masters registered with
it. ``register`` imports a GraphDef once (trusting the shapes the master inferred: no shape
function runs here), compiles one plan per device and caches them under a handle;
``run_step`` runs every plan of a handle for one step id and returns the fetched values.
Nothing here touches sockets: the Dask plugin (``plugin.py``) carries messages in and hands
``TaskRendezvous`` a function that pushes a tensor to another task.

``TaskRendezvous`` is the step's rendezvous on this task. A Send whose destination device
belongs to this task parks or delivers locally, as ``LocalRendezvous`` does; one whose
destination is another task is pushed there at once (``push(task, key, value)``), so tensors
flow task to task and never through the client. A Recv is the async kernel of
``sendrecv_ops``: it parks a callback, and the pushed tensor arriving over the network
completes it. The time Recvs spend parked is summed per step (communication, in the step
timing the master reports).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nbflow import errors
from nbflow.devices.device import Device, local_devices
from nbflow.framework import ops as ops_lib
from nbflow.framework.importer import import_graph_def
from nbflow.framework.op_def import KernelContext
from nbflow.ops.sendrecv_ops import RendezvousKey
from nbflow.runtime import executor as executor_lib
from nbflow.runtime.drivers import CallerDriver
from nbflow.runtime.executor import ResumableInline
from nbflow.runtime.multi_device import PartitionRun, PartitionRunner
from nbflow.runtime.plan import aliases_state, build_plan
from nbflow.runtime.rendezvous import LocalRendezvous
from nbflow.runtime.step import RunnerPolicy, bind_kernels, caller_driver, partition_runner

# Push a tensor to another task: (destination task, step id, key, value, on_error); returns
# a future of the write, or None when delivered in this process.
Pusher = Callable[[str, int, str, Any, Callable[[BaseException], None]], Any]


def task_of(device: str) -> str:
    """The task part of a device name: ``/job:ps/replica:0/task:0``."""
    head, sep, _ = device.partition("/device:")
    return head if sep else device


class TaskRendezvous(LocalRendezvous):
    """The rendezvous of one step on one task (see the module docstring)."""

    __slots__ = ("task", "push", "copy_names", "recv_wait", "_parked_at", "sent")

    def __init__(
        self,
        task: str,
        step_id: int,
        devices: dict[str, Device],
        push: Pusher | None,
    ):
        super().__init__(step_id, devices)
        self.task = task
        self.push = push
        self.copy_names: frozenset[str] = frozenset()
        self.recv_wait = 0.0
        self._parked_at: dict[str, float] = {}
        self.sent: list[Any] = []  # pushes of variable buffers still being written

    def send(self, key: str, value: Any, src_device: str = "") -> None:
        parts = RendezvousKey.parse(key)
        dst_task = task_of(parts.recv_device)
        if dst_task == self.task or self.push is None:
            super().send(key, value, src_device)
            return
        if self._error is not None:
            raise self._error
        if parts.tensor_name in self.copy_names and isinstance(value, np.ndarray):
            # A variable's own buffer, sent without a copy: a read-only view, and the step
            # does not finish before it is written out (``sent``), so no later update leaks in.
            value = value.view()
            value.flags.writeable = False
            self.sent.append(self.push(dst_task, self.step_id, key, value, self.abort))
            return
        self.push(dst_task, self.step_id, key, value, self.abort)

    def deliver(self, key: str, value: Any, src_device: str) -> None:
        """A tensor pushed here by another task: used in place, read-only (kernels write only
        to variables, and Assign copies into the variable's own buffer)."""
        try:
            super().send(key, value, src_device)
        except errors.OpError:
            pass  # the step was aborted here already

    def recv(self, key: str, callback: Callable[[Any, str, BaseException | None], None]) -> Any:
        start = time.perf_counter()

        def timed(value: Any, src: str, error: BaseException | None) -> None:
            self.recv_wait += time.perf_counter() - start
            callback(value, src, error)

        return super().recv(key, timed)


@dataclass
class Registered:
    """A subgraph a master registered: its partitions' runner and where its peers live."""

    handle: str
    runner: PartitionRunner
    routes: dict[str, str]
    copy_names: frozenset[str]
    # set when every plan may run on the message loop: straight-line code where the master sent
    # the step's order of transfers, else the dataflow walk
    loop_drivers: list[CallerDriver | ResumableInline] | None
    inline: bool = False  # plans short and Recv-free: run on the message loop itself
    on_loop: bool = False  # plans cheap, their async kernels Recvs: driven on the loop
    # (``loop_drivers`` set and a run seen computing within the loop's budget)
    runs: int = 0
    slow_runs: int = 0  # consecutive steps on the loop that computed past its budget

    @property
    def parts(self) -> list[PartitionRun]:
        return self.runner.parts


@dataclass
class StepReport:
    values: dict[int, Any] = field(default_factory=dict)
    run_s: float = 0.0
    recv_wait_s: float = 0.0


class TaskServer:
    """One TensorFlow task: its devices, resources and registered subgraphs."""

    def __init__(self, name: str, device_count: dict[str, int] | None = None):
        parts = dict(p.split(":", 1) for p in name.strip("/").split("/"))
        self.name = name
        self.job, self.index = parts["job"], int(parts["task"])
        self.incarnation = uuid.uuid4().hex
        counts = {"GPU": 0, **(device_count or {"CPU": 1})}
        self.devices = local_devices(counts, "", self.job, self.index)
        self.devices_by_name = {d.name: d for d in self.devices}
        self.graphs: OrderedDict[str, Registered] = OrderedDict()
        self.pool = executor_lib.shared_pool(0)
        self.steps_run = 0
        self.created = time.time()
        self._lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        return {
            "task": self.name,
            "incarnation": self.incarnation,
            "devices": [d.name for d in self.devices],
            "graphs": len(self.graphs),
            "steps": self.steps_run,
        }

    # --- registration ------------------------------------------------------------------------
    def register(self, handle: str, spec: dict[str, Any]) -> None:
        """Import ``spec["graph_def"]`` and compile a plan per device (cached by handle)."""
        with self._lock:
            if handle in self.graphs:
                return
        graph = ops_lib.Graph()
        with graph.as_default():
            import_graph_def(spec["graph_def"], name="", trusted_shapes=True)
        parts = []
        copy_names = set()
        for part in spec["parts"]:
            device = self.devices_by_name.get(part["device"])
            if device is None:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Task {self.name} has no device {part['device']}; it has "
                    f"{', '.join(self.devices_by_name)}",
                )
            fetches = [graph.get_tensor_by_name(n) for n in part["fetches"]]
            targets = [graph.get_operation_by_name(n) for n in part["targets"]]
            feeds = [graph.get_tensor_by_name(n) for n in part["feeds"]]
            plan = build_plan(fetches, targets, feeds, bind_kernels(device))
            for node in plan.nodes:
                op = node.op
                if op.op_def.is_send and op._inputs and aliases_state(op._inputs[0]):
                    copy_names.add(op.get_attr("tensor_name"))
            parts.append((device, plan, part["feed_indices"], part["fetch_indices"]))
        fetch_count = 1 + max((i for p in parts for i in p[3]), default=-1)
        runner = partition_runner(
            parts, self.pool, RunnerPolicy(), fetch_count, [], self.devices_by_name
        )
        # Independent kernels run one after the other on the loop too: a backward pass's two
        # small matmuls cost less there than two thread hand-offs per step, and a step that
        # computes past the loop's budget goes to the pool (``plugin.TaskHost``).
        drivers = [
            caller_driver(plan, serial_ok=True, transfers=part.get("transfers"))
            for (_, plan, _, _), part in zip(parts, spec["parts"])
        ]
        loop_drivers = [d for d in drivers if d is not None]
        registered = Registered(
            handle,
            runner,
            dict(spec["routes"]),
            frozenset(copy_names),
            loop_drivers if len(loop_drivers) == len(drivers) else None,
        )
        # Its first run goes to a driver thread all the same: a step that fills a 1 GB variable
        # would hold the loop for seconds, and the loop answers the health check's pings.
        # ``plugin.TaskHost`` moves it onto the loop once a run computed within the budget.
        with self._lock:
            self.graphs[handle] = registered
            while len(self.graphs) > 256:  # old step signatures of long-gone sessions
                self.graphs.popitem(last=False)

    def deregister(self, handles: list[str]) -> None:
        with self._lock:
            for h in handles:
                self.graphs.pop(h, None)

    def lookup(self, handle: str) -> Registered:
        found = self.graphs.get(handle)
        if found is None:
            raise errors.AbortedError(
                None,
                None,
                f"Graph handle {handle} is not registered on task {self.name} "
                f"(incarnation {self.incarnation}); the task was restarted — recreate the session",
            )
        return found

    # --- running -----------------------------------------------------------------------------
    def new_rendezvous(self, step_id: int, push: Pusher | None) -> TaskRendezvous:
        return TaskRendezvous(self.name, step_id, self.devices_by_name, push)

    def run_step(
        self,
        registered: Registered,
        rendezvous: TaskRendezvous,
        feeds: dict[int, Any],
        timeout: float | None,
    ) -> StepReport:
        """Run all device plans of ``registered`` for one step (``PartitionRunner``, as a
        local multi-device step); the first error aborts it."""
        start = time.perf_counter()
        rendezvous.copy_names = registered.copy_names
        ctx = KernelContext(step_id=rendezvous.step_id)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            values = registered.runner.run_partitions(ctx, rendezvous, feeds, deadline)
        finally:
            registered.runs += 1
            self.steps_run += 1
        return StepReport(values, time.perf_counter() - start, rendezvous.recv_wait)

    def start_step(
        self,
        registered: Registered,
        rendezvous: TaskRendezvous,
        feeds: dict[int, Any],
        done: Callable[[StepReport | None, BaseException | None], None],
    ) -> None:
        """Start one step of ``registered`` driven in the calling (message loop) thread
        (``PartitionRunner.start_partitions``); ``done(report, error)`` when it is over."""
        start = time.perf_counter()
        rendezvous.copy_names = registered.copy_names
        assert registered.loop_drivers is not None

        def finished(values: dict[int, Any] | None, error: BaseException | None) -> None:
            registered.runs += 1
            self.steps_run += 1
            if error is not None:
                done(None, error)
                return
            assert values is not None
            done(StepReport(values, time.perf_counter() - start, rendezvous.recv_wait), None)

        ctx = KernelContext(step_id=rendezvous.step_id)
        registered.runner.start_partitions(
            ctx, rendezvous, feeds, registered.loop_drivers, finished
        )
