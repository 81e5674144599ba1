"""TensorFlow 1.15's remaining array functions and framework helpers, by value against NumPy."""

import numpy as np
import pytest

import nbflow as tf


def run(*fetches, feed=None):
    with tf.Session() as sess:
        out = sess.run(list(fetches), feed)
    return out[0] if len(out) == 1 else out


@pytest.mark.parametrize(("shift", "axis"), [(2, 0), (-1, 1), ([1, 2], [0, 1])])
def test_roll_matches_numpy(shift, axis):
    x = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(run(tf.roll(x, shift, axis)), np.roll(x, shift, axis))


@pytest.mark.parametrize(("repeats", "axis"), [([1, 0, 2], None), (2, 1), ([2, 1], 0)])
def test_repeat_matches_numpy(repeats, axis):
    x = np.array([[1, 2], [3, 4]]) if axis is not None else np.array([1, 2, 3])
    np.testing.assert_array_equal(run(tf.repeat(x, repeats, axis)), np.repeat(x, repeats, axis))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_matches_numpy(indexing):
    a, b, c = [1, 2, 3], [4.0, 5.0], [7, 8, 9, 10]
    got = run(*tf.meshgrid(a, b, indexing=indexing))
    for g, e in zip(got, np.meshgrid(a, b, indexing=indexing)):
        np.testing.assert_array_equal(g, e)
    got = run(*tf.meshgrid(a, a, c, indexing=indexing))
    for g, e in zip(got, np.meshgrid(a, a, c, indexing=indexing)):
        np.testing.assert_array_equal(g, e)


def test_space_to_depth_moves_blocks_into_channels_and_back():
    x = np.arange(1 * 4 * 6 * 2).reshape(1, 4, 6, 2)
    d = run(tf.space_to_depth(x, 2))
    assert d.shape == (1, 2, 3, 8)
    np.testing.assert_array_equal(d[0, 0, 0], x[0, :2, :2, :].reshape(-1))
    np.testing.assert_array_equal(run(tf.depth_to_space(d, 2)), x)


def test_batch_gather_gathers_per_row():
    params = np.arange(12).reshape(2, 3, 2)
    got = run(tf.batch_gather(params, [[2, 0], [1, 1]]))
    np.testing.assert_array_equal(got, [params[0, [2, 0]], params[1, [1, 1]]])


def test_linspace_and_lin_space():
    np.testing.assert_allclose(run(tf.linspace(-1.0, 3.0, 9)), np.linspace(-1, 3, 9))
    assert run(tf.lin_space(2.0, 5.0, 1)).tolist() == [2.0]


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy_per_row(side):
    rows = np.array([[1.0, 3.0, 3.0, 7.0], [0.0, 2.0, 4.0, 6.0]])
    values = np.array([[3.0, 0.0, 8.0], [4.0, 5.0, -1.0]])
    got = run(tf.searchsorted(rows, values, side=side))
    expected = [np.searchsorted(r, v, side=side) for r, v in zip(rows, values)]
    np.testing.assert_array_equal(got, expected)


def test_setdiff1d_keeps_order_and_positions():
    out, idx = run(*tf.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5]))
    assert out.tolist() == [2, 4, 6] and idx.tolist() == [1, 3, 5]


def test_unique_with_counts():
    y, idx, count = run(*tf.unique_with_counts([4, 1, 4, 4, 9]))
    assert (y.tolist(), idx.tolist(), count.tolist()) == ([4, 1, 9], [0, 1, 0, 0, 2], [3, 1, 1])


def test_unravel_index_matches_numpy():
    got = run(tf.unravel_index([5, 7, 11], [3, 4]))
    np.testing.assert_array_equal(got, np.unravel_index([5, 7, 11], (3, 4)))


def test_histogram_fixed_width_bins_clamps_outliers():
    got = run(tf.histogram_fixed_width_bins([-1.0, 0.0, 1.5, 2.0, 4.99, 5.0, 12.0], [0.0, 5.0], 5))
    assert got.tolist() == [0, 0, 1, 2, 4, 4, 4]


def test_tensor_scatters_return_new_tensors():
    t = np.array([1, 2, 3, 4])
    got = run(
        tf.tensor_scatter_nd_update(t, [[1], [3]], [9, 10]),
        tf.tensor_scatter_nd_add(t, [[1], [1]], [9, 10]),
        tf.tensor_scatter_sub(t, [[0]], [1]),
    )
    assert [g.tolist() for g in got] == [[1, 9, 3, 10], [1, 21, 3, 4], [0, 2, 3, 4]]


def test_ensure_shape_refines_the_static_shape_and_checks_at_run_time():
    p = tf.placeholder(tf.float32, [None, None])
    checked = tf.ensure_shape(p, [None, 3])
    assert checked.shape.as_list() == [None, 3]
    assert run(checked, feed={p: np.ones((2, 3))}).shape == (2, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not compatible"):
        run(checked, feed={p: np.ones((2, 4))})


def test_clip_by_average_norm_scales_only_when_above():
    got = run(tf.clip_by_average_norm([3.0, 4.0], 1.0), tf.clip_by_average_norm([0.3, 0.4], 1.0))
    np.testing.assert_allclose(got[0], [1.2, 1.6])
    np.testing.assert_allclose(got[1], [0.3, 0.4])


def test_tables_initializer_runs_without_tables():
    assert run(tf.tables_initializer()) is None
    assert tf.initialize_all_tables is tf.tables_initializer


def test_framework_helpers():
    assert tf.dimension_value(tf.TensorShape([3, None])[1]) is None
    assert tf.dimension_at_index(tf.TensorShape([3, 4]), 1).value == 4
    assert tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([5])).as_list() == [
        2,
        5,
    ]
    with pytest.raises(ValueError):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))
    assert tf.get_static_value(tf.constant([1, 2])).tolist() == [1, 2]
    assert tf.get_static_value(tf.placeholder(tf.float32)) is None
    assert tf.is_numeric_tensor(tf.constant(1.0)) and not tf.is_numeric_tensor(tf.constant("a"))
    assert tf.assert_same_float_dtype([tf.constant(1.0)]) == tf.float32
    with pytest.raises(ValueError):
        tf.assert_same_float_dtype([tf.constant(1.0), tf.constant(1.0, tf.float64)])
    with tf.Graph().as_default(), tf.op_scope([], None, "fallback") as scope:
        assert scope == "fallback/"
    assert tf.no_regularizer(tf.constant(1.0)) is None
    assert tf.NoGradient is tf.NotDifferentiable and tf.OpError is tf.errors.OpError


def test_tensorflow_2_switches_are_noops_reporting_tf1_behaviour():
    for switch in (
        tf.disable_v2_tensorshape,
        tf.disable_control_flow_v2,
        tf.disable_tensor_equality,
        tf.enable_resource_variables,
        tf.disable_resource_variables,
    ):
        assert switch() is None
    assert tf.control_flow_v2_enabled() is False and tf.resource_variables_enabled() is False


# --- variable scatters ----------------------------------------------------------------------------
def scatter_result(initial, build):
    v = tf.Variable(np.array(initial))
    updated = build(v)
    with tf.Session() as sess:
        sess.run(v.initializer)
        first = sess.run(updated)
        return first, sess.run(v)


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (lambda v: tf.scatter_update(v, [0, 2], [9.0, 7.0]), [9.0, 2.0, 7.0, 4.0]),
        (lambda v: tf.scatter_add(v, [0, 0, 3], [1.0, 1.0, 5.0]), [3.0, 2.0, 3.0, 9.0]),
        (lambda v: tf.scatter_sub(v, [1], [2.0]), [1.0, 0.0, 3.0, 4.0]),
        (lambda v: tf.scatter_mul(v, [1, 1], [3.0, 2.0]), [1.0, 12.0, 3.0, 4.0]),
        (lambda v: tf.scatter_div(v, [3], [8.0]), [1.0, 2.0, 3.0, 0.5]),
        (lambda v: tf.scatter_max(v, [0, 1], [5.0, -5.0]), [5.0, 2.0, 3.0, 4.0]),
        (lambda v: tf.scatter_min(v, [0, 1], [5.0, -5.0]), [1.0, -5.0, 3.0, 4.0]),
    ],
    ids=["update", "add", "sub", "mul", "div", "max", "min"],
)
def test_row_scatters_update_the_variable_in_place(build, expected):
    result, stored = scatter_result([1.0, 2.0, 3.0, 4.0], build)
    assert result.tolist() == expected and stored.tolist() == expected


def test_index_tuple_scatters_and_batch_scatter_update():
    m = [[1, 2], [3, 4]]
    got = [
        scatter_result(m, lambda v: tf.scatter_nd_update(v, [[0, 1], [1, 0]], [7, 8]))[0],
        scatter_result(m, lambda v: tf.scatter_nd_add(v, [[1]], [[10, 20]]))[0],
        scatter_result(m, lambda v: tf.scatter_nd_sub(v, [[0, 0], [0, 0]], [1, 1]))[0],
        scatter_result(m, lambda v: tf.batch_scatter_update(v, [[1], [0]], [[50], [60]]))[0],
    ]
    assert [g.tolist() for g in got] == [
        [[1, 7], [8, 4]],
        [[1, 2], [13, 24]],
        [[-1, 2], [3, 4]],
        [[1, 50], [60, 4]],
    ]


def test_scatter_checks_the_updates_shape():
    v = tf.Variable(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="updates"):
        tf.scatter_update(v, [0, 1], np.zeros((2, 3)))


# --- branches and checks --------------------------------------------------------------------------
def test_switch_case_runs_the_indexed_branch_or_the_default():
    index = tf.placeholder(tf.int32, [])
    branches = [lambda: tf.constant(10), lambda: tf.constant(20)]
    with_default = tf.switch_case(index, branches, default=lambda: tf.constant(-1))
    last_as_default = tf.switch_case(index, branches)
    with tf.Session() as sess:
        got = [sess.run([with_default, last_as_default], {index: i}) for i in (0, 1, 7)]
    assert [[int(a), int(b)] for a, b in got] == [[10, 10], [20, 20], [-1, 20]]


def test_assert_variables_initialized_fails_until_initialized():
    v = tf.Variable(1.0)
    check = tf.assert_variables_initialized([v])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="initialized"):
            sess.run(check)
        sess.run(v.initializer)
        sess.run(check)


def test_broadcast_dynamic_shape_pads_and_takes_the_non_one_dimension():
    got = run(tf.broadcast_dynamic_shape([2, 1, 3], [4, 1]), tf.broadcast_dynamic_shape([1], [0]))
    assert got[0].tolist() == [2, 4, 3] and got[1].tolist() == [0]


def test_convert_to_tensor_or_indexed_slices_keeps_slices():
    slices = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]), tf.constant([2, 1]))
    assert tf.convert_to_tensor_or_indexed_slices(slices) is slices
    assert isinstance(tf.convert_to_tensor_or_indexed_slices([1.0]), tf.Tensor)
    assert tf.VariableAggregation.SUM.value == 1 and tf.VariableSynchronization.AUTO.value == 0
