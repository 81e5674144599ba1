"""Keyed stacks: where a while loop's gradient finds the forward values of each iteration.

The forward loop pushes every value a gradient op needs with ``_StackPush(stack, key, value)``;
the backward loop reads it back with ``_StackPop(stack, key)``, running its iterations in
reverse. A key is the iteration index, or for a loop nested in loops the tuple
``_StackKey(outer key, index)``, so iterations that overlapped (``parallel_iterations``) and
nested loops never share a slot. A stack (``_StackV2``) is a dict made fresh each step. A value
on an untaken cond branch is never pushed: its pop gives DEAD, so the backward branch is
dead exactly when the forward one was. The gradient code that builds these ops is
ops/control_flow_grad.py.
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import dtypes
from nbflow.framework.op_def import KernelContext, OpDef, TensorSpec
from nbflow.framework.ops import Operation
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops.control_flow_primitives import DEAD


def _key(index: Any) -> Any:
    return index if type(index) is tuple else int(index)


class _StackV2(OpDef):
    """A fresh per-step stack of forward values, keyed by iteration."""

    attrs = {"elem_type": dtypes.float32, "stack_name": ""}
    stateful = True
    differentiable = False

    def infer(self, elem_type: Any, stack_name: str) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.variant)

    def compute(self, ctx: KernelContext, elem_type: Any, stack_name: str) -> Any:
        return {}


class _StackKey(OpDef):
    """The key of an iteration of a nested loop: (key of the enclosing iteration, index)."""

    inputs = ("outer", "index")
    differentiable = False

    def infer(self, outer: TensorSpec, index: TensorSpec) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.variant)

    def compute(self, ctx: KernelContext, outer: Any, index: Any) -> tuple:
        return (_key(outer), int(index))


class _StackPush(OpDef):
    """stack[key] = value (forward pass, once per iteration)."""

    inputs = ("handle", "index", "value")
    num_outputs = 0
    stateful = True
    differentiable = False

    def infer(self, handle: TensorSpec, index: TensorSpec, value: TensorSpec) -> list:
        return []

    def compute(self, ctx: KernelContext, handle: dict, index: Any, value: Any) -> None:
        handle[index if type(index) is tuple else int(index)] = value


class _StackPop(OpDef):
    """stack[key] (backward pass); DEAD where the forward value was on an untaken branch.

    The value stays: several backward loops of one forward loop (two ``gradients()`` calls
    fetched together) read the same stacks. The stack goes with its step."""

    inputs = ("handle", "index")
    attrs = {"elem_type": dtypes.float32, "shape": TensorShape(None)}
    stateful = True
    differentiable = False
    produces_dead = True  # executors must not assume a live output

    def infer(self, handle: TensorSpec, index: TensorSpec, elem_type: Any, shape: Any):
        return TensorSpec(shape, elem_type)

    def compute(self, ctx: KernelContext, handle: dict, index: Any, elem_type: Any, shape: Any):
        return handle.get(_key(index), DEAD)

    def bind(self, op: Operation, device_type: str = "CPU") -> Any:
        dead = DEAD

        def stack_pop(ctx: KernelContext, handle: dict, index: Any) -> Any:
            return handle.get(index if type(index) is tuple else int(index), dead)

        return stack_pop  # the attrs only describe the value: no need to pass them
