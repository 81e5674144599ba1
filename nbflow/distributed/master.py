"""A cluster step's registrations: the runtime master's partitions, grouped by task.

``runtime.master.compile_step`` (``for_cluster=True``) does the graph work a local session does
— prune, optimize, place on the devices of every task (the session's own task first, so ops no
``tf.device`` scope pins stay there, as in TensorFlow), partition with Send/Recv keyed by both
devices, so an edge between tasks is simply an edge between devices whose rendezvous lives on
two machines. ``task_shares`` then groups the device partitions by task and writes each task's
share as one GraphDef (its fed tensors as Placeholders) plus, per device, which plan feeds,
fetches and targets it has. Every node carries its outputs' shapes and dtypes as the master
inferred them (``_output_shapes``, ``_output_types``), so the task rebuilds the partition
without running a shape function again (``import_graph_def(..., trusted_shapes=True)``). Each
partition also lists its Sends and Recvs (by ``transfer_key``) in one order of the whole step
(``partition.transfer_orders``): a task that runs the partition on its message loop runs it as
straight-line code in an order keeping them so, which can never wait on another task in a cycle
(``multi_device.order_by_transfers``).

The handle of a registration is a digest of its content and of the route table (task ->
Dask worker address), so a recreated task or a moved route gives a new handle. A step then
costs one ``nbflow_run`` message per participating task.

The task imports the GraphDef once per handle: ops are rebuilt through the registry (a Dask
worker in another process cannot load this process's ``Operation`` objects), but shape
inference is the master's alone.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from nbflow.distributed.task import task_of
from nbflow.framework.graph_def import encode_attr, graph_def_of, node_def_of
from nbflow.runtime.master import CompiledStep, partition_graph_def
from nbflow.runtime.partition import Partition, transfer_orders


@dataclass
class TaskShare:
    """What one task runs of a step: its registration and how feeds and fetches map."""

    task: str
    handle: str
    spec: dict[str, Any]
    feed_indices: list[int]  # step feed indices this task needs
    fetch_indices: list[int] = field(default_factory=list)


def task_shares(compiled: CompiledStep, routes: dict[str, str]) -> list[TaskShare]:
    """One registration per task holding partitions of ``compiled``."""
    by_task: dict[str, list[Partition]] = {}
    orders = transfer_orders(compiled.partitions)
    transfers = {
        part.device.name: None if orders is None else orders[k]
        for k, part in enumerate(compiled.partitions)
    }
    for part in compiled.partitions:
        by_task.setdefault(task_of(part.device.name), []).append(part)
    shares = []
    for task, task_parts in sorted(by_task.items()):
        nodes: list[dict[str, Any]] = []
        fed: dict[int, Any] = {}
        for part in task_parts:
            fed.update(part.feeds)
            nodes.extend(node_def_of(op, add_specs=True) for op in part.ops)
        placeholders = [
            {
                "name": t.op.name,
                "op": "Placeholder",
                "input": [],
                "device": "",
                "attr": {
                    "dtype": encode_attr(t.dtype.base_dtype),
                    "shape": encode_attr(t.shape),
                    "_output_shapes": encode_attr([t.shape]),
                    "_output_types": encode_attr([t.dtype.base_dtype]),
                },
            }
            for _, t in sorted(fed.items(), key=lambda p: p[0])
        ]
        part_specs = [
            {
                "device": part.device.name,
                "feeds": [t.name for _, t in part.feeds],
                "feed_indices": [i for i, _ in part.feeds],
                "fetches": [t.name for _, t in part.fetches],
                "fetch_indices": [i for i, _ in part.fetches],
                "targets": [op.name for op in part.targets],
                "transfers": transfers[part.device.name],
            }
            for part in task_parts
        ]
        spec = {
            "graph_def": graph_def_of(placeholders + nodes),
            "parts": part_specs,
            "routes": dict(routes),
        }
        digest = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()
        fetch_indices = [i for part in task_parts for i, _ in part.fetches]
        shares.append(TaskShare(task, digest, spec, sorted(fed), fetch_indices))
    return shares


def partition_graphs(compiled: CompiledStep) -> list[dict[str, Any]]:
    return [partition_graph_def(p.device.name, p.ops) for p in compiled.partitions]
