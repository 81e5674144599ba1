"""Image codecs against TensorFlow: files TensorFlow encoded (tests/fixtures/tf_examples) decode
to the pixels TensorFlow decoded, and what nbflow encodes decodes back to its input."""

import os

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_examples")
EXPECTED = np.load(os.path.join(FIXTURES, "decoded.npz"))


def _file(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return tf.constant(f.read())


def _decodes():
    return {
        "png": tf.image.decode_png(_file("image.png")),
        "png_gray": tf.image.decode_png(_file("image_gray.png")),
        "png_gray_as_rgb": tf.image.decode_png(_file("image_gray.png"), channels=3),
        "png_rgba": tf.image.decode_png(_file("image_rgba.png")),
        "png_rgba_as_rgb": tf.image.decode_png(_file("image_rgba.png"), channels=3),
        "png_as_gray": tf.image.decode_png(_file("image.png"), channels=1),
        "png_as_rgba": tf.image.decode_png(_file("image.png"), channels=4),
        "png_gray_as_rgba": tf.image.decode_png(_file("image_gray.png"), channels=4),
        "png_rgba_as_gray": tf.image.decode_png(_file("image_rgba.png"), channels=1),
        "bmp_as_rgba": tf.image.decode_bmp(_file("image.bmp"), channels=4),
        "png16": tf.image.decode_png(_file("image16.png"), dtype=tf.uint16),
        "png16_as_uint8": tf.image.decode_png(_file("image16.png")),
        "gif": tf.image.decode_gif(_file("image.gif")),
        "bmp": tf.image.decode_bmp(_file("image.bmp")),
        "image_png": tf.io.decode_image(_file("image.png")),
        "image_gif": tf.image.decode_image(_file("image.gif")),
    }


def test_lossless_formats_decode_exactly_as_tensorflow():
    out = tf.Session().run(_decodes())
    for key, value in out.items():
        assert value.dtype == EXPECTED[key].dtype, key
        np.testing.assert_array_equal(value, EXPECTED[key], err_msg=key)


def test_jpeg_decodes_within_a_few_levels_of_tensorflow():
    # TensorFlow asks libjpeg for its fast integer IDCT, Pillow for the accurate one.
    rgb, gray = tf.Session().run(
        [tf.image.decode_jpeg(_file("image.jpg")), tf.image.decode_jpeg(_file("image.jpg"), 1)]
    )
    for ours, key in ((rgb, "jpeg"), (gray, "jpeg_as_gray")):
        assert ours.shape == EXPECTED[key].shape and ours.dtype == np.uint8
        assert np.abs(ours.astype(int) - EXPECTED[key]).max() <= 3, key
    assert (
        np.abs(rgb.astype(int) - EXPECTED["source_rgb"]).mean() < 10
    )  # lossy (noise, 4:2:0 chroma), but close


def test_decode_image_to_float_scales_to_unit_range():
    value = tf.Session().run(tf.image.decode_image(_file("image.png"), dtype=tf.float32))
    np.testing.assert_allclose(value, EXPECTED["image_png_float"], rtol=1e-6)


@pytest.mark.parametrize("source", ["source_rgb", "source_gray", "source_rgba", "source_deep"])
def test_png_encoding_round_trips(source):
    image = EXPECTED[source]
    encoded = tf.image.encode_png(image)
    back = tf.image.decode_png(encoded, dtype=tf.as_dtype(image.dtype))
    np.testing.assert_array_equal(tf.Session().run(back), image)


def test_jpeg_encoding_round_trips_closely_and_is_recognized():
    image = EXPECTED["source_rgb"]
    encoded = tf.image.encode_jpeg(image, quality=95)
    back, is_jpeg = tf.Session().run([tf.image.decode_jpeg(encoded), tf.image.is_jpeg(encoded)])
    assert is_jpeg and back.shape == image.shape
    assert np.abs(back.astype(int) - image).mean() < 10


def test_wrong_format_and_bad_channels_are_invalid_arguments():
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="PNG"):
            sess.run(tf.image.decode_png(_file("image.jpg")))
        with pytest.raises(errors.InvalidArgumentError, match="Unknown image file format"):
            sess.run(tf.image.decode_image(tf.constant(b"not an image")))
        with pytest.raises(errors.InvalidArgumentError, match="channels"):
            sess.run(tf.image.decode_jpeg(_file("image.jpg"), channels=2))
