"""``tf.linalg``: TensorFlow 1.15's linear algebra names over nbflow's matrix ops.

The ops live in ``ops/linalg_ops.py`` (products, inverse, determinant, eye, trace),
``ops/linalg_structure.py`` (band parts, diagonals, cross) and ``ops/linalg_decompositions.py``
(Cholesky, QR, SVD, eigh, solves, expm); this module only gives them their ``tf.linalg`` names.

    chol = tf.linalg.cholesky(a)
    x = tf.linalg.cholesky_solve(chol, b)

Not here: the ``LinearOperator`` classes, ``lu`` and its solvers, ``sqrtm``, the tridiagonal
solvers and ``eigh_tridiagonal``.
"""

from nbflow.framework import ops as ops_lib
from nbflow.nn import l2_normalize
from nbflow.ops.clip_ops import global_norm
from nbflow.ops.einsum_ops import einsum, tensordot
from nbflow.ops.linalg_decompositions import (
    adjoint,
    cholesky,
    cholesky_solve,
    eigh,
    eigvalsh,
    logdet,
    logm,
    lstsq,
    matrix_rank,
    matrix_transpose,
    matvec,
    norm,
    pinv,
    qr,
    slogdet,
    svd,
)
from nbflow.ops.linalg_decompositions import matrix_exponential as expm
from nbflow.ops.linalg_decompositions import matrix_solve as solve
from nbflow.ops.linalg_decompositions import matrix_triangular_solve as triangular_solve
from nbflow.ops.linalg_ops import diag as tensor_diag
from nbflow.ops.linalg_ops import diag_part as tensor_diag_part
from nbflow.ops.linalg_ops import eye, matmul, trace
from nbflow.ops.linalg_ops import matrix_determinant as det
from nbflow.ops.linalg_ops import matrix_inverse as inv
from nbflow.ops.linalg_structure import band_part, cross
from nbflow.ops.linalg_structure import matrix_diag as diag
from nbflow.ops.linalg_structure import matrix_diag_part as diag_part
from nbflow.ops.linalg_structure import matrix_set_diag as set_diag

transpose = matrix_transpose


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002 - TensorFlow's name
    """``(tensor / norm(tensor), norm(tensor))`` over ``axis`` (norms kept as size-1 axes)."""
    with ops_lib.name_scope(name, "normalize", [tensor]):
        magnitude = norm(tensor, ord=ord, axis=axis, keepdims=True)
        return tensor / magnitude, magnitude


__all__ = [
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
    "svd",
    "tensor_diag",
    "tensor_diag_part",
    "tensordot",
    "trace",
    "transpose",
    "triangular_solve",
]
