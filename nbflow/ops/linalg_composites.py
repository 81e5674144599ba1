"""Linear algebra composites: solvers, norms and inverses built from the decompositions.

``cholesky_solve`` (two triangular solves), ``lstsq`` (the normal equations through a Cholesky
factorization, TensorFlow's ``fast`` path), ``logdet`` (twice the log-diagonal of the Cholesky
factor), ``pinv`` and ``matrix_rank`` (from the SVD), ``matvec`` and ``norm`` (vector and matrix
norms). They are graph code over the ops of ``linalg_decompositions``, so their gradients are
those ops' gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.ops import array_ops, math_ops
from nbflow.ops.linalg_decompositions import (
    _identity_like,
    cholesky,
    matrix_triangular_solve,
    svd,
)
from nbflow.ops.linalg_ops import matmul
from nbflow.ops.linalg_structure import matrix_diag_part

Tensor = ops_lib.Tensor


def cholesky_solve(chol: Any, rhs: Any, name: str | None = None) -> Tensor:
    """Solve ``A X = rhs`` given ``chol``, the Cholesky factor of ``A``."""
    with ops_lib.name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, lower=True, adjoint=False)
        return matrix_triangular_solve(chol, y, lower=True, adjoint=True)


def lstsq(
    matrix: Any,
    rhs: Any,
    l2_regularizer: Any = 0.0,
    fast: bool = True,
    name: str | None = None,
) -> Tensor:
    """Least-squares solutions of ``matrix X = rhs`` (regularized by ``l2_regularizer``).

    ``fast=True`` (TensorFlow's default) solves the regularized normal equations through a
    Cholesky factorization. ``fast=False`` without regularization is the robust path: the
    minimum-norm solution ``pinv(matrix) rhs`` from the SVD, which, like TensorFlow's complete
    orthogonal decomposition, also holds for rank-deficient matrices.
    """
    with ops_lib.name_scope(name, "matrix_solve_ls", [matrix, rhs, l2_regularizer]):
        a = ops_lib.convert_to_tensor(matrix, name="matrix")
        b = ops_lib.convert_to_tensor(rhs, dtype=a.dtype.base_dtype, name="rhs")
        l2 = ops_lib.convert_to_tensor(l2_regularizer, dtype=a.dtype.base_dtype, name="l2")
        if not fast:
            l2_value = ops_lib.constant_value(l2)
            if l2_value is None:
                raise ValueError("lstsq(fast=False) needs a constant l2_regularizer")
            if float(l2_value) == 0.0:
                return matmul(pinv(a), b)
        dims = a.shape.dims
        if dims is None or dims[-1].value is None or dims[-2].value is None:
            raise ValueError(f"lstsq needs static matrix dimensions, got shape {a.shape}")
        m, n = dims[-2].value, dims[-1].value
        if m >= n:  # overdetermined: (A^H A + l2 I) X = A^H B
            gram = matmul(a, a, adjoint_a=True)
            chol = cholesky(gram + l2 * _identity_like(gram))
            return cholesky_solve(chol, matmul(a, b, adjoint_a=True))
        gram = matmul(a, a, adjoint_b=True)  # underdetermined: X = A^H (A A^H + l2 I)^-1 B
        chol = cholesky(gram + l2 * _identity_like(gram))
        return matmul(a, cholesky_solve(chol, b), adjoint_a=True)


def logdet(matrix: Any, name: str | None = None) -> Tensor:
    """``log(det(matrix))`` of Hermitian positive definite matrices, via Cholesky:
    ``2 sum(log(diag(L)))``."""
    with ops_lib.name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        return 2.0 * math_ops.reduce_sum(
            math_ops.log(math_ops.abs(matrix_diag_part(chol))), axis=[-1]
        )


def pinv(a: Any, rcond: Any = None, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse, from the SVD; singular values below
    ``rcond * max(s)`` count as zero (default ``rcond``: ``10 * max(M, N) * eps``)."""
    with ops_lib.name_scope(name, "pinv", [a, rcond]):
        a = ops_lib.convert_to_tensor(a, name="a")
        dims = a.shape.dims
        if rcond is None:
            if dims is None or dims[-1].value is None or dims[-2].value is None:
                raise ValueError("pinv needs static matrix dimensions when rcond is None")
            eps = np.finfo(a.dtype.base_dtype.np).eps
            rcond = 10.0 * max(dims[-1].value, dims[-2].value) * eps
        s, u, v = svd(a, full_matrices=False, compute_uv=True)
        cutoff = rcond * math_ops.reduce_max(s, axis=-1, keepdims=True)
        keep = math_ops.greater(s, cutoff)
        safe = array_ops.where(keep, s, array_ops.ones_like(s))
        s_inv = array_ops.where(keep, 1.0 / safe, array_ops.zeros_like(s))
        return matmul(v * array_ops.expand_dims(s_inv, -2), u, adjoint_b=True)


def matrix_rank(a: Any, tol: Any = None, validate_args: bool = False, name: str | None = None):
    """The number of singular values above ``tol`` (default ``eps * max(M, N) * max(s)``)."""
    with ops_lib.name_scope(name, "matrix_rank", [a, tol]):
        a = ops_lib.convert_to_tensor(a, name="a")
        s = svd(a, compute_uv=False)
        if tol is None:
            dims = a.shape.dims
            if dims is None or dims[-1].value is None or dims[-2].value is None:
                raise ValueError("matrix_rank needs static matrix dimensions when tol is None")
            eps = float(np.finfo(a.dtype.base_dtype.np).eps)
            tol = eps * max(dims[-1].value, dims[-2].value) * math_ops.reduce_max(s, -1, True)
        return math_ops.reduce_sum(math_ops.cast(math_ops.greater(s, tol), dtypes.int64), -1)


def matvec(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    adjoint_a: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """The product of each matrix in ``a`` with the vector in ``b``'s last axis."""
    with ops_lib.name_scope(name, "MatVec", [a, b]):
        b = array_ops.expand_dims(b, -1)
        product = matmul(a, b, transpose_a=transpose_a, adjoint_a=adjoint_a)
        return array_ops.squeeze(product, [-1])


def norm(
    tensor: Any,
    ord: Any = "euclidean",
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """Vector norms (``ord`` 'euclidean', 1, 2, inf or any p > 0) over ``axis``, or matrix
    norms ('fro'/'euclidean', 1, 2, inf) over an ``axis`` pair.

    >>> import nbflow as tf
    >>> float(tf.Session().run(tf.norm([3.0, 4.0])))
    5.0
    """
    keep = bool(keepdims if keepdims is not None else keep_dims)
    is_matrix = isinstance(axis, (tuple, list)) and len(axis) == 2
    if is_matrix:
        if ord not in ("fro", "euclidean", 1, 2, np.inf):
            raise ValueError(f"'ord' must be a supported matrix norm, got {ord!r}")
    elif axis is not None and not isinstance(axis, int):
        raise ValueError(f"'axis' must be None, an integer or a pair of integers, got {axis!r}")
    elif not (ord in ("euclidean", "fro", np.inf) or (isinstance(ord, (int, float)) and ord > 0)):
        raise ValueError(f"'ord' must be a supported vector norm, got {ord!r}")
    with ops_lib.name_scope(name, "norm", [tensor]):
        x = ops_lib.convert_to_tensor(tensor, name="tensor")
        if ord in ("euclidean", "fro") or (not is_matrix and ord == 2):
            axes = axis if is_matrix or axis is None else [axis]
            return math_ops.sqrt(math_ops.reduce_sum(x * math_ops.conj(x), axes, keepdims=keep))
        magnitude = math_ops.abs(x)
        if not is_matrix:
            if ord == np.inf:
                return math_ops.reduce_max(magnitude, axis, keepdims=keep)
            p = float(ord)
            summed = math_ops.reduce_sum(math_ops.pow(magnitude, p), axis, keepdims=keep)
            return math_ops.pow(summed, 1.0 / p)
        rows, cols = axis
        if ord == 2:
            ndims = x.shape.ndims
            if ndims is None:
                raise ValueError("norm(ord=2) over a matrix needs a known rank")
            rows, cols = rows % ndims, cols % ndims
            rest = [d for d in range(ndims) if d not in (rows, cols)]
            moved = array_ops.transpose(x, rest + [rows, cols])
            largest = math_ops.reduce_max(svd(moved, compute_uv=False), -1)
            if keep:
                for d in sorted((rows, cols)):
                    largest = array_ops.expand_dims(largest, d)
            return largest
        reduce_first, reduce_then = (rows, cols) if ord == 1 else (cols, rows)
        first = math_ops.reduce_sum(magnitude, reduce_first, keepdims=True)
        result = math_ops.reduce_max(first, reduce_then, keepdims=True)
        return result if keep else array_ops.squeeze(result, sorted([rows, cols]))


matrix_solve_ls = lstsq  # TF1's top-level name

__all__ = [
    "cholesky_solve",
    "logdet",
    "lstsq",
    "matrix_rank",
    "matrix_solve_ls",
    "matvec",
    "norm",
    "pinv",
]
