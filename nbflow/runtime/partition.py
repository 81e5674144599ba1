"""Partitioning (whitepaper §3.2.2): one subgraph per device, Send/Recv on every cut edge.

``partition_step`` rewrites a placed ``StepGraph``: a data edge ``x:k -> y`` whose ends sit on
different devices becomes ``x:k -> _Send`` on x's device and ``_Recv -> y`` on y's device. Sends
and Recvs are made once per (tensor, destination device), so any number of consumers on one
device share one transfer. The control edges into an op from the ops of another device become
one ``_ControlSend -> _ControlRecv``, sent once all of those ops have run (ops that wait on the
same set share it). Each pair shares a rendezvous key built from the step id, both
device names and the tensor name. Fed tensors are not edges: every partition reading one gets
the fed value directly, and neither is a small constant (up to ``MAX_COPIED_CONSTANT_BYTES``):
each device that reads one gets a copy of the ``Const`` op, so a learning rate made on the
worker is not sent to the parameter server every step.

``bypass_groups`` runs first. A grouping op (``tf.group``'s NoOp) placed on one device while
what it groups and what waits on it sit on another costs a step two hops of control messages
for nothing: ``Optimizer.minimize`` under ``replica_device_setter`` groups the updates on the
parameter server with a NoOp on the worker, and increments the global step on the parameter
server after it, so every step sent one control message per variable to the worker and one
back. Where it saves cross-device messages, the waiting ops take the group's control inputs
directly and the group goes (TensorFlow's Grappler does the same in its dependency
optimizer); a group that is a target, or that touches control flow, stays.

``schedule_recvs`` is the ASAP/ALAP pass of whitepaper §5.2: with the cost model it computes
each node's as-soon-as-possible and as-late-as-possible start over the whole partitioned graph
(Send→Recv pairs count as edges) and gives a Recv with slack a control input from the op on its
device that finishes last before the Recv's latest start — never from an op that depends on the
Recv, so no cycle can appear.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

import nbflow.ops.sendrecv_ops  # noqa: F401 - registers _Send/_Recv
from nbflow.devices.device import Device
from nbflow.framework import dtypes
from nbflow.framework.op_def import TensorSpec, get_op_def
from nbflow.framework.ops import Operation, Tensor
from nbflow.runtime.graph_optimizer import StepGraph
from nbflow.runtime.placement import CostModel

Node = TypeVar("Node")  # what ``topological`` orders: ops, or (plan, node index) pairs


MAX_COPIED_CONSTANT_BYTES = 64 * 1024  # a larger constant is sent, not copied into each partition


@dataclass
class Partition:
    """The ops one device runs in a step, and what it exchanges with the caller."""

    device: Device
    ops: list[Operation] = field(default_factory=list)
    targets: list[Operation] = field(default_factory=list)
    fetches: list[tuple[int, Tensor]] = field(default_factory=list)  # (step fetch index, tensor)
    feeds: list[tuple[int, Tensor]] = field(default_factory=list)  # (step feed index, tensor)

    @property
    def sends(self) -> list[Operation]:
        return [op for op in self.ops if op.op_def.is_send]

    @property
    def recvs(self) -> list[Operation]:
        return [op for op in self.ops if op.op_def.is_recv]


def _short(device: Device) -> str:
    """A node-name-safe device name, unique across tasks: ``ps_0_CPU_0`` (just ``CPU_0`` for a
    device of no job)."""
    spec = device.spec
    local = f"{device.device_type}_{spec.device_index}"
    if spec.job is None:
        return local
    return f"{spec.job}_{spec.task or 0}_{local}"


def _make(
    step: StepGraph,
    op_type: str,
    name: str,
    inputs: list[Tensor],
    attrs: dict[str, Any],
    specs: list[TensorSpec],
    device: Device,
    controls: list[Operation] = (),  # type: ignore[assignment]
) -> Operation:
    op = Operation(
        step.graph, op_type, name, inputs, attrs, specs, list(controls), device.name,
        get_op_def(op_type), None,
    )  # fmt: skip
    step.graph._add_op(op)
    return op


def _copyable_constant(t: Tensor, dst: Device) -> bool:
    """Whether ``t`` is a small constant that ``dst`` may hold a copy of, instead of receiving
    it every step: a learning rate made on the worker for the update on the ps."""
    op = t.op
    if not op.op_def.holds_constant or op._control_inputs:
        return False
    value = op._attrs.get("value")
    if not isinstance(value, np.ndarray) or value.nbytes > MAX_COPIED_CONSTANT_BYTES:
        return False
    return dst.is_host or not op.op_def.must_run_on_cpu(op._attrs)


def bypass_groups(step: StepGraph, placement: dict[Operation, Device]) -> int:
    """Route control edges around grouping ops where that saves cross-device messages (see
    the module docstring), in place; returns how many groups went. A group that is a target
    is left to the master, which for a cluster replaces it by what it groups
    (``master._ungrouped``)."""
    targets = set(step.targets)
    gone: set[Operation] = set()
    for op in step.ops:  # topological: a group inside a group is bypassed first
        if op in targets or not op.op_def.groups_only or op._inputs or not op._control_outputs:
            continue
        sources = list(dict.fromkeys(op._control_inputs))
        sinks = [x for x in dict.fromkeys(op._control_outputs) if x in placement]  # in the step
        if not sinks or any(c.op_def.control_kind for c in [*sources, *sinks]):
            continue
        if any(a not in placement for a in sources):  # a fed op: its edge is met by the feed
            continue
        # control messages (one per pair of devices, ``partition_step``): into the group and
        # out of it, against straight from the sources' devices to the waiting ops' devices
        here = placement[op].name
        source_devices = {placement[a].name for a in sources}
        sink_devices = {placement[x].name for x in sinks}
        before = len(source_devices - {here}) + len(sink_devices - {here})
        after = sum(s != d for s in source_devices for d in sink_devices)
        if after >= before:
            continue
        for a in sources:
            a._control_outputs = [c for c in a._control_outputs if c is not op]
        for x in sinks:
            kept = [c for c in x._control_inputs if c is not op]
            added = [a for a in sources if a not in kept]
            x._control_inputs = kept + added
            for a in added:
                a._control_outputs.append(x)
        op._control_inputs, op._control_outputs = [], []
        gone.add(op)
    if gone:
        step.ops = [op for op in step.ops if op not in gone]
        step.stats["groups_bypassed"] = step.stats.get("groups_bypassed", 0) + len(gone)
    return len(gone)


def partition_step(
    step: StepGraph, placement: dict[Operation, Device], compress_float32: bool = False
) -> dict[str, Partition]:
    """Cut ``step`` into per-device partitions (see the module docstring), in place."""
    partitions: dict[str, Partition] = {}
    for op in step.ops:
        device = placement[op]
        partitions.setdefault(device.name, Partition(device)).ops.append(op)
    feed_index = {t: i for i, t in enumerate(step.feeds)}
    recvs: dict[tuple[Tensor, str, bool], Tensor] = {}
    control_recvs: dict[tuple[tuple[Operation, ...], str], Operation] = {}

    def recv_for(t: Tensor, dst: Device, as_ref: bool) -> Tensor:
        key = (t, dst.name, as_ref)
        found = recvs.get(key)
        if found is not None:
            return found
        if not as_ref and _copyable_constant(t, dst):
            copy = _make(
                step, t.op.type, f"{t.op.name}/_on_{_short(dst)}", [], dict(t.op._attrs),
                [TensorSpec(t.shape, t.dtype)], dst,
            )  # fmt: skip
            partitions.setdefault(dst.name, Partition(dst)).ops.append(copy)
            recvs[key] = copy._outputs[0]
            return recvs[key]
        src = placement[t.op]
        compress = compress_float32 and not as_ref and t.dtype.base_dtype is dtypes.float32
        attrs = {
            "tensor_name": t.name + ("/ref" if as_ref else ""),
            "send_device": src.name,
            "recv_device": dst.name,
            "compression": "bfloat16" if compress else "",
        }
        base = f"{t.op.name}_{t.value_index}"
        send = _make(
            step, "_RefSend" if as_ref else "_Send", f"_send_{base}_to_{_short(dst)}", [t],
            dict(attrs), [], src,
        )  # fmt: skip
        dtype = t.dtype if as_ref else t.dtype.base_dtype
        recv = _make(
            step, "_Recv", f"_recv_{base}_on_{_short(dst)}", [],
            {**attrs, "tensor_type": dtype, "shape": t.shape}, [TensorSpec(t.shape, dtype)], dst,
        )  # fmt: skip
        partitions.setdefault(src.name, Partition(src)).ops.append(send)
        partitions.setdefault(dst.name, Partition(dst)).ops.append(recv)
        recvs[key] = recv._outputs[0]
        return recvs[key]

    def control_recv_for(sources: tuple[Operation, ...], dst: Device) -> Operation:
        """One control message from the device of ``sources`` to ``dst``, sent once all of
        them have run."""
        key = (sources, dst.name)
        found = control_recvs.get(key)
        if found is not None:
            return found
        first = sources[0]
        src = placement[first]
        name = first.name
        if len(sources) > 1:  # named by the first, told apart from other sets by a digest
            digest = hashlib.sha1("\0".join(c.name for c in sources).encode()).hexdigest()[:8]
            name = f"{first.name}_and_{len(sources) - 1}_more_{digest}"
        attrs = {
            "tensor_name": f"^{name}",
            "send_device": src.name,
            "recv_device": dst.name,
            "compression": "",
        }
        send = _make(
            step, "_ControlSend", f"_send_ctrl_{name}_to_{_short(dst)}", [], dict(attrs), [],
            src, list(sources),
        )  # fmt: skip
        recv = _make(
            step, "_ControlRecv", f"_recv_ctrl_{name}_on_{_short(dst)}", [], attrs, [], dst
        )
        partitions[src.name].ops.append(send)
        partitions.setdefault(dst.name, Partition(dst)).ops.append(recv)
        control_recvs[key] = recv
        return recv

    for op in list(step.ops):
        dst = placement[op]
        ref_flags = op.op_def.flat_ref_flags(op._attrs) if op.op_def.ref_inputs else None
        new_inputs = []
        for k, t in enumerate(op._inputs):
            if t in feed_index or placement[t.op] is dst:
                new_inputs.append(t)
                continue
            as_ref = bool(ref_flags and ref_flags[k]) and t.dtype.is_ref_dtype
            recv = recv_for(t, dst, as_ref)
            t._consumers.remove(op)
            recv._consumers.append(op)
            new_inputs.append(recv)
        op._inputs = new_inputs
        new_controls = []
        remote: dict[str, list[Operation]] = {}  # control inputs by their (other) device
        for c in op._control_inputs:
            if placement[c] is dst:
                new_controls.append(c)
            elif c not in remote.setdefault(placement[c].name, []):
                remote[placement[c].name].append(c)
        for sources in remote.values():
            for c in sources:
                c._control_outputs = [o for o in c._control_outputs if o is not op]
            recv_op = control_recv_for(tuple(sorted(sources, key=lambda c: c.name)), dst)
            recv_op._control_outputs.append(op)
            new_controls.append(recv_op)
        op._control_inputs = new_controls

    for i, t in enumerate(step.fetches):
        if t in feed_index:
            continue  # a fed tensor is fetched straight from the feeds
        partitions[placement[t.op].name].fetches.append((i, t))
    targets = set(step.targets)
    for part in partitions.values():
        part.targets = [op for op in part.ops if op in targets or op.op_def.is_send]
        used = {t for op in part.ops for t in op._inputs if t in feed_index}
        used |= {t for _, t in part.fetches if t in feed_index}
        part.feeds = sorted(((feed_index[t], t) for t in used), key=lambda p: p[0])
    return partitions


# --- Recv scheduling (ASAP/ALAP) -----------------------------------------------------------------
def schedule_recvs(
    partitions: dict[str, Partition], cost_model: CostModel, min_slack_micros: float = 20.0
) -> int:
    """Delay Recvs that have slack until shortly before they are needed; returns edges added."""
    ops = [op for part in partitions.values() for op in part.ops]
    device_of = {op: part.device for part in partitions.values() for op in part.ops}
    if len(ops) > 20000:
        return 0
    send_of = _send_of(ops)
    preds, succs = _transfer_graph(ops)
    order = topological(ops, preds, succs)
    if order is None:
        return 0

    def cost(op: Operation) -> float:
        if op.op_def.is_send:
            return 0.0
        if op.op_def.is_recv:
            if not op._outputs:
                return 0.0
            src = device_of[send_of[transfer_key(op)]]
            nbytes = cost_model.output_bytes(op._outputs[0])
            return cost_model.transfer_micros(nbytes, src, device_of[op])
        return cost_model.compute_micros(op, device_of[op].device_type)

    costs = {op: cost(op) for op in ops}
    asap: dict[Operation, float] = {}
    for op in order:
        asap[op] = max((asap[p] + costs[p] for p in preds[op]), default=0.0)
    total = max((asap[op] + costs[op] for op in ops), default=0.0)
    alap: dict[Operation, float] = {}
    for op in reversed(order):
        alap[op] = min((alap[s] for s in succs[op]), default=total) - costs[op]
    added = 0
    for op in order:
        if not (op.op_def.is_recv and op._outputs) or alap[op] - asap[op] < min_slack_micros:
            continue
        after = _descendants(op, succs)
        best, best_end = None, -1.0
        for x in partitions[device_of[op].name].ops:
            if x is op or x in after or x.op_def.is_send or x.op_def.is_recv:
                continue
            end = asap[x] + costs[x]
            if best_end < end <= alap[op]:
                best, best_end = x, end
        if best is not None and best not in op._control_inputs and best_end > asap[op]:
            op._control_inputs.append(best)
            best._control_outputs.append(op)
            # Later Recvs must see this edge when they look for ops that do not depend on
            # them, or two delays could wait on each other.
            succs[best].append(op)
            preds[op].append(best)
            added += 1
    return added


def transfer_key(op: Operation) -> str:
    """What a Send and the Recv of its transfer both name: the tensor and the receiver."""
    return op.get_attr("tensor_name") + op.get_attr("recv_device")


def _send_of(ops: list[Operation]) -> dict[str, Operation]:
    """Each transfer's Send among ``ops``, by its ``transfer_key``."""
    return {transfer_key(op): op for op in ops if op.op_def.is_send}


def _transfer_graph(
    ops: list[Operation],
) -> tuple[dict[Operation, list[Operation]], dict[Operation, list[Operation]]]:
    """(predecessors, successors) of each of ``ops`` (the ops of several partitions): their data
    and control edges among ``ops``, and each Recv after the Send of its transfer."""
    send_of = _send_of(ops)
    preds: dict[Operation, list[Operation]] = {op: [] for op in ops}
    for op in ops:
        preds[op] = [t.op for t in op._inputs if t.op in preds] + [
            c for c in op._control_inputs if c in preds
        ]
        if op.op_def.is_recv:
            send = send_of.get(transfer_key(op))
            if send is not None:
                preds[op].append(send)
    succs: dict[Operation, list[Operation]] = {op: [] for op in ops}
    for op, ps in preds.items():
        for p in ps:
            succs[p].append(op)
    return preds, succs


def topological(
    ops: list[Node], preds: dict[Node, list[Node]], succs: dict[Node, list[Node]]
) -> list[Node] | None:
    """Kahn's algorithm over ``preds``/``succs``; None if they hold a cycle."""
    pending = {op: len(preds[op]) for op in ops}
    ready = [op for op in ops if pending[op] == 0]
    order = []
    while ready:
        op = ready.pop()
        order.append(op)
        for s in succs[op]:
            pending[s] -= 1
            if pending[s] == 0:
                ready.append(s)
    return order if len(order) == len(ops) else None  # loops: leave Recvs unscheduled


def transfer_orders(partitions: list[Partition]) -> list[list[str]] | None:
    """Each partition's Sends and Recvs, by ``transfer_key``, in the order they have in one
    topological order of all the partitions together (each Send before its Recv); None if they
    hold a cycle. Partitions that each run their own transfers in this order, whatever else
    they run between, never wait on each other in a cycle (``multi_device.order_by_transfers``).
    """
    ops = [op for part in partitions for op in part.ops]
    preds, succs = _transfer_graph(ops)
    order = topological(ops, preds, succs)
    if order is None:
        return None
    rank = {op: k for k, op in enumerate(order)}
    return [
        [
            transfer_key(op)
            for op in sorted(part.ops, key=rank.__getitem__)
            if op.op_def.is_send or op.op_def.is_recv
        ]
        for part in partitions
    ]


def _descendants(op: Operation, succs: dict[Operation, list[Operation]]) -> set[Operation]:
    seen: set[Operation] = set()
    stack = list(succs[op])
    while stack:
        x = stack.pop()
        if x not in seen:
            seen.add(x)
            stack.extend(succs[x])
    return seen
