"""Math ops against NumPy: values, dtypes, static shapes, TF1 quirks, operators and gradients."""

import numpy as np
import pytest

import nbflow as tf
from nbflow.framework.op_def import cpu_context, get_op_def
from nbflow.gradients import gradients

SHAPE_PAIRS = [((2, 3), (2, 3)), ((2, 1, 3), (4, 1)), ((0, 3), (3,)), ((), (3,)), ((3, 1), ())]


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def values(rng, shape, dtype=np.float64, low=-3.0, high=3.0):
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(1, 6, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


# --- binary ops ----------------------------------------------------------------------------------
BINARY = [
    (tf.add, np.add, np.float64),
    (tf.subtract, np.subtract, np.float64),
    (tf.multiply, np.multiply, np.int32),
    (tf.realdiv, np.true_divide, np.float32),
    (tf.floordiv, np.floor_divide, np.int64),
    (tf.floormod, np.mod, np.float64),
    (tf.mod, np.mod, np.int32),
    (tf.pow, np.power, np.float64),
    (tf.maximum, np.maximum, np.int32),
    (tf.minimum, np.minimum, np.float64),
    (tf.squared_difference, lambda x, y: (x - y) ** 2, np.float64),
    (tf.atan2, np.arctan2, np.float64),
    (tf.equal, np.equal, np.int32),
    (tf.not_equal, np.not_equal, np.float64),
    (tf.less, np.less, np.float64),
    (tf.less_equal, np.less_equal, np.int64),
    (tf.greater, np.greater, np.float32),
    (tf.greater_equal, np.greater_equal, np.float64),
    (tf.logical_and, np.logical_and, np.bool_),
    (tf.logical_or, np.logical_or, np.bool_),
    (tf.logical_xor, np.logical_xor, np.bool_),
]


@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize(
    "builder, reference, dtype", BINARY, ids=lambda v: getattr(v, "__name__", "")
)
def test_binary_op_matches_numpy_with_broadcasting(builder, reference, dtype, shapes, rng):
    x = values(rng, shapes[0], dtype, low=0.5)
    y = values(rng, shapes[1], dtype, low=0.5)
    out = builder(tf.constant(x), tf.constant(y))
    expected = reference(x, y)
    assert out.shape.as_list() == list(expected.shape)
    result = run(out)
    assert result.dtype == expected.dtype
    np.testing.assert_allclose(result, expected, rtol=1e-6)


def test_int32_true_division_gives_float64():
    a, b = tf.constant([7, -7], tf.int32), tf.constant([2, 2], tf.int32)
    out = a / b
    assert out.dtype == tf.float64
    np.testing.assert_array_equal(run(out), [3.5, -3.5])
    assert tf.truediv(tf.constant([1], tf.int16), tf.constant([2], tf.int16)).dtype == tf.float32


def test_integer_floor_division_and_mod_follow_python():
    x = tf.constant([7, -7, 7, -7])
    y = tf.constant([2, 2, -2, -2])
    floor, mod = run([x // y, x % y])
    np.testing.assert_array_equal(floor, [3, -4, -4, 3])
    np.testing.assert_array_equal(mod, [1, 1, -1, -1])


def test_div_floors_integers_and_divides_floats():
    assert run(tf.div(tf.constant(-7), tf.constant(2))) == -4
    assert run(tf.div(tf.constant(-7.0), tf.constant(2.0))) == -3.5
    assert tf.divide(tf.constant(1), tf.constant(2)).dtype == tf.float64


def test_mismatched_dtypes_raise_type_error_at_construction():
    with pytest.raises(TypeError, match="float32"):
        tf.add(tf.constant([1.0]), tf.constant([1], tf.int32))
    with pytest.raises(TypeError):
        tf.constant([1, 2]) + 1.5  # a Python float cannot become int32
    with pytest.raises(TypeError):
        tf.matmul(tf.ones([2, 2]), tf.ones([2, 2], tf.float64))


def test_ops_reject_dtypes_tensorflow_rejects():
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.exp(tf.constant([1, 2]))
    with pytest.raises(TypeError):
        tf.logical_and(tf.constant([1]), tf.constant([0]))
    with pytest.raises(TypeError):
        tf.reduce_sum(tf.constant([True, False]))


def test_incompatible_shapes_raise_value_error_at_construction():
    with pytest.raises(ValueError):
        tf.matmul(tf.ones([2, 3]), tf.ones([4, 5]))
    with pytest.raises(ValueError):
        tf.add(tf.ones([2, 3]), tf.ones([4]))
    with pytest.raises(ValueError):
        tf.reduce_sum(tf.ones([2, 3]), axis=2)


def test_integer_power_to_negative_exponent_is_an_op_error():
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.pow(tf.constant([2]), tf.constant([-1])))


def test_broadcast_static_shape_with_unknown_dims():
    x = tf.placeholder(tf.float32, [None, 1, 3])
    y = tf.placeholder(tf.float32, [4, None])
    assert (x + y).shape.as_list() == [None, 4, 3]
    assert (x + tf.placeholder(tf.float32)).shape.ndims is None


# --- unary ops -------------------------------------------------------------------------------------
UNARY = [
    (tf.negative, np.negative, "any"),
    (tf.abs, np.abs, "any"),
    (tf.sign, np.sign, "any"),
    (tf.exp, np.exp, "any"),
    (tf.expm1, np.expm1, "any"),
    (tf.log, np.log, "positive"),
    (tf.log1p, np.log1p, "positive"),
    (tf.sqrt, np.sqrt, "positive"),
    (tf.rsqrt, lambda x: 1 / np.sqrt(x), "positive"),
    (tf.square, np.square, "any"),
    (tf.reciprocal, np.reciprocal, "positive"),
    (tf.sin, np.sin, "any"),
    (tf.cos, np.cos, "any"),
    (tf.tan, np.tan, "any"),
    (tf.tanh, np.tanh, "any"),
    (tf.sigmoid, lambda x: 1 / (1 + np.exp(-x)), "any"),
    (tf.log_sigmoid, lambda x: -np.log1p(np.exp(-x)), "any"),
    (tf.floor, np.floor, "any"),
    (tf.ceil, np.ceil, "any"),
    (tf.round, np.round, "any"),
    (tf.is_nan, np.isnan, "any"),
    (tf.is_inf, np.isinf, "any"),
    (tf.is_finite, np.isfinite, "any"),
]


@pytest.mark.parametrize("shape", [(2, 3), (), (0,), (2, 0, 3)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
@pytest.mark.parametrize(
    "builder, reference, domain", UNARY, ids=lambda v: getattr(v, "__name__", "")
)
def test_unary_op_matches_numpy(builder, reference, domain, dtype, shape, rng):
    x = values(rng, shape, dtype, low=0.1 if domain == "positive" else -3.0)
    out = builder(tf.constant(x))
    expected = np.asarray(reference(x))
    assert out.shape.as_list() == list(shape)
    result = run(out)
    assert result.dtype == expected.dtype
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-7)


def test_round_is_bankers_rounding_and_keeps_integers():
    x = tf.constant([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6])
    np.testing.assert_array_equal(run(tf.round(x)), [-2, -2, -0, 0, 2, 2, 3])
    ints = tf.constant([1, 2])
    assert tf.round(ints) is ints


def test_sigmoid_saturates_without_overflow():
    with np.errstate(all="raise"):
        out = run(tf.sigmoid(tf.constant([-1000.0, 0.0, 1000.0])))
    np.testing.assert_allclose(out, [0.0, 0.5, 1.0])


def test_logical_not_and_nan_predicates():
    x = tf.constant([1.0, np.nan, np.inf, -np.inf])
    nan, inf, finite = run([tf.is_nan(x), tf.is_inf(x), tf.is_finite(x)])
    np.testing.assert_array_equal(nan, [False, True, False, False])
    np.testing.assert_array_equal(inf, [False, False, True, True])
    np.testing.assert_array_equal(finite, [True, False, False, False])
    np.testing.assert_array_equal(run(tf.logical_not(tf.constant([True, False]))), [False, True])


# --- casts ---------------------------------------------------------------------------------------
def test_cast_truncates_floats_and_handles_bool():
    x = tf.constant([1.9, -1.9, 0.0, 0.25])
    ints, bools = run([tf.cast(x, tf.int32), tf.cast(x, tf.bool)])
    np.testing.assert_array_equal(ints, [1, -1, 0, 0])
    np.testing.assert_array_equal(bools, [True, True, False, True])
    back = run(tf.cast(tf.constant([True, False]), tf.float32))
    assert back.dtype == np.float32 and back.tolist() == [1.0, 0.0]


def test_cast_to_same_dtype_adds_no_op_and_helpers_cast():
    x = tf.constant([1.0])
    assert tf.cast(x, tf.float32) is x
    assert tf.to_float(tf.constant([1])).dtype == tf.float32
    assert tf.to_double(x).dtype == tf.float64
    assert tf.to_int32(x).dtype == tf.int32
    assert tf.to_int64(x).dtype == tf.int64
    assert tf.cast([1, 2], tf.float64).dtype == tf.float64


def test_add_n_and_accumulate_n(rng):
    xs = [values(rng, (2, 3)) for _ in range(3)]
    np.testing.assert_allclose(run(tf.add_n(xs)), sum(xs))
    np.testing.assert_allclose(run(tf.accumulate_n(xs)), sum(xs))
    with pytest.raises(ValueError):
        tf.add_n([])


# --- reductions ----------------------------------------------------------------------------------
REDUCTIONS = [
    (tf.reduce_sum, np.sum),
    (tf.reduce_mean, np.mean),
    (tf.reduce_max, np.max),
    (tf.reduce_min, np.min),
    (tf.reduce_prod, np.prod),
]
AXES = [None, 0, 1, -1, [0, 2], [-1, 0], (1,), []]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("builder, reference", REDUCTIONS, ids=lambda v: v.__name__)
def test_reduction_matches_numpy_for_every_axis_form(builder, reference, axis, keepdims, rng):
    x = values(rng, (2, 3, 4))
    np_axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    expected = reference(x, axis=np_axis, keepdims=keepdims)
    out = builder(tf.constant(x), axis=axis, keepdims=keepdims)
    assert out.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(run(out), expected, rtol=1e-10)


def test_reduction_axis_may_be_a_tensor_known_only_at_run_time(rng):
    x = values(rng, (2, 3, 4))
    axis = tf.placeholder(tf.int32, [None])
    out = tf.reduce_sum(tf.constant(x), axis)
    assert out.shape.ndims is None
    kept = tf.reduce_max(tf.constant(x), axis, keepdims=True)
    assert kept.shape.as_list() == [None, None, None]
    got, got_kept = run([out, kept], {axis: [0, -1]})
    np.testing.assert_allclose(got, x.sum(axis=(0, 2)))
    np.testing.assert_allclose(got_kept, x.max(axis=(0, 2), keepdims=True))
    const_axis = tf.constant([1])
    assert tf.reduce_sum(tf.constant(x), const_axis).shape.as_list() == [2, 4]


def test_feeding_a_constant_axis_overrides_the_baked_axis(rng):
    x = values(rng, (2, 3))
    axis = tf.constant(0)
    out = tf.reduce_sum(tf.constant(x), axis)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(out), x.sum(0))
        np.testing.assert_allclose(sess.run(out, {axis: 1}), x.sum(1))
        np.testing.assert_allclose(sess.run(out), x.sum(0))


def test_tf1_aliases_reduction_indices_and_keep_dims(rng):
    x = values(rng, (2, 3))
    out = tf.reduce_sum(x, reduction_indices=[1], keep_dims=True)
    assert out.shape.as_list() == [2, 1]
    np.testing.assert_allclose(run(out), x.sum(1, keepdims=True))
    with pytest.raises(ValueError):
        tf.reduce_sum(x, axis=0, reduction_indices=0)


def test_reduction_of_unknown_rank_input_over_all_axes(rng):
    x = tf.placeholder(tf.float64)
    out = tf.reduce_sum(x)
    value = values(rng, (2, 3))
    np.testing.assert_allclose(run(out, {x: value}), value.sum())


def test_integer_reduce_mean_truncates_toward_zero():
    x = tf.constant([[1, 2], [-3, -4]])
    out = tf.reduce_mean(x, axis=1)
    assert out.dtype == tf.int32
    np.testing.assert_array_equal(run(out), [1, -3])
    assert run(tf.reduce_mean(tf.constant([3, 4], tf.int64))) == 3


def test_integer_sum_and_prod_keep_the_input_dtype():
    x = tf.constant([[1, 2], [3, 4]])
    total, prod = run([tf.reduce_sum(x), tf.reduce_prod(x, 0)])
    assert total.dtype == np.int32 and total == 10
    assert prod.dtype == np.int32 and prod.tolist() == [3, 8]


def test_reductions_over_empty_tensors():
    x = tf.zeros([0, 3], tf.float32)
    total, biggest, smallest = run([tf.reduce_sum(x, 0), tf.reduce_max(x, 0), tf.reduce_min(x)])
    np.testing.assert_array_equal(total, [0, 0, 0])
    np.testing.assert_array_equal(biggest, [-np.inf] * 3)
    assert smallest == np.inf


def test_reduce_any_and_all(rng):
    x = values(rng, (3, 4), np.bool_)
    got = run([tf.reduce_any(x, 1), tf.reduce_all(x, 0, keepdims=True), tf.reduce_any(x)])
    np.testing.assert_array_equal(got[0], x.any(1))
    np.testing.assert_array_equal(got[1], x.all(0, keepdims=True))
    assert got[2] == x.any()


def test_reduce_logsumexp_is_stable(rng):
    x = values(rng, (3, 4)) * 400
    expected = np.log(np.sum(np.exp(x - x.max(1, keepdims=True)), 1)) + x.max(1)
    np.testing.assert_allclose(run(tf.reduce_logsumexp(x, axis=1)), expected)
    kept = tf.reduce_logsumexp(x, axis=1, keepdims=True)
    assert kept.shape.as_list() == [3, 1]
    ninf = run(tf.reduce_logsumexp(tf.constant([[-np.inf, -np.inf], [0.0, 0.0]]), 1))
    np.testing.assert_allclose(ninf, [-np.inf, np.log(2)])


def test_count_nonzero():
    x = tf.constant([[0, 1, 2], [0, 0, 3]])
    out = tf.count_nonzero(x, axis=1)
    assert out.dtype == tf.int64
    np.testing.assert_array_equal(run(out), [2, 1])


def test_argmax_and_argmin(rng):
    x = values(rng, (3, 4))
    a, b, c = run([tf.argmax(x), tf.argmin(x, axis=1), tf.argmax(x, -1, output_type=tf.int32)])
    np.testing.assert_array_equal(a, x.argmax(0))
    np.testing.assert_array_equal(b, x.argmin(1))
    assert a.dtype == np.int64 and c.dtype == np.int32
    assert tf.argmax(x, dimension=1).shape.as_list() == [3]
    assert tf.argmax(x, tf.placeholder(tf.int32, [])).shape.as_list() == [None]


# --- matrices ------------------------------------------------------------------------------------
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_with_transposes(ta, tb, rng):
    a = values(rng, (3, 2) if ta else (2, 3))
    b = values(rng, (4, 3) if tb else (3, 4))
    out = tf.matmul(a, b, transpose_a=ta, transpose_b=tb)
    assert out.op.type == "MatMul" and out.shape.as_list() == [2, 4]
    np.testing.assert_allclose(run(out), (a.T if ta else a) @ (b.T if tb else b))


@pytest.mark.parametrize(
    "sa, sb", [((2, 2, 3), (2, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)), ((2, 3), (4, 3, 2))], ids=str
)
def test_batch_matmul_broadcasts_batch_axes(sa, sb, rng):
    a, b = values(rng, sa), values(rng, sb)
    out = tf.matmul(a, b)
    expected = np.matmul(a, b)
    assert out.op.type == "BatchMatMulV2"
    assert out.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(run(out), expected)
    adj = tf.matmul(np.swapaxes(a, -1, -2), b, adjoint_a=True)
    np.testing.assert_allclose(run(adj), expected)


def test_matrix_inverse_determinant_diag_and_trace(rng):
    m = values(rng, (2, 3, 3)) + 4 * np.eye(3)
    inv, det, inv_adj = run(
        [tf.matrix_inverse(m), tf.matrix_determinant(m), tf.matrix_inverse(m, adjoint=True)]
    )
    np.testing.assert_allclose(inv, np.linalg.inv(m))
    np.testing.assert_allclose(det, np.linalg.det(m))
    np.testing.assert_allclose(inv_adj, np.linalg.inv(np.swapaxes(m, -1, -2)))
    d = values(rng, (2, 3))
    full = run(tf.diag(d))
    assert full.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(run(tf.diag_part(full)), d)
    np.testing.assert_allclose(run(tf.trace(m)), np.trace(m, axis1=-2, axis2=-1))
    with pytest.raises(ValueError):
        tf.matrix_inverse(tf.ones([2, 3]))


def test_singular_matrix_inverse_is_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.matrix_inverse(tf.zeros([2, 2])))


def test_eye_static_batched_and_dynamic():
    np.testing.assert_array_equal(run(tf.eye(2, 3)), np.eye(2, 3, dtype=np.float32))
    assert run(tf.eye(2, batch_shape=[4])).shape == (4, 2, 2)
    n = tf.placeholder(tf.int32, [])
    np.testing.assert_array_equal(run(tf.eye(n, dtype=tf.int32), {n: 3}), np.eye(3))


# --- operators -----------------------------------------------------------------------------------
def test_tensor_operators_and_reflections(rng):
    x = values(rng, (2, 3))
    t = tf.constant(x)
    got = run(
        [t + 1, 1 + t, t - 1, 1 - t, t * 2, 2 * t, t / 2, 2 / t, t // 2, 2 // t, t % 2, 2 % t]
        + [t**2, 2**t, -t, abs(t), t @ np.ones((3, 2)), np.ones((4, 2)) @ t]
    )
    expected = [x + 1, 1 + x, x - 1, 1 - x, x * 2, 2 * x, x / 2, 2 / x, x // 2, 2 // x]
    expected += [x % 2, 2 % x, x**2, 2**x, -x, np.abs(x), x @ np.ones((3, 2))]
    expected += [np.ones((4, 2)) @ x]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e)


def test_comparison_and_logical_operators(rng):
    x = values(rng, (5,))
    t = tf.constant(x)
    lt, le, gt, ge, rgt = run([t < 0, t <= 0, t > 0, t >= 0, 0 > t])
    np.testing.assert_array_equal(lt, x < 0)
    np.testing.assert_array_equal(le, x <= 0)
    np.testing.assert_array_equal(gt, x > 0)
    np.testing.assert_array_equal(ge, x >= 0)
    np.testing.assert_array_equal(rgt, 0 > x)
    p, q = tf.constant([True, True, False]), tf.constant([True, False, False])
    a, o, xo, n, ra = run([p & q, p | q, p ^ q, ~p, True & q])
    assert a.tolist() == [True, False, False] and o.tolist() == [True, True, False]
    assert xo.tolist() == [False, True, False] and n.tolist() == [False, False, True]
    assert ra.tolist() == [True, False, False]


def test_equality_operator_stays_identity_based():
    a, b = tf.constant(1), tf.constant(1)
    assert (a == a) is True and (a == b) is False and (a != b) is True
    assert len({a, b}) == 2


def test_operator_ops_are_named_as_in_tensorflow():
    a = tf.constant(1.0)
    assert (a + a).op.name == "add"
    assert (a + a).op.name == "add_1"
    assert (a * a).op.name == "mul"
    assert (a / a).op.name == "truediv"
    assert (a < a).op.name == "Less"
    assert tf.add(a, a).op.name == "Add_2"  # uniquified case-insensitively against "add"


def test_python_values_take_the_tensor_dtype():
    t = tf.constant([1.0, 2.0], tf.float64)
    assert (t + 1).dtype == tf.float64
    assert (1 + t).dtype == tf.float64
    assert (tf.constant([1, 2], tf.int64) * 3).dtype == tf.int64


# --- gradients -----------------------------------------------------------------------------------
def numeric_gradient(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        plus, minus = x.copy(), x.copy()
        plus[idx] += eps
        minus[idx] -= eps
        grad[idx] = (f(plus) - f(minus)) / (2 * eps)
    return grad


def check_gradient(build, x, feed_shape="static"):
    """d sum(build(x) * w) / dx by tf.gradients against central differences; the input is a
    placeholder of shape ``feed_shape`` ("static": x's shape; None: unknown rank)."""
    w = np.random.default_rng(3).standard_normal(np.shape(run(build(tf.constant(x)))))
    tf.reset_default_graph()
    p = tf.placeholder(tf.float64, x.shape if feed_shape == "static" else feed_shape)
    y = tf.reduce_sum(build(p) * w)
    (g,) = gradients(y, [p])
    with tf.Session() as sess:
        analytic = sess.run(g, {p: x})

        def f(v):
            return sess.run(y, {p: v})

        np.testing.assert_allclose(analytic, numeric_gradient(f, x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("feed_shape", ["static", [None, 3], [None, None], None], ids=str)
@pytest.mark.parametrize(
    "build",
    [
        lambda p: p + np.arange(3.0),
        lambda p: np.ones((4, 1, 1)) * p,
        lambda p: p / (np.arange(3.0) + 1),
        lambda p: tf.maximum(p, np.zeros((1, 3))),
        lambda p: tf.reduce_sum(p, 0),
        lambda p: tf.reduce_sum(p, 1, keepdims=True),
        lambda p: tf.reduce_mean(p),
        lambda p: tf.reduce_max(p, -1),
        lambda p: tf.reduce_prod(p, [0, 1]),
        lambda p: tf.reduce_logsumexp(p, 1),
        lambda p: tf.matmul(p, np.ones((3, 2))),
    ],
    ids=["add", "mul", "div", "maximum", "sum0", "sum1", "mean", "max", "prod", "lse", "matmul"],
)
def test_gradients_with_constant_axes_and_partial_shapes(build, feed_shape, rng):
    check_gradient(build, values(rng, (2, 3)), feed_shape)


def test_prod_gradient_is_exact_with_zeros():
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])
    check_gradient(lambda p: tf.reduce_prod(p, 1), x)


def test_broadcast_gradient_args():
    from nbflow.ops.math_ops import broadcast_gradient_args

    r0, r1 = run(broadcast_gradient_args([2, 1, 3], [4, 1]))
    assert r0.tolist() == [1] and r1.tolist() == [0, 2]
    r0, r1 = run(broadcast_gradient_args([2, 3], [1]))
    assert r0.tolist() == [] and r1.tolist() == [0, 1]
    with pytest.raises(ValueError):
        get_op_def("BroadcastGradientArgs").compute(
            cpu_context(), np.array([2], np.int32), np.array([3], np.int32)
        )


def test_binary_gradient_skips_reduction_when_shapes_match():
    x = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [3])
    gx, gb = gradients(tf.reduce_sum(x + b), [x, b])
    assert gx.op.type != "Reshape"
    assert gb.op.type == "Sum"


# --- integer division by zero ----------------------------------------------------------------------
INTEGER_DIVISIONS = [
    ("floordiv", tf.floordiv),
    ("div", tf.div),
    ("//", lambda x, y: x // y),
    ("floormod", tf.floormod),
    ("mod", tf.mod),
    ("%", lambda x, y: x % y),
    ("truncatediv", tf.truncatediv),
    ("truncatemod", tf.truncatemod),
]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("name, divide", INTEGER_DIVISIONS, ids=[n for n, _ in INTEGER_DIVISIONS])
def test_integer_division_by_zero_raises_as_tensorflow_cpu_kernels(name, divide, dtype):
    if name == "truncatemod" and dtype == np.uint8:
        pytest.skip("TruncateMod takes no uint8 (as in TensorFlow)")
    with tf.Graph().as_default():
        x = tf.placeholder(dtype, [3], name="x")
        y = tf.placeholder(dtype, [3], name="y")
        z = divide(x, y)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
                sess.run(z, {x: [7, 5, 0], y: [2, 0, 1]})
            with pytest.raises(tf.errors.InvalidArgumentError, match=f"node {z.op.name} "):
                sess.run(z, {x: [7, 5, 0], y: [0, 1, 1]})
            # the session stays usable: the same step with nonzero divisors runs
            assert sess.run(z, {x: [7, 5, 0], y: [2, 1, 1]}).tolist()[1:] == [
                5 if "div" in name or name == "//" else 0,
                0,
            ]


def test_float_division_by_zero_keeps_inf_and_nan():
    # Values recorded from TensorFlow 2.21 (float32): 7/2, 5/0, 0/0.
    expected = {
        "floordiv": [3.0, np.inf, np.nan],
        "div": [3.5, np.inf, np.nan],
        "//": [3.0, np.inf, np.nan],
        "floormod": [1.0, np.nan, np.nan],
        "mod": [1.0, np.nan, np.nan],
        "%": [1.0, np.nan, np.nan],
        "truncatediv": [3.0, np.inf, np.nan],
        "truncatemod": [1.0, np.nan, np.nan],
    }
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        y = tf.placeholder(tf.float32, [3])
        outs = {name: divide(x, y) for name, divide in INTEGER_DIVISIONS}
        with np.errstate(all="ignore"):
            got = run(outs, {x: [7, 5, 0], y: [2, 0, 0]})
    for name, want in expected.items():
        np.testing.assert_array_equal(got[name], np.float32(want), err_msg=name)


def test_truncating_division_rounds_toward_zero_as_tensorflow():
    # Values recorded from TensorFlow 2.21: int32 [7, -5, 0] by [2, 3, -4].
    x, y = np.array([7, -5, 0], np.int32), np.array([2, 3, -4], np.int32)
    got = run([tf.truncatediv(x, y), tf.truncatemod(x, y), tf.floordiv(x, y), tf.floormod(x, y)])
    assert [g.tolist() for g in got] == [[3, -1, 0], [1, -2, 0], [3, -2, 0], [1, 1, 0]]
    assert got[0].dtype == np.int32


def test_integer_division_by_zero_in_a_constant_is_left_to_the_step():
    # Constant folding must not hide the error: the step reports it, naming the node.
    with tf.Graph().as_default():
        z = tf.floordiv(tf.constant([4, 2]), tf.constant([2, 0]), name="halves")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="halves"):
                sess.run(z)


def test_integer_division_with_an_empty_result_divides_nothing():
    # TensorFlow computes no element, so a zero divisor is no error (gradients of reductions
    # over scalars build FloorMod(empty axes, rank 0)).
    got = run(tf.floormod(tf.zeros([0], tf.int32), tf.constant(0)))
    assert got.shape == (0,)
