"""The master (whitepaper §3.3): a step signature's graph work, done once and cached by sessions.

``compile_step`` takes a step signature (fetched tensors, target ops, fed tensors) to the
per-device partitions that executors run. The local ``Session`` and the cluster's
``DistributedSession`` both call it; they differ only in where the partitions then run.

1. prune and copy: the ops the fetches and targets need, cut at fed tensors, copied into a
   scratch graph (``graph_optimizer.copy_step_graph``): the user's graph is never edited;
2. check device requests before folding can hide them (``placement.feasible_devices``);
3. optimize the copy: common subexpressions, constant folding, dead code (``OptimizerOptions``);
   for a cluster, a target that only groups others (``tf.group``'s NoOp) is replaced by what it
   groups, so no task pays a control Send to the task holding the group;
4. place it on the devices (``placement.place``, with the cost model's measurements if any);
5. partition it (``partition.partition_step``): one subgraph per device, Send/Recv on every
   cross-device edge, Recvs scheduled late when asked (``GraphOptions.enable_recv_scheduling``);
   control edges are first routed around a grouping op where that saves cross-device messages
   (``partition.bypass_groups``: the updates a worker's NoOp groups on the ps).
   A step placed entirely on one host device is one partition holding the whole step graph
   (no Send/Recv; its plan takes the step's feeds and fetches as they are);
6. plan: ``plan_partition`` compiles a partition into a ``Plan`` with a kernel binder
   (``step.bind_kernels``); a task of a cluster does it for the partitions it receives.

>>> signature = StepSignature(fetches=(y,), targets=(), feeds=(x,))  # doctest: +SKIP
>>> compiled = compile_step(signature, devices, ConfigProto(), CostModel())  # doctest: +SKIP
>>> [p.device.name for p in compiled.partitions]  # doctest: +SKIP
['/job:localhost/replica:0/task:0/device:CPU:0']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nbflow.devices.device import Device
from nbflow.framework.graph_def import graph_def_of, node_def_of
from nbflow.framework.ops import Operation, Tensor
from nbflow.runtime import graph_optimizer, partition, placement
from nbflow.runtime.config import ConfigProto
from nbflow.runtime.partition import Partition
from nbflow.runtime.plan import Plan, build_plan

Binder = Callable[[Operation], tuple[Any, Any]]

ungroup_targets = True  # step 3's rewrite for clusters; ``bench/dask_transport.py`` turns it off


@dataclass(frozen=True)
class StepSignature:
    """What a step computes: fetched tensors, target ops and fed tensors, in the caller's order."""

    fetches: tuple[Tensor, ...]
    targets: tuple[Operation, ...]
    feeds: tuple[Tensor, ...]


@dataclass
class CompiledStep:
    """A step signature after the master's graph work (see the module docstring)."""

    step_graph: graph_optimizer.StepGraph
    partitions: list[Partition]
    whole: bool  # one partition that is the whole step: its feeds and fetches are the step's
    fed_fetches: list[tuple[int, int]]  # (fetch index, feed index) of fetched fed tensors
    measured: bool  # placed with measured (not only static) costs

    @property
    def num_fetches(self) -> int:
        return len(self.step_graph.fetches)


def compile_step(
    signature: StepSignature,
    devices: list[Device],
    config: ConfigProto,
    cost_model: placement.CostModel,
    *,
    log_placement: bool = True,
    for_cluster: bool = False,
) -> CompiledStep:
    """Prune, optimize, place and partition a step signature (see the module docstring).

    ``for_cluster``: ungroup grouping targets, and always partition (a task's share is a
    partition even when one device runs the whole step)."""
    step = graph_optimizer.copy_step_graph(
        list(signature.fetches), list(signature.targets), list(signature.feeds)
    )
    for op in step.ops:  # requests are checked before folding can hide them
        placement.feasible_devices(op, devices, config.allow_soft_placement)
    graph_options = config.graph_options
    graph_optimizer.optimize(step, graph_options.optimizer_options)
    if for_cluster and ungroup_targets:
        grouped = _ungrouped(step.targets)
        if grouped != step.targets:
            step.targets = grouped
            step.reprune()
    placed = placement.place(
        step.ops,
        devices,
        cost_model,
        config.allow_soft_placement,
        config.log_device_placement and log_placement,
    )
    measured = cost_model.has_measurements
    used = {d.name: d for d in placed.values()}
    if not for_cluster and len(used) <= 1:
        device = next(iter(used.values()), devices[0])
        if device.is_host:
            whole = Partition(
                device,
                list(step.ops),
                list(step.targets),
                list(enumerate(step.fetches)),
                list(enumerate(step.feeds)),
            )
            return CompiledStep(step, [whole], True, [], measured)
    partition.bypass_groups(step, placed)
    parts = partition.partition_step(step, placed, graph_options.enable_bfloat16_sendrecv)
    if graph_options.enable_recv_scheduling:
        partition.schedule_recvs(parts, cost_model)
    feed_index = {t: i for i, t in enumerate(step.feeds)}
    fed_fetches = [(i, feed_index[t]) for i, t in enumerate(step.fetches) if t in feed_index]
    return CompiledStep(step, list(parts.values()), False, fed_fetches, measured)


def _ungrouped(targets: list[Operation]) -> list[Operation]:
    """Targets with each pure grouping op (a NoOp without data inputs) replaced by its control
    inputs, recursively; order kept, duplicates dropped."""
    out: dict[Operation, None] = {}
    stack = list(reversed(targets))
    while stack:
        op = stack.pop()
        if op.op_def.groups_only and not op._inputs:
            stack.extend(reversed(op._control_inputs))
        else:
            out[op] = None
    return list(out)


def plan_partition(part: Partition, bind: Binder) -> Plan:
    """The plan of one partition, its kernels bound by ``bind``."""
    return build_plan([t for _, t in part.fetches], part.targets, [t for _, t in part.feeds], bind)


def blame_user_ops(plan: Plan, step_graph: graph_optimizer.StepGraph) -> list[Operation]:
    """Point plan nodes at the user's ops, so errors name the op the user built (``e.op``);
    returns the plan's own (rewritten) ops, for ``RunMetadata.partition_graphs``."""
    origin = step_graph.origin
    own = []
    for node in plan.nodes:
        own.append(node.op)
        node.op = origin.get(node.op, node.op)
    return own


def partition_graph_def(device: str, ops: list[Operation]) -> dict[str, Any]:
    """One device's partition as a GraphDef (``RunMetadata.partition_graphs``)."""
    return graph_def_of([node_def_of(op) for op in ops], device=device)
