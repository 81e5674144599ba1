"""Matrix functions: the exponential, logarithm and principal square root of square matrices.

Kernels are SciPy's on the host (``expm``: Pade approximation with scaling and squaring,
``logm`` and ``sqrtm``: Schur methods), batched over leading axes. Gradients:
``MatrixExponential``'s is the adjoint Frechet derivative, the upper-right block of
``expm([[A^H, G], [0, A^H]])``; ``MatrixSquareRoot``'s solves the Sylvester equation of
``dA = X dX + dX X``: ``X^H S + S X^H = G`` (``MatrixSquareRootGrad``, Bartels-Stewart);
``MatrixLogarithm`` has none, as in TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.ops import array_ops
from nbflow.ops.linalg_decompositions import _LOWER, _SPD, _SQUARE, _square, adjoint
from nbflow.ops.math_binary import _create

Tensor = ops_lib.Tensor


class MatrixExponential(OpDef):
    """``expm`` of each square matrix (SciPy's Pade approximant, on the host)."""

    inputs = ("input",)
    cost = "expensive"
    cpu_only = True
    samples = [Sample(input=_SQUARE * 0.5), Sample(input=np.stack([_SQUARE, -_LOWER]) * 0.3)]

    def infer(self, input: TensorSpec) -> TensorSpec:
        return TensorSpec(_square(self.type, input), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        return _batched_host(input, scipy.linalg.expm)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        # The Frechet derivative's adjoint: the upper-right block of expm([[A^H, G], [0, A^H]]).
        a_h = adjoint(op.inputs[0])
        top = array_ops.concat([a_h, grad], -1)
        bottom = array_ops.concat([array_ops.zeros_like(a_h), a_h], -1)
        block = matrix_exponential(array_ops.concat([top, bottom], -2))
        n = array_ops.shape(a_h)[-1]
        return [block[..., :n, n:]]


def _batched_host(x: Any, fn: Any) -> np.ndarray:
    x = np.asarray(x)
    flat = x.reshape((-1,) + x.shape[-2:])
    out = np.stack([fn(m) for m in flat]) if len(flat) else np.zeros(flat.shape, x.dtype)
    return out.reshape(x.shape).astype(x.dtype, copy=False)


def matrix_exponential(input: Any, name: str | None = None) -> Tensor:
    """The matrix exponential of each square matrix.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.linalg.expm([[0.0, 0.0], [0.0, 0.0]])).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return _create("MatrixExponential", [ops_lib.convert_to_tensor(input)], name=name)


class MatrixLogarithm(OpDef):
    """The principal matrix logarithm of each complex square matrix (no gradient, as TF)."""

    inputs = ("input",)
    cost = "expensive"
    cpu_only = True
    differentiable = False
    samples = [Sample(input=(_SPD + 0j).astype(np.complex128))]

    def infer(self, input: TensorSpec) -> TensorSpec:
        if not input.dtype.is_complex:
            raise TypeError(f"MatrixLogarithm needs complex64 or complex128, got {input.dtype}")
        return TensorSpec(_square(self.type, input), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        return _batched_host(input, scipy.linalg.logm)


def logm(input: Any, name: str | None = None) -> Tensor:
    """The matrix logarithm of each complex square matrix."""
    return _create("MatrixLogarithm", [ops_lib.convert_to_tensor(input)], name=name)


class MatrixSquareRoot(OpDef):
    """The principal square root of each square matrix."""

    inputs = ("input",)
    cost = "expensive"
    cpu_only = True
    samples = [Sample(input=_SPD), Sample(input=np.stack([_SPD, _SPD.T @ _SPD]))]

    def infer(self, input: TensorSpec) -> TensorSpec:
        return TensorSpec(_square(self.type, input), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        def root(matrix: np.ndarray) -> np.ndarray:
            value = scipy.linalg.sqrtm(matrix)
            return value.real if np.isrealobj(matrix) else value

        return _batched_host(input, root)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        root_h = adjoint(op.outputs[0])
        return [_create("MatrixSquareRootGrad", [root_h, grad])]


class MatrixSquareRootGrad(OpDef):
    """``S`` with ``A S + S A = G`` for each matrix pair (a Sylvester equation)."""

    inputs = ("a", "g")
    cost = "expensive"
    cpu_only = True
    differentiable = False
    samples = [Sample(a=_SPD, g=(3, 3))]

    def infer(self, a: TensorSpec, g: TensorSpec) -> TensorSpec:
        return TensorSpec(g.shape, g.dtype.base_dtype)

    def compute(self, ctx: KernelContext, a: Any, g: Any) -> Any:
        a, g = np.asarray(a), np.asarray(g)
        flat_a = a.reshape((-1,) + a.shape[-2:])
        flat_g = g.reshape((-1,) + g.shape[-2:])
        out = np.stack([scipy.linalg.solve_sylvester(x, x, q) for x, q in zip(flat_a, flat_g)])
        return out.reshape(g.shape).astype(g.dtype, copy=False)


def sqrtm(input: Any, name: str | None = None) -> Tensor:
    """The principal square root of each square matrix.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.linalg.sqrtm([[4.0, 0.0], [0.0, 9.0]])).tolist()
    [[2.0, 0.0], [0.0, 3.0]]
    """
    return _create("MatrixSquareRoot", [ops_lib.convert_to_tensor(input)], name=name)


matrix_square_root = sqrtm  # TF1's top-level name

__all__ = ["logm", "matrix_exponential", "matrix_square_root", "sqrtm"]
