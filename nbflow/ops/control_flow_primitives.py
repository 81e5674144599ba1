"""Dead values and the control-flow primitives: Switch, Merge, Enter, Exit, NextIteration, LoopCond.

The primitives carry *dead* values (``DEAD``), as in the dynamic dataflow machines the papers
borrow from. ``Switch(data, pred)`` forwards ``data`` to one output and DEAD to the other; any
op with a DEAD input produces DEAD outputs without running its kernel; ``Merge`` forwards its
first live input. ``Enter`` moves a value into a loop frame, ``NextIteration`` carries it to the
next iteration, ``Exit`` takes the last one out, and ``LoopCond`` is the predicate the loop's
Switches read. Each declares a ``control_kind``: the executor (runtime/dataflow.py) routes values
by it, tagging every value with its frame and iteration. ``cond`` (cond_ops.py) and
``while_loop`` (while_loop_ops.py) build graphs of these.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, TensorSpec
from nbflow.framework.ops import Operation, Tensor
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops.control_flow_contexts import WhileContext, current_context


class _Dead:
    """The value on a branch not taken. One instance, ``DEAD``; falsy, never a real tensor."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEAD"

    def __bool__(self) -> bool:
        return False


DEAD = _Dead()


class _ControlFlowOp(OpDef):
    """Base of the primitives; ``control_kind`` tells the executor how to route values."""

    abstract = True
    rewritable = False  # the loop structure the executors rely on


class Switch(_ControlFlowOp):
    """Forward ``data`` to ``output_true`` if ``pred`` else ``output_false``; DEAD to the other."""

    inputs = ("data", "pred")
    num_outputs = 2
    type_attrs = {"T": 0}
    control_kind = "switch"

    def infer(self, data: TensorSpec, pred: TensorSpec) -> list[TensorSpec]:
        if pred.dtype.base_dtype is not dtypes.bool or not pred.shape.is_compatible_with([]):
            raise ValueError(f"Switch predicate must be a scalar bool, got {pred}")
        return [TensorSpec(data.shape, data.dtype), TensorSpec(data.shape, data.dtype)]

    def compute(self, ctx: KernelContext, data: Any, pred: Any) -> builtins.tuple:
        return (DEAD, data) if pred else (data, DEAD)

    def gradient(self, op: Operation, grad_false: Any, grad_true: Any) -> list:
        return control_flow_grad.switch_grad(op, grad_false, grad_true)


class RefSwitch(Switch):
    """Switch of a variable reference (both outputs are references)."""

    inputs = ("data&", "pred")


class Merge(_ControlFlowOp):
    """Forward the first live input; ``value_index`` says which. Dead only if all inputs are."""

    inputs = ("inputs*",)
    num_outputs = 2
    type_attrs = {"T": 0}
    control_kind = "merge"

    def infer(self, inputs: list[TensorSpec]) -> list[TensorSpec]:
        shape = inputs[0].shape
        for spec in inputs[1:]:
            if spec.dtype.base_dtype is not inputs[0].dtype.base_dtype:
                raise TypeError(f"Merge inputs differ in dtype: {inputs[0]} vs {spec}")
            shape = _most_specific_compatible(shape, spec.shape)
        return [TensorSpec(shape, inputs[0].dtype), TensorSpec(TensorShape([]), dtypes.int32)]

    def compute(self, ctx: KernelContext, inputs: Any) -> builtins.tuple:
        for i, value in enumerate(inputs):
            if value is not DEAD:
                return value, np.int32(i)
        return DEAD, DEAD

    def gradient(self, op: Operation, grad: Any, grad_index: Any) -> list:
        return control_flow_grad.merge_grad(op, grad)


class Enter(_ControlFlowOp):
    """Enter frame ``frame_name``: a loop variable (iteration 0) or, with ``is_constant``, a
    loop invariant that every iteration sees."""

    inputs = ("data",)
    attrs = {"frame_name": REQUIRED, "is_constant": False, "parallel_iterations": 10}
    type_attrs = {"T": 0}
    control_kind = "enter"

    def infer(self, data: TensorSpec, frame_name: str, is_constant: bool, parallel_iterations: int):
        return TensorSpec(data.shape, data.dtype)

    def compute(self, ctx: KernelContext, data: Any, **attrs: Any) -> Any:
        return data

    def gradient(self, op: Operation, grad: Any) -> list:
        loop = current_context()
        loop = loop.while_context() if loop is not None else None
        if op.get_attr("is_constant") and loop is not None and _in_frame(loop, op):
            # gradients() called inside the loop's body: the gradient of this iteration
            return [grad]
        raise LookupError(f"Enter '{op.name}' is differentiated with its whole while loop")


def _in_frame(loop: WhileContext, enter: Operation) -> bool:
    """Whether ``loop`` is the frame ``enter`` enters, or a loop nested in it."""
    frame = enter.get_attr("frame_name")
    ctx: Any = loop
    while ctx is not None:
        if isinstance(ctx, WhileContext) and ctx.name == frame:
            return True
        ctx = ctx.outer
    return False


class RefEnter(Enter):
    """Enter of a variable reference (a loop-invariant handle the body can assign to)."""

    inputs = ("data&",)


class Exit(_ControlFlowOp):
    """Leave the loop frame: the value of the last iteration, in the parent frame."""

    inputs = ("data",)
    type_attrs = {"T": 0}
    control_kind = "exit"

    def infer(self, data: TensorSpec) -> TensorSpec:
        return TensorSpec(data.shape, data.dtype)

    def compute(self, ctx: KernelContext, data: Any) -> Any:
        return data

    def gradient(self, op: Operation, grad: Any) -> list:
        raise LookupError(f"Exit '{op.name}' is differentiated with its whole while loop")


class NextIteration(_ControlFlowOp):
    """Carry a value to the next iteration of its frame (the back edge into a Merge)."""

    inputs = ("data",)
    type_attrs = {"T": 0}
    control_kind = "next_iteration"

    def infer(self, data: TensorSpec) -> TensorSpec:
        return TensorSpec(data.shape, data.dtype)

    def compute(self, ctx: KernelContext, data: Any) -> Any:
        return data

    def gradient(self, op: Operation, grad: Any) -> list:
        raise LookupError(f"NextIteration '{op.name}' is differentiated with its while loop")


class LoopCond(_ControlFlowOp):
    """The loop's termination predicate, as the Switches of the loop variables see it."""

    inputs = ("input",)
    control_kind = "loop_cond"
    differentiable = False

    def infer(self, input: TensorSpec) -> TensorSpec:
        if input.dtype.base_dtype is not dtypes.bool or not input.shape.is_compatible_with([]):
            raise ValueError(f"LoopCond takes a scalar bool, got {input}")
        return TensorSpec(TensorShape([]), dtypes.bool)

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        return input


def _most_specific_compatible(a: TensorShape, b: TensorShape) -> TensorShape:
    if a.dims is None or b.dims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x.value if x.value == y.value else None for x, y in zip(a.dims, b.dims)])


def _create(op_type: str, inputs: list, attrs: dict | None = None, name: str | None = None):
    return ops_lib.get_default_graph().create_op(op_type, inputs, attrs, name=name)


def switch(data: Any, pred: Any, name: str | None = None) -> builtins.tuple[Tensor, Tensor]:
    """``(output_false, output_true)``: ``data`` on the side ``pred`` selects, DEAD on the other."""
    data = ops_lib.convert_to_tensor(data)
    op_type = "RefSwitch" if data.dtype.is_ref_dtype else "Switch"
    op = _create(op_type, [data, pred], name=name or "Switch")
    return op.outputs[0], op.outputs[1]


def merge(inputs: Sequence[Any], name: str | None = None) -> builtins.tuple[Tensor, Tensor]:
    """``(output, value_index)``: the first live one of ``inputs``."""
    op = _create("Merge", [list(inputs)], name=name or "Merge")
    return op.outputs[0], op.outputs[1]


# The gradients of Switch and Merge live with the loop gradients, which import this module:
# bound once the ops above exist.
from nbflow.ops import control_flow_grad  # noqa: E402
