"""Step statistics (whitepaper §9.2): what each node did in a traced step, where and when.

The messages mirror TensorFlow's ``StepStats`` protos field for field (``dev_stats`` →
``node_stats`` → ``all_start_micros``, ``op_end_rel_micros``, ``output`` ...), so the timeline
and TensorBoard-style tools read them unchanged.

Tracing costs nothing on untraced steps: a traced step runs a separately compiled plan whose
kernels are wrapped at bind time (``traced_kernel``) to time themselves into the step's
``StepStatsCollector`` (``ctx.stats``). For an asynchronous kernel (Recv) the recorded span runs
from its start to its ``done``, so it shows the wait for the sending device.

Peak memory per device is an *estimate*: every output a node produces is counted from the end
of that node until the end of its last reader on the same device (fetched values: the end of
the step); the peak of that running sum is ``DeviceStepStats.peak_bytes``. Buffers an op
allocates internally, variables and fed values are not counted.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Sequence


# perf_counter is precise but has no epoch; this offset makes its readings wall-clock times.
_EPOCH_OFFSET_NS = time.time_ns() - time.perf_counter_ns()


@dataclass
class TensorDescription:
    dtype: str = ""
    shape: list[int] = field(default_factory=list)
    allocated_bytes: int = 0


@dataclass
class NodeOutput:
    slot: int = 0
    tensor_description: TensorDescription = field(default_factory=TensorDescription)


@dataclass
class AllocatorMemoryUsed:
    allocator_name: str = ""
    total_bytes: int = 0
    peak_bytes: int = 0


@dataclass
class NodeExecStats:
    """One node's execution: absolute start and offsets, in microseconds."""

    node_name: str = ""
    op_type: str = ""
    all_start_micros: int = 0
    op_start_rel_micros: int = 0
    op_end_rel_micros: int = 0
    all_end_rel_micros: int = 0
    output: list[NodeOutput] = field(default_factory=list)
    timeline_label: str = ""
    scheduled_micros: int = 0
    thread_id: int = 0
    input_names: list[str] = field(default_factory=list)


@dataclass
class DeviceStepStats:
    device: str = ""
    node_stats: list[NodeExecStats] = field(default_factory=list)
    peak_bytes: int = 0
    memory: list[AllocatorMemoryUsed] = field(default_factory=list)


@dataclass
class StepStats:
    dev_stats: list[DeviceStepStats] = field(default_factory=list)

    def device(self, name: str) -> DeviceStepStats | None:
        return next((d for d in self.dev_stats if d.device == name), None)


def describe_output(slot: int, value: Any) -> NodeOutput:
    shape = [int(d) for d in getattr(value, "shape", ())]
    dtype = str(getattr(value, "dtype", type(value).__name__))
    nbytes = int(getattr(value, "nbytes", 0) or 0)
    return NodeOutput(slot, TensorDescription(dtype, shape, nbytes))


class StepStatsCollector:
    """Gathers ``NodeExecStats`` from the kernels of one traced step (any thread)."""

    def __init__(self) -> None:
        self.records: list[tuple[str, NodeExecStats]] = []
        self._lock = threading.Lock()

    def record(
        self,
        device: str,
        op: Any,
        start_ns: int,
        end_ns: int,
        result: Any,
        num_outputs: int,
    ) -> None:
        if num_outputs == 0:
            values: Sequence[Any] = ()
        elif num_outputs == 1:
            values = (result,)
        else:
            values = tuple(result)
        start_us = (start_ns + _EPOCH_OFFSET_NS) // 1000
        duration = max(0, (end_ns - start_ns) // 1000)
        inputs = [t.name for t in op._inputs] + [f"^{c.name}" for c in op._control_inputs]
        stats = NodeExecStats(
            node_name=op.name,
            op_type=op.type,
            all_start_micros=start_us,
            op_start_rel_micros=0,
            op_end_rel_micros=duration,
            all_end_rel_micros=duration,
            output=[describe_output(k, v) for k, v in enumerate(values)],
            timeline_label=f"{op.name} = {op.type}({', '.join(inputs)})",
            scheduled_micros=start_us,
            thread_id=threading.get_ident(),
            input_names=inputs,
        )
        with self._lock:
            self.records.append((device, stats))

    def finish(self, plans: Sequence[tuple[str, Any]]) -> StepStats:
        """The step's ``StepStats``; ``plans`` are the (device, Plan) pairs that ran."""
        by_device: dict[str, DeviceStepStats] = {}
        for device, _ in plans:
            by_device.setdefault(device, DeviceStepStats(device=device))
        for device, stats in sorted(self.records, key=lambda r: r[1].all_start_micros):
            by_device.setdefault(device, DeviceStepStats(device=device)).node_stats.append(stats)
        for device, plan in plans:
            dev = by_device[device]
            dev.peak_bytes = _peak_bytes(dev, plan)
            dev.memory = [
                AllocatorMemoryUsed(f"{device} (estimate)", dev.peak_bytes, dev.peak_bytes)
            ]
        return StepStats(dev_stats=list(by_device.values()))


def _peak_bytes(dev: DeviceStepStats, plan: Any) -> int:
    """Peak of the running sum of live output bytes (see the module docstring)."""
    stats = {s.node_name: s for s in dev.node_stats}
    ends = {}
    for node in plan.nodes:
        s = stats.get(node.op.name)
        if s is not None:
            ends[node.index] = s.all_start_micros + s.all_end_rel_micros
    step_end = max(ends.values(), default=0) + 1
    events: list[tuple[int, int]] = []
    for node in plan.nodes:
        s = stats.get(node.op.name)
        if s is None:
            continue
        for out in s.output:
            nbytes = out.tensor_description.allocated_bytes
            if not nbytes:
                continue
            last = plan.last_use.get(("node", node.index, out.slot))
            if last is None:
                continue
            freed = ends.get(last, step_end) if last < len(plan.nodes) else step_end
            events.append((ends[node.index], nbytes))
            events.append((max(freed, ends[node.index]), -nbytes))
    peak = live = 0
    for _, delta in sorted(events, key=lambda e: (e[0], -e[1])):
        live += delta
        peak = max(peak, live)
    return peak


def traced_kernel(
    kernel: Callable[..., Any], op: Any, device: str, is_async: bool
) -> Callable[..., Any]:
    """``kernel`` timing itself into ``ctx.stats`` (a ``StepStatsCollector``) when it runs."""
    num_outputs = len(op._outputs)
    clock = time.perf_counter_ns

    if is_async:

        def traced_async(ctx: Any, *args: Any, done: Callable[..., None]) -> None:
            stats = ctx.stats
            start = clock()

            def timed_done(result: Any = None, error: BaseException | None = None) -> None:
                if stats is not None and error is None:
                    stats.record(device, op, start, clock(), result, num_outputs)
                if error is not None:
                    done(error=error)
                else:
                    done(result)

            kernel(ctx, *args, done=timed_done)

        return traced_async

    def traced(ctx: Any, *args: Any) -> Any:
        stats = ctx.stats
        start = clock()
        result = kernel(ctx, *args)
        if stats is not None:
            stats.record(device, op, start, clock(), result, num_outputs)
        return result

    return traced
