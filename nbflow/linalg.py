"""``tf.linalg``: TensorFlow 1.15's linear algebra names over nbflow's matrix ops.

The ops live in ``ops/linalg_ops.py`` (products, inverse, determinant, eye, trace),
``ops/linalg_structure.py`` (band parts, diagonals, cross) and ``ops/linalg_decompositions.py``
(Cholesky, QR, SVD, eigh, solves); this module only gives them their ``tf.linalg`` names.

    chol = tf.linalg.cholesky(a)
    x = tf.linalg.cholesky_solve(chol, b)

The ``LinearOperator`` classes are in ``linear_operator.py`` and
``linear_operator_structured.py``; composites in ``ops/linalg_composites.py``, ``expm``/``logm``/
``sqrtm`` in ``ops/matrix_functions.py``, ``lu`` in ``ops/lu_ops.py`` and the tridiagonal product
and solve in ``ops/linalg_tridiagonal.py``.
"""

from nbflow.framework import ops as ops_lib
from nbflow.linear_operator import (
    LinearOperator,
    LinearOperatorAdjoint,
    LinearOperatorComposition,
    LinearOperatorDiag,
    LinearOperatorFullMatrix,
    LinearOperatorIdentity,
    LinearOperatorInversion,
    LinearOperatorLowerTriangular,
    LinearOperatorScaledIdentity,
    LinearOperatorZeros,
)
from nbflow.linear_operator_structured import (
    LinearOperatorBlockDiag,
    LinearOperatorCirculant,
    LinearOperatorCirculant2D,
    LinearOperatorCirculant3D,
    LinearOperatorHouseholder,
    LinearOperatorKronecker,
    LinearOperatorLowRankUpdate,
    LinearOperatorToeplitz,
)
from nbflow.nn import l2_normalize
from nbflow.ops.clip_ops import global_norm
from nbflow.ops.einsum_ops import einsum, tensordot
from nbflow.ops.linalg_composites import (
    cholesky_solve,
    logdet,
    lstsq,
    matrix_rank,
    matvec,
    norm,
    pinv,
)
from nbflow.ops.linalg_decompositions import (
    adjoint,
    cholesky,
    eigh,
    eigvalsh,
    matrix_transpose,
    qr,
    slogdet,
    svd,
)
from nbflow.ops.linalg_decompositions import matrix_solve as solve
from nbflow.ops.linalg_decompositions import matrix_triangular_solve as triangular_solve
from nbflow.ops.lu_ops import lu
from nbflow.ops.matrix_functions import logm, sqrtm
from nbflow.ops.matrix_functions import matrix_exponential as expm
from nbflow.ops.linalg_ops import diag as tensor_diag
from nbflow.ops.linalg_ops import diag_part as tensor_diag_part
from nbflow.ops.linalg_ops import eye, matmul, trace
from nbflow.ops.linalg_ops import matrix_determinant as det
from nbflow.ops.linalg_ops import matrix_inverse as inv
from nbflow.ops.linalg_structure import band_part, cross
from nbflow.ops.linalg_structure import matrix_diag as diag
from nbflow.ops.linalg_structure import matrix_diag_part as diag_part
from nbflow.ops.linalg_structure import matrix_set_diag as set_diag
from nbflow.ops.linalg_tridiagonal import tridiagonal_matmul, tridiagonal_solve

transpose = matrix_transpose


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002 - TensorFlow's name
    """``(tensor / norm(tensor), norm(tensor))`` over ``axis`` (norms kept as size-1 axes)."""
    with ops_lib.name_scope(name, "normalize", [tensor]):
        magnitude = norm(tensor, ord=ord, axis=axis, keepdims=True)
        return tensor / magnitude, magnitude


__all__ = [
    "LinearOperator",
    "LinearOperatorAdjoint",
    "LinearOperatorBlockDiag",
    "LinearOperatorCirculant",
    "LinearOperatorCirculant2D",
    "LinearOperatorCirculant3D",
    "LinearOperatorComposition",
    "LinearOperatorDiag",
    "LinearOperatorFullMatrix",
    "LinearOperatorHouseholder",
    "LinearOperatorIdentity",
    "LinearOperatorInversion",
    "LinearOperatorKronecker",
    "LinearOperatorLowRankUpdate",
    "LinearOperatorLowerTriangular",
    "LinearOperatorScaledIdentity",
    "LinearOperatorToeplitz",
    "LinearOperatorZeros",
    "adjoint",
    "band_part",
    "cholesky",
    "cholesky_solve",
    "cross",
    "det",
    "diag",
    "diag_part",
    "eigh",
    "eigvalsh",
    "einsum",
    "expm",
    "eye",
    "global_norm",
    "inv",
    "l2_normalize",
    "logdet",
    "logm",
    "lu",
    "lstsq",
    "matmul",
    "matrix_rank",
    "matrix_transpose",
    "matvec",
    "norm",
    "normalize",
    "pinv",
    "qr",
    "set_diag",
    "slogdet",
    "solve",
    "sqrtm",
    "svd",
    "tensor_diag",
    "tensor_diag_part",
    "tensordot",
    "trace",
    "transpose",
    "triangular_solve",
    "tridiagonal_matmul",
    "tridiagonal_solve",
]
