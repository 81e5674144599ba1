"""From a step signature to a plan: prune, order and bind the graph once, run it many times.

A step signature is (fetched tensors, target ops, fed tensors). ``build_plan``

1. prunes: walks back from the fetches and targets over data and control edges and stops at
   fed tensors, so any tensor can be fed (whitepaper §4.2, partial execution) and nothing the
   fetches do not need runs;
2. orders the kept nodes topologically (Kahn's algorithm, ties broken by creation order);
3. binds each node's kernel through its OpDef (attrs baked in) and resolves where each input
   comes from: a feed, or output ``k`` of an earlier node;
4. records each value's last reader, so executors can release it right after.

The result is a ``Plan``: a frozen, executor-independent description of the step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Sequence

from nbflow.framework.ops import Operation, Tensor
import heapq

# Where a node's input comes from: ("feed", i) or ("node", node index, output index).
Source = tuple


@dataclass
class PlanNode:
    """One node of a plan: the op, its bound kernel and the sources of its inputs."""

    index: int
    op: Operation
    kernel: Callable[..., Any]
    sources: list[Source]
    deref: list[bool]  # input i is a variable reference that the kernel wants as a value
    num_outputs: int
    control_sources: list[int]  # indices of nodes this one must wait for (control edges)
    is_async: bool = False
    device: Any = None


@dataclass
class Plan:
    """A compiled step: nodes in topological order, feeds and fetches resolved to sources."""

    feeds: tuple[Tensor, ...]
    fetches: tuple[Tensor, ...]
    targets: tuple[Operation, ...]
    nodes: list[PlanNode]
    fetch_sources: list[Source]
    fetch_copies: list[bool]  # fetched value may alias state: copy before returning
    fetch_deref: list[bool]
    last_use: dict[Source, int] = field(default_factory=dict)  # source -> last reading node

    @property
    def has_async(self) -> bool:
        return any(n.is_async for n in self.nodes)

    @property
    def has_waiting_async(self) -> bool:
        """Whether an async kernel may wait on something outside itself (a queue, a Recv):
        kernels that only run in the background do not count."""
        return any(n.is_async and not n.op.op_def.runs_in_background for n in self.nodes)

    @property
    def has_control_flow(self) -> bool:
        """Whether the plan holds Switch/Merge/Enter/Exit/NextIteration (a dataflow-only plan)."""
        return any(n.op.op_def.control_kind for n in self.nodes)


def prune(
    fetches: Sequence[Tensor], targets: Sequence[Operation], feeds: Sequence[Tensor]
) -> list[Operation]:
    """The ops needed to compute ``fetches`` and run ``targets`` given the fed tensors."""
    fed = set(feeds)
    fed_ops = {t.op for t in fed}  # a control edge from a fed op is met by the feed, as in TF
    needed: set[Operation] = set()
    stack = [t.op for t in fetches if t not in fed] + list(targets)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        for t in op._inputs:
            if t not in fed and t.op not in needed:
                stack.append(t.op)
        for c in op._control_inputs:
            if c not in needed and c not in fed_ops:
                stack.append(c)
    return topological_order(needed, fed)


def topological_order(ops: set[Operation], fed: set[Tensor] | None = None) -> list[Operation]:
    """Kahn's algorithm over data and control edges within ``ops``; creation order breaks ties.

    Back edges into Merge ops (from NextIteration) are ignored, so loops order like their body.
    """
    fed = fed or set()
    pending: dict[Operation, int] = {}
    consumers: dict[Operation, list[Operation]] = {op: [] for op in ops}
    for op in ops:
        preds = set()
        for t in op._inputs:
            if t not in fed and t.op in ops and not _is_back_edge(t.op, op):
                preds.add(t.op)
        for c in op._control_inputs:
            if c in ops:
                preds.add(c)
        pending[op] = len(preds)
        for p in preds:
            consumers[p].append(op)
    heap = [(op._id, op) for op, n in pending.items() if n == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        _, op = heapq.heappop(heap)
        order.append(op)
        for c in consumers[op]:
            pending[c] -= 1
            if pending[c] == 0:
                heapq.heappush(heap, (c._id, c))
    if len(order) != len(ops):
        stuck = sorted((op for op, n in pending.items() if n > 0), key=lambda o: o._id)
        names = ", ".join(op.name for op in stuck[:5])
        raise ValueError(f"Graph has a cycle that is not a well-formed loop, through: {names}")
    return order


def _is_back_edge(src: Operation, dst: Operation) -> bool:
    return src.op_def.control_kind == "next_iteration" and dst.op_def.control_kind == "merge"


def aliases_state(tensor: Tensor) -> bool:
    """Whether a tensor's value may be a variable's buffer (so a fetch must copy it)."""
    while True:
        if tensor.dtype.is_ref_dtype:
            return True
        op = tensor.op
        if not op.op_def.forwards_input or not op._inputs:
            return False
        tensor = op._inputs[0]


def build_plan(
    fetches: Sequence[Tensor],
    targets: Sequence[Operation],
    feeds: Sequence[Tensor],
    bind: Callable[[Operation], tuple[Callable[..., Any], Any]],
) -> Plan:
    """Compile a step signature; ``bind(op)`` returns (kernel, device) for a node."""
    order = prune(fetches, targets, feeds)
    feed_index = {t: i for i, t in enumerate(feeds)}
    node_index = {op: i for i, op in enumerate(order)}

    def source_of(t: Tensor) -> Source:
        if t in feed_index:
            return ("feed", feed_index[t])
        return ("node", node_index[t.op], t.value_index)

    nodes = []
    last_use: dict[Source, int] = {}
    for i, op in enumerate(order):
        opdef = op.op_def
        ref_flags = opdef.flat_ref_flags(op.attrs) if opdef.ref_inputs else None
        sources, deref = [], []
        for k, t in enumerate(op._inputs):
            src = source_of(t)
            sources.append(src)
            wants_ref = ref_flags[k] if ref_flags is not None else False
            deref.append(t.dtype.is_ref_dtype and not wants_ref and src[0] == "node")
            last_use[src] = i
        kernel, device = bind(op)
        nodes.append(
            PlanNode(
                index=i,
                op=op,
                kernel=kernel,
                sources=sources,
                deref=deref,
                num_outputs=len(op._outputs),
                control_sources=[node_index[c] for c in op._control_inputs if c in node_index],
                is_async=opdef.is_async,
                device=device,
            )
        )
    fetch_sources = [source_of(t) for t in fetches]
    for src in fetch_sources:
        last_use[src] = len(nodes)  # fetched values live to the end of the step
    return Plan(
        feeds=tuple(feeds),
        fetches=tuple(fetches),
        targets=tuple(targets),
        nodes=nodes,
        fetch_sources=fetch_sources,
        fetch_copies=[aliases_state(t) for t in fetches],
        fetch_deref=[t.dtype.is_ref_dtype for t in fetches],
        last_use=last_use,
    )
