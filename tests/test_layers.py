"""tf.layers against NumPy re-implementations: values, variable names, sharing, collections."""

import numpy as np
import pytest

import nbflow as tf


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _values(sess, variables):
    return {v.op.name: sess.run(v) for v in variables}


# --- NumPy references -----------------------------------------------------------------------------
def _np_pad(size, k, stride, dilation, padding):
    k_eff = (k - 1) * dilation + 1
    if padding == "VALID":
        return (size - k_eff) // stride + 1, 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + k_eff - size, 0) // 2


def _np_conv2d(x, w, strides=(1, 1), padding="VALID", dilation=(1, 1)):
    """NHWC input, HWIO kernel, TensorFlow's SAME padding (extra padding after)."""
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    oh, top = _np_pad(h, kh, strides[0], dilation[0], padding)
    ow, left = _np_pad(wd, kw, strides[1], dilation[1], padding)
    padded = np.zeros((n, h + 2 * kh * dilation[0], wd + 2 * kw * dilation[1], c), x.dtype)
    padded[:, top : top + h, left : left + wd] = x
    out = np.zeros((n, oh, ow, f))
    for i in range(oh):
        for j in range(ow):
            rows = i * strides[0] + dilation[0] * np.arange(kh)
            cols = j * strides[1] + dilation[1] * np.arange(kw)
            patch = padded[:, rows][:, :, cols]  # [n, kh, kw, c]
            out[:, i, j] = np.einsum("nhwc,hwcf->nf", patch, w)
    return out


def _np_pool(x, size, stride, padding, reduce):
    n, h, w, c = x.shape
    oh, top = _np_pad(h, size, stride, 1, padding)
    ow, left = _np_pad(w, size, stride, 1, padding)
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * stride - top, j * stride - left
            window = x[:, max(r0, 0) : r0 + size, max(c0, 0) : c0 + size]
            out[:, i, j] = reduce(window, axis=(1, 2))
    return out


# --- dense ----------------------------------------------------------------------------------------
def test_dense_computes_activation_of_inputs_times_kernel_plus_bias(rng):
    x = rng.normal(size=(4, 3)).astype(np.float32)
    y = tf.layers.dense(x, 5, activation=tf.nn.relu, bias_initializer=tf.constant_initializer(0.1))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, v = sess.run(y), _values(sess, tf.trainable_variables())
    np.testing.assert_allclose(got, np.maximum(x @ v["dense/kernel"] + 0.1, 0), rtol=1e-5)


def test_dense_applies_kernel_to_last_axis_of_rank3_inputs(rng):
    x = tf.placeholder(tf.float32, [None, 2, 3])
    y = tf.layers.dense(x, 4, use_bias=False)
    assert y.shape.as_list() == [None, 2, 4]
    value = rng.normal(size=(5, 2, 3)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, kernel = sess.run([y, "dense/kernel:0"], {x: value})
    np.testing.assert_allclose(got, value @ kernel, rtol=1e-5)
    assert [v.op.name for v in tf.global_variables()] == ["dense/kernel"]


def test_dense_default_initializers_are_glorot_uniform_and_zeros():
    tf.layers.dense(tf.zeros([2, 30]), 20)
    kernel, bias = _run(tf.trainable_variables())
    limit = np.sqrt(6 / (30 + 20))
    assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.8 * limit
    assert abs(kernel.mean()) < 0.05 and kernel.std() == pytest.approx(limit / np.sqrt(3), 0.1)
    np.testing.assert_array_equal(bias, np.zeros(20))


def test_layer_names_are_uniquified_and_prefixed_by_variable_scopes():
    x = tf.zeros([2, 3])
    tf.layers.dense(x, 2)
    tf.layers.dense(x, 2)
    with tf.variable_scope("model"):
        tf.layers.dense(x, 2, name="logits")
        tf.layers.conv2d(tf.zeros([1, 4, 4, 1]), 2, 3)
        tf.layers.batch_normalization(x)
    assert [v.op.name for v in tf.global_variables()] == [
        "dense/kernel",
        "dense/bias",
        "dense_1/kernel",
        "dense_1/bias",
        "model/logits/kernel",
        "model/logits/bias",
        "model/conv2d/kernel",
        "model/conv2d/bias",
        "model/batch_normalization/gamma",
        "model/batch_normalization/beta",
        "model/batch_normalization/moving_mean",
        "model/batch_normalization/moving_variance",
    ]


def test_named_layer_with_reuse_shares_its_variables(rng):
    x = rng.normal(size=(2, 3)).astype(np.float32)
    a = tf.layers.dense(x, 4, name="fc")
    b = tf.layers.dense(2 * x, 4, name="fc", reuse=True)
    assert len(tf.global_variables()) == 2
    got_a, got_b = _run([a, b])
    kernel_times_x = got_a - _run(tf.trainable_variables()[1])  # bias is zero either way
    np.testing.assert_allclose(got_b, 2 * kernel_times_x, rtol=1e-5)


def test_reusing_a_name_without_reuse_raises_and_reuse_needs_existing_variables():
    tf.layers.dense(tf.zeros([2, 3]), 4, name="fc")
    with pytest.raises(ValueError, match="already exists"):
        tf.layers.dense(tf.zeros([2, 3]), 4, name="fc")
    with pytest.raises(ValueError, match="does not exist"):
        tf.layers.dense(tf.zeros([2, 3]), 4, name="other", reuse=True)
    with tf.variable_scope("shared", reuse=tf.AUTO_REUSE):
        tf.layers.dense(tf.zeros([2, 3]), 4, name="fc")
        tf.layers.dense(tf.zeros([2, 3]), 4, name="fc")
    assert len(tf.global_variables("shared")) == 2


def test_layer_object_called_twice_shares_variables_and_name_scope():
    layer = tf.layers.Dense(3, name="head")
    a, b = layer(tf.ones([2, 4])), layer(tf.zeros([5, 4]))
    assert layer.name == "head" and layer.built
    assert [v.op.name for v in layer.variables] == ["head/kernel", "head/bias"]
    assert len(tf.global_variables()) == 2
    assert a.op.name.startswith("head/") and b.op.name.startswith("head/")
    assert layer.trainable_weights == layer.variables and layer.non_trainable_weights == []


def test_kernel_regularizer_adds_to_regularization_losses(rng):
    y = tf.layers.dense(
        tf.ones([2, 3]),
        4,
        kernel_regularizer=lambda w: 0.5 * tf.reduce_sum(tf.square(w)),
        activity_regularizer=lambda out: tf.reduce_mean(out),
        name="fc",
    )
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 2
    tf.layers.dense(tf.ones([2, 3]), 4, name="fc", reuse=True, kernel_regularizer=tf.nn.l2_loss)
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 2  # not re-added
    kernel_loss, activity_loss, kernel, out = _run([*losses, "fc/kernel:0", y])
    assert kernel_loss == pytest.approx(0.5 * np.sum(kernel**2), rel=1e-5)
    assert activity_loss == pytest.approx(out.mean(), rel=1e-5)


def test_untrainable_layer_keeps_its_variables_out_of_trainable_variables():
    tf.layers.dense(tf.ones([2, 3]), 4, trainable=False)
    assert tf.trainable_variables() == [] and len(tf.global_variables()) == 2


# --- conv2d and pooling ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "padding, strides, dilation", [("valid", 1, 1), ("SAME", 2, 1), ("Same", 1, 2), ("VALID", 2, 1)]
)
def test_conv2d_matches_numpy(rng, padding, strides, dilation):
    x = rng.normal(size=(2, 7, 6, 3)).astype(np.float32)
    y = tf.layers.conv2d(
        x,
        4,
        (3, 2),
        strides=strides,
        padding=padding,
        dilation_rate=dilation,
        bias_initializer=tf.random_normal_initializer(seed=1),
    )
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, v = sess.run(y), _values(sess, tf.trainable_variables())
    assert v["conv2d/kernel"].shape == (3, 2, 3, 4)
    expected = _np_conv2d(x, v["conv2d/kernel"], (strides,) * 2, padding.upper(), (dilation,) * 2)
    np.testing.assert_allclose(got, expected + v["conv2d/bias"], rtol=1e-4, atol=1e-5)


def test_conv2d_channels_first_agrees_with_channels_last(rng):
    x = rng.normal(size=(2, 5, 5, 3)).astype(np.float32)
    init = tf.random_normal_initializer(seed=3)
    last = tf.layers.conv2d(x, 4, 3, padding="same", kernel_initializer=init, bias_initializer=init)
    first = tf.layers.conv2d(
        np.transpose(x, (0, 3, 1, 2)),
        4,
        3,
        padding="same",
        data_format="channels_first",
        kernel_initializer=init,
        bias_initializer=init,
    )
    assert first.shape.as_list() == [2, 4, 5, 5]
    got_last, got_first = _run([last, first])
    np.testing.assert_allclose(
        np.transpose(got_first, (0, 2, 3, 1)), got_last, rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_pooling_layers_match_numpy(rng, padding):
    x = rng.normal(size=(2, 5, 7, 3)).astype(np.float32)
    got_max, got_avg = _run(
        [
            tf.layers.max_pooling2d(x, 2, 2, padding=padding),
            tf.layers.average_pooling2d(x, (3, 3), (2, 2), padding=padding),
        ]
    )
    np.testing.assert_allclose(got_max, _np_pool(x, 2, 2, padding.upper(), np.max), rtol=1e-6)
    np.testing.assert_allclose(got_avg, _np_pool(x, 3, 2, padding.upper(), np.mean), rtol=1e-5)


def test_pooling_channels_first_and_class_forms(rng):
    x = rng.normal(size=(1, 2, 4, 4)).astype(np.float32)
    pooled = tf.layers.MaxPooling2D(2, 2, data_format="channels_first")(x)
    expected = _np_pool(np.transpose(x, (0, 2, 3, 1)), 2, 2, "VALID", np.max)
    np.testing.assert_allclose(_run(pooled), np.transpose(expected, (0, 3, 1, 2)))
    with pytest.raises(ValueError, match="padding"):
        tf.layers.max_pooling2d(x, 2, 2, padding="full")


# --- flatten and dropout --------------------------------------------------------------------------
def test_flatten_keeps_batch_and_orders_channels_first_inputs_as_channels_last(rng):
    x = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    ph = tf.placeholder(tf.float32, [None, 3, None, 5])
    flat, dynamic = tf.layers.flatten(x), tf.layers.Flatten()(ph)
    first = tf.layers.flatten(x, data_format="channels_first")
    assert flat.shape.as_list() == [2, 60] and dynamic.shape.ndims == 2
    with tf.Session() as sess:
        got, got_dynamic, got_first = sess.run([flat, dynamic, first], {ph: x})
    np.testing.assert_array_equal(got, x.reshape(2, -1))
    np.testing.assert_array_equal(got_dynamic, x.reshape(2, -1))
    np.testing.assert_array_equal(got_first, np.transpose(x, (0, 2, 3, 1)).reshape(2, -1))


def test_dropout_is_identity_unless_training(rng):
    x = np.ones((200, 50), np.float32)
    training = tf.placeholder_with_default(False, [])
    off = tf.layers.dropout(x, rate=0.3)
    on = tf.layers.dropout(x, rate=0.3, training=True, seed=1)
    switched = tf.layers.Dropout(0.3, seed=2)(x, training=training)
    with tf.Session() as sess:
        got_off, got_on = sess.run([off, on])
        eval_mode, train_mode = sess.run(switched), sess.run(switched, {training: True})
    np.testing.assert_array_equal(got_off, x)
    np.testing.assert_array_equal(eval_mode, x)
    for dropped in (got_on, train_mode):
        assert set(np.unique(dropped)) <= {0.0, np.float32(1 / 0.7)}
        assert (dropped == 0).mean() == pytest.approx(0.3, abs=0.02)


# --- batch normalization --------------------------------------------------------------------------
def _np_batch_norm_training(batches, axis, momentum, epsilon, unbiased):
    """Outputs of each training step and the moving averages after them (gamma 1, beta 0)."""
    axes = tuple(i for i in range(batches[0].ndim) if i != axis % batches[0].ndim)
    channels = batches[0].shape[axis]
    moving_mean, moving_var = np.zeros(channels), np.ones(channels)
    outputs = []
    for x in batches:
        mean, var = x.mean(axes), x.var(axes)
        shape = [1] * x.ndim
        shape[axis] = channels
        outputs.append((x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon))
        n = x.size / channels
        averaged = var * n / (n - 1) if unbiased else var
        moving_mean = moving_mean * momentum + mean * (1 - momentum)
        moving_var = moving_var * momentum + averaged * (1 - momentum)
    return outputs, moving_mean, moving_var


@pytest.mark.parametrize(
    "shape, axis, fused, unbiased",
    [
        ((8, 3), -1, None, False),  # dense activations: biased variance
        ((4, 3, 3, 2), -1, None, True),  # NHWC: the fused path, unbiased variance
        ((4, 2, 3, 3), 1, None, True),  # NCHW
        ((4, 3, 3, 2), 3, False, False),  # fused=False: biased
    ],
)
def test_batch_normalization_trains_moving_averages_like_numpy(rng, shape, axis, fused, unbiased):
    x = tf.placeholder(tf.float32, shape)
    y = tf.layers.batch_normalization(x, axis=axis, momentum=0.9, training=True, fused=fused)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    batches = [rng.normal(2.0, 3.0, size=shape).astype(np.float32) for _ in range(3)]
    outputs, mean, var = _np_batch_norm_training(batches, axis, 0.9, 1e-3, unbiased)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for batch, expected in zip(batches, outputs):
            got, _ = sess.run([y, updates], {x: batch})
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
        moving = sess.run(
            ["batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
        )
    np.testing.assert_allclose(moving[0], mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(moving[1], var, rtol=1e-5, atol=1e-6)


def test_batch_normalization_inference_uses_moving_statistics_gamma_and_beta(rng):
    x = rng.normal(size=(5, 4)).astype(np.float32)
    y = tf.layers.batch_normalization(
        x,
        epsilon=0.01,
        gamma_initializer=tf.constant_initializer(2.0),
        beta_initializer=tf.constant_initializer(0.5),
        moving_mean_initializer=tf.constant_initializer(1.0),
        moving_variance_initializer=tf.constant_initializer(4.0),
    )
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    names = {v.op.name for v in tf.trainable_variables()}
    assert names == {"batch_normalization/gamma", "batch_normalization/beta"}
    assert len(tf.global_variables()) == 4
    np.testing.assert_allclose(_run(y), 2 * (x - 1) / np.sqrt(4.01) + 0.5, rtol=1e-5)


def test_batch_normalization_with_training_tensor_updates_only_when_training(rng):
    x = rng.normal(3.0, 1.0, size=(16, 2)).astype(np.float32)
    training = tf.placeholder(tf.bool, [])
    layer = tf.layers.BatchNormalization(momentum=0.5, center=False, scale=False)
    y = layer(x, training=training)
    assert [v.op.name for v in layer.variables] == [
        "batch_normalization/moving_mean",
        "batch_normalization/moving_variance",
    ]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        inference, _ = sess.run([y, layer.updates], {training: False})
        np.testing.assert_allclose(inference, x / np.sqrt(1.001), rtol=1e-5)
        np.testing.assert_allclose(sess.run(layer.moving_mean), [0, 0])
        trained, _ = sess.run([y, layer.updates], {training: True})
        moving_mean = sess.run(layer.moving_mean)
    np.testing.assert_allclose(trained, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3), rtol=1e-4)
    np.testing.assert_allclose(moving_mean, 0.5 * x.mean(0), rtol=1e-5)


# --- end to end -----------------------------------------------------------------------------------
def test_dense_mlp_learns_sklearn_digits_to_over_90_percent_accuracy():
    digits = pytest.importorskip("sklearn.datasets").load_digits()
    order = np.random.default_rng(0).permutation(len(digits.target))
    features = (digits.data[order] / 16.0).astype(np.float32)
    labels = digits.target[order].astype(np.int64)
    train = slice(0, 1400)

    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.int64, [None])
    hidden = tf.layers.dense(x, 64, activation=tf.nn.relu)
    logits = tf.layers.dense(hidden, 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    train_op = tf.train.AdamOptimizer(0.02).minimize(loss)
    accuracy, update_accuracy = tf.metrics.accuracy(labels=y, predictions=tf.argmax(logits, 1))

    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        for step in range(60):
            batch = slice(step * 200 % 1400, step * 200 % 1400 + 200)
            sess.run(train_op, {x: features[train][batch], y: labels[train][batch]})
        for start in range(1400, len(labels), 100):  # streaming over test batches
            batch = slice(start, start + 100)
            sess.run(update_accuracy, {x: features[batch], y: labels[batch]})
        assert sess.run(accuracy) > 0.9
