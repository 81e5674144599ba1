"""Tridiagonal products and solves, built from the dense tridiagonal matrix.

``tridiagonal_matmul`` and ``tridiagonal_solve`` take the three diagonals in TensorFlow's
formats — ``"compact"`` ``[..., 3, M]`` (superdiagonal, diagonal, subdiagonal; the superdiagonal's
last and the subdiagonal's first entries unused), ``"sequence"`` (the three as a tuple) or
``"matrix"`` ``[..., M, M]`` — and assemble the dense matrix with ``matrix_diag`` and ``pad``, then
call ``matmul``/``matrix_solve``: O(M^2) memory instead of O(M), with gradients from those ops.
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.ops import array_ops, math_ops
from nbflow.ops.linalg_decompositions import matrix_solve
from nbflow.ops.linalg_ops import matmul
from nbflow.ops.linalg_structure import matrix_diag

Tensor = ops_lib.Tensor


def _dense_tridiagonal(diagonals: Any, diagonals_format: str) -> Tensor:
    if diagonals_format == "matrix":
        return ops_lib.convert_to_tensor(diagonals, name="diagonals")
    if diagonals_format == "sequence":
        superdiag, maindiag, subdiag = (ops_lib.convert_to_tensor(d) for d in diagonals)
    elif diagonals_format == "compact":
        compact = ops_lib.convert_to_tensor(diagonals, name="diagonals")
        superdiag, maindiag, subdiag = compact[..., 0, :], compact[..., 1, :], compact[..., 2, :]
    else:
        raise ValueError(f"Unrecognized diagonals_format: {diagonals_format!r}")
    rank = maindiag.shape.ndims
    if rank is None:
        raise ValueError("tridiagonal ops need diagonals of known rank")
    batch = [[0, 0]] * (rank - 1)
    upper = array_ops.pad(matrix_diag(superdiag[..., :-1]), batch + [[0, 1], [1, 0]])
    lower = array_ops.pad(matrix_diag(subdiag[..., 1:]), batch + [[1, 0], [0, 1]])
    return matrix_diag(maindiag) + upper + lower


def tridiagonal_matmul(
    diagonals: Any, rhs: Any, diagonals_format: str = "compact", name: str | None = None
) -> Tensor:
    """The product of a tridiagonal matrix (given by its diagonals) with ``rhs``."""
    with ops_lib.name_scope(name, "tridiagonal_matmul", [rhs]):
        return matmul(_dense_tridiagonal(diagonals, diagonals_format), rhs)


def tridiagonal_solve(
    diagonals: Any,
    rhs: Any,
    diagonals_format: str = "compact",
    transpose_rhs: bool = False,
    conjugate_rhs: bool = False,
    name: str | None = None,
    partial_pivoting: bool = True,
) -> Tensor:
    """``X`` with ``A X = rhs`` for tridiagonal ``A`` (``rhs`` [..., M] or [..., M, K])."""
    with ops_lib.name_scope(name, "tridiagonal_solve", [rhs]):
        dense = _dense_tridiagonal(diagonals, diagonals_format)
        b = ops_lib.convert_to_tensor(rhs, dtype=dense.dtype.base_dtype, name="rhs")
        vector = b.shape.ndims == len(dense.shape) - 1
        if vector:
            b = array_ops.expand_dims(b, -1)
        elif transpose_rhs:  # no effect on a vector right-hand side, as in TensorFlow
            b = array_ops.transpose(b, _swap_last(b))
        if conjugate_rhs:
            b = math_ops.conj(b)
        x = matrix_solve(dense, b)
        return array_ops.squeeze(x, [-1]) if vector else x


def _swap_last(x: Tensor) -> list[int]:
    rank = len(x.shape)
    return list(range(rank - 2)) + [rank - 1, rank - 2]


__all__ = ["tridiagonal_matmul", "tridiagonal_solve"]
