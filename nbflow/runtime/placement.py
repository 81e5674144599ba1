"""Node placement (whitepaper §3.2.1 and §4.3): which device runs each op of a step.

The algorithm, on the step's scratch graph (``graph_optimizer.StepGraph``):

1. **Feasible devices per op.** The op's requested device (``tf.device`` scopes, possibly
   partial such as ``/device:GPU:*`` or ``/job:localhost/task:0``) selects the devices it
   matches; of those, the ones whose type has a kernel for the op stay (an OpDef marked
   ``cpu_only`` has none on GPU). With ``allow_soft_placement`` an unsatisfiable request is
   relaxed (first to any device of the requested type, then to any device with a kernel);
   without it, it is an ``InvalidArgumentError`` naming the node, the request and the devices.
2. **Colocation groups.** A union-find joins ops that must share a device: the ``_class``
   attribute (``colocate_with`` writes ``loc:@name``) and reference edges (an op that updates a
   variable runs where the variable lives). A group may use only the devices all its members
   may use.
3. **Greedy simulation.** Walking the ops in topological order, the simulation keeps, per
   device, when it becomes free and, per tensor, when it is ready. A group still unplaced goes
   to the device where the op would *finish* soonest: the latest input arrival (ready time
   plus the transfer cost when it comes from another device), then the op's compute time there.
   Cheap generator ops with no inputs and no constraint (constants) are deferred and follow
   their first consumer, so a constant never costs a transfer; fed values start on the first
   device (the client's), so moving their consumers elsewhere costs a transfer. Ties prefer
   GPUs, then the lowest device index: an unconstrained graph stays on one device unless
   splitting pays.

``CostModel`` supplies the times: static estimates from the OpDef's ``cost`` class and the
static shapes first, then the times measured by traced steps (``RunOptions.FULL_TRACE``), which
replace the estimates for the nodes they cover.
"""

from __future__ import annotations

import sys
from typing import Any
from collections.abc import Sequence

from nbflow import errors
from nbflow.devices.device import Device
from nbflow.devices.spec import DeviceSpec
from nbflow.framework.ops import Operation, Tensor

_UNKNOWN_DIM = 32  # what the static cost model assumes for an unknown dimension


class CostModel:
    """Compute time of nodes and transfer time of tensors, in microseconds."""

    # device type -> (fixed µs per op, elements per µs for cheap ops, flops per µs)
    SPEED = {"CPU": (1.0, 1000.0, 2.0e4), "GPU": (6.0, 1.0e5, 1.0e7)}
    # transfer latency (µs) and bandwidth (bytes per µs) between two host devices / host↔GPU
    HOST_LINK = (15.0, 1.0e4)
    GPU_LINK = (10.0, 1.2e4)

    def __init__(self) -> None:
        self.measured: dict[tuple[str, str], float] = {}
        self.measured_bytes: dict[str, int] = {}

    @property
    def has_measurements(self) -> bool:
        return bool(self.measured)

    def output_bytes(self, tensor: Tensor) -> int:
        known = self.measured_bytes.get(tensor.name)
        if known is not None:
            return known
        dtype = tensor.dtype.base_dtype
        size = getattr(dtype, "size", 0) or 8
        return size * _elements(tensor)

    def compute_micros(self, op: Operation, device_type: str) -> float:
        known = self.measured.get((op.name, device_type))
        if known is not None:
            return known
        fixed, elements_per_us, flops_per_us = self.SPEED.get(device_type, self.SPEED["CPU"])
        elements = sum(_elements(t) for t in op._outputs)
        if op.op_def.cost == "expensive":
            inner = max((_inner_dim(t) for t in op._inputs), default=1)
            return fixed + 2.0 * elements * inner / flops_per_us
        return fixed + elements / elements_per_us

    def transfer_micros(self, nbytes: int, src: Device, dst: Device) -> float:
        if src is dst:
            return 0.0
        latency, bandwidth = self.HOST_LINK if src.is_host and dst.is_host else self.GPU_LINK
        return latency + nbytes / bandwidth

    def record(self, step_stats: Any, smoothing: float = 0.5) -> None:
        """Fold the node times and output sizes of a traced step into the model."""
        for dev in step_stats.dev_stats:
            device_type = DeviceSpec.from_string(dev.device).device_type or "CPU"
            for node in dev.node_stats:
                if node.node_name.startswith("_"):
                    continue  # Send/Recv: their time is waiting, not work
                micros = float(max(node.op_end_rel_micros, 1))
                key = (node.node_name, device_type)
                old = self.measured.get(key)
                self.measured[key] = micros if old is None else old + smoothing * (micros - old)
                for out in node.output:
                    name = f"{node.node_name}:{out.slot}"
                    self.measured_bytes[name] = out.tensor_description.allocated_bytes


def _elements(t: Tensor) -> int:
    dims = t.shape.dims
    if dims is None:
        return _UNKNOWN_DIM
    n = 1
    for d in dims:
        n *= _UNKNOWN_DIM if d.value is None else d.value
    return n


def _inner_dim(t: Tensor) -> int:
    dims = t.shape.dims
    if not dims:
        return 1
    last = dims[-1].value
    return _UNKNOWN_DIM if last is None else last


# --- step 1: feasible devices ------------------------------------------------------------------
def _matches(device: Device, requested: DeviceSpec) -> bool:
    return device.spec.is_compatible_with(requested)


def feasible_devices(
    op: Operation, devices: Sequence[Device], allow_soft_placement: bool
) -> list[Device]:
    """The devices that may run ``op`` (see the module docstring, step 1)."""
    requested = DeviceSpec.from_string(op.device)
    matching = [d for d in devices if _matches(d, requested)]
    if not matching:
        if not allow_soft_placement:
            raise errors.InvalidArgumentError(
                op.node_def,
                op,
                f"Cannot assign a device for operation {op.name}: Could not satisfy explicit "
                f"device specification '{op.device}' because no devices matching that "
                f"specification are registered in this process; available devices: "
                f"{', '.join(d.name for d in devices)}. (Set allow_soft_placement=True in "
                "ConfigProto to place it elsewhere.)",
            )
        of_type = [d for d in devices if d.device_type == requested.device_type]
        matching = of_type or list(devices)
    with_kernel = [d for d in matching if op.op_def.has_kernel_for(d.device_type)]
    if with_kernel:
        return with_kernel
    explicit = bool(op.device) and requested.device_type is not None
    if explicit and not allow_soft_placement:
        kinds = sorted({d.device_type for d in matching})
        raise errors.InvalidArgumentError(
            op.node_def,
            op,
            f"Cannot assign a device for operation {op.name}: Could not satisfy explicit device "
            f"specification '{op.device}' because no supported kernel for "
            f"{'/'.join(kinds)} devices is available (op {op.type}); available devices: "
            f"{', '.join(d.name for d in devices)}.",
        )
    anywhere = [d for d in devices if op.op_def.has_kernel_for(d.device_type)]
    if not anywhere:
        raise errors.InvalidArgumentError(
            op.node_def, op, f"No kernel for op {op.type} (node {op.name}) on any device"
        )
    return anywhere


# --- step 2: colocation groups -----------------------------------------------------------------
class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[Any, Any] = {}

    def find(self, x: Any) -> Any:
        parent = self.parent.setdefault(x, x)
        if parent is x:
            return x
        root = self.find(parent)
        self.parent[x] = root
        return root

    def union(self, a: Any, b: Any) -> Any:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[rb] = ra
        return ra


def _colocation_names(op: Operation) -> list[str]:
    return [c[len("loc:@") :] for c in op._attrs.get("_class", ()) if c.startswith("loc:@")]


def colocation_groups(
    ops: Sequence[Operation],
    feasible: dict[Operation, list[Device]],
    allow_soft_placement: bool,
) -> tuple[_UnionFind, dict[Any, list[Device]]]:
    """Union-find over colocation constraints; returns it and each group's feasible devices."""
    groups = _UnionFind()
    allowed: dict[Any, list[Device]] = {}
    by_name = {op.name: op for op in ops}

    def join(a: Any, b: Any, why: str, required: bool) -> None:
        ra, rb = groups.find(a), groups.find(b)
        if ra is rb:
            return
        da, db = allowed.get(ra), allowed.get(rb)
        if da is None or db is None:  # a name standing for an op outside this step
            both = db if da is None else da
        else:
            both = [d for d in da if d in db]
        if not both:
            if not required:
                return
            if allow_soft_placement:  # the variable (or colocation target) decides
                both = [d for d in da or () if b.op_def.has_kernel_for(d.device_type)] or db
                root = groups.union(ra, rb)
                if both is not None:  # None: both are names outside this step
                    allowed[root] = both
                return
            raise errors.InvalidArgumentError(
                b.node_def,
                b,
                f"Cannot colocate nodes {getattr(a, 'name', a)} and {b.name} ({why}): no "
                f"device can run both; {getattr(a, 'name', a)} may run on "
                f"{[d.name for d in da or ()]}, {b.name} on {[d.name for d in db or ()]}",
            )
        root = groups.union(ra, rb)
        if both is not None:
            allowed[root] = both

    for op in ops:
        groups.find(op)
        allowed[op] = feasible[op]
    for op in ops:
        for name in _colocation_names(op):
            target = by_name.get(name)
            if target is not op:
                # ops colocated with an op outside this step still stay together
                join(target or f"loc:@{name}", op, f"colocate_with {name}", True)
        ref_flags = op.op_def.flat_ref_flags(op._attrs) if op.op_def.ref_inputs else ()
        refs = [t.op for t, wants in zip(op._inputs, ref_flags) if wants and t.dtype.is_ref_dtype]
        for producer in refs:
            # An update runs where its variable lives (an op reading several variables'
            # handles is kept with them only when there is one).
            join(producer, op, "reference input", len(refs) == 1)
    return groups, allowed


# --- step 3: the greedy simulation -------------------------------------------------------------
def _preference(devices: Sequence[Device]) -> dict[Device, int]:
    order = sorted(range(len(devices)), key=lambda i: (devices[i].device_type != "GPU", i))
    return {devices[i]: rank for rank, i in enumerate(order)}


def place(
    ops: Sequence[Operation],
    devices: Sequence[Device],
    cost_model: CostModel,
    allow_soft_placement: bool = False,
    log_device_placement: bool = False,
) -> dict[Operation, Device]:
    """Choose a device for every op of ``ops`` (topologically ordered); sets ``op._device``."""
    feasible = {op: feasible_devices(op, devices, allow_soft_placement) for op in ops}
    groups, allowed = colocation_groups(ops, feasible, allow_soft_placement)
    rank = _preference(devices)
    placed: dict[Any, Device] = {}
    placement: dict[Operation, Device] = {}
    sizes: dict[Any, int] = {}
    for op in ops:
        root = groups.find(op)
        sizes[root] = sizes.get(root, 0) + 1
    deferred = {
        op
        for op in ops
        if not op._inputs
        and not op._control_inputs
        and not op.op_def.stateful
        and op.op_def.cost == "cheap"
        and sizes[groups.find(op)] == 1
    }
    free_at = dict.fromkeys(devices, 0.0)
    home = devices[0]
    ready: dict[Operation, float] = {}

    def best_device(op: Operation, candidates: list[Device]) -> tuple[Device, float]:
        best, best_finish = candidates[0], float("inf")
        for d in sorted(candidates, key=rank.__getitem__):
            start = free_at[d]
            for t in op._inputs:
                src = placement.get(t.op)
                if src is None:
                    if t.op in deferred:
                        continue  # a constant follows its consumer: no transfer
                    src = home  # fed values arrive from the client, on the first device
                arrival = ready.get(t.op, 0.0) + cost_model.transfer_micros(
                    cost_model.output_bytes(t), src, d
                )
                start = max(start, arrival)
            for c in op._control_inputs:
                if c in ready:
                    start = max(start, ready[c])
            finish = start + cost_model.compute_micros(op, d.device_type)
            if finish < best_finish - 1e-9:
                best, best_finish = d, finish
        return best, best_finish

    for op in ops:
        if op in deferred:
            continue
        root = groups.find(op)
        device = placed.get(root)
        candidates = [device] if device is not None else allowed[root]
        if len(candidates) == 1:
            device = candidates[0]
            _, finish = best_device(op, [device])
        else:
            device, finish = best_device(op, candidates)
        placed[root] = device
        placement[op] = device
        free_at[device] = finish
        ready[op] = finish
        for t in op._inputs:
            producer = t.op
            if producer in deferred and producer not in placement:
                placement[producer] = (
                    device
                    if device in feasible[producer]
                    else min(feasible[producer], key=rank.__getitem__)
                )
                ready[producer] = 0.0
    for op in ops:
        if op not in placement:
            placement[op] = min(allowed[groups.find(op)], key=rank.__getitem__)
    for op, device in placement.items():
        op._device = device.name
    if log_device_placement:
        for op in ops:
            print(f"{op.name}: ({op.type}): {placement[op].name}", file=sys.stderr)
    return placement
