"""tf.nn values against NumPy references (activations, losses, conv, pooling, embeddings)."""

import numpy as np
import pytest

import nbflow as tf


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.fixture
def x23(rng):
    return rng.standard_normal((2, 3)) * 3


# --- activations ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fn, reference",
    [
        (tf.nn.relu, lambda x: np.maximum(x, 0)),
        (tf.nn.relu6, lambda x: np.clip(x, 0, 6)),
        (tf.nn.elu, lambda x: np.where(x > 0, x, np.exp(x) - 1)),
        (
            tf.nn.selu,
            lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
        ),
        (lambda x: tf.nn.leaky_relu(x, alpha=0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
        (tf.nn.softplus, lambda x: np.log1p(np.exp(x))),
        (tf.nn.softsign, lambda x: x / (1 + np.abs(x))),
        (tf.nn.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
        (tf.nn.tanh, np.tanh),
    ],
)
def test_activation_matches_numpy(fn, reference, x23):
    np.testing.assert_allclose(_run(fn(tf.constant(x23))), reference(x23), rtol=1e-6)


def test_relu_gradient_is_fused_relu_grad():
    x = tf.constant([-1.0, 2.0, 0.5])
    (g,) = tf.gradients(tf.reduce_sum(tf.nn.relu(x) * 3.0), x)
    assert g.op.type == "ReluGrad"
    np.testing.assert_allclose(_run(g), [0.0, 3.0, 3.0])


def test_softplus_is_stable_for_large_inputs():
    out = _run(tf.nn.softplus(tf.constant([-1000.0, 0.0, 1000.0])))
    np.testing.assert_allclose(out, [0.0, np.log(2.0), 1000.0])


def test_activation_of_empty_tensor_is_empty():
    assert _run(tf.nn.relu(tf.zeros([0, 4]))).shape == (0, 4)


# --- softmax ----------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_and_log_softmax_along_axis(axis, rng):
    x = rng.standard_normal((3, 4, 5))
    s, ls = _run([tf.nn.softmax(tf.constant(x), axis=axis), tf.nn.log_softmax(x, axis=axis)])
    np.testing.assert_allclose(s, _softmax(x, axis))
    np.testing.assert_allclose(ls, np.log(_softmax(x, axis)))


def test_softmax_does_not_overflow():
    out = _run(tf.nn.softmax(tf.constant([[1000.0, 1000.0, -1000.0]])))
    np.testing.assert_allclose(out, [[0.5, 0.5, 0.0]])


def test_softmax_dim_keyword_is_accepted(rng):
    x = rng.standard_normal((2, 3))
    np.testing.assert_allclose(_run(tf.nn.softmax(x, dim=0)), _softmax(x, 0))


# --- losses -----------------------------------------------------------------------------------------
def _xent(labels, logits):
    return -(labels * np.log(_softmax(logits))).sum(-1)


def test_softmax_cross_entropy_matches_numpy(rng):
    logits = rng.standard_normal((4, 5))
    labels = _softmax(rng.standard_normal((4, 5)))
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    np.testing.assert_allclose(_run(loss), _xent(labels, logits))


def test_softmax_cross_entropy_positional_order_is_logits_then_labels(rng):
    logits = rng.standard_normal((2, 3)).astype(np.float32)
    labels = np.eye(3, dtype=np.float32)[[0, 2]]
    loss = tf.nn.softmax_cross_entropy_with_logits(logits, labels)
    np.testing.assert_allclose(_run(loss), _xent(labels, logits), rtol=1e-5)


def test_softmax_cross_entropy_of_rank_3_and_other_axis(rng):
    logits = rng.standard_normal((2, 3, 4))
    labels = _softmax(rng.standard_normal((2, 3, 4)))
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert loss.shape.as_list() == [2, 3]
    np.testing.assert_allclose(_run(loss), _xent(labels, logits))
    swapped = tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=np.swapaxes(labels, 1, 2), logits=np.swapaxes(logits, 1, 2), axis=1
    )
    np.testing.assert_allclose(_run(swapped), _xent(labels, logits))


def test_cross_entropy_v1_stops_label_gradient_and_v2_does_not(rng):
    logits = tf.constant(rng.standard_normal((2, 3)))
    labels = tf.constant(_softmax(rng.standard_normal((2, 3))))
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert tf.gradients(v1, labels) == [None]
    (g,) = tf.gradients(v2, labels)
    np.testing.assert_allclose(_run(g), -np.log(_softmax(_run(logits))))


def test_sparse_softmax_cross_entropy_matches_numpy(rng):
    values = rng.standard_normal((4, 5))
    logits = tf.constant(values)
    labels = np.array([0, 4, 2, 2])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    expected = -np.log(_softmax(values))[np.arange(4), labels]
    np.testing.assert_allclose(_run(loss), expected)
    (g,) = tf.gradients(loss, logits)
    np.testing.assert_allclose(_run(g), _softmax(values) - np.eye(5)[labels])


def test_sparse_softmax_cross_entropy_rejects_out_of_range_label():
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant([3]), logits=tf.constant([[1.0, 2.0, 3.0]])
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match="outside the valid range"):
        _run(loss)


def test_sigmoid_cross_entropy_is_stable(rng):
    logits = np.array([-1000.0, -2.0, 0.0, 3.0, 1000.0])
    labels = np.array([0.0, 1.0, 0.5, 0.0, 1.0])
    out = _run(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
    stable = np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))
    np.testing.assert_allclose(out, stable)
    assert np.all(np.isfinite(out))


def test_weighted_cross_entropy_matches_formula(rng):
    x = rng.standard_normal(5)
    z = rng.random(5)
    out = _run(tf.nn.weighted_cross_entropy_with_logits(targets=z, logits=x, pos_weight=3.0))
    sig = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(out, -(3.0 * z * np.log(sig) + (1 - z) * np.log(1 - sig)))


def test_l2_loss_and_l2_normalize(rng):
    x = rng.standard_normal((3, 4))
    loss, rows = _run([tf.nn.l2_loss(x), tf.nn.l2_normalize(x, axis=1)])
    assert loss == pytest.approx((x**2).sum() / 2)
    np.testing.assert_allclose(rows, x / np.linalg.norm(x, axis=1, keepdims=True))


# --- bias, normalization, dropout ---------------------------------------------------------------
def test_bias_add_nhwc_and_nchw(rng):
    v = rng.standard_normal((2, 3, 4, 5))
    b5, b3 = rng.standard_normal(5), rng.standard_normal(3)
    nhwc, nchw = _run([tf.nn.bias_add(v, b5), tf.nn.bias_add(v, b3, data_format="NCHW")])
    np.testing.assert_allclose(nhwc, v + b5)
    np.testing.assert_allclose(nchw, v + b3[None, :, None, None])
    (gb,) = tf.gradients(tf.nn.bias_add(v, b3, data_format="NCHW"), [tf.constant(b3)])
    assert gb is None  # a fresh constant is not on the path; the real check is below
    bias = tf.constant(b3)
    (gb,) = tf.gradients(tf.reduce_sum(tf.nn.bias_add(v, bias, data_format="NCHW")), bias)
    assert gb.op.type == "BiasAddGrad"
    np.testing.assert_allclose(_run(gb), np.full(3, 2 * 4 * 5.0))


def test_bias_add_rejects_wrong_bias_length():
    with pytest.raises(ValueError):
        tf.nn.bias_add(tf.zeros([2, 3]), tf.zeros([4]))


def test_moments_and_batch_normalization(rng):
    x = rng.standard_normal((8, 3)) * 2 + 1
    mean, var = tf.nn.moments(tf.constant(x), axes=[0])
    y = tf.nn.batch_normalization(x, mean, var, offset=0.5, scale=2.0, variance_epsilon=1e-3)
    m, v, out = _run([mean, var, y])
    np.testing.assert_allclose(m, x.mean(0))
    np.testing.assert_allclose(v, x.var(0))
    np.testing.assert_allclose(out, 2.0 * (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3) + 0.5)


def test_fused_batch_norm_training_reports_unbiased_variance(rng):
    x = rng.standard_normal((2, 3, 3, 4)).astype(np.float32)
    y, mean, var = tf.nn.fused_batch_norm(x, np.ones(4, np.float32), np.zeros(4, np.float32))
    out, m, v = _run([y, mean, var])
    flat = x.reshape(-1, 4)
    np.testing.assert_allclose(m, flat.mean(0), rtol=1e-5)
    np.testing.assert_allclose(v, flat.var(0, ddof=1), rtol=1e-4)
    np.testing.assert_allclose(out, (x - flat.mean(0)) / np.sqrt(flat.var(0) + 1e-3), atol=1e-4)


@pytest.mark.parametrize("kwargs", [{"keep_prob": 0.25}, {"rate": 0.75}])
def test_dropout_zeroes_a_fraction_and_scales_the_rest(kwargs):
    tf.set_random_seed(1)
    x = tf.ones([200, 50])
    out = _run(tf.nn.dropout(x, seed=3, **kwargs))
    kept = out != 0
    assert 0.2 < kept.mean() < 0.3
    np.testing.assert_allclose(out[kept], 4.0)


def test_dropout_with_keep_prob_one_is_identity_and_bad_rate_raises():
    x = tf.constant([1.0, 2.0])
    assert tf.nn.dropout(x, keep_prob=1.0) is x
    with pytest.raises(ValueError):
        tf.nn.dropout(x, rate=1.5)
    with pytest.raises(ValueError):
        tf.nn.dropout(x)


# --- convolution and pooling ------------------------------------------------------------------------
def _pads(size, k, stride, dilation, padding):
    eff = (k - 1) * dilation + 1
    if padding == "VALID":
        return (size - eff) // stride + 1, 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + eff - size, 0) // 2


def _conv_reference(x, f, strides, padding, dilations=(1, 1)):
    """Direct loops over output pixels (NHWC), the definition of TF's conv2d."""
    n, h, w, c = x.shape
    kh, kw, _, o = f.shape
    oh, pt = _pads(h, kh, strides[0], dilations[0], padding)
    ow, pl = _pads(w, kw, strides[1], dilations[1], padding)
    out = np.zeros((n, oh, ow, o))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r = i * strides[0] + a * dilations[0] - pt
                    s = j * strides[1] + b * dilations[1] - pl
                    if 0 <= r < h and 0 <= s < w:
                        out[:, i, j, :] += x[:, r, s, :] @ f[a, b]
    return out


@pytest.mark.parametrize(
    "shape, fshape, strides, padding, dilations",
    [
        ((2, 7, 7, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),
        ((1, 8, 9, 2), (5, 5, 2, 3), (2, 2), "SAME", (1, 1)),
        ((1, 8, 9, 2), (2, 3, 2, 3), (2, 3), "VALID", (1, 1)),
        ((1, 9, 9, 1), (3, 3, 1, 2), (1, 1), "SAME", (2, 2)),
        ((2, 4, 4, 3), (1, 1, 3, 5), (1, 1), "VALID", (1, 1)),
    ],
)
def test_conv2d_matches_direct_loops(shape, fshape, strides, padding, dilations, rng):
    x = rng.standard_normal(shape)
    f = rng.standard_normal(fshape)
    out = tf.nn.conv2d(x, f, [1, *strides, 1], padding, dilations=[1, *dilations, 1])
    expected = _conv_reference(x, f, strides, padding, dilations)
    assert out.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(_run(out), expected, rtol=1e-10, atol=1e-10)


def test_conv2d_nchw_equals_transposed_nhwc(rng):
    x = rng.standard_normal((2, 3, 6, 5))  # NCHW
    f = rng.standard_normal((3, 3, 3, 4))
    out = tf.nn.conv2d(x, f, [1, 1, 2, 2], "SAME", data_format="NCHW")
    expected = _conv_reference(x.transpose(0, 2, 3, 1), f, (2, 2), "SAME").transpose(0, 3, 1, 2)
    assert out.shape.as_list() == [2, 4, 3, 3]
    np.testing.assert_allclose(_run(out), expected, atol=1e-10)


@pytest.mark.parametrize("channels", [2, 16])  # col2im and per-tap input gradients
def test_conv2d_gradients_are_the_backprop_ops_and_adjoint(channels, rng):
    x = tf.constant(rng.standard_normal((2, 6, 6, channels)))
    f = tf.constant(rng.standard_normal((3, 3, channels, 3)))
    y = tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME")
    dy = rng.standard_normal((2, 3, 3, 3))
    gx, gf = tf.gradients(y, [x, f], grad_ys=dy)
    assert gx.op.type == "Conv2DBackpropInput" and gf.op.type == "Conv2DBackpropFilter"
    xv, fv, gxv, gfv = _run([x, f, gx, gf])
    # <conv(x, f), dy> is bilinear: its gradients satisfy <gx, x> = <gf, f> = <y, dy>.
    y_dot = float((_conv_reference(xv, fv, (2, 2), "SAME") * dy).sum())
    assert float((gxv * xv).sum()) == pytest.approx(y_dot)
    assert float((gfv * fv).sum()) == pytest.approx(y_dot)


def test_conv2d_transpose_is_the_adjoint_of_conv2d(rng):
    x = rng.standard_normal((1, 5, 5, 2))
    f = rng.standard_normal((3, 3, 2, 4))
    z = rng.standard_normal((1, 3, 3, 4))
    t = tf.nn.conv2d_transpose(z, f, output_shape=[1, 5, 5, 2], strides=[1, 2, 2, 1])
    assert t.shape.as_list() == [1, 5, 5, 2]
    tv = _run(t)
    lhs = float((_conv_reference(x, f, (2, 2), "SAME") * z).sum())
    assert float((tv * x).sum()) == pytest.approx(lhs)


def _pool_reference(x, k, s, padding, reduce):
    n, h, w, c = x.shape
    oh, pt = _pads(h, k, s, 1, padding)
    ow, pl = _pads(w, k, s, 1, padding)
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s - pt, j * s - pl
            window = x[:, max(r0, 0) : r0 + k, max(c0, 0) : c0 + k, :]
            out[:, i, j, :] = reduce(window, axis=(1, 2))
    return out


@pytest.mark.parametrize(
    "k, s, padding, shape",
    [(2, 2, "VALID", (2, 6, 6, 3)), (3, 2, "SAME", (1, 7, 5, 2)), (3, 1, "VALID", (1, 5, 5, 1))],
)
def test_max_and_avg_pool_match_numpy(k, s, padding, shape, rng):
    x = rng.standard_normal(shape)
    mp = tf.nn.max_pool(x, [1, k, k, 1], [1, s, s, 1], padding)
    ap = tf.nn.avg_pool(x, [1, k, k, 1], [1, s, s, 1], padding)
    m, a = _run([mp, ap])
    np.testing.assert_allclose(m, _pool_reference(x, k, s, padding, np.max))
    np.testing.assert_allclose(a, _pool_reference(x, k, s, padding, np.mean))


def test_max_pool_gradient_routes_to_the_maximum():
    x = tf.constant(np.array([[1.0, 5.0], [3.0, 2.0]]).reshape(1, 2, 2, 1))
    (g,) = tf.gradients(tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID") * 7.0, x)
    assert g.op.type == "MaxPoolGrad"
    np.testing.assert_allclose(_run(g).reshape(2, 2), [[0.0, 7.0], [0.0, 0.0]])


def test_max_pool_gradient_of_tied_window_goes_to_the_first_maximum():
    x = tf.zeros([1, 4, 4, 1])
    pooled = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    (g,) = tf.gradients(pooled, x)
    expected = np.zeros((4, 4))
    expected[::2, ::2] = 1.0
    np.testing.assert_allclose(_run(g).reshape(4, 4), expected)


def test_overlapping_max_pool_gradient_adds_up(rng):
    x = rng.standard_normal((1, 5, 5, 2))
    xt = tf.constant(x)
    (g,) = tf.gradients(tf.nn.max_pool(xt, [1, 3, 3, 1], [1, 1, 1, 1], "SAME"), xt)
    expected = np.zeros_like(x)
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
    for i in range(5):
        for j in range(5):
            for c in range(2):
                window = padded[0, i : i + 3, j : j + 3, c]
                a, b = np.unravel_index(np.argmax(window), (3, 3))
                expected[0, i + a - 1, j + b - 1, c] += 1.0
    np.testing.assert_allclose(_run(g), expected)


def test_pooling_nchw(rng):
    x = rng.standard_normal((1, 2, 4, 4))
    out = _run(tf.nn.max_pool(x, [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW"))
    expected = _pool_reference(x.transpose(0, 2, 3, 1), 2, 2, "VALID", np.max)
    np.testing.assert_allclose(out, expected.transpose(0, 3, 1, 2))


# --- embeddings ---------------------------------------------------------------------------------
def test_embedding_lookup_on_a_variable_gives_sparse_gradient(rng):
    table = rng.standard_normal((10, 4))
    params = tf.Variable(table)
    ids = np.array([[1, 7], [7, 0]])
    out = tf.nn.embedding_lookup(params, ids)
    (g,) = tf.gradients(tf.reduce_sum(out), params)
    assert isinstance(g, tf.IndexedSlices)
    np.testing.assert_allclose(_run(out), table[ids])


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_over_shards(strategy, rng):
    table = rng.standard_normal((11, 3))
    if strategy == "mod":
        shards = [table[i::3] for i in range(3)]
    else:  # 11 rows in 3 shards: sizes 4, 4, 3
        shards = [table[0:4], table[4:8], table[8:11]]
    params = [tf.Variable(s) for s in shards]
    ids = np.array([[0, 5, 10], [3, 4, 8]])
    out = tf.nn.embedding_lookup(params, ids, partition_strategy=strategy)
    np.testing.assert_allclose(_run(out), table[ids])
    grads = tf.gradients(tf.reduce_sum(out), params)
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)


def test_embedding_lookup_max_norm_clips_rows():
    params = tf.constant([[3.0, 4.0], [0.3, 0.4]])
    out = _run(tf.nn.embedding_lookup(params, [0, 1], max_norm=1.0))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)


# --- top k ------------------------------------------------------------------------------------------
def test_top_k_values_indices_and_ties():
    x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 4.0, 6.0, 0.0]])
    values, indices = _run(tf.nn.top_k(x, k=2))
    np.testing.assert_allclose(values, [[3.0, 3.0], [6.0, 5.0]])
    np.testing.assert_array_equal(indices, [[1, 2], [2, 0]])


def test_top_k_gradient_scatters_back(rng):
    x = tf.constant(rng.standard_normal((2, 6)))
    values, _ = tf.nn.top_k(x, k=3)
    (g,) = tf.gradients(tf.reduce_sum(values), x)
    xv, gv = _run([x, g])
    expected = np.zeros((2, 6))
    np.put_along_axis(expected, np.argsort(-xv, axis=1)[:, :3], 1.0, axis=1)
    np.testing.assert_allclose(gv, expected)


def test_top_k_with_k_beyond_the_axis_fails():
    with pytest.raises(ValueError):
        tf.nn.top_k(tf.zeros([2, 3]), k=4)


def test_in_top_k():
    predictions = np.array([[0.1, 0.9, 0.3], [0.5, 0.5, 0.1], [0.2, 0.1, 0.7]], np.float32)
    out = _run(tf.nn.in_top_k(predictions, [2, 1, 0], 1))
    np.testing.assert_array_equal(out, [False, True, False])
    out = _run(tf.nn.in_top_k(predictions, [2, 1, 0], 2))
    np.testing.assert_array_equal(out, [True, True, True])
