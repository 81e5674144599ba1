"""tf.math's special functions, NaN-safe divisions, segment reductions and composites, by value
against SciPy/NumPy (the registry-wide tests check their shapes and gradients)."""

import numpy as np
import pytest
import scipy.special as sp

import nbflow as tf


def run(*fetches):
    with tf.Session() as sess:
        out = sess.run(list(fetches))
    return out[0] if len(out) == 1 else out


X = np.array([0.3, 1.0, 2.5, 7.0])
A = np.array([0.5, 1.0, 2.0, 4.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("build", "expect"),
    [
        (tf.lgamma, sp.gammaln),
        (tf.digamma, sp.digamma),
        (tf.erf, sp.erf),
        (tf.erfc, sp.erfc),
        (tf.math.bessel_i0, sp.i0),
        (tf.math.bessel_i1, sp.i1),
        (tf.math.bessel_i0e, sp.i0e),
        (tf.math.bessel_i1e, sp.i1e),
        (tf.asinh, np.arcsinh),
        (tf.sinh, np.sinh),
        (tf.cosh, np.cosh),
        (tf.atan, np.arctan),
    ],
    ids=lambda f: getattr(f, "__name__", ""),
)
def test_unary_special_function_matches_scipy(build, expect, dtype):
    got = run(build(X.astype(dtype)))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expect(X), rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_binary_special_functions_match_scipy():
    got = run(tf.igamma(A, X), tf.igammac(A, X), tf.zeta(A + 1.5, X), tf.polygamma(np.ones(4), X))
    expected = [sp.gammainc(A, X), sp.gammaincc(A, X), sp.zeta(A + 1.5, X), sp.polygamma(1, X)]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_betainc_and_lbeta_match_scipy():
    x = np.array([0.1, 0.5, 0.9, 0.3])
    np.testing.assert_allclose(run(tf.betainc(A, A[::-1], x)), sp.betainc(A, A[::-1], x))
    pairs = np.array([[1.0, 2.0], [0.5, 3.5]])
    np.testing.assert_allclose(run(tf.lbeta(pairs)), sp.betaln(pairs[:, 0], pairs[:, 1]))


def test_inverse_trigonometry_and_rint():
    v = np.array([-0.5, 0.0, 0.7])
    got = run(tf.asin(v), tf.acos(v), tf.atanh(v), tf.acosh(v + 2.0), tf.rint([-1.5, 0.5, 2.5]))
    np.testing.assert_allclose(got[0], np.arcsin(v))
    np.testing.assert_allclose(got[1], np.arccos(v))
    np.testing.assert_allclose(got[2], np.arctanh(v))
    np.testing.assert_allclose(got[3], np.arccosh(v + 2.0))
    assert got[4].tolist() == [-2.0, 0.0, 2.0]


def test_xlogy_xdivy_are_zero_where_x_is_zero_even_where_y_is_zero():
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 3.0, 4.0])
    got = run(tf.math.xlogy(x, y), tf.math.xdivy(x, y))
    assert got[0].tolist() == [0.0, 0.0, 2.0 * np.log(4.0)]
    assert got[1].tolist() == [0.0, 0.0, 0.5]


def test_div_no_nan_and_mul_no_nan_are_zero_where_y_is_zero():
    got = run(
        tf.div_no_nan([1.0, 6.0], [0.0, 3.0]),
        tf.math.multiply_no_nan([np.inf, np.nan, 2.0], [0.0, 0.0, 3.0]),
        tf.math.reciprocal_no_nan([0.0, 4.0]),
    )
    assert [g.tolist() for g in got] == [[0.0, 2.0], [0.0, 0.0, 6.0], [0.0, 0.25]]


def test_gradients_at_the_zeros_are_zero_as_in_tensorflow():
    x = tf.constant([0.0, 2.0])
    y = tf.constant([0.0, 4.0])
    gx, gy = tf.gradients(tf.reduce_sum(tf.math.xlogy(x, y)), [x, y])
    (gdy,) = tf.gradients(tf.reduce_sum(tf.div_no_nan(x, y)), [y])
    got = run(gx, gy, gdy)
    np.testing.assert_allclose(got[0], [0.0, np.log(4.0)])
    np.testing.assert_allclose(got[1], [0.0, 0.5])
    np.testing.assert_allclose(got[2], [0.0, -2.0 / 16.0])


def test_complex_parts_and_the_angle_of_real_numbers():
    z = np.array([1 + 2j, -3 - 0.5j])
    got = run(tf.real(z), tf.imag(z), tf.angle(z), tf.complex([1.0, 2.0], [3.0, 4.0]))
    np.testing.assert_allclose(got[0], z.real)
    np.testing.assert_allclose(got[1], z.imag)
    np.testing.assert_allclose(got[2], np.angle(z))
    assert got[3].dtype == np.complex64 and got[3].tolist() == [1 + 3j, 2 + 4j]
    real = np.array([-2.0, 0.0, 3.0])
    got = run(tf.real(real), tf.imag(real), tf.angle(real))
    assert [g.tolist() for g in got] == [real.tolist(), [0.0] * 3, [np.pi, 0.0, 0.0]]


def test_sorted_segment_reductions_give_zero_for_absent_ids_and_one_for_products():
    data = np.array([[1.0, -2.0], [3.0, 5.0], [4.0, 0.5], [-1.0, 2.0]])
    ids = [0, 0, 2, 2]
    got = run(
        tf.segment_max(data, ids),
        tf.segment_min(data, ids),
        tf.segment_mean(data, ids),
        tf.segment_prod(data, ids),
    )
    assert got[0].tolist() == [[3.0, 5.0], [0.0, 0.0], [4.0, 2.0]]
    assert got[1].tolist() == [[1.0, -2.0], [0.0, 0.0], [-1.0, 0.5]]
    assert got[2].tolist() == [[2.0, 1.5], [0.0, 0.0], [1.5, 1.25]]
    assert got[3].tolist() == [[3.0, -10.0], [1.0, 1.0], [-4.0, 1.0]]


def test_segment_mean_of_integers_truncates_toward_zero():
    assert run(tf.segment_mean([-3, -4, 5, 4], [0, 0, 1, 1])).tolist() == [-3, 4]


def test_sorted_segment_ids_must_increase():
    with pytest.raises(tf.errors.InvalidArgumentError, match="not increasing"):
        run(tf.segment_max([1.0, 2.0], [1, 0]))


def test_unsorted_segment_reductions_fill_empty_segments_with_the_identity():
    data = np.array([2.0, 7.0, -1.0, 4.0])
    ids = [2, 0, 2, -1]  # -1 drops the last row; segment 1 is empty
    got = run(
        tf.unsorted_segment_max(data, ids, 3),
        tf.unsorted_segment_min(data, ids, 3),
        tf.unsorted_segment_prod(data, ids, 3),
        tf.unsorted_segment_mean(data, ids, 3),
        tf.unsorted_segment_sqrt_n(data, ids, 3),
    )
    low, high = np.finfo(np.float64).min, np.finfo(np.float64).max
    assert got[0].tolist() == [7.0, low, 2.0]
    assert got[1].tolist() == [7.0, high, -1.0]
    assert got[2].tolist() == [7.0, 1.0, -2.0]
    assert got[3].tolist() == [7.0, 0.0, 0.5]
    np.testing.assert_allclose(got[4], [7.0, 0.0, 1.0 / np.sqrt(2.0)])


def test_unsorted_segment_mean_of_rows_broadcasts_the_sizes():
    data = np.arange(6.0).reshape(3, 2)
    got = run(tf.unsorted_segment_mean(data, [1, 1, 0], 2))
    assert got.tolist() == [[4.0, 5.0], [1.0, 2.0]]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([2.0, 3.0, 5.0], [15.0, 10.0, 6.0]),  # no zero: prod / x
        ([2.0, 0.0, 5.0], [0.0, 10.0, 0.0]),  # one zero: the product of the others there
        ([0.0, 0.0, 5.0], [0.0, 0.0, 0.0]),  # two zeros: zero everywhere
    ],
)
def test_unsorted_segment_prod_gradient_handles_zeros(values, expected):
    x = tf.constant(values)
    (grad,) = tf.gradients(tf.reduce_sum(tf.unsorted_segment_prod(x, [0, 0, 0], 1)), [x])
    np.testing.assert_allclose(run(grad), expected)


def test_segment_max_gradient_is_shared_between_ties():
    x = tf.constant([1.0, 3.0, 3.0, 2.0])
    (grad,) = tf.gradients(tf.reduce_sum(tf.segment_max(x, [0, 0, 0, 1])), [x])
    assert run(grad).tolist() == [0.0, 0.5, 0.5, 1.0]


def test_variance_std_and_euclidean_norm_match_numpy():
    x = np.random.default_rng(0).standard_normal((3, 4))
    got = run(
        tf.math.reduce_variance(x, axis=1),
        tf.math.reduce_std(x, axis=0, keepdims=True),
        tf.math.reduce_euclidean_norm(x),
        tf.math.reduce_euclidean_norm([3, 4]),
    )
    np.testing.assert_allclose(got[0], x.var(axis=1))
    np.testing.assert_allclose(got[1], x.std(axis=0, keepdims=True))
    np.testing.assert_allclose(got[2], np.sqrt((x**2).sum()))
    assert got[3] == 5 and got[3].dtype == np.int32


@pytest.mark.parametrize(("exclusive", "reverse"), [(False, False), (True, False), (False, True)])
def test_cumulative_logsumexp_matches_numpy_without_overflow(exclusive, reverse):
    x = np.array([[1000.0, 1001.0, 999.0], [0.5, -2.0, 3.0]])
    got = run(tf.math.cumulative_logsumexp(x, axis=1, exclusive=exclusive, reverse=reverse))
    seq = x[:, ::-1] if reverse else x
    expect = np.logaddexp.accumulate(seq, axis=1)
    if exclusive:
        expect = np.concatenate([np.full((2, 1), -np.inf), expect[:, :-1]], axis=1)
    np.testing.assert_allclose(got, expect[:, ::-1] if reverse else expect)


def test_polyval_matches_numpy():
    x = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(run(tf.math.polyval([2.0, -1.0, 3.0], x)), np.polyval([2, -1, 3], x))
    assert run(tf.math.polyval([], x)).tolist() == [0.0, 0.0, 0.0]


def test_confusion_matrix_counts_pairs_with_weights_and_num_classes():
    labels, predictions = [0, 1, 1, 2], [0, 1, 2, 2]
    weighted = tf.confusion_matrix(
        labels, predictions, num_classes=4, weights=[1.0, 2.0, 0.5, 3.0], dtype=tf.float32
    )
    got = run(tf.confusion_matrix(labels, predictions), weighted)
    assert got[0].tolist() == [[1, 0, 0], [0, 1, 1], [0, 0, 1]]
    assert got[1].shape == (4, 4) and got[1][1].tolist() == [0.0, 2.0, 0.5, 0.0]


def test_monotonicity_checks():
    got = run(
        tf.is_non_decreasing([1, 2, 2]),
        tf.is_strictly_increasing([1, 2, 2]),
        tf.is_strictly_increasing([[1, 2], [3, 4]]),
        tf.is_non_decreasing(tf.zeros([0])),
    )
    assert [bool(g) for g in got] == [True, False, True, True]


def test_truncating_division_rounds_toward_zero():
    x, y = np.array([7, -7, 7, -7]), np.array([5, 5, -5, -5])
    got = run(tf.truncatediv(x, y), tf.truncatemod(x, y), tf.truncatediv([-7.5], [2.0]))
    assert got[0].tolist() == [1, -1, -1, 1]
    assert got[1].tolist() == np.fmod(x, y).tolist()
    assert got[2].tolist() == [-3.0]


def test_older_names_arg_max_and_casts():
    got = run(
        tf.arg_max([[1, 3], [4, 2]], 1),
        tf.arg_min([[1, 3], [4, 2]], 0),
        tf.saturate_cast([300.0, -5.0, 7.9], tf.uint8),
        tf.to_complex64([1.0]),
    )
    assert got[0].tolist() == [1, 0] and got[0].dtype == np.int64
    assert got[1].tolist() == [0, 1]
    assert got[2].tolist() == [255, 0, 7]
    assert got[3].dtype == np.complex64


def test_tf_math_names_the_top_level_and_nn_functions():
    assert tf.math.log is tf.log and tf.math.lgamma is tf.lgamma
    assert tf.math.softplus is tf.nn.softplus
    assert tf.math.divide_no_nan is tf.div_no_nan
