"""Structural matrix ops over the last two axes: band parts, diagonals, cross products.

``MatrixBandPart`` keeps a band around the diagonal (``tf.linalg.band_part``; ``(-1, 0)`` is the
lower triangle), ``MatrixDiag``/``MatrixDiagPart``/``MatrixSetDiag`` build, read and replace the
main diagonal of each matrix in a batch, and ``Cross`` is the 3-vector cross product along the
last axis. Each is its own gradient's building block: the gradient of a band part is the same
band of the incoming gradient, the gradient of a diagonal read is a diagonal write.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import Dimension, TensorShape
from nbflow.ops import array_ops
from nbflow.ops.math_binary import _NUMERIC, _check_dtype, _create

Tensor = ops_lib.Tensor


def _matrices(op_type: str, x: TensorSpec, name: str = "input") -> TensorShape:
    """The shape of ``x``, checked to be a batch of matrices (rank >= 2)."""
    try:
        return x.shape.with_rank_at_least(2)
    except ValueError:
        raise ValueError(
            f"{op_type}: '{name}' must be a batch of matrices (rank >= 2), got shape {x.shape}"
        ) from None


class MatrixBandPart(OpDef):
    """Each matrix with entries outside its band zeroed; a negative bound keeps that whole side."""

    inputs = ("input", "num_lower", "num_upper")
    samples = [
        Sample(input=(3, 4), num_lower=np.int64(1), num_upper=np.int64(0)),
        Sample(input=(2, 3, 3), num_lower=np.int64(-1), num_upper=np.int64(0)),
        Sample(input=(2, 4, 3), num_lower=np.int64(0), num_upper=np.int64(-1)),
    ]

    def infer(self, input: TensorSpec, num_lower: TensorSpec, num_upper: TensorSpec):
        _matrices(self.type, input)
        num_lower.shape.with_rank(0)
        num_upper.shape.with_rank(0)
        return TensorSpec(input.shape, input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, num_lower: Any, num_upper: Any) -> Any:
        xp = ctx.xp
        lower, upper = int(num_lower), int(num_upper)
        m, n = input.shape[-2:]
        if lower > m or upper > n:
            raise ValueError(f"num_lower {lower} > {m} rows or num_upper {upper} > {n} columns")
        offset = xp.arange(n)[None, :] - xp.arange(m)[:, None]  # j - i
        keep = ((lower < 0) | (-offset <= lower)) & ((upper < 0) | (offset <= upper))
        return xp.where(keep, input, xp.zeros((), input.dtype))

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [band_part(grad, op.inputs[1], op.inputs[2]), None, None]


def band_part(input: Any, num_lower: Any, num_upper: Any, name: str | None = None) -> Tensor:
    """``input`` with entries more than ``num_lower`` below / ``num_upper`` above the diagonal
    zeroed (``-1`` keeps the whole side).

    >>> import nbflow as tf
    >>> tf.Session().run(tf.linalg.band_part(tf.ones([3, 3]), 0, -1)).tolist()
    [[1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    """
    x = ops_lib.convert_to_tensor(input, name="input")
    lower = ops_lib.convert_to_tensor(num_lower, dtype=dtypes.int64, name="num_lower")
    upper = ops_lib.convert_to_tensor(num_upper, dtype=dtypes.int64, name="num_upper")
    return _create("MatrixBandPart", [x, lower, upper], name=name)


class MatrixDiag(OpDef):
    """Square matrices with ``diagonal``'s last axis on their diagonal, zeros elsewhere."""

    inputs = ("diagonal",)
    samples = [Sample(diagonal=(3,)), Sample(diagonal=(2, 3))]

    def infer(self, diagonal: TensorSpec) -> TensorSpec:
        shape = diagonal.shape.with_rank_at_least(1)
        if shape.dims is None:
            return TensorSpec(TensorShape(None), diagonal.dtype.base_dtype)
        return TensorSpec(shape.concatenate([shape.dims[-1]]), diagonal.dtype.base_dtype)

    def compute(self, ctx: KernelContext, diagonal: Any) -> Any:
        n = diagonal.shape[-1]
        out = ctx.xp.zeros(diagonal.shape + (n,), diagonal.dtype)
        index = ctx.xp.arange(n)
        out[..., index, index] = diagonal
        return out

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [matrix_diag_part(grad)]


class MatrixDiagPart(OpDef):
    """The main diagonal of each matrix: shape ``[..., min(M, N)]``."""

    inputs = ("input",)
    samples = [Sample(input=(3, 3)), Sample(input=(2, 3, 4)), Sample(input=(4, 2))]

    def infer(self, input: TensorSpec) -> TensorSpec:
        shape = _matrices(self.type, input)
        if shape.dims is None:
            return TensorSpec(TensorShape(None), input.dtype.base_dtype)
        m, n = shape.dims[-2:]
        k = Dimension(None if m.value is None or n.value is None else min(m.value, n.value))
        return TensorSpec(TensorShape(shape.dims[:-2] + [k]), input.dtype.base_dtype)

    expression = "xp.diagonal(input, 0, -2, -1).copy()"

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [matrix_set_diag(array_ops.zeros_like(op.inputs[0]), grad)]


class MatrixSetDiag(OpDef):
    """Each matrix of ``input`` with its main diagonal replaced by ``diagonal``."""

    inputs = ("input", "diagonal")
    samples = [Sample(input=(3, 3), diagonal=(3,)), Sample(input=(2, 3, 4), diagonal=(2, 3))]

    def infer(self, input: TensorSpec, diagonal: TensorSpec) -> TensorSpec:
        if input.dtype.base_dtype is not diagonal.dtype.base_dtype:
            raise TypeError(f"MatrixSetDiag: dtypes differ, {input.dtype} vs {diagonal.dtype}")
        expected = MatrixDiagPart().infer(input).shape
        if not expected.is_compatible_with(diagonal.shape):
            raise ValueError(
                f"MatrixSetDiag: diagonal shape {diagonal.shape} does not fit input shape "
                f"{input.shape} (expected {expected})"
            )
        return TensorSpec(input.shape, input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, diagonal: Any) -> Any:
        out = input.copy()
        index = ctx.xp.arange(min(input.shape[-2:]))
        out[..., index, index] = diagonal
        return out

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        diagonal = op.inputs[1]
        return [matrix_set_diag(grad, array_ops.zeros_like(diagonal)), matrix_diag_part(grad)]


def matrix_diag(diagonal: Any, name: str | None = None) -> Tensor:
    """A batch of square matrices with ``diagonal``'s last axis on the diagonal."""
    return _create("MatrixDiag", [ops_lib.convert_to_tensor(diagonal)], name=name)


def matrix_diag_part(input: Any, name: str | None = None) -> Tensor:
    """The main diagonal of each matrix in the last two axes."""
    return _create("MatrixDiagPart", [ops_lib.convert_to_tensor(input)], name=name)


def matrix_set_diag(input: Any, diagonal: Any, name: str | None = None) -> Tensor:
    """Each matrix in ``input`` with its main diagonal replaced by ``diagonal``."""
    x = ops_lib.convert_to_tensor(input, name="input")
    d = ops_lib.convert_to_tensor(diagonal, dtype=x.dtype.base_dtype, name="diagonal")
    return _create("MatrixSetDiag", [x, d], name=name)


class Cross(OpDef):
    """The cross product of 3-vectors along the last axis of ``a`` and ``b``."""

    inputs = ("a", "b")
    samples = [Sample(a=(3,), b=(3,)), Sample(a=(2, 3), b=(2, 3))]

    def infer(self, a: TensorSpec, b: TensorSpec) -> TensorSpec:
        _check_dtype(self.type, "a", a, _NUMERIC)
        shape = a.shape.merge_with(b.shape).with_rank_at_least(1)
        if shape.dims is not None and not shape.dims[-1].is_compatible_with(3):
            raise ValueError(f"Cross: the last dimension must be 3, got shape {shape}")
        return TensorSpec(shape, a.dtype.base_dtype)

    expression = "xp.cross(a, b)"

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        a, b = op.inputs
        return [cross(b, grad), cross(grad, a)]


def cross(a: Any, b: Any, name: str | None = None) -> Tensor:
    """The pairwise cross product of the 3-vectors in the last axis of ``a`` and ``b``."""
    a = ops_lib.convert_to_tensor(a, name="a")
    b = ops_lib.convert_to_tensor(b, dtype=a.dtype.base_dtype, name="b")
    return _create("Cross", [a, b], name=name)


__all__ = ["band_part", "cross", "matrix_diag", "matrix_diag_part", "matrix_set_diag"]

matrix_band_part = band_part  # TF1's top-level name
