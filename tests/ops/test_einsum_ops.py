"""einsum and tensordot against NumPy: equations, implicit outputs, ellipses, shapes, gradients."""

import numpy as np
import pytest

import nbflow as tf
from tests.gradient_check import check_op_gradient
from nbflow.framework.op_def import Sample, get_op_def


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def numpy_einsum(equation, *arrays):
    """np.einsum, also where ``...`` axes are summed away (NumPy refuses that)."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    if arrow and "..." in lhs and "..." not in rhs:
        out = np.einsum(f"{lhs}->...{rhs}", *arrays)
        return out.sum(axis=tuple(range(out.ndim - len(rhs))))
    return np.einsum(equation, *arrays)


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("ij,jk", [(2, 3), (3, 4)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
        ("ij->ji", [(3, 4)]),
        ("ji", [(3, 4)]),
        ("ii->i", [(3, 3)]),
        ("ii", [(3, 3)]),
        ("i,i", [(3,), (3,)]),
        ("...j,jk->...k", [(2, 3, 4), (4, 5)]),
        ("...ij,...jk", [(5, 2, 3), (1, 3, 4)]),
        ("a...->a", [(2, 3, 4)]),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        ("b i , b i -> b", [(2, 3), (2, 3)]),
    ],
)
def test_einsum_matches_numpy(rng, equation, shapes):
    arrays = [rng.standard_normal(s) for s in shapes]
    y = tf.einsum(equation, *arrays)
    expected = numpy_einsum(equation, *arrays)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(run(y), expected)


def test_einsum_records_the_explicit_equation():
    y = tf.einsum("ba,b", tf.zeros([2, 3]), tf.zeros([2]))
    assert y.op.get_attr("equation") == "ba,b->a"


def test_einsum_rejects_mismatched_dimensions_at_construction():
    with pytest.raises(ValueError, match="subscript 'j'"):
        tf.einsum("ij,jk->ik", tf.zeros([2, 3]), tf.zeros([4, 5]))


def test_einsum_rejects_unknown_output_subscript():
    with pytest.raises(ValueError, match="appears in no operand"):
        tf.einsum("ij->k", tf.zeros([2, 3]))


def test_einsum_with_unknown_batch_dimension_runs():
    x = tf.placeholder(tf.float64, [None, 3])
    y = tf.einsum("bi,ij->bj", x, np.ones((3, 2)))
    assert y.shape.as_list() == [None, 2]
    assert run(y, {x: np.ones((4, 3))}).shape == (4, 2)


def test_einsum_gradient_of_a_diagonal_is_reported():
    x = tf.constant(np.eye(3))
    with pytest.raises(LookupError, match="diagonal"):
        tf.gradients(tf.einsum("ii->i", x), [x])


@pytest.mark.parametrize(
    "equation, shapes",
    [("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("...ij,...jk->...ik", [(5, 2, 3), (1, 3, 4)])],
)
def test_einsum_gradient_matches_finite_differences(equation, shapes):
    case = Sample(inputs=list(shapes), equation=equation)
    case.opdef = get_op_def("Einsum")
    check_op_gradient(case)


@pytest.mark.parametrize(
    "a_shape, b_shape, axes",
    [
        ((2, 3), (3, 4), 1),
        ((2, 3, 4), (3, 4, 5), 2),
        ((2, 3), (4, 5), 0),
        ((2, 3, 4), (4, 3, 5), [[1, 2], [1, 0]]),
        ((3, 2), (3, 4), [0, 0]),
        ((2, 3), (3, 4), [[-1], [0]]),
    ],
)
def test_tensordot_matches_numpy(rng, a_shape, b_shape, axes):
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    y = tf.tensordot(a, b, axes)
    expected = np.tensordot(a, b, axes)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(run(y), expected)


def test_tensordot_gradient_is_matmul_gradient(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    at, bt = tf.constant(a), tf.constant(b)
    ga, gb = tf.gradients(tf.reduce_sum(tf.tensordot(at, bt, 1)), [at, bt])
    got_a, got_b = run([ga, gb])
    np.testing.assert_allclose(got_a, np.ones((2, 4)) @ b.T)
    np.testing.assert_allclose(got_b, a.T @ np.ones((2, 4)))


def test_tensordot_rejects_out_of_range_axes():
    with pytest.raises(ValueError, match="out of range"):
        tf.tensordot(tf.zeros([2, 3]), tf.zeros([3, 4]), [[2], [0]])
