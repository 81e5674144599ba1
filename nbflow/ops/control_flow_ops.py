"""Control flow as dataflow: NoOp, group and tuple here; TensorFlow's ``control_flow_ops`` path
for Switch, Merge, Enter, Exit, NextIteration and LoopCond and the builders ``cond``, ``case`` and
``while_loop`` made of them (OSDI §3.4).

The primitives carry *dead* values (``DEAD``), as in the dynamic dataflow machines the papers
borrow from. ``Switch(data, pred)`` forwards ``data`` to one output and DEAD to the other; any
op with a DEAD input produces DEAD outputs without running its kernel; ``Merge`` forwards its
first live input. A cond is Switches on every value the branches read, the two branches, and
a Merge per output, so only the taken branch's kernels run. A loop is a *frame*:

    Enter ─▶ Merge ─▶ Switch ─(true)─▶ Identity ─▶ body ─▶ NextIteration ─┐
               ▲        │  ▲                                               │
               │        │  └─ LoopCond ◀─ cond(Merge outputs)              │
               │        └─(false)─▶ Exit ─▶ (outside the loop)             │
               └───────────────────────────────────────────────────────────┘

The executor (runtime/dataflow.py) tags every value with its frame and iteration, so
iterations overlap up to the loop's ``parallel_iterations``.

Branch and body functions are ordinary Python that builds ops. After a function returns, its
new ops are *captured* into their context: a tensor they read from outside is routed through
a Switch (cond) or a loop-invariant Enter (while), and an op with no data input gets a control
input from the context's pivot, so it is dead, or repeated, exactly when its context is.
Each captured op remembers its context (``context_of``) for the gradient code
(ops/control_flow_grad.py).

Where each part lives: the primitives and DEAD in control_flow_primitives.py, the contexts and
capture in control_flow_contexts.py, cond and case in cond_ops.py, while_loop in
while_loop_ops.py, nested values in control_flow_structures.py; this module re-exports them.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef
from nbflow.ops.cond_ops import CondContext, case, cond  # noqa: F401
from nbflow.ops.control_flow_contexts import (  # noqa: F401
    WhileContext,
    _capture,
    _Context,
    _contexts,
    _merge_preds,
    context_of,
    current_context,
    outside_control_flow,
)
from nbflow.ops.control_flow_primitives import (  # noqa: F401
    DEAD,
    Enter,
    Exit,
    LoopCond,
    Merge,
    NextIteration,
    RefEnter,
    RefSwitch,
    Switch,
    _create,
    merge,
    switch,
)
from nbflow.ops.control_flow_structures import _flatten, _pack_as  # noqa: F401
from nbflow.ops.while_loop_ops import while_loop  # noqa: F401


class NoOp(OpDef):
    """Does nothing; its control inputs give it meaning."""

    differentiable = False
    groups_only = True

    def infer(self) -> list:
        return []

    num_outputs = 0

    def compute(self, ctx: KernelContext) -> None:
        return None


def no_op(name: str | None = None) -> ops_lib.Operation:
    return ops_lib.get_default_graph().create_op("NoOp", [], name=name)


def group(*inputs: Any, name: str | None = None) -> ops_lib.Operation:
    """An op that runs after all of ``inputs`` (tensors or ops, possibly nested in lists)."""
    flat: list[Any] = []

    def collect(value: Any) -> None:
        if isinstance(value, (list, builtins.tuple)):
            for v in value:
                collect(v)
        elif isinstance(value, dict):
            for v in value.values():
                collect(v)
        elif value is not None:
            flat.append(value)

    collect(inputs)
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "group_deps") as scope:
        deps = [ops_lib._as_operation(graph, v) for v in flat]
        with graph.control_dependencies(deps):
            return graph.create_op("NoOp", [], name=scope or "group_deps/")


def tuple(tensors: Sequence[Any], name: str | None = None, control_inputs: Any = None) -> list:
    """Tensors with the same values as ``tensors`` that are all available only after all are."""
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "tuple") as scope:
        gating = group(*[t for t in tensors if t is not None], *(control_inputs or []))
        out = []
        with graph.control_dependencies([gating]):
            for t in tensors:
                out.append(None if t is None else array_ops.identity(t))
        del scope
        return out


# Bound once this module exists (array_ops imports control flow for its composites).
from nbflow.ops import array_ops  # noqa: E402
