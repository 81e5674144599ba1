"""Array ops against NumPy: values on several shapes (incl. empty), static shapes, slicing."""

import numpy as np
import pytest

import nbflow as tf
from nbflow.framework.indexed_slices import IndexedSlices
from nbflow.gradients import gradients


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.mark.parametrize(
    "shape_in, shape_out",
    [((2, 3), [3, 2]), ((2, 3, 4), [-1, 4]), ((0, 3), [3, -1]), ((1,), []), ((6,), [2, -1, 3])],
)
def test_reshape_matches_numpy_and_infers_minus_one(rng, shape_in, shape_out):
    x = rng.standard_normal(shape_in)
    y = tf.reshape(x, shape_out)
    expected = x.reshape(shape_out)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_array_equal(run(y), expected)


def test_reshape_of_wrong_size_raises_at_construction():
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 6 elements"):
        tf.reshape(tf.zeros([2, 3]), [4])


def test_reshape_with_fed_shape_has_known_rank():
    s = tf.placeholder(tf.int32, [2])
    y = tf.reshape(tf.zeros([2, 3]), s)
    assert y.shape.as_list() == [None, None]
    assert run(y, {s: [3, 2]}).shape == (3, 2)


@pytest.mark.parametrize("shape, perm", [((2, 3), None), ((2, 3, 4), [2, 0, 1]), ((0, 3), None)])
def test_transpose_matches_numpy(rng, shape, perm):
    x = rng.standard_normal(shape)
    y = tf.transpose(x, perm)
    expected = np.transpose(x, perm)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_array_equal(run(y), expected)


def test_transpose_of_unknown_rank_reverses_dims():
    x = tf.placeholder(tf.float32)
    value = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(run(tf.transpose(x), {x: value}), value.T)


def test_concat_matches_numpy_with_negative_axis_and_empty_parts(rng):
    a, b, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 0)), rng.standard_normal((2, 1))
    y = tf.concat([a, b, c], -1)
    assert y.shape.as_list() == [2, 4]
    np.testing.assert_array_equal(run(y), np.concatenate([a, b, c], -1))
    assert tf.concat([a], 0).op.type == "Identity"


def test_concat_with_mismatched_dims_raises():
    with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal"):
        tf.concat([tf.zeros([2, 3]), tf.zeros([2, 4])], 0)


def test_split_into_equal_parts_and_sizes(rng):
    x = rng.standard_normal((4, 6))
    parts = tf.split(x, 3, axis=1)
    assert [p.shape.as_list() for p in parts] == [[4, 2]] * 3
    for got, want in zip(run(parts), np.split(x, 3, axis=1)):
        np.testing.assert_array_equal(got, want)
    sized = tf.split(x, [1, -1, 0], axis=0)
    assert [p.shape.as_list() for p in sized] == [[1, 6], [3, 6], [0, 6]]
    got = run(sized)
    np.testing.assert_array_equal(got[1], x[1:])
    assert got[2].shape == (0, 6)
    single = tf.split(x, 1)
    np.testing.assert_array_equal(run(single)[0], x)


def test_split_of_indivisible_dimension_raises():
    with pytest.raises(ValueError, match="evenly divisible"):
        tf.split(tf.zeros([5]), 2)


@pytest.mark.parametrize("shape", [(2, 3), (), (0, 2)])
def test_stack_and_unstack_round_trip(rng, shape):
    xs = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    for axis in (0, -1):
        y = tf.stack(xs, axis=axis)
        np.testing.assert_array_equal(run(y), np.stack(xs, axis))
        parts = tf.unstack(y, axis=axis)
        assert len(parts) == 3
        for got, want in zip(run(parts), xs):
            np.testing.assert_array_equal(got, want)


def test_convert_to_tensor_packs_lists_of_tensors():
    a = tf.constant(1.0)
    packed = tf.convert_to_tensor([[a, 2.0], [3.0, a]])
    assert packed.op.type == "Pack"
    assert packed.shape.as_list() == [2, 2]
    np.testing.assert_array_equal(run(packed), [[1.0, 2.0], [3.0, 1.0]])
    assert tf.stack([1, 2]).op.type == "Const"


@pytest.mark.parametrize("shape, multiples", [((2, 3), [2, 1]), ((2,), [3]), ((2, 1), [0, 2])])
def test_tile_matches_numpy(rng, shape, multiples):
    x = rng.standard_normal(shape)
    y = tf.tile(x, multiples)
    assert y.shape.as_list() == list(np.tile(x, multiples).shape)
    np.testing.assert_array_equal(run(y), np.tile(x, multiples))


@pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC"])
def test_pad_modes_match_numpy(rng, mode):
    x = rng.standard_normal((3, 4))
    paddings = [[1, 2], [2, 1]]
    y = tf.pad(x, paddings, mode=mode)
    assert y.shape.as_list() == [6, 7]
    np.testing.assert_array_equal(run(y), np.pad(x, paddings, mode=mode.lower()))


def test_pad_with_constant_value_and_empty_input():
    y = tf.pad(tf.zeros([0, 2]), [[1, 1], [0, 1]], constant_values=7.0)
    np.testing.assert_array_equal(run(y), np.full((2, 3), 7.0))


def test_mirror_pad_gradient_folds_padding_back():
    x = tf.constant(np.arange(4.0))
    y = tf.pad(x, [[2, 1]], mode="REFLECT")  # [2, 1, 0, 1, 2, 3, 2]
    (g,) = gradients(tf.reduce_sum(y * tf.range(7.0, dtype=tf.float64)), [x])
    np.testing.assert_array_equal(run(g), [2.0, 1 + 3, 0 + 4 + 6, 5])


def test_slice_matches_numpy(rng):
    x = rng.standard_normal((3, 4))
    y = tf.slice(x, [1, 0], [2, -1])
    assert y.shape.as_list() == [2, 4]
    np.testing.assert_array_equal(run(y), x[1:3, :])
    assert tf.slice(x, [1, 1], [0, 2]).shape.as_list() == [0, 2]


GETITEM_CASES = [
    (1,),
    (-1,),
    (slice(1, 3),),
    (slice(None, None, -1),),
    (slice(None, None, 2), 1),
    (Ellipsis, 0),
    (None, slice(None), None),
    (1, Ellipsis, None),
    (slice(-2, None), slice(None, -1)),
    (slice(10, 20),),
    (slice(3, 0, -1), slice(None, None, -2), 0),
]


@pytest.mark.parametrize("key", GETITEM_CASES, ids=str)
def test_getitem_matches_numpy(rng, key):
    x = rng.standard_normal((4, 5, 3))
    y = tf.constant(x)[key]
    expected = x[key]
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_array_equal(run(y), expected)


@pytest.mark.parametrize("key", GETITEM_CASES, ids=str)
def test_getitem_of_unknown_shape_matches_numpy(rng, key):
    x = rng.standard_normal((4, 5, 3))
    p = tf.placeholder(tf.float64, [None, None, 3])
    y = p[key]
    assert y.shape.ndims == x[key].ndim
    np.testing.assert_array_equal(run(y, {p: x}), x[key])


def test_getitem_with_tensor_index_and_bounds():
    x = np.arange(12).reshape(3, 4)
    i = tf.placeholder(tf.int32, [])
    t = tf.constant(x)
    np.testing.assert_array_equal(run(t[i], {i: 2}), x[2])
    np.testing.assert_array_equal(run(t[:, i:], {i: 1}), x[:, 1:])
    assert t[1:].op.type == "StridedSlice"
    assert tf.constant(x)[0].op.name.startswith("strided_slice")


def test_getitem_rejects_bad_keys():
    t = tf.zeros([3, 4])
    with pytest.raises(TypeError, match="valid indices"):
        t[1.5]
    with pytest.raises(ValueError, match="out of bounds"):
        t[3]
    with pytest.raises(ValueError, match="Multiple ellipses"):
        t[..., ...]


def test_getitem_out_of_range_at_run_time_is_invalid_argument():
    p = tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(p[5], {p: np.zeros(3, np.float32)})


def test_variable_getitem_reads_the_variable():
    v = tf.Variable(np.arange(6.0).reshape(2, 3))
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(v[1, ::2]), [3.0, 5.0])


def test_strided_slice_gradient_scatters_into_zeros():
    x = tf.constant(np.arange(12.0).reshape(3, 4))
    (g,) = gradients(tf.reduce_sum(x[1:, ::-2]), [x])
    expected = np.zeros((3, 4))
    expected[1:, ::-2] = 1.0
    np.testing.assert_array_equal(run(g), expected)


@pytest.mark.parametrize(
    "params_shape, indices, axis",
    [((5, 3), [2, 0, 2], 0), ((3, 4), [[3, 1], [0, 0]], 1), ((2, 3, 2), [], -2), ((4,), 1, 0)],
)
def test_gather_matches_numpy(rng, params_shape, indices, axis):
    params = rng.standard_normal(params_shape)
    y = tf.gather(params, indices, axis=axis)
    expected = np.take(params, indices, axis=axis)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_array_equal(run(y), expected)


@pytest.mark.parametrize("indices, bad", [([0, 7], 7), (7, 7), (-1, -1), ([[1], [-2]], -2)])
def test_gather_out_of_range_index_is_invalid_argument(indices, bad):
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=rf"indices = {bad} is not in \[0, 3\)"
    ):
        run(tf.gather(tf.zeros([3, 2]), indices))


def test_gather_gradient_on_axis_0_is_indexed_slices():
    params = tf.constant(np.arange(6.0).reshape(3, 2))
    (g,) = gradients(tf.reduce_sum(tf.gather(params, [2, 0, 2])), [params])
    assert isinstance(g, IndexedSlices)
    value = run(g)
    np.testing.assert_array_equal(value.indices, [2, 0, 2])
    np.testing.assert_array_equal(value.values, np.ones((3, 2)))
    np.testing.assert_array_equal(value.dense_shape, [3, 2])


def test_gather_gradient_on_other_axis_is_dense():
    params = tf.constant(np.arange(6.0).reshape(2, 3))
    (g,) = gradients(tf.reduce_sum(tf.gather(params, [2, 2, 0], axis=1)), [params])
    np.testing.assert_array_equal(run(g), [[1.0, 0.0, 2.0], [1.0, 0.0, 2.0]])


def test_one_hot_matches_numpy_and_axis():
    y = tf.one_hot([0, 2, -1, 5], 3)
    assert y.dtype == tf.float32 and y.shape.as_list() == [4, 3]
    np.testing.assert_array_equal(
        run(y), np.eye(3, dtype=np.float32)[[0, 2]].tolist() + [[0] * 3] * 2
    )
    z = tf.one_hot([[1, 0]], 2, on_value=5, off_value=-1, axis=0)
    assert z.dtype == tf.int32 and z.shape.as_list() == [2, 1, 2]
    np.testing.assert_array_equal(run(z), [[[-1, 5]], [[5, -1]]])


def test_shape_rank_size_and_shape_n():
    x = tf.placeholder(tf.float32, [None, 3])
    value = np.zeros((4, 3), np.float32)
    s, r, n = tf.shape(x), tf.rank(x), tf.size(x, out_type=tf.int64)
    assert s.dtype == tf.int32 and n.dtype == tf.int64
    np.testing.assert_array_equal(run(s, {x: value}), [4, 3])
    assert run(r, {x: value}) == 2 and run(n, {x: value}) == 12
    a, b = tf.shape_n([x, tf.zeros([0])])
    np.testing.assert_array_equal(run(b, {x: value}), [0])


def test_fill_zeros_ones_and_likes():
    np.testing.assert_array_equal(run(tf.fill([2, 3], 9)), np.full((2, 3), 9, np.int32))
    assert tf.zeros([2, 3]).op.type == "Const" and tf.zeros([2, 3]).op.name == "zeros_1"
    big = tf.ones([50, 50], dtype=tf.int64)
    assert big.op.type == "Fill" and big.dtype == tf.int64
    np.testing.assert_array_equal(run(big), np.ones((50, 50)))
    n = tf.placeholder(tf.int32, [])
    dyn = tf.zeros(tf.stack([n, 2]))
    assert run(dyn, {n: 3}).shape == (3, 2)
    x = tf.constant([[1.5, 2.0]])
    np.testing.assert_array_equal(run(tf.zeros_like(x)), [[0.0, 0.0]])
    ones = tf.ones_like(x, dtype=tf.int32)
    assert ones.dtype == tf.int32
    np.testing.assert_array_equal(run(ones), [[1, 1]])
    assert run(tf.zeros([0, 3])).shape == (0, 3)


@pytest.mark.parametrize(
    "args, kwargs, expected",
    [
        ((5,), {}, np.arange(5, dtype=np.int32)),
        ((1, 10, 3), {}, np.arange(1, 10, 3, dtype=np.int32)),
        ((0.5, -1.0, -0.5), {}, np.arange(0.5, -1.0, -0.5, dtype=np.float32)),
        ((3,), {"dtype": tf.int64}, np.arange(3, dtype=np.int64)),
        ((1, 5.0), {}, np.arange(1, 5.0, dtype=np.float32)),
        ((3, 3), {}, np.arange(3, 3, dtype=np.int32)),
    ],
)
def test_range_matches_numpy_and_infers_dtype(args, kwargs, expected):
    y = tf.range(*args, **kwargs)
    assert y.dtype.np == expected.dtype and y.shape.as_list() == [len(expected)]
    np.testing.assert_array_equal(run(y), expected)


def test_range_with_zero_delta_fails():
    with pytest.raises(ValueError, match="delta != 0"):
        tf.range(0, 5, 0)
    n = tf.placeholder(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="start <= limit"):
        run(tf.range(3, n), {n: 1})


def test_where_with_one_argument_gives_int64_coordinates(rng):
    cond = rng.random((3, 4)) < 0.5
    y = tf.where(cond)
    assert y.dtype == tf.int64 and y.shape.as_list() == [None, 2]
    np.testing.assert_array_equal(run(y), np.argwhere(cond))
    assert run(tf.where(np.zeros((0, 2), bool))).shape == (0, 2)


def test_where_selects_elements_and_rows():
    x, y = np.arange(6.0).reshape(2, 3), -np.ones((2, 3))
    np.testing.assert_array_equal(run(tf.where([True, False], x, y)), [x[0], y[1]])
    cond = np.array([[True, False, True], [False, True, False]])
    np.testing.assert_array_equal(run(tf.where(cond, x, y)), np.where(cond, x, y))
    np.testing.assert_array_equal(
        run(tf.where_v2([True, False, True], x, 0.0)), np.where([True, False, True], x, 0.0)
    )


def test_expand_dims_and_squeeze(rng):
    x = rng.standard_normal((1, 2, 1, 3))
    assert tf.expand_dims(x, -1).shape.as_list() == [1, 2, 1, 3, 1]
    np.testing.assert_array_equal(run(tf.expand_dims(x, 0)), x[None])
    assert tf.squeeze(x).shape.as_list() == [2, 3]
    assert tf.squeeze(x, [2]).shape.as_list() == [1, 2, 3]
    np.testing.assert_array_equal(run(tf.squeeze(x, axis=0)), x[0])
    with pytest.raises(ValueError, match="Can not squeeze dim"):
        tf.squeeze(x, [1])


def test_dynamic_partition_and_stitch_round_trip(rng):
    data = rng.standard_normal((5, 2))
    partitions = np.array([0, 1, 0, 2, 1])
    parts = tf.dynamic_partition(data, partitions, 3)
    got = run(parts)
    for i in range(3):
        np.testing.assert_array_equal(got[i], data[partitions == i])
    indices = tf.dynamic_partition(np.arange(5), partitions, 3)
    stitched = tf.dynamic_stitch(indices, parts)
    np.testing.assert_array_equal(run(stitched), data)
    assert tf.dynamic_stitch([[1, 0], [2]], [[1.0, 2.0], [3.0]]).shape.as_list() == [3]


def test_unsorted_segment_sum_drops_negative_ids_and_has_gradient():
    data = tf.constant(np.arange(10.0).reshape(5, 2))
    ids = [0, 2, -1, 1, 2]
    y = tf.unsorted_segment_sum(data, ids, 4)
    expected = np.zeros((4, 2))
    for row, i in zip(np.arange(10.0).reshape(5, 2), ids):
        if i >= 0:
            expected[i] += row
    np.testing.assert_array_equal(run(y), expected)
    (g,) = gradients(tf.reduce_sum(y * tf.constant(np.arange(8.0).reshape(4, 2))), [data])
    np.testing.assert_array_equal(run(g), [[0, 1], [4, 5], [0, 0], [2, 3], [4, 5]])


def test_broadcast_to_reverse_invert_permutation_and_identity_n(rng):
    x = rng.standard_normal((2, 1))
    np.testing.assert_array_equal(run(tf.broadcast_to(x, [2, 3])), np.broadcast_to(x, (2, 3)))
    np.testing.assert_array_equal(run(tf.reverse(x, [0])), x[::-1])
    np.testing.assert_array_equal(run(tf.invert_permutation([2, 0, 1])), [1, 2, 0])
    a, b = tf.identity_n([tf.constant(1.0), tf.constant([2])])
    assert run([a, b])[1].tolist() == [2]


def test_boolean_mask_matches_numpy(rng):
    x = rng.standard_normal((3, 4))
    mask = np.array([True, False, True])
    np.testing.assert_array_equal(run(tf.boolean_mask(x, mask)), x[mask])
    mask2 = rng.random((3, 4)) < 0.5
    np.testing.assert_array_equal(run(tf.boolean_mask(x, mask2)), x[mask2])


def test_concat_and_split_gradients_flow(rng):
    a, b = tf.constant(rng.standard_normal((2, 3))), tf.constant(rng.standard_normal((2, 1)))
    y = tf.concat([a, b], 1)
    w = np.arange(8.0).reshape(2, 4)
    ga, gb = gradients(tf.reduce_sum(y * w), [a, b])
    np.testing.assert_array_equal(run(ga), w[:, :3])
    np.testing.assert_array_equal(run(gb), w[:, 3:])
