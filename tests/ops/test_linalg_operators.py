"""tf.linalg.LinearOperator*: dense matrices and methods against NumPy/SciPy constructions."""

import numpy as np
import pytest
import scipy.linalg

import nbflow as tf

la = tf.linalg
RNG = np.random.default_rng(3)
A = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
B = RNG.standard_normal((2, 2)) + 2 * np.eye(2)
D = np.array([1.5, -2.0, 0.5])
V = np.array([1.0, 2.0, -1.0])


def setup_function():
    tf.reset_default_graph()


def run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


CASES = {
    "full": (lambda: la.LinearOperatorFullMatrix(A), A),
    "diag": (lambda: la.LinearOperatorDiag(D), np.diag(D)),
    "identity": (lambda: la.LinearOperatorIdentity(3, dtype=tf.float64), np.eye(3)),
    "scaled": (lambda: la.LinearOperatorScaledIdentity(3, np.float64(2.5)), 2.5 * np.eye(3)),
    "lower": (lambda: la.LinearOperatorLowerTriangular(A), np.tril(A)),
    "composition": (
        lambda: la.LinearOperatorComposition(
            [la.LinearOperatorFullMatrix(A), la.LinearOperatorDiag(D)]
        ),
        A @ np.diag(D),
    ),
    "adjoint": (lambda: la.LinearOperatorFullMatrix(A).adjoint(), A.T),
    "inverse": (lambda: la.LinearOperatorFullMatrix(A).inverse(), np.linalg.inv(A)),
    "kronecker": (
        lambda: la.LinearOperatorKronecker(
            [la.LinearOperatorFullMatrix(B), la.LinearOperatorFullMatrix(A)]
        ),
        np.kron(B, A),
    ),
    "block_diag": (
        lambda: la.LinearOperatorBlockDiag(
            [la.LinearOperatorFullMatrix(B), la.LinearOperatorFullMatrix(A)]
        ),
        scipy.linalg.block_diag(B, A),
    ),
    "low_rank": (
        lambda: la.LinearOperatorLowRankUpdate(
            la.LinearOperatorDiag(D + 4), V[:, None], diag_update=np.array([0.5])
        ),
        np.diag(D + 4) + 0.5 * np.outer(V, V),
    ),
    "householder": (
        lambda: la.LinearOperatorHouseholder(V),
        np.eye(3) - 2 * np.outer(V, V) / V.dot(V),
    ),
    "toeplitz": (
        lambda: la.LinearOperatorToeplitz(np.array([4.0, 1.0, 0.5]), np.array([9.0, -1.0, 2.0])),
        scipy.linalg.toeplitz([4.0, 1.0, 0.5], [4.0, -1.0, 2.0]),
    ),
    "circulant": (
        lambda: la.LinearOperatorCirculant(
            np.fft.fft([3.0, 1.0, 0.5]).real * 0 + np.fft.fft([3.0, 1.0, 1.0]).real,
            input_output_dtype=tf.float64,
        ),
        scipy.linalg.circulant([3.0, 1.0, 1.0]),
    ),
}


@pytest.mark.parametrize("key", list(CASES))
def test_operator_methods_agree_with_its_dense_matrix(key):
    make, want = CASES[key]
    op = make()
    x = RNG.standard_normal((want.shape[1], 2))
    fetched = run(
        [
            op.to_dense(),
            op.matmul(x),
            op.matmul(x, adjoint=True),
            op.matvec(x[:, 0]),
            op.solve(x),
            op.solve(x, adjoint=True),
            op.determinant(),
            op.log_abs_determinant(),
            op.trace(),
            op.diag_part(),
        ]
    )
    dense, mm, mm_adj, mv, solve, solve_adj, det, logdet, trace, diag = fetched
    np.testing.assert_allclose(dense, want, atol=1e-10)
    np.testing.assert_allclose(mm, want @ x, atol=1e-10)
    np.testing.assert_allclose(mm_adj, want.T @ x, atol=1e-10)
    np.testing.assert_allclose(mv, want @ x[:, 0], atol=1e-10)
    np.testing.assert_allclose(solve, np.linalg.solve(want, x), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(solve_adj, np.linalg.solve(want.T, x), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(det, np.linalg.det(want), rtol=1e-8)
    np.testing.assert_allclose(logdet, np.linalg.slogdet(want)[1], rtol=1e-8)
    np.testing.assert_allclose(trace, np.trace(want), rtol=1e-10)
    np.testing.assert_allclose(diag, np.diag(want), atol=1e-10)
    assert op.shape.as_list() == list(want.shape)


def test_circulant_2d_agrees_with_the_kronecker_dft_construction():
    column = RNG.standard_normal((2, 3))
    spectrum = np.fft.fft2(column)
    op = la.LinearOperatorCirculant2D(spectrum, input_output_dtype=tf.complex128)
    dense = run(op.to_dense())
    # Block circulant with circulant blocks: C[(i0,i1),(j0,j1)] = c[(i0-j0)%2, (i1-j1)%3].
    idx = [(i0, i1) for i0 in range(2) for i1 in range(3)]
    want = np.array([[column[(a0 - b0) % 2, (a1 - b1) % 3] for b0, b1 in idx] for a0, a1 in idx])
    np.testing.assert_allclose(dense, want, atol=1e-10)


def test_operator_products_with_operators_compose_and_cholesky_is_lower_triangular():
    spd = A @ A.T
    op = la.LinearOperatorFullMatrix(spd, is_self_adjoint=True, is_positive_definite=True)
    chol = op.cholesky()
    assert isinstance(chol, la.LinearOperatorLowerTriangular)
    np.testing.assert_allclose(run(chol.to_dense()), np.linalg.cholesky(spd), rtol=1e-10)
    composed = op.matmul(la.LinearOperatorDiag(D))
    assert isinstance(composed, la.LinearOperatorComposition)
    np.testing.assert_allclose(run(composed.to_dense()), spd @ np.diag(D), rtol=1e-10)
    with pytest.raises(ValueError, match="Cholesky"):
        la.LinearOperatorFullMatrix(A).cholesky()
