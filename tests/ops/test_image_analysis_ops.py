"""More of tf.image against TensorFlow's values (tests/fixtures/tf_examples/image_analysis.npz,
made by make_image_analysis.py there from the same inputs)."""

import os

import numpy as np
import pytest

import nbflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_examples")
EXPECTED = np.load(os.path.join(FIXTURES, "image_analysis.npz"))


def _inputs():
    """The fixture script's inputs (its inputs() needs only NumPy)."""
    path = os.path.join(FIXTURES, "make_image_analysis.py")
    source = open(path).read().split("\nif __name__")[0].replace("import tensorflow as tf\n", "")
    namespace: dict = {"__file__": path}
    exec(compile(source, path, "exec"), namespace)  # noqa: S102 - our own fixture script
    return namespace["inputs"]()


def test_image_analysis_matches_tensorflow():
    images, noisy, boxes, scores = _inputs()
    dy, dx = tf.image.image_gradients(images)
    padded, valid = tf.image.non_max_suppression_padded(
        boxes, scores, 8, iou_threshold=0.3, score_threshold=0.2, pad_to_max_output_size=True
    )
    fetches = {
        "yiq": tf.image.rgb_to_yiq(images),
        "yiq_back": tf.image.yiq_to_rgb(tf.image.rgb_to_yiq(images)),
        "yuv": tf.image.rgb_to_yuv(images),
        "yuv_back": tf.image.yuv_to_rgb(tf.image.rgb_to_yuv(images)),
        "dy": dy,
        "dx": dx,
        "sobel": tf.image.sobel_edges(images),
        "psnr": tf.image.psnr(images, noisy, 1.0),
        "ssim": tf.image.ssim(images, noisy, 1.0),
        "nms": tf.image.non_max_suppression(boxes, scores, 6, iou_threshold=0.3),
        "nms_padded": padded,
        "nms_valid": valid,
        "boxes_drawn": tf.image.draw_bounding_boxes(
            images[:, :10, :12], np.reshape(boxes[:6], [2, 3, 4]) * 1.2 - 0.1
        ),
        "patches_same": tf.image.extract_patches(
            images, [1, 3, 2, 1], [1, 2, 3, 1], [1, 2, 1, 1], "SAME"
        ),
        "patches_valid": tf.image.extract_image_patches(
            images, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID"
        ),
    }
    out = tf.Session().run(fetches)
    for key, value in out.items():
        assert np.shape(value) == EXPECTED[key].shape, key
        np.testing.assert_allclose(value, EXPECTED[key], rtol=1e-4, atol=1e-5, err_msg=key)


def test_nms_with_scores_and_overlaps():
    _, _, boxes, scores = _inputs()
    indices, kept_scores = tf.image.non_max_suppression_with_scores(boxes, scores, 6, 0.3)
    iou = tf.constant(_iou(boxes))
    by_overlap = tf.image.non_max_suppression_overlaps(iou, scores, 6, overlap_threshold=0.3)
    a, s, b = tf.Session().run([indices, kept_scores, by_overlap])
    np.testing.assert_array_equal(a, EXPECTED["nms"])
    np.testing.assert_array_equal(b, EXPECTED["nms"])
    np.testing.assert_allclose(s, scores[a])


def _iou(boxes):
    out = np.zeros((len(boxes), len(boxes)))
    for i, p in enumerate(boxes):
        for j, q in enumerate(boxes):
            h = max(0.0, min(p[2], q[2]) - max(p[0], q[0]))
            w = max(0.0, min(p[3], q[3]) - max(p[1], q[1]))
            inter = h * w
            union = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter
            out[i, j] = inter / union if union > 0 else 0.0
    return out


def test_jpeg_quality_round_trip_keeps_dtype_and_stays_close():
    images, _, _, _ = _inputs()
    image = tf.constant(images[0])
    low, high, random = tf.Session().run(
        [
            tf.image.adjust_jpeg_quality(image, 10),
            tf.image.adjust_jpeg_quality(image, 95),
            tf.image.random_jpeg_quality(image, 50, 90, seed=1),
        ]
    )
    assert low.dtype == np.float32 and low.shape == images[0].shape
    assert np.abs(high - images[0]).mean() < np.abs(low - images[0]).mean()
    assert random.shape == images[0].shape
    with pytest.raises(ValueError):
        tf.image.random_jpeg_quality(image, 90, 50)


def test_sobel_edges_have_a_gradient():
    x = tf.constant(np.random.default_rng(0).random((1, 5, 5, 2)))
    (grad,) = tf.gradients(tf.reduce_sum(tf.image.sobel_edges(x) ** 2), [x])
    assert tf.Session().run(grad).shape == (1, 5, 5, 2)
