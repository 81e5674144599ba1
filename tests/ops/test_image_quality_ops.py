"""tf.image colour spaces, gradients, Sobel edges, PSNR and SSIM against TensorFlow's values
(tests/fixtures/image_quality.npz, written by tests/fixtures/make_image_quality.py)."""

import json
from pathlib import Path

import numpy as np
import pytest

import nbflow as tf

FIXTURE = np.load(Path(__file__).parents[1] / "fixtures" / "image_quality.npz")


def images():
    grid = np.arange(2 * 16 * 16 * 3, dtype=np.float64).reshape(2, 16, 16, 3)
    a = 0.5 + 0.5 * np.sin(grid * 0.37)
    b = np.clip(a + 0.1 * np.cos(grid * 1.3), 0, 1)
    return a.astype(np.float32), b.astype(np.float32)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def test_image_ops_match_tensorflow():
    a, b = images()
    dy, dx = tf.image.image_gradients(a)
    fetches = {
        "yiq": tf.image.rgb_to_yiq(a),
        "yuv": tf.image.rgb_to_yuv(a),
        "dy": dy,
        "dx": dx,
        "sobel": tf.image.sobel_edges(a),
        "psnr": tf.image.psnr(a, b, 1.0),
        "ssim": tf.image.ssim(a, b, 1.0),
        "ssim_small": tf.image.ssim(a, b, 1.0, filter_size=5, filter_sigma=0.8),
    }
    with tf.Session() as sess:
        got = sess.run(fetches)
    for key, value in got.items():
        np.testing.assert_allclose(value, FIXTURE[key], rtol=1e-4, atol=1e-5, err_msg=key)


def test_colour_conversions_invert():
    a, _ = images()
    with tf.Session() as sess:
        yiq, yuv = sess.run(
            [
                tf.image.yiq_to_rgb(tf.image.rgb_to_yiq(a)),
                tf.image.yuv_to_rgb(tf.image.rgb_to_yuv(a)),
            ]
        )
    np.testing.assert_allclose(yiq, a, atol=1e-4)  # the inverse matrices are rounded
    np.testing.assert_allclose(yuv, a, atol=1e-4)


def test_ssim_of_an_image_with_itself_is_one_and_has_a_gradient():
    a, b = images()
    x = tf.constant(b)
    score = tf.image.ssim(tf.constant(a), x, 1.0)
    (grad,) = tf.gradients(tf.reduce_sum(score), [x])
    with tf.Session() as sess:
        same, g = sess.run([tf.image.ssim(a, a, 1.0), grad])
    np.testing.assert_allclose(same, [1.0, 1.0], rtol=1e-5)
    assert np.isfinite(g).all() and np.abs(g).sum() > 0


def test_soft_nms_selects_and_rescores_as_tensorflow():
    fixture = json.loads((Path(__file__).parents[1] / "fixtures" / "soft_nms.json").read_text())
    boxes = np.array(fixture["boxes"], np.float32)
    scores = np.array(fixture["scores"], np.float32)
    for case in fixture["cases"]:
        indices, kept = tf.image.non_max_suppression_with_scores(
            boxes,
            scores,
            15,
            case["iou_threshold"],
            case["score_threshold"],
            case["soft_nms_sigma"],
        )
        with tf.Session() as sess:
            got_indices, got_scores = sess.run([indices, kept])
        assert got_indices.tolist() == case["indices"]
        np.testing.assert_allclose(got_scores, case["scores"], rtol=1e-5)
