"""Selecting by a condition: Where (the coordinates of true elements), Select and SelectV2
(elementwise choice between two tensors; SelectV2 broadcasts all three)."""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape, broadcast_shapes
from nbflow.ops.constant_ops import _create1, zeros_like
from nbflow.ops.shape_ops import _reduce_to

Tensor = ops_lib.Tensor


# --- selecting ----------------------------------------------------------------------------------
class Where(OpDef):
    """The coordinates of the true (non-zero) elements of ``input``: an int64 [n, rank] matrix."""

    inputs = ("input",)
    differentiable = False
    samples = [
        Sample(input=(3, 4), input_dtype=np.bool_),
        Sample(input=(5,), input_dtype=np.int32),
        Sample(input=(0, 2), input_dtype=np.bool_),
    ]

    def infer(self, input: TensorSpec) -> TensorSpec:
        return TensorSpec(TensorShape([None, input.shape.ndims]), dtypes.int64)

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        return ctx.xp.argwhere(input).astype(np.int64, copy=False)


class Select(OpDef):
    """``t`` where ``condition`` else ``e``; a vector condition picks whole rows."""

    inputs = ("condition", "t", "e")
    type_attrs = {"T": 1}
    samples = [
        Sample(condition=np.array([[True, False, True], [False, False, True]]), t=(2, 3), e=(2, 3)),
        Sample(condition=np.array([True, False]), t=(2, 3), e=(2, 3)),
        Sample(condition=np.array(True), t=(2,), e=(2,)),
    ]

    def infer(self, condition: TensorSpec, t: TensorSpec, e: TensorSpec) -> TensorSpec:
        _check_select_dtypes(condition, t, e)
        out = t.shape.merge_with(e.shape)
        c = condition.shape
        if c.ndims is not None and out.ndims is not None and c.ndims not in (0, out.ndims):
            if c.ndims != 1 or not c.is_compatible_with(out[:1]):
                raise ValueError(f"Shapes must be equal rank, but are {c.ndims} and {out.ndims}")
        elif not c.is_compatible_with(out) and c.ndims != 0:
            raise ValueError(f"Shapes {c} and {out} are not compatible")
        return TensorSpec(out, t.dtype.base_dtype)

    def compute(self, ctx: KernelContext, condition: Any, t: Any, e: Any) -> Any:
        if condition.ndim == 1 and t.ndim > 1:
            condition = condition.reshape(condition.shape + (1,) * (t.ndim - 1))
        return ctx.xp.where(condition, t, e)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        c = op.inputs[0]
        zeros_ = zeros_like(grad)
        return [None, where(c, grad, zeros_), where(c, zeros_, grad)]


class SelectV2(OpDef):
    """``t`` where ``condition`` else ``e``, all three broadcast together."""

    inputs = ("condition", "t", "e")
    type_attrs = {"T": 1}
    samples = [
        Sample(condition=np.array([True, False, True]), t=(2, 3), e=(1,)),
        Sample(condition=np.array([[True], [False]]), t=(2, 3), e=(2, 3)),
    ]

    def infer(self, condition: TensorSpec, t: TensorSpec, e: TensorSpec) -> TensorSpec:
        _check_select_dtypes(condition, t, e)
        out = broadcast_shapes(broadcast_shapes(condition.shape, t.shape), e.shape)
        return TensorSpec(out, t.dtype.base_dtype)

    expression = "xp.where(condition, t, e)"

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        c, t, e = op.inputs
        zeros_ = zeros_like(grad)
        return [
            None,
            _reduce_to(where_v2(c, grad, zeros_), t),
            _reduce_to(where_v2(c, zeros_, grad), e),
        ]


def _check_select_dtypes(condition: TensorSpec, t: TensorSpec, e: TensorSpec) -> None:
    if condition.dtype.base_dtype is not dtypes.bool:
        raise TypeError(f"condition must be bool, got {condition.dtype.base_dtype.name}")
    if t.dtype.base_dtype is not e.dtype.base_dtype:
        raise TypeError(
            f"Input 'e' has type {e.dtype.base_dtype.name} that does not match type "
            f"{t.dtype.base_dtype.name} of argument 't'"
        )


def _select_inputs(condition: Any, x: Any, y: Any) -> list[Tensor]:
    if isinstance(y, Tensor) and not isinstance(x, Tensor):
        x = ops_lib.convert_to_tensor(x, dtype=y.dtype.base_dtype)
    x = ops_lib.convert_to_tensor(x)
    y = ops_lib.convert_to_tensor(y, dtype=x.dtype.base_dtype)
    return [ops_lib.convert_to_tensor(condition, dtype=dtypes.bool), x, y]


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """With one argument, the coordinates of the true elements (int64 [n, rank]); with three,
    the elements of ``x`` where ``condition`` else of ``y`` (a vector condition picks rows)."""
    if x is None and y is None:
        condition = ops_lib.convert_to_tensor(condition, preferred_dtype=dtypes.bool)
        return _create1("Where", [condition], name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return _create1("Select", _select_inputs(condition, x, y), name=name)


def where_v2(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """Like ``where``, but ``condition``, ``x`` and ``y`` broadcast together."""
    if x is None and y is None:
        return where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return _create1("SelectV2", _select_inputs(condition, x, y), name=name)
