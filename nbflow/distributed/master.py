"""The master's graph work for a cluster (OSDI §3.3): once per step signature.

``compile_step`` takes a step signature to one registration per participating task:

1. copy the pruned step graph and optimize it (``graph_optimizer``), as the local session does;
   a target that is only a ``NoOp`` grouping others (``tf.group``) is replaced by what it
   groups: running it means running them, and a group placed on one task would otherwise
   cost every other task a control Send to it, one more message on the step's critical path;
2. place it on the devices of every task in the cluster (``placement.place``); the session's
   own task comes first, so ops no ``tf.device`` scope pins stay there, as in TensorFlow;
3. partition it (``partition.partition_step``): every cross-device edge becomes a Send/Recv
   pair keyed ``"src_device;step_id;dst_device;tensor_name"``; an edge between tasks is simply
   an edge between devices whose rendezvous lives on two machines;
4. group the device partitions by task and write each task's share as a GraphDef (JSON dict)
   with its fed tensors as Placeholders, plus per device: which plan feeds, fetches and targets.

The handle of a registration is a digest of its content and of the route table (task ->
Dask worker address), so a recreated task or a moved route gives a new handle. A step then
costs one ``nbflow_run`` message per participating task.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from nbflow.devices.device import Device
from nbflow.framework.graph_def import GRAPH_DEF_VERSION, encode_attr
from nbflow.framework.ops import Operation, Tensor
from nbflow.runtime import graph_optimizer, partition, placement
from nbflow.runtime.config import ConfigProto
from nbflow.distributed.task import task_of


ungroup_targets = True  # step 1's NoOp rewrite; ``bench/dask_transport.py`` measures it off


@dataclass
class TaskShare:
    """What one task runs of a step: its registration and how feeds and fetches map."""

    task: str
    handle: str
    spec: dict[str, Any]
    feed_indices: list[int]  # step feed indices this task needs
    fetch_indices: list[int] = field(default_factory=list)


@dataclass
class CompiledStep:
    shares: list[TaskShare]
    num_fetches: int
    fed_fetches: list[tuple[int, int]]  # (fetch index, feed index) of fetched fed tensors
    partition_graphs: list[dict[str, Any]]


def _tensor_name(t: Tensor, renamed: dict[Tensor, str]) -> str:
    found = renamed.get(t)
    if found is not None:
        return found
    return t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}"


def _node_def(op: Operation, renamed: dict[Tensor, str]) -> dict[str, Any]:
    return {
        "name": op.name,
        "op": op.type,
        "input": [_tensor_name(t, renamed) for t in op._inputs]
        + [f"^{c.name}" for c in op._control_inputs],
        "device": op.device,
        "attr": {k: encode_attr(v) for k, v in op._attrs.items()},
    }


def _ungroup_targets(targets: list[Operation]) -> list[Operation]:
    """Targets with each pure grouping ``NoOp`` (no data inputs) replaced by its control
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


def compile_step(
    fetches: list[Tensor],
    targets: list[Operation],
    feeds: list[Tensor],
    devices: list[Device],
    routes: dict[str, str],
    config: ConfigProto,
    cost_model: placement.CostModel,
) -> CompiledStep:
    """Prune, optimize, place and partition a step signature (see the module docstring)."""
    step = graph_optimizer.copy_step_graph(fetches, targets, feeds)
    graph_optimizer.optimize(step, config.graph_options.optimizer_options)
    grouped = _ungroup_targets(step.targets) if ungroup_targets else step.targets
    if grouped != step.targets:
        step.targets = grouped
        step.reprune()
    placed = placement.place(
        step.ops, devices, cost_model, config.allow_soft_placement, config.log_device_placement
    )
    parts = partition.partition_step(step, placed, config.graph_options.enable_bfloat16_sendrecv)
    by_task: dict[str, list[partition.Partition]] = {}
    for part in parts.values():
        by_task.setdefault(task_of(part.device.name), []).append(part)
    shares = []
    partition_graphs = []
    for task, task_parts in sorted(by_task.items()):
        nodes: list[dict[str, Any]] = []
        part_specs = []
        feed_indices: set[int] = set()
        fetch_indices: list[int] = []
        for k, part in enumerate(task_parts):
            renamed: dict[Tensor, str] = {}
            feed_names = []
            for i, t in part.feeds:
                name = f"_nbflow_feed_{i}_on_{k}"
                renamed[t] = name
                feed_names.append(f"{name}:0")
                feed_indices.add(i)
                nodes.append(
                    {
                        "name": name,
                        "op": "Placeholder",
                        "input": [],
                        "device": part.device.name,
                        "attr": {
                            "dtype": encode_attr(t.dtype.base_dtype),
                            "shape": encode_attr(t.shape),
                        },
                    }
                )
            nodes.extend(_node_def(op, renamed) for op in part.ops)
            part_specs.append(
                {
                    "device": part.device.name,
                    "feeds": feed_names,
                    "feed_indices": [i for i, _ in part.feeds],
                    "fetches": [f"{t.op.name}:{t.value_index}" for _, t in part.fetches],
                    "fetch_indices": [i for i, _ in part.fetches],
                    "targets": [op.name for op in part.targets],
                }
            )
            fetch_indices.extend(i for i, _ in part.fetches)
            partition_graphs.append(
                {
                    "node": [_node_def(op, renamed) for op in part.ops],
                    "versions": {"producer": GRAPH_DEF_VERSION, "min_consumer": 0},
                    "device": part.device.name,
                }
            )
        graph_def = {"node": nodes, "versions": {"producer": GRAPH_DEF_VERSION, "min_consumer": 0}}
        spec = {"graph_def": graph_def, "parts": part_specs, "routes": dict(routes)}
        digest = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()
        shares.append(TaskShare(task, digest, spec, sorted(feed_indices), fetch_indices))
    feed_index = {t: i for i, t in enumerate(step.feeds)}
    fed_fetches = [(i, feed_index[t]) for i, t in enumerate(step.fetches) if t in feed_index]
    return CompiledStep(shares, len(step.fetches), fed_fetches, partition_graphs)
