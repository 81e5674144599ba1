"""TF 1.15's remaining tf.nn names (nbflow/nn_tf1_names.py) against NumPy re-implementations."""

import math

import numpy as np
import pytest

import nbflow as tf

RNG = np.random.default_rng(0)


def run(*fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(list(fetches), feed_dict=feed)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def numeric_gradient(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def check_gradient(build, x):
    """d sum(w * build(x)) / dx from nbflow's graph against central differences of the graph."""
    placeholder = tf.placeholder(tf.float64, x.shape)
    out = build(placeholder)
    w = RNG.standard_normal(out.shape.as_list())
    loss = tf.reduce_sum(out * w)
    (grad,) = tf.gradients(loss, [placeholder])
    with tf.Session() as sess:
        analytic = sess.run(grad, {placeholder: x})
        numeric = numeric_gradient(lambda v: sess.run(loss, {placeholder: v}), x)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)


def test_swish_and_log_poisson_loss_match_their_formulas():
    x = RNG.standard_normal(6)
    targets = np.array([0.0, 1.0, 2.0, 3.5, 0.5, 7.0])
    swish, short, full = run(
        tf.nn.swish(x),
        tf.nn.log_poisson_loss(targets, x),
        tf.nn.log_poisson_loss(targets, x, compute_full_loss=True),
    )
    np.testing.assert_allclose(swish, x / (1 + np.exp(-x)))
    np.testing.assert_allclose(short, np.exp(x) - x * targets)
    stirling = np.array(
        [t * math.log(t) - t + 0.5 * math.log(2 * math.pi * t) if t > 1 else 0 for t in targets]
    )
    np.testing.assert_allclose(full, np.exp(x) - x * targets + stirling)


def test_sufficient_statistics_and_normalize_moments_give_mean_and_variance():
    x = RNG.standard_normal((4, 3, 2))
    counts, m_ss, v_ss, shift = tf.nn.sufficient_statistics(x, [0, 1], shift=0.5)
    mean, variance = tf.nn.normalize_moments(counts, m_ss, v_ss, shift)
    got_counts, got_mean, got_var = run(counts, mean, variance)
    assert got_counts == 12
    np.testing.assert_allclose(got_mean, x.mean(axis=(0, 1)))
    np.testing.assert_allclose(got_var, x.var(axis=(0, 1)))


def test_weighted_moments_count_each_element_its_weight_times():
    x = RNG.standard_normal((5, 3))
    w = RNG.integers(1, 4, size=(5, 1)).astype(np.float64)
    mean, variance = run(*tf.nn.weighted_moments(x, [0], w))
    repeated = np.repeat(x, w[:, 0].astype(int), axis=0)
    np.testing.assert_allclose(mean, repeated.mean(axis=0))
    np.testing.assert_allclose(variance, repeated.var(axis=0))


def numpy_space_to_batch(x, block, paddings):
    x = np.pad(x, [(0, 0), *map(tuple, paddings)] + [(0, 0)] * (x.ndim - 1 - len(block)))
    b = x.shape[0]
    spatial = [s // k for s, k in zip(x.shape[1 : 1 + len(block)], block)]
    out = np.zeros((b * int(np.prod(block)), *spatial, *x.shape[1 + len(block) :]), x.dtype)
    for offset, index in enumerate(np.ndindex(*block)):
        window = tuple(slice(o, None, k) for o, k in zip(index, block))
        out[offset * b : (offset + 1) * b] = x[(slice(None), *window)]
    return out


@pytest.mark.parametrize(
    "shape, block, paddings",
    [((2, 4, 4, 3), [2, 2], [[0, 0], [0, 0]]), ((1, 3, 5, 2), [2, 3], [[1, 0], [0, 1]])],
)
def test_space_to_batch_nd_matches_numpy_and_batch_to_space_nd_inverts_it(shape, block, paddings):
    x = RNG.standard_normal(shape)
    to_batch = tf.space_to_batch_nd(x, block, paddings)
    back = tf.batch_to_space_nd(to_batch, block, paddings)
    got, restored = run(to_batch, back)
    np.testing.assert_array_equal(got, numpy_space_to_batch(x, block, paddings))
    np.testing.assert_array_equal(restored, x)
    check_gradient(lambda p: tf.space_to_batch(p, paddings, block_shape=block), x)


def test_required_space_to_batch_paddings_reach_a_multiple_of_the_block():
    paddings, crops = run(*tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [0, 0]]))
    np.testing.assert_array_equal(paddings, [[1, 0], [0, 2]])
    np.testing.assert_array_equal(crops, [[0, 0], [0, 2]])


def numpy_pool(x, window, dilation, kind):
    """VALID stride-1 dilated pooling of NHWC x."""
    n, h, w, c = x.shape
    out_h, out_w = h - (window[0] - 1) * dilation[0], w - (window[1] - 1) * dilation[1]
    taps = [
        x[:, a * dilation[0] : a * dilation[0] + out_h, b * dilation[1] : b * dilation[1] + out_w]
        for a in range(window[0])
        for b in range(window[1])
    ]
    return np.max(taps, 0) if kind == "MAX" else np.mean(taps, 0)


@pytest.mark.parametrize("kind", ["MAX", "AVG"])
def test_pool_with_dilation_matches_numpy(kind):
    x = RNG.standard_normal((1, 6, 7, 2))
    got = run(tf.nn.pool(x, [2, 3], kind, "VALID", dilation_rate=[2, 2]))[0]
    np.testing.assert_allclose(got, numpy_pool(x, [2, 3], [2, 2], kind))
    with pytest.raises(ValueError, match="SAME padding"):
        tf.nn.pool(x, [2, 3], kind, "SAME", dilation_rate=[2, 2])


def test_pool_v2_names_dispatch_on_rank():
    x1, x2 = RNG.standard_normal((2, 7, 3)), RNG.standard_normal((2, 4, 6, 3))
    got1, got2, avg1 = run(
        tf.nn.max_pool_v2(x1, 2, 2, "VALID"),
        tf.nn.max_pool_v2(x2, [2, 2], [2, 2], "VALID"),
        tf.nn.avg_pool1d(x1, 3, 1, "VALID"),
    )
    np.testing.assert_allclose(got1, np.maximum(x1[:, 0:6:2], x1[:, 1:7:2]))
    np.testing.assert_allclose(got2, x2.reshape(2, 2, 2, 3, 2, 3).max(axis=(2, 4)))
    np.testing.assert_allclose(avg1, (x1[:, :5] + x1[:, 1:6] + x1[:, 2:7]) / 3)


def test_conv_backprop_names_are_the_gradients_of_conv2d():
    x = RNG.standard_normal((2, 5, 5, 3))
    f = RNG.standard_normal((3, 3, 3, 4))
    xp, fp = tf.constant(x), tf.constant(f)
    y = tf.nn.convolution(xp, fp, "SAME", strides=[2, 2])
    g = RNG.standard_normal(y.shape.as_list())
    gx, gf = tf.gradients(y, [xp, fp], grad_ys=tf.constant(g))
    bx = tf.nn.conv2d_backprop_input([2, 5, 5, 3], fp, g, [1, 2, 2, 1], "SAME")
    bf = tf.nn.conv2d_backprop_filter(xp, [3, 3, 3, 4], g, [1, 2, 2, 1], "SAME")
    want_x, want_f, got_x, got_f = run(gx, gf, bx, bf)
    np.testing.assert_allclose(got_x, want_x)
    np.testing.assert_allclose(got_f, want_f)


def test_conv1d_transpose_is_the_gradient_of_conv1d():
    x = RNG.standard_normal((2, 8, 3))
    f = RNG.standard_normal((3, 3, 4))
    xp = tf.constant(x)
    y = tf.nn.conv1d(xp, f, 2, "SAME")
    g = RNG.standard_normal(y.shape.as_list())
    (want,) = tf.gradients(y, [xp], grad_ys=tf.constant(g))
    got = tf.nn.conv_transpose(tf.constant(g), tf.constant(f), [2, 8, 3], 2, "SAME")
    a, b = run(want, got)
    np.testing.assert_allclose(b, a)


def test_compute_accidental_hits_finds_sampled_true_classes():
    true = np.array([[1, 5], [2, 3]])
    sampled = np.array([5, 2, 9, 1])
    indices, ids, weights = run(*tf.nn.compute_accidental_hits(true, sampled, num_true=2))
    hits = {(int(i), int(j)) for i, j in zip(indices, ids)}
    assert hits == {(0, 0), (0, 3), (1, 1)}
    assert np.all(weights == -np.finfo(np.float32).max)


def test_safe_embedding_lookup_sparse_drops_invalid_ids_and_zeros_empty_rows():
    params = RNG.standard_normal((5, 3))
    ids = tf.SparseTensor(
        [[0, 0], [0, 1], [1, 0], [2, 0]], np.array([1, 3, -1, 4], np.int64), [3, 2]
    )
    got = run(tf.nn.safe_embedding_lookup_sparse(tf.constant(params), ids, combiner="sum"))[0]
    np.testing.assert_allclose(got, [params[1] + params[3], np.zeros(3), params[4]])


def test_rnn_cell_wrappers_add_the_input_and_place_ops():
    cell = tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.BasicRNNCell(3))
    x = tf.constant(RNG.standard_normal((2, 3)), tf.float32)
    out, state = cell(x, cell.zero_state(2, tf.float32))
    placed = tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.BasicRNNCell(3, name="p"), "/cpu:0")
    out2, _ = placed(x, placed.zero_state(2, tf.float32))
    assert "cpu" in out2.device.lower()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_out, got_state, got_x = sess.run([out, state, x])
    np.testing.assert_allclose(got_out, got_x + got_state, rtol=1e-6)


def test_identity_and_uniform_unit_scaling_initializers():
    eye = tf.initializers.identity(gain=2.0)([3, 4])
    uniform = tf.uniform_unit_scaling_initializer(factor=1.5, seed=3)([50, 20])
    got_eye, got_uniform = run(eye, uniform)
    np.testing.assert_array_equal(got_eye, 2 * np.eye(3, 4))
    limit = 1.5 * math.sqrt(3 / 50)
    assert np.abs(got_uniform).max() <= limit and np.abs(got_uniform).max() > 0.8 * limit


def test_summary_description_reads_a_node_def_description_attr():
    node = tf.NodeDef(op="TensorSummary", name="s")
    node.attr["description"].s = b'{"typeHint": "scalar"}'
    assert tf.summary.get_summary_description(node).type_hint == "scalar"
    with pytest.raises(ValueError, match="Const"):
        tf.summary.get_summary_description(tf.NodeDef(op="Const"))
    assert tf.summary.all_v2_summary_ops() == []
    with pytest.raises(ValueError, match="session must be passed"):
        tf.summary.initialize()
