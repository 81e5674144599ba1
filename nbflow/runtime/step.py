"""Step runners: how a compiled plan runs, chosen once per plan, in one place.

Every runner has one method, ``run(ctx, feeds, deadline) -> fetched values``:

* ``InlineExecutor`` (executor.py): the plan as one generated straight-line function, kernels
  pasted in as expressions — a plan with no control flow, no parallel work worth a thread pool,
  and kernels that may wait on something else (a queue, a mutex) only in one chain, none a Recv
  (``executor.waits_in_line``; background kernels such as the histogram summary are fine): the
  per-call fast path;
* ``StructuredExecutor`` (executor.py, source from loop_compiler.py): a control-flow plan
  without async kernels, each loop frame a Python ``while``;
* ``DataflowExecutor`` (drivers.py): the pure dataflow state (dataflow.py) driven by a thread
  pool, for async kernels (queues, Recv), parallel work, and control flow the loop compiler
  declines; ``CallerDriver`` drives the same state on a distributed task's message loop;
* ``PartitionRunner`` (multi_device.py): a step split over devices, each partition run by its
  own runner, all joined through one rendezvous — for a multi-device local step and for a
  task's share of a cluster step alike.

``choose_runner`` is the only function that picks one, from the plan's traits (async kernels,
control flow, independent expensive kernels) and the session's ``RunnerPolicy``;
``bind_kernels`` is the one kernel binder.

Deadlines and cancellation work one way for all of them. ``deadline`` is a
``time.monotonic()`` instant or None. A runner that can wait (``can_wait``: it has async
kernels) waits at most until the deadline, then cancels the step through
``ctx.cancellation`` with ``DeadlineExceededError``; cancelling ``ctx.cancellation`` from
elsewhere (``Session.close``, an error on another device, a master's abort) ends a waiting step
with the cancellation's error, and blocked kernels withdraw their waiters through the same
manager. Structured loops check the deadline and the cancellation at each iteration; the
straight-line runner checks both where one of its kernels waits, and otherwise runs to
completion.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from nbflow import errors
from nbflow.devices.device import Device
from nbflow.framework.op_def import KernelContext
from nbflow.framework.ops import Operation
from nbflow.runtime.drivers import CallerDriver, DataflowExecutor
from nbflow.runtime.executor import (
    InlineExecutor,
    ResumableInline,
    StructuredExecutor,
    has_parallel_work,
    waits_in_line,
)
from nbflow.runtime.loop_compiler import compile_plan
from nbflow.runtime.master import partition_graph_def
from nbflow.runtime.multi_device import (
    PartitionRun,
    PartitionRunner,
    order_by_transfers,
)
from nbflow.runtime.plan import Plan
from nbflow.runtime.step_stats import traced_kernel


class StepRunner(Protocol):
    """Runs one compiled step (see the module docstring)."""

    can_wait: bool  # may wait (async kernels): runs with a deadline and can be cancelled

    def run(self, ctx: KernelContext, feeds: tuple, deadline: float | None = None) -> tuple: ...


@dataclass(frozen=True)
class RunnerPolicy:
    """A session's say in the choice: ``choice`` forces the inline or parallel form where the
    plan allows it (tests); ``structured_loops`` off runs control flow on tagged frames."""

    choice: str = "auto"  # "auto" | "inline" | "parallel"
    inter_op_threads: int = 0
    structured_loops: bool = True


structured_loops = True  # the default of RunnerPolicy.structured_loops (tests turn it off)


def choose_runner(plan: Plan, pool: ThreadPoolExecutor, policy: RunnerPolicy) -> Any:
    """The runner for ``plan``: structured code for loops, the dataflow executor where the plan
    needs it (async kernels, control flow) or can use it, otherwise straight-line code.

    Independent expensive kernels are worth a thread pool only when there are cores to spare
    beyond the ones BLAS already uses inside each kernel: with 2 cores, two matmuls side by side
    each get half the BLAS threads and the pool's hand-offs cost more than they save (measured:
    the Figure 1 MLP runs ~1.7x faster inline). So "auto" uses inter-op parallelism when
    ``inter_op_parallelism_threads`` asks for it (> 1) or, left at 0, on 4 cores or more.
    """
    if plan.has_control_flow and policy.structured_loops and structured_loops:
        source = compile_plan(plan)  # None: async kernels, or loops of an unknown shape
        if source is not None:
            return StructuredExecutor(plan, source)
    parallel = policy.choice == "parallel" or (
        policy.choice == "auto" and _spare_cores(policy) and has_parallel_work(plan)
    )
    if parallel or plan.has_control_flow or (plan.has_waiting_async and not waits_in_line(plan)):
        return DataflowExecutor(plan, pool)
    return InlineExecutor(plan)


def _spare_cores(policy: RunnerPolicy) -> bool:
    """Whether there are cores for kernels side by side, beyond BLAS's own threads."""
    threads = policy.inter_op_threads
    return threads > 1 or (threads == 0 and (os.cpu_count() or 1) >= 4)


def caller_driver(
    plan: Plan, serial_ok: bool = False, transfers: list[str] | None = None
) -> CallerDriver | ResumableInline | None:
    """A driver running ``plan`` in the calling thread (a distributed task's message loop), or
    None where that would not do: control flow (loops belong on their own thread), async
    kernels other than Recvs (a Dequeue or a background summary completes in another thread),
    or independent expensive kernels worth the thread pool — unless ``serial_ok``: the caller
    measures its steps and hands slow ones to the pool itself (a task's message loop does).

    Given the step's ``transfers`` in one order of all its partitions (the master's
    ``partition.transfer_orders``), the driver is straight-line code that parks at a Recv not yet
    there (``executor.ResumableInline``, in ``multi_device.order_by_transfers``'s order);
    otherwise the dataflow walk (``drivers.CallerDriver``)."""
    if not _only_recvs_wait(plan) or (not serial_ok and has_parallel_work(plan)):
        return None
    order = None if transfers is None else order_by_transfers(plan, transfers)
    return CallerDriver(plan) if order is None else ResumableInline(plan, order)


def _only_recvs_wait(plan: Plan) -> bool:
    """No control flow, and no async kernel but Recvs: the plan never waits on its own thread."""
    return not plan.has_control_flow and all(n.op.op_def.is_recv for n in plan.nodes if n.is_async)


def partition_runner(
    parts: list[tuple[Device, Plan, list[int], list[int]]],
    pool: ThreadPoolExecutor,
    policy: RunnerPolicy,
    num_fetches: int,
    fed_fetches: list[tuple[int, int]],
    devices: dict[str, Device],
    transfers: list[list[str]] | None = None,
) -> PartitionRunner:
    """A runner for a step's partitions: (device, plan, step feed indices, step fetch indices)
    each, every plan run by the runner ``choose_runner`` picks for it. Given each partition's
    ``transfers`` in one order of the whole step (``partition.transfer_orders``: a local step;
    a task's share runs on its message loop instead), where no cores are spare for kernels side
    by side and every partition can be driven in the calling thread (its only async kernels are
    Recvs), it runs them all there, each as straight-line code that parks at its Recvs
    (``executor.ResumableInline`` in ``multi_device.order_by_transfers``'s order,
    ``PartitionRunner.run``)."""
    runs = [
        PartitionRun(device, choose_runner(plan, pool, policy), feed_indices, fetch_indices, plan)
        for device, plan, feed_indices, fetch_indices in parts
    ]
    in_caller: list[ResumableInline] | None = None
    if transfers is not None and policy.choice != "parallel" and not _spare_cores(policy):
        drivers = [
            caller_driver(plan, serial_ok=True, transfers=keys)
            for (_, plan, _, _), keys in zip(parts, transfers)
        ]
        # each partition straight-line code in the step's order, else driver threads
        resumable = [d for d in drivers if isinstance(d, ResumableInline)]
        in_caller = resumable if len(resumable) == len(drivers) else None
    return PartitionRunner(runs, num_fetches, fed_fetches, devices, in_caller)


class Step:
    """A cached step signature: its runner, the device of its context, its plans."""

    __slots__ = ("runner", "device", "plans", "partition_ops", "measured", "multi_device")

    def __init__(
        self,
        runner: Any,
        device: Device,
        plans: list[tuple[str, Plan]],
        partition_ops: list[tuple[str, list[Operation]]],
        measured: bool,
        multi_device: bool,
    ):
        self.runner = runner  # a step.StepRunner
        self.device = device
        self.plans = plans
        self.partition_ops = partition_ops  # the plans' own ops, per device
        self.measured = measured  # placed with measured (not only static) costs
        self.multi_device = multi_device

    @property
    def partition_graphs(self) -> list[dict]:
        """One GraphDef per device: the plan's nodes, Send/Recv included."""
        return [partition_graph_def(device, ops) for device, ops in self.partition_ops]


def bind_kernels(device: Device, traced: bool = False) -> Callable[[Operation], tuple[Any, Any]]:
    """The kernel binder: a node's kernel for ``device`` (timing itself when ``traced``)."""

    def bind(op: Operation) -> tuple[Any, Any]:
        opdef = op.op_def
        if not opdef.has_kernel_for(device.device_type):
            raise errors.UnimplementedError(
                op.node_def,
                op,
                f"No {device.device_type} kernel registered for op {op.type} (node {op.name})",
            )
        kernel = device.adapt_kernel(op, opdef.bind(op, device.device_type))
        if traced:
            kernel = traced_kernel(kernel, op, device.name, opdef.is_async)
        return kernel, device.name

    return bind
