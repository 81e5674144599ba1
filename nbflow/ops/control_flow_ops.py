"""Grouping and ordering: NoOp, group and tuple (dynamic control flow lands beside them)."""

from __future__ import annotations

import builtins
from typing import Any
from collections.abc import Sequence

from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef


class NoOp(OpDef):
    """Does nothing; its control inputs give it meaning."""

    differentiable = False

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
    from nbflow.ops.array_ops import identity

    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "tuple") as scope:
        gating = group(*[t for t in tensors if t is not None], *(control_inputs or []))
        out = []
        with graph.control_dependencies([gating]):
            for t in tensors:
                out.append(None if t is None else identity(t))
        del scope
        return out
