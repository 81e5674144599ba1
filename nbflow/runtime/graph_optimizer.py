"""The master's graph rewrites, on a private copy of the pruned step graph.

``copy_step_graph`` copies the ops a step needs (pruned as in ``plan.prune``) into a scratch
``Graph``: same names, attrs, devices and creation sites, fed tensors replaced by placeholder
ops. Everything after it — optimization, placement, partitioning — edits that copy, so the
user's graph is never touched and a rebuilt plan starts from the user's graph again.

Optimizations (``OptimizerOptions``, each switchable):

* common-subexpression elimination (whitepaper §5.1, after Click): walking in topological
  order, an op whose type, attrs, device request, inputs and control inputs equal those of an
  earlier op is replaced by it. Stateful ops (variables, queues, random ops, Send/Recv),
  asynchronous ops, placeholders and ops touching references are never merged;
* constant folding: an op whose inputs are all constants is evaluated once with its CPU kernel
  and replaced by ``Const`` ops (stateful and asynchronous ops never; outputs over
  ``MAX_CONSTANT_BYTES`` are left alone, so folding never bloats the plan);
* indexing: ``x[i]`` with a scalar tensor ``i``, a StridedSlice of ``stack([i])``, becomes
  ``_IndexAt(x, i)``, which a loop reading its input step by step runs without packing and
  decoding a slice every iteration (off at opt_level L0, like the others);
* dead-code elimination: re-pruning from the fetches and targets drops what the rewrites left
  unused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Sequence

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework.op_def import TensorSpec, cpu_context, get_op_def
from nbflow.framework.ops import Graph, Operation, Tensor
from nbflow.runtime.plan import prune

MAX_CONSTANT_BYTES = 10 * 1024 * 1024  # TensorFlow's limit for a folded constant
_HASHED_CONST_BYTES = 1 << 16  # constants up to this size are compared by value in CSE


@dataclass
class StepGraph:
    """The scratch copy of one step signature's graph, rewritten in place by the master."""

    graph: Graph
    ops: list[Operation]
    fetches: list[Tensor]
    targets: list[Operation]
    feeds: list[Tensor]
    origin: dict[Operation, Operation] = field(default_factory=dict)  # copy -> user's op
    stats: dict[str, int] = field(default_factory=dict)

    def reprune(self) -> None:
        """Dead-code elimination: keep only what the fetches and targets still need."""
        self.ops = prune(self.fetches, self.targets, self.feeds)


def copy_step_graph(
    fetches: Sequence[Tensor], targets: Sequence[Operation], feeds: Sequence[Tensor]
) -> StepGraph:
    """A pruned copy of the step's graph in a fresh ``Graph`` (see the module docstring)."""
    order = prune(fetches, targets, feeds)
    scratch = Graph()
    fed = {t: i for i, t in enumerate(feeds)}
    copies: dict[Operation, Operation] = {}
    for op in order:
        copies[op] = _clone(scratch, op)
    feed_tensors: list[Tensor] = []
    for i, t in enumerate(feeds):
        name = t.op.name if t.op not in copies else f"{t.op.name}/_feed_{i}"
        spec = TensorSpec(t.shape, t.dtype.base_dtype)
        attrs = {"dtype": t.dtype.base_dtype, "shape": t.shape}
        holder = _new_op(scratch, "Placeholder", name, attrs, [spec], t.op.device, t.op)
        feed_tensors.append(holder._outputs[0])

    def mapped(t: Tensor) -> Tensor:
        if t in fed:
            return feed_tensors[fed[t]]
        return copies[t.op]._outputs[t.value_index]

    for op, copy in copies.items():
        copy._inputs = [mapped(t) for t in op._inputs]
        for t in copy._inputs:
            t._consumers.append(copy)
        copy._control_inputs = [copies[c] for c in op._control_inputs if c in copies]
        for c in copy._control_inputs:
            c._control_outputs.append(copy)
    step = StepGraph(
        graph=scratch,
        ops=[copies[op] for op in order],
        fetches=[mapped(t) for t in fetches],
        targets=[copies[op] for op in targets],
        feeds=feed_tensors,
        origin={copy: op for op, copy in copies.items()},
    )
    return step


def _clone(graph: Graph, op: Operation) -> Operation:
    specs = [TensorSpec(t.shape, t.dtype) for t in op._outputs]
    copy = Operation(
        graph, op.type, op.name, [], dict(op._attrs), specs, [], op.device, op.op_def, op.traceback
    )
    _inherit_context(copy, op)
    graph._add_op(copy)
    return copy


def _inherit_context(op: Operation, like: Operation) -> None:
    """Give ``op`` the context other layers attached to ``like`` (its control-flow frame)."""
    for key, value in like.__dict__.items():
        if key not in op.__dict__:
            op.__dict__[key] = value


def _new_op(
    graph: Graph,
    op_type: str,
    name: str,
    attrs: dict[str, Any],
    specs: list[TensorSpec],
    device: str,
    like: Operation,
) -> Operation:
    op = Operation(graph, op_type, name, [], attrs, specs, [], device, get_op_def(op_type), None)
    op._traceback = like.traceback
    graph._add_op(op)
    return op


def replace_uses(step: StepGraph, old: Tensor, new: Tensor) -> None:
    """Make every consumer (and fetch) of ``old`` read ``new`` instead."""
    for consumer in old._consumers:
        consumer._inputs = [new if t is old else t for t in consumer._inputs]
        new._consumers.append(consumer)
    old._consumers = []
    step.fetches = [new if t is old else t for t in step.fetches]


def _replace_op(step: StepGraph, old: Operation, new: Operation) -> None:
    for a, b in zip(old._outputs, new._outputs):
        replace_uses(step, a, b)
    for consumer in old._control_outputs:
        controls = [new if c is old else c for c in consumer._control_inputs]
        consumer._control_inputs = list(dict.fromkeys(controls))
        if consumer not in new._control_outputs:
            new._control_outputs.append(consumer)
    old._control_outputs = []
    step.targets = [new if t is old else t for t in step.targets]


# --- which ops a rewrite may touch ---------------------------------------------------------------
def is_random(op: Operation) -> bool:
    """An op with a seed draws random numbers: never folded or merged (most are also stateful)."""
    return "seed2" in op.attrs


def _is_rewritable(op: Operation) -> bool:
    opdef = op.op_def
    if opdef.stateful or opdef.is_async or not opdef.rewritable or is_random(op):
        return False
    if any(t.dtype.is_ref_dtype for t in op._inputs) or any(
        t.dtype.is_ref_dtype for t in op._outputs
    ):
        return False
    return True


# --- common subexpressions -----------------------------------------------------------------------
def _freeze(value: Any) -> Any:
    """A hashable stand-in for an attr value (small arrays by content, large ones by identity)."""
    if isinstance(value, np.ndarray):
        if value.nbytes <= _HASHED_CONST_BYTES and value.dtype != object:
            return ("nd", value.dtype.str, value.shape, value.tobytes())
        if value.dtype == object and value.size <= 64:
            return ("nd", "O", value.shape, tuple(value.ravel().tolist()))
        return ("id", id(value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_freeze(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _freeze(v)) for k, v in value.items())))
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return (type(value).__name__, value)


def eliminate_common_subexpressions(step: StepGraph) -> int:
    """Merge duplicate ops (see the module docstring); returns how many were merged."""
    seen: dict[Any, Operation] = {}
    merged = 0
    for op in step.ops:
        if not _is_rewritable(op):
            continue
        key = (
            op.type,
            op.device,
            tuple((id(t.op), t.value_index) for t in op._inputs),
            frozenset(id(c) for c in op._control_inputs),
            tuple(sorted((k, _freeze(v)) for k, v in op._attrs.items())),
        )
        canonical = seen.get(key)
        if canonical is None:
            seen[key] = op
            continue
        _replace_op(step, op, canonical)
        merged += 1
    if merged:
        step.reprune()
    step.stats["cse_merged"] = step.stats.get("cse_merged", 0) + merged
    return merged


# --- constant folding ----------------------------------------------------------------------------
def _const_value(t: Tensor) -> Any:
    if t.op.op_def.holds_constant:
        return t.op._attrs["value"]
    return None


def fold_constants(step: StepGraph, max_bytes: int = MAX_CONSTANT_BYTES) -> int:
    """Evaluate constant subgraphs now and replace them by Const ops; returns how many."""
    folded = 0
    for op in list(step.ops):
        if op.op_def.holds_constant or not op._outputs or op._control_inputs:
            continue
        if not _is_rewritable(op) or not op.op_def.has_kernel_for("CPU"):
            continue
        values = [_const_value(t) for t in op._inputs]
        if any(v is None for v in values) or _statically_larger(op, max_bytes):
            continue
        results = _evaluate(op, values)
        if results is None or any(r.nbytes > max_bytes for r in results):
            continue
        for k, (tensor, value) in enumerate(zip(op._outputs, results)):
            name = f"{op.name}/_folded_{k}" if len(results) > 1 else f"{op.name}/_folded"
            dtype = tensor.dtype.base_dtype
            spec = TensorSpec(value.shape, dtype)
            attrs = {"value": value, "dtype": dtype}
            if "_class" in op._attrs:
                attrs["_class"] = list(op._attrs["_class"])  # keeps its colocation
            const = _new_op(step.graph, "Const", name, attrs, [spec], op.device, op)
            replace_uses(step, tensor, const._outputs[0])
        folded += 1
    if folded:
        step.reprune()
    step.stats["constants_folded"] = step.stats.get("constants_folded", 0) + folded
    return folded


def _statically_larger(op: Operation, max_bytes: int) -> bool:
    """Whether an output is known, before computing it, to exceed the folding limit (a Fill of
    an embedding table's slot must not even be evaluated at plan time)."""
    for t in op._outputs:
        n = t.shape.num_elements()
        if n is not None and n * t.dtype.base_dtype.size > max_bytes:
            return True
    return False


def _evaluate(op: Operation, values: list[Any]) -> list[np.ndarray] | None:
    """The op's outputs computed by its CPU kernel, or None when they cannot be folded."""
    try:
        kernel = op.op_def.bind(op, "CPU")
        with np.errstate(all="ignore"):
            out = kernel(cpu_context(), *values)
    except Exception:  # noqa: BLE001 - a failing op is left for the step to report
        return None
    outputs = [out] if len(op._outputs) == 1 else list(out)
    results = []
    for tensor, value in zip(op._outputs, outputs):
        if not isinstance(value, (np.ndarray, np.generic)):
            return None
        value = np.array(value, copy=True)
        base = tensor.dtype.base_dtype
        if base is not dtypes.string and value.dtype != base.np:
            return None
        results.append(value)
    return results


# --- indexing ------------------------------------------------------------------------------------
def simplify_indexing(step: StepGraph) -> int:
    """Rewrite ``x[i]`` for a scalar tensor ``i`` into ``_IndexAt(x, i)``; returns how many.

    ``x[i]`` builds ``StridedSlice(x, stack([i]), stack([i + 1]), [1], shrink_axis_mask=1)``; a
    loop reading its input one step at a time runs that every iteration. The end is unused when
    the one dimension is shrunk, so the index is all the slice needs.
    """
    rewritten = 0
    for op in list(step.ops):
        index = _scalar_index(op)
        if index is None:
            continue
        spec = TensorSpec(op._outputs[0].shape, op._outputs[0].dtype)
        at = _new_op(step.graph, "_IndexAt", f"{op.name}/_at", {}, [spec], op.device, op)
        _inherit_context(at, op)
        at._inputs = [op._inputs[0], index]
        for t in at._inputs:
            t._consumers.append(at)
        at._control_inputs = list(op._control_inputs)
        for c in at._control_inputs:
            c._control_outputs.append(at)
        step.origin[at] = step.origin.get(op, op)
        _replace_op(step, op, at)
        rewritten += 1
    if rewritten:
        step.reprune()
    step.stats["indexing_simplified"] = step.stats.get("indexing_simplified", 0) + rewritten
    return rewritten


def _scalar_index(op: Operation) -> Tensor | None:
    """``i`` if ``op`` is the StridedSlice of ``x[i]`` for a scalar integer tensor ``i``."""
    if not _is_rewritable(op):
        return None
    return op.op_def.scalar_index(op)


def optimize(step: StepGraph, options: Any) -> StepGraph:
    """Apply the enabled optimizations of ``OptimizerOptions`` to ``step``; returns it."""
    cse = getattr(options, "do_common_subexpression_elimination", True)
    folding = getattr(options, "do_constant_folding", True)
    if getattr(options, "opt_level", 0) == -1:  # L0: TensorFlow's "no optimizations"
        cse = folding = False
    if cse:
        eliminate_common_subexpressions(step)
    if folding and fold_constants(step) and cse:
        eliminate_common_subexpressions(step)  # folding can make equal constants
    if getattr(options, "opt_level", 0) != -1:
        simplify_indexing(step)
    return step
