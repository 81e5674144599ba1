"""``tf.linalg.LinearOperator`` and its subclasses: matrices described by their structure.

A LinearOperator stands for a (batch of) matrices without necessarily storing them: a
``LinearOperatorDiag`` is its diagonal, a ``LinearOperatorKronecker`` its factors. The base class
gives every operator the same methods — ``matmul``, ``matvec``, ``solve``, ``determinant``,
``log_abs_determinant``, ``trace``, ``diag_part``, ``to_dense``, ``adjoint``, ``inverse`` — and
implements each through ``to_dense()`` with nbflow's matrix ops; a subclass overrides the methods
its structure makes cheaper (a diagonal operator multiplies and solves elementwise, a triangular
one solves by substitution, the identity returns its argument). The results equal TensorFlow's;
the cost of the structured operators that fall back to the dense matrix (Kronecker, block
diagonal, Toeplitz, circulant, low-rank update) is that of the dense matrix.
"""

from __future__ import annotations

from typing import Any


from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops import array_ops, math_ops
from nbflow.ops.linalg_decompositions import (
    adjoint as matrix_adjoint,
)
from nbflow.ops.linalg_decompositions import (
    cholesky,
    matrix_solve,
    matrix_triangular_solve,
    slogdet,
)
from nbflow.ops.linalg_ops import eye, matmul, matrix_determinant, matrix_inverse
from nbflow.ops.linalg_structure import band_part, matrix_diag, matrix_diag_part

Tensor = ops_lib.Tensor


def _maybe_adjoint(x: Tensor, flag: bool) -> Tensor:
    return matrix_adjoint(x) if flag else x


class LinearOperator:
    """Base class: a batch of M x N matrices, defined by ``_to_dense`` (and faster overrides)."""

    def __init__(
        self,
        dtype: Any,
        graph_parents: list[Any] | None = None,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str | None = None,
    ):
        if is_positive_definite and is_non_singular is False:
            raise ValueError("A positive definite matrix is always non-singular.")
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._graph_parents = list(graph_parents or [])
        self._is_non_singular = True if is_positive_definite else is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square = is_square
        self._name = name or type(self).__name__
        self._dense: Tensor | None = None

    # --- properties -------------------------------------------------------------------------
    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def graph_parents(self) -> list[Any]:
        return list(self._graph_parents)

    @property
    def is_non_singular(self) -> bool | None:
        return self._is_non_singular

    @property
    def is_self_adjoint(self) -> bool | None:
        return self._is_self_adjoint

    @property
    def is_positive_definite(self) -> bool | None:
        return self._is_positive_definite

    @property
    def is_square(self) -> bool | None:
        dims = self.shape.dims
        if dims is not None and dims[-1].value is not None and dims[-2].value is not None:
            return dims[-1].value == dims[-2].value
        return self._is_square

    @property
    def shape(self) -> TensorShape:
        return self.to_dense().shape

    @property
    def batch_shape(self) -> TensorShape:
        return self.shape[:-2]

    @property
    def tensor_rank(self) -> int | None:
        return self.shape.ndims

    @property
    def domain_dimension(self) -> Any:
        return self.shape[-1]

    @property
    def range_dimension(self) -> Any:
        return self.shape[-2]

    def shape_tensor(self, name: str = "shape_tensor") -> Tensor:
        with self._scope(name):
            return array_ops.shape(self.to_dense())

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Tensor:
        with self._scope(name):
            return self.shape_tensor()[:-2]

    def domain_dimension_tensor(self, name: str = "domain_dimension_tensor") -> Tensor:
        with self._scope(name):
            return self.shape_tensor()[-1]

    def range_dimension_tensor(self, name: str = "range_dimension_tensor") -> Tensor:
        with self._scope(name):
            return self.shape_tensor()[-2]

    def _scope(self, name: str) -> Any:
        return ops_lib.name_scope(f"{self.name}/{name}" if name else self.name)

    # --- the matrix ------------------------------------------------------------------------------
    def to_dense(self, name: str = "to_dense") -> Tensor:
        """The operator as a dense matrix (built once per operator)."""
        if self._dense is None:
            with self._scope(name):
                self._dense = self._to_dense()
        return self._dense

    def _to_dense(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} defines no dense matrix")

    def matmul(self, x: Any, adjoint: bool = False, adjoint_arg: bool = False, name="matmul"):
        """``A x`` (``A^H`` with ``adjoint``, ``x^H`` with ``adjoint_arg``); ``x`` may be an
        operator, giving their composition."""
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            return LinearOperatorComposition([left, right])
        with self._scope(name):
            return self._matmul(self._convert(x), adjoint, adjoint_arg)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def matvec(self, x: Any, adjoint: bool = False, name: str = "matvec") -> Tensor:
        with self._scope(name):
            column = array_ops.expand_dims(self._convert(x), -1)
            return array_ops.squeeze(self._matmul(column, adjoint, False), [-1])

    def solve(self, rhs: Any, adjoint: bool = False, adjoint_arg: bool = False, name="solve"):
        """``X`` with ``A X = rhs`` (``A^H`` with ``adjoint``, ``rhs^H`` with ``adjoint_arg``)."""
        if self.is_non_singular is False:
            raise NotImplementedError(
                "Exact solve not implemented for an operator that is expected to be singular."
            )
        with self._scope(name):
            return self._solve(self._convert(rhs), adjoint, adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return matrix_solve(self.to_dense(), _maybe_adjoint(rhs, adjoint_arg), adjoint=adjoint)

    def solvevec(self, rhs: Any, adjoint: bool = False, name: str = "solve") -> Tensor:
        with self._scope(name):
            column = array_ops.expand_dims(self._convert(rhs), -1)
            return array_ops.squeeze(self._solve(column, adjoint, False), [-1])

    def determinant(self, name: str = "det") -> Tensor:
        with self._scope(name):
            return self._determinant()

    def _determinant(self) -> Tensor:
        return matrix_determinant(self.to_dense())

    def log_abs_determinant(self, name: str = "log_abs_det") -> Tensor:
        with self._scope(name):
            return self._log_abs_determinant()

    def _log_abs_determinant(self) -> Tensor:
        return slogdet(self.to_dense())[1]

    def trace(self, name: str = "trace") -> Tensor:
        with self._scope(name):
            return math_ops.reduce_sum(self._diag_part(), -1)

    def diag_part(self, name: str = "diag_part") -> Tensor:
        with self._scope(name):
            return self._diag_part()

    def _diag_part(self) -> Tensor:
        return matrix_diag_part(self.to_dense())

    def add_to_tensor(self, x: Any, name: str = "add_to_tensor") -> Tensor:
        with self._scope(name):
            return self.to_dense() + self._convert(x)

    def adjoint(self, name: str = "adjoint") -> LinearOperator:
        if self.is_self_adjoint:
            return self
        return LinearOperatorAdjoint(self)

    H = property(adjoint)

    def inverse(self, name: str = "inverse") -> LinearOperator:
        if self.is_square is False or self.is_non_singular is False:
            raise ValueError("Cannot take the inverse of a non-square or singular operator.")
        return LinearOperatorInversion(self)

    def cholesky(self, name: str = "cholesky") -> LinearOperator:
        if not (self.is_self_adjoint and self.is_positive_definite):
            raise ValueError("Cholesky needs is_self_adjoint=True and is_positive_definite=True.")
        return LinearOperatorLowerTriangular(
            cholesky(self.to_dense()), is_non_singular=True, is_square=True
        )

    def _convert(self, x: Any) -> Tensor:
        return ops_lib.convert_to_tensor(x, dtype=self.dtype, name="x")

    def __repr__(self) -> str:
        return f"<tf.linalg.{type(self).__name__} '{self.name}' shape={self.shape}>"


def _float_tensor(value: Any, name: str, dtype: Any = None) -> Tensor:
    return ops_lib.convert_to_tensor(value, dtype=dtype, name=name)


class LinearOperatorFullMatrix(LinearOperator):
    """An operator holding its matrix ``[..., M, N]``."""

    def __init__(
        self,
        matrix: Any,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorFullMatrix",
    ):
        self._matrix = _float_tensor(matrix, "matrix")
        super().__init__(
            self._matrix.dtype,
            [self._matrix],
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
        )

    def _to_dense(self) -> Tensor:
        return self._matrix


class _BroadcastScaling(LinearOperator):
    """An operator that acts by broadcast multiplication: a product multiplies by
    ``_factor(adjoint)``, a solve divides by it."""

    def _factor(self, adjoint: bool) -> Tensor:
        raise NotImplementedError(type(self).__name__)

    def _conj_if(self, value: Tensor, adjoint: bool) -> Tensor:
        return math_ops.conj(value) if adjoint and self.dtype.is_complex else value

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._factor(adjoint) * _maybe_adjoint(x, adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return _maybe_adjoint(rhs, adjoint_arg) / self._factor(adjoint)


class LinearOperatorDiag(_BroadcastScaling):
    """A diagonal operator given by its diagonal ``[..., N]``: products and solves are
    elementwise."""

    def __init__(
        self,
        diag: Any,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name="LinearOperatorDiag",
    ):
        self._diag = _float_tensor(diag, "diag")
        super().__init__(
            self._diag.dtype,
            [self._diag],
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            True,
            name,
        )

    @property
    def diag(self) -> Tensor:
        return self._diag

    def _to_dense(self) -> Tensor:
        return matrix_diag(self._diag)

    def _factor(self, adjoint: bool) -> Tensor:
        return array_ops.expand_dims(self._conj_if(self._diag, adjoint), -1)  # scales rows

    def _determinant(self) -> Tensor:
        return math_ops.reduce_prod(self._diag, -1)

    def _log_abs_determinant(self) -> Tensor:
        return math_ops.reduce_sum(math_ops.log(math_ops.abs(self._diag)), -1)

    def _diag_part(self) -> Tensor:
        return self._diag


class LinearOperatorScaledIdentity(_BroadcastScaling):
    """``multiplier * I`` of ``num_rows`` rows (``multiplier`` may be a batch)."""

    def __init__(
        self,
        num_rows: Any,
        multiplier: Any,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        assert_proper_shapes=False,
        name="LinearOperatorScaledIdentity",
    ):
        self._num_rows = int(num_rows)
        self._multiplier = _float_tensor(multiplier, "multiplier")
        super().__init__(
            self._multiplier.dtype,
            [self._multiplier],
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            True,
            name,
        )

    @property
    def multiplier(self) -> Tensor:
        return self._multiplier

    def _factor(self, adjoint: bool) -> Tensor:
        m = self._conj_if(self._multiplier, adjoint)
        return array_ops.expand_dims(array_ops.expand_dims(m, -1), -1)  # scales matrices

    def _to_dense(self) -> Tensor:
        return self._factor(False) * eye(self._num_rows, dtype=self.dtype)

    def _determinant(self) -> Tensor:
        return math_ops.pow(self._multiplier, float(self._num_rows))

    def _log_abs_determinant(self) -> Tensor:
        return self._num_rows * math_ops.log(math_ops.abs(self._multiplier))

    def _diag_part(self) -> Tensor:
        m = array_ops.expand_dims(self._multiplier, -1)
        return m * array_ops.ones([self._num_rows], dtype=self.dtype)


class LinearOperatorIdentity(LinearOperator):
    """The identity of ``num_rows`` rows (optionally a batch of them): products return their
    argument, solves too."""

    def __init__(
        self,
        num_rows: Any,
        batch_shape: Any = None,
        dtype: Any = None,
        is_non_singular=True,
        is_self_adjoint=True,
        is_positive_definite=True,
        is_square=True,
        assert_proper_shapes=False,
        name="LinearOperatorIdentity",
    ):
        self._num_rows = int(num_rows)
        self._batch = [] if batch_shape is None else [int(d) for d in batch_shape]
        super().__init__(dtype or dtypes.float32, [], True, True, True, True, name)

    def _to_dense(self) -> Tensor:
        return eye(self._num_rows, batch_shape=self._batch or None, dtype=self.dtype)

    def _broadcast(self, x: Tensor) -> Tensor:
        if not self._batch:
            return x
        return x + array_ops.zeros(self._batch + [1, 1], dtype=self.dtype)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._broadcast(_maybe_adjoint(x, adjoint_arg))

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._matmul(rhs, adjoint, adjoint_arg)

    def _determinant(self) -> Tensor:
        return array_ops.ones(self._batch, dtype=self.dtype)

    def _log_abs_determinant(self) -> Tensor:
        return array_ops.zeros(self._batch, dtype=self.dtype)

    def _diag_part(self) -> Tensor:
        return array_ops.ones(self._batch + [self._num_rows], dtype=self.dtype)


class LinearOperatorZeros(LinearOperator):
    """The zero matrix ``[num_rows, num_columns]`` (optionally a batch of them)."""

    def __init__(
        self,
        num_rows: Any,
        num_columns: Any = None,
        batch_shape: Any = None,
        dtype: Any = None,
        is_non_singular=False,
        is_self_adjoint=True,
        is_positive_definite=False,
        is_square=True,
        assert_proper_shapes=False,
        name="LinearOperatorZeros",
    ):
        self._rows = int(num_rows)
        self._columns = self._rows if num_columns is None else int(num_columns)
        self._batch = [] if batch_shape is None else [int(d) for d in batch_shape]
        super().__init__(dtype or dtypes.float32, [], False, True, False, None, name)

    def _to_dense(self) -> Tensor:
        return array_ops.zeros(self._batch + [self._rows, self._columns], dtype=self.dtype)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)


class LinearOperatorLowerTriangular(LinearOperator):
    """A lower triangular operator: the lower triangle of ``tril`` (the rest is ignored);
    solves by substitution."""

    def __init__(
        self,
        tril: Any,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name="LinearOperatorLowerTriangular",
    ):
        self._tril = band_part(_float_tensor(tril, "tril"), -1, 0)
        super().__init__(
            self._tril.dtype,
            [self._tril],
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            True,
            name,
        )

    def _to_dense(self) -> Tensor:
        return self._tril

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        rhs = _maybe_adjoint(rhs, adjoint_arg)
        return matrix_triangular_solve(self._tril, rhs, lower=True, adjoint=adjoint)

    def _determinant(self) -> Tensor:
        return math_ops.reduce_prod(matrix_diag_part(self._tril), -1)

    def _log_abs_determinant(self) -> Tensor:
        return math_ops.reduce_sum(math_ops.log(math_ops.abs(matrix_diag_part(self._tril))), -1)


class OperatorCombination(LinearOperator):
    """The base of operators made of other ``operators`` (at least one): they share the first
    one's dtype and, unnamed, are named by joining their names with ``joiner``."""

    joiner = "_"

    def __init__(
        self,
        operators: list[LinearOperator],
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
    ):
        if not operators:
            raise ValueError("Expected a non-empty list of operators.")
        self._operators = list(operators)
        super().__init__(
            self._operators[0].dtype,
            [],
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name or self.joiner.join(op.name for op in self._operators),
        )

    @property
    def operators(self) -> list[LinearOperator]:
        return list(self._operators)


class LinearOperatorComposition(OperatorCombination):
    """The product ``A1 A2 ... An`` of ``operators``, applied right to left."""

    joiner = "_o_"

    def _to_dense(self) -> Tensor:
        dense = self._operators[-1].to_dense()
        for op in reversed(self._operators[:-1]):
            dense = op.matmul(dense)
        return dense

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        x = _maybe_adjoint(x, adjoint_arg)
        order = self._operators if adjoint else list(reversed(self._operators))
        for op in order:
            x = op.matmul(x, adjoint=adjoint)
        return x

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        x = _maybe_adjoint(rhs, adjoint_arg)
        order = list(reversed(self._operators)) if adjoint else self._operators
        for op in order:
            x = op.solve(x, adjoint=adjoint)
        return x


class LinearOperatorAdjoint(LinearOperator):
    """The adjoint (conjugate transpose) of ``operator``."""

    def __init__(
        self,
        operator: LinearOperator,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
    ):
        self._operator = operator
        super().__init__(
            operator.dtype,
            [],
            operator.is_non_singular,
            operator.is_self_adjoint,
            operator.is_positive_definite,
            operator.is_square,
            name or operator.name + "_adjoint",
        )

    @property
    def operator(self) -> LinearOperator:
        return self._operator

    def _to_dense(self) -> Tensor:
        return matrix_adjoint(self._operator.to_dense())

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def adjoint(self, name: str = "adjoint") -> LinearOperator:
        return self._operator


class LinearOperatorInversion(LinearOperator):
    """The inverse of ``operator``: its products are the operator's solves and the reverse."""

    def __init__(
        self,
        operator: LinearOperator,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
    ):
        self._operator = operator
        super().__init__(
            operator.dtype,
            [],
            True,
            operator.is_self_adjoint,
            operator.is_positive_definite,
            True,
            name or operator.name + "_inv",
        )

    @property
    def operator(self) -> LinearOperator:
        return self._operator

    def _to_dense(self) -> Tensor:
        return matrix_inverse(self._operator.to_dense())

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self) -> Tensor:
        return 1.0 / self._operator.determinant()

    def _log_abs_determinant(self) -> Tensor:
        return -self._operator.log_abs_determinant()

    def inverse(self, name: str = "inverse") -> LinearOperator:
        return self._operator
