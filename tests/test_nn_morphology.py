"""dilation2d, erosion2d, max_pool_with_argmax and collapse_repeated against NumPy loops."""

import numpy as np
import pytest

import nbflow as tf

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def padded_taps(x, window, stride, rate, padding):
    """Yields (out_y, out_x, [(tap value per batch/channel, y, x) ...]) over valid input taps."""
    _, h, w, _ = x.shape
    eff = [(k - 1) * r + 1 for k, r in zip(window, rate)]
    if padding == "VALID":
        out = [(s - e) // st + 1 for s, e, st in zip((h, w), eff, stride)]
        pad = [0, 0]
    else:
        out = [-(-s // st) for s, st in zip((h, w), stride)]
        pad = [max((o - 1) * st + e - s, 0) // 2 for o, st, e, s in zip(out, stride, eff, (h, w))]
    for oy in range(out[0]):
        for ox in range(out[1]):
            taps = []
            for dy in range(window[0]):
                for dx in range(window[1]):
                    y = oy * stride[0] + dy * rate[0] - pad[0]
                    x_ = ox * stride[1] + dx * rate[1] - pad[1]
                    if 0 <= y < h and 0 <= x_ < w:
                        taps.append((dy, dx, y, x_))
            yield oy, ox, out, taps


def numpy_dilation(x, f, stride, rate, padding):
    results = {
        (oy, ox): np.max([x[:, y, x_] + f[dy, dx] for dy, dx, y, x_ in taps], axis=0)
        for oy, ox, _, taps in padded_taps(x, f.shape[:2], stride, rate, padding)
    }
    rows, cols = max(k[0] for k in results) + 1, max(k[1] for k in results) + 1
    got = np.zeros((x.shape[0], rows, cols, x.shape[3]))
    for (oy, ox), v in results.items():
        got[:, oy, ox] = v
    return got


@pytest.mark.parametrize(
    "stride, rate, padding", [((1, 1), (1, 1), "VALID"), ((2, 1), (1, 2), "SAME")]
)
def test_dilation2d_and_erosion2d_match_numpy(stride, rate, padding):
    x = RNG.standard_normal((2, 6, 7, 3))
    f = RNG.standard_normal((2, 3, 3))
    strides, rates = [1, *stride, 1], [1, *rate, 1]
    dilated = tf.nn.dilation2d(x, f, strides, rates, padding)
    eroded = tf.nn.erosion2d(x, f, strides, rates, padding)
    with tf.Session() as sess:
        got_d, got_e = sess.run([dilated, eroded])
    np.testing.assert_allclose(got_d, numpy_dilation(x, f, stride, rate, padding))
    np.testing.assert_allclose(got_e, -numpy_dilation(-x, f[::-1, ::-1], stride, rate, padding))


def test_dilation2d_gradient_goes_to_the_winning_tap():
    x = RNG.standard_normal((1, 4, 4, 1))
    f = RNG.standard_normal((2, 2, 1))
    xp = tf.constant(x)
    (grad,) = tf.gradients(
        tf.reduce_sum(tf.nn.dilation2d(xp, f, [1, 1, 1, 1], [1, 1, 1, 1], "VALID")), [xp]
    )
    want = np.zeros_like(x)
    for oy in range(3):
        for ox in range(3):
            scores = [
                x[0, oy + dy, ox + dx, 0] + f[dy, dx, 0] for dy in range(2) for dx in range(2)
            ]
            k = int(np.argmax(scores))
            want[0, oy + k // 2, ox + k % 2, 0] += 1
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(grad), want)


@pytest.mark.parametrize("padding, include_batch", [("VALID", False), ("SAME", True)])
def test_max_pool_with_argmax_gives_tensorflows_flat_index(padding, include_batch):
    x = RNG.standard_normal((2, 5, 5, 3)).astype(np.float32)
    values, argmax = tf.nn.max_pool_with_argmax(
        x, [1, 2, 2, 1], [1, 2, 2, 1], padding, include_batch_in_index=include_batch
    )
    with tf.Session() as sess:
        got_values, got_argmax = sess.run([values, argmax])
    assert argmax.dtype == tf.int64
    _, h, w, c = x.shape
    for b in range(2):
        for oy, ox, _, taps in padded_taps(x, (2, 2), (2, 2), (1, 1), padding):
            for ch in range(c):
                best = max(taps, key=lambda t: x[b, t[2], t[3], ch])  # first maximum wins
                index = (best[2] * w + best[3]) * c + ch + (b * h * w * c if include_batch else 0)
                assert got_argmax[b, oy, ox, ch] == index
                assert got_values[b, oy, ox, ch] == x[b, best[2], best[3], ch]


def test_collapse_repeated_merges_runs_within_each_length():
    labels = np.array([[1, 1, 2, 2, 3], [4, 4, 4, 5, 5], [7, 8, 8, 9, 9]])
    lengths = np.array([5, 4, 2])
    collapsed, new_lengths = tf.nn.collapse_repeated(labels, lengths)
    with tf.Session() as sess:
        got, got_lengths = sess.run([collapsed, new_lengths])
    np.testing.assert_array_equal(got_lengths, [3, 2, 2])
    np.testing.assert_array_equal(got, [[1, 2, 3], [4, 5, 0], [7, 8, 0]])


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_extract_image_patches_flattens_each_window_into_the_depth(padding):
    x = RNG.standard_normal((2, 7, 6, 3))
    patches = tf.image.extract_image_patches(x, [1, 2, 3, 1], [1, 2, 1, 1], [1, 2, 1, 1], padding)
    with tf.Session() as sess:
        got = sess.run(patches)
    for b in range(2):
        for oy, ox, _, taps in padded_taps(x, (2, 3), (2, 1), (2, 1), padding):
            want = np.zeros((2, 3, 3))
            for dy, dx, y, x_ in taps:
                want[dy, dx] = x[b, y, x_]
            np.testing.assert_allclose(got[b, oy, ox], want.reshape(-1))
    *_, (_, _, size, _) = padded_taps(x, (2, 3), (2, 1), (2, 1), padding)
    assert got.shape[1:3] == tuple(size)
    assert tf.extract_image_patches is tf.image.extract_image_patches
