"""Structured LinearOperators built from other operators or from a few vectors.

``LinearOperatorKronecker`` (Kronecker product of factors), ``LinearOperatorBlockDiag`` (blocks
on the diagonal), ``LinearOperatorLowRankUpdate`` (``A + U D V^H``), ``LinearOperatorHouseholder``
(the reflection ``I - 2 v v^H / |v|^2``), ``LinearOperatorToeplitz`` (constant diagonals from a
first column and row) and ``LinearOperatorCirculant``/``2D``/``3D`` (circulant matrices given by
their spectrum, the DFT of their first column; blockwise for 2D and 3D). Each defines its dense
matrix from its parameters (static matrix dimensions are needed); the base class
(``linear_operator``) gives them all methods through it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.linear_operator import LinearOperator, OperatorCombination
from nbflow.ops import array_ops, math_ops
from nbflow.ops.linalg_decompositions import adjoint as matrix_adjoint
from nbflow.ops.linalg_ops import eye, matmul

Tensor = ops_lib.Tensor


def _static_dims(dense: Tensor, what: str) -> tuple[int, int]:
    dims = dense.shape.dims
    if dims is None or dims[-1].value is None or dims[-2].value is None:
        raise ValueError(f"{what} needs static matrix dimensions, got shape {dense.shape}")
    return dims[-2].value, dims[-1].value


class LinearOperatorKronecker(OperatorCombination):
    """The Kronecker product ``A1 ⊗ A2 ⊗ ...`` of ``operators``."""

    joiner = "_x_"

    def _to_dense(self) -> Tensor:
        dense = self._operators[0].to_dense()
        for op in self._operators[1:]:
            right = op.to_dense()
            m, n = _static_dims(dense, "LinearOperatorKronecker")
            p, q = _static_dims(right, "LinearOperatorKronecker")
            # [.., m, 1, n, 1] * [.., 1, p, 1, q] -> [.., m, p, n, q] -> [.., m p, n q]
            left4 = array_ops.expand_dims(array_ops.expand_dims(dense, -1), -3)
            right4 = array_ops.expand_dims(array_ops.expand_dims(right, -2), -4)
            product = left4 * right4
            batch = array_ops.shape(product)[:-4]
            dense = array_ops.reshape(product, array_ops.concat([batch, [m * p, n * q]], 0))
            dense.set_shape(product.shape[:-4].concatenate([m * p, n * q]))
        return dense


class LinearOperatorBlockDiag(OperatorCombination):
    """The block diagonal operator with ``operators`` (square) as its blocks."""

    joiner = "_ds_"

    def __init__(
        self,
        operators: list[LinearOperator],
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name=None,
    ):
        super().__init__(
            operators, is_non_singular, is_self_adjoint, is_positive_definite, True, name
        )

    def _to_dense(self) -> Tensor:
        blocks = [op.to_dense() for op in self._operators]
        widths = [_static_dims(b, "LinearOperatorBlockDiag")[1] for b in blocks]
        total = sum(widths)
        rows, start = [], 0
        for block, width in zip(blocks, widths):
            rank = len(block.shape)
            paddings = [[0, 0]] * (rank - 1) + [[start, total - start - width]]
            rows.append(array_ops.pad(block, paddings))
            start += width
        return array_ops.concat(rows, -2)


class LinearOperatorLowRankUpdate(LinearOperator):
    """``base_operator + U diag(diag_update) V^H`` (``V`` defaults to ``U``, the diagonal to
    ones)."""

    def __init__(
        self,
        base_operator: LinearOperator,
        u: Any,
        diag_update: Any = None,
        v: Any = None,
        is_diag_update_positive=None,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorLowRankUpdate",
    ):
        dtype = base_operator.dtype
        self._base = base_operator
        self._u = ops_lib.convert_to_tensor(u, dtype=dtype, name="u")
        self._v = self._u if v is None else ops_lib.convert_to_tensor(v, dtype=dtype, name="v")
        self._diag_update = (
            None
            if diag_update is None
            else ops_lib.convert_to_tensor(diag_update, dtype=dtype, name="diag_update")
        )
        symmetric = v is None and (is_diag_update_positive or diag_update is None)
        super().__init__(
            dtype,
            [self._u, self._v],
            is_non_singular,
            is_self_adjoint
            if is_self_adjoint is not None
            else (base_operator.is_self_adjoint and symmetric or None),
            is_positive_definite,
            is_square,
            name,
        )

    @property
    def base_operator(self) -> LinearOperator:
        return self._base

    @property
    def u(self) -> Tensor:
        return self._u

    @property
    def v(self) -> Tensor:
        return self._v

    @property
    def diag_update(self) -> Tensor | None:
        return self._diag_update

    def _to_dense(self) -> Tensor:
        u = self._u
        if self._diag_update is not None:
            u = u * array_ops.expand_dims(self._diag_update, -2)
        return self._base.to_dense() + matmul(u, self._v, adjoint_b=True)


class LinearOperatorHouseholder(LinearOperator):
    """The Householder reflection ``I - 2 v v^H / (v^H v)`` about ``reflection_axis`` v."""

    def __init__(
        self,
        reflection_axis: Any,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorHouseholder",
    ):
        self._axis = ops_lib.convert_to_tensor(reflection_axis, name="reflection_axis")
        super().__init__(self._axis.dtype, [self._axis], True, True, False, True, name)

    @property
    def reflection_axis(self) -> Tensor:
        return self._axis

    def _to_dense(self) -> Tensor:
        n = self._axis.shape.dims[-1].value if self._axis.shape.dims else None
        if n is None:
            raise ValueError("LinearOperatorHouseholder needs a static reflection axis length")
        v = array_ops.expand_dims(self._axis, -1)
        norm2 = math_ops.reduce_sum(self._axis * math_ops.conj(self._axis), -1)
        scale = 2.0 / array_ops.expand_dims(array_ops.expand_dims(norm2, -1), -1)
        return eye(n, dtype=self.dtype) - scale * matmul(v, v, adjoint_b=True)

    def _determinant(self) -> Tensor:
        return -array_ops.ones_like(math_ops.reduce_sum(self._axis, -1))

    def _log_abs_determinant(self) -> Tensor:
        return array_ops.zeros_like(math_ops.reduce_sum(self._axis, -1))


class LinearOperatorToeplitz(LinearOperator):
    """The Toeplitz matrix with first column ``col`` and first row ``row`` (``row[0]`` is
    ignored: the diagonal is ``col[0]``)."""

    def __init__(
        self,
        col: Any,
        row: Any,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorToeplitz",
    ):
        self._col = ops_lib.convert_to_tensor(col, name="col")
        self._row = ops_lib.convert_to_tensor(row, dtype=self._col.dtype.base_dtype, name="row")
        super().__init__(
            self._col.dtype,
            [self._col, self._row],
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            True,
            name,
        )

    @property
    def col(self) -> Tensor:
        return self._col

    @property
    def row(self) -> Tensor:
        return self._row

    def _to_dense(self) -> Tensor:
        n = self._col.shape.dims[-1].value if self._col.shape.dims else None
        if n is None:
            raise ValueError("LinearOperatorToeplitz needs a static column length")
        # values [row[n-1], ..., row[1], col[0], ..., col[n-1]]; entry (i, j) is col[i - j] for
        # i >= j and row[j - i] above the diagonal: index i - j + n - 1.
        reversed_row = array_ops.reverse(self._row[..., 1:], [-1])
        values = array_ops.concat([reversed_row, self._col], -1)
        index = np.arange(n)[:, None] - np.arange(n)[None, :] + n - 1
        return array_ops.gather(values, index, axis=-1)


class _BaseCirculant(LinearOperator):
    """Circulant operators from their ``spectrum`` over the last ``block_depth`` axes:
    ``F^H diag(spectrum) F / N`` with ``F`` the (Kronecker product of) DFT matrices."""

    block_depth = 1

    def __init__(
        self,
        spectrum: Any,
        input_output_dtype: Any = dtypes.complex64,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name=None,
    ):
        self._spectrum = ops_lib.convert_to_tensor(spectrum, name="spectrum")
        dtype = dtypes.as_dtype(input_output_dtype).base_dtype
        super().__init__(
            dtype,
            [self._spectrum],
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            True,
            name or type(self).__name__,
        )

    @property
    def spectrum(self) -> Tensor:
        return self._spectrum

    @property
    def block_shape(self) -> list[int]:
        dims = self._spectrum.shape.dims
        if dims is None or any(d.value is None for d in dims[-self.block_depth :]):
            raise ValueError(f"{type(self).__name__} needs a static spectrum block shape")
        return [d.value for d in dims[-self.block_depth :] if d.value is not None]  # all known

    def _to_dense(self) -> Tensor:
        shape = self.block_shape
        total = int(np.prod(shape))
        dft = np.ones((1, 1), np.complex128)
        for n in shape:
            k = np.arange(n)
            dft = np.kron(dft, np.exp(-2j * np.pi * np.outer(k, k) / n))
        spectrum = self._spectrum
        batch = array_ops.shape(spectrum)[: len(spectrum.shape) - self.block_depth]
        flat = array_ops.reshape(spectrum, array_ops.concat([batch, [total]], 0))
        weights = array_ops.expand_dims(flat, -2) / float(total)  # scales the columns of F^H
        if spectrum.dtype.is_complex:
            f = ops_lib.convert_to_tensor(dft.astype(spectrum.dtype.base_dtype.np))
            dense = matmul(matrix_adjoint(f) * weights, f)
        else:  # a real (Hermitian) spectrum: Re(F^H D F) = Fr D Fr + Fi D Fi, F symmetric
            real_np = spectrum.dtype.base_dtype.np
            fr = ops_lib.convert_to_tensor(dft.real.astype(real_np))
            fi = ops_lib.convert_to_tensor(dft.imag.astype(real_np))
            dense = matmul(fr * weights, fr) + matmul(fi * weights, fi)
        return math_ops.cast(dense, self.dtype)


class LinearOperatorCirculant(_BaseCirculant):
    """A circulant matrix given by ``spectrum`` [..., N], the DFT of its first column."""

    block_depth = 1


class LinearOperatorCirculant2D(_BaseCirculant):
    """A block circulant matrix with circulant blocks, from ``spectrum`` [..., N0, N1]."""

    block_depth = 2


class LinearOperatorCirculant3D(_BaseCirculant):
    """A doubly nested block circulant matrix, from ``spectrum`` [..., N0, N1, N2]."""

    block_depth = 3


__all__ = [
    "LinearOperatorBlockDiag",
    "LinearOperatorCirculant",
    "LinearOperatorCirculant2D",
    "LinearOperatorCirculant3D",
    "LinearOperatorHouseholder",
    "LinearOperatorKronecker",
    "LinearOperatorLowRankUpdate",
    "LinearOperatorToeplitz",
]
