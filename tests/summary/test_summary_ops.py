"""Summary ops yield serialized Summary protos with TensorFlow's tags, scopes and encodings."""

import io
import wave
import zlib

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors
from nbflow.framework import protos


def _summary(value):
    return protos.Summary.FromString(np.asarray(value, dtype=object).item())


def test_scalar_summary_tag_gets_the_name_scope_and_is_collected():
    with tf.name_scope("train"):
        s = tf.summary.scalar("loss", tf.constant(2.5))
    assert s.dtype is tf.string and s.op.name == "train/loss"
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [s]
    with tf.Session() as sess:
        (value,) = _summary(sess.run(s)).value
    assert value.tag == "train/loss" and value.simple_value == 2.5


def test_repeated_names_family_and_collections_follow_tensorflow():
    a = tf.summary.scalar("loss", tf.constant(1.0))
    b = tf.summary.scalar("loss", tf.constant(2.0), family="eval", collections=["mine"])
    c = tf.summary.scalar("bad name!", tf.constant(3.0))
    with tf.Session() as sess:
        tags = [_summary(sess.run(t)).value[0].tag for t in (a, b, c)]
    assert tags == ["loss", "eval/eval/loss", "bad_name_"]
    assert tf.get_collection("mine") == [b] and tf.get_collection(tf.GraphKeys.SUMMARIES) == [a, c]
    with pytest.raises(ValueError, match="scalar"):
        tf.summary.scalar("v", tf.constant([1.0, 2.0]))


def test_histogram_matches_tensorflow_statistics_and_buckets(rng):
    values = rng.standard_normal(1000)
    s = tf.summary.histogram("w", tf.constant(values))
    with tf.Session() as sess:
        h = _summary(sess.run(s)).value[0].histo
    assert h.num == 1000 and h.min == values.min() and h.max == values.max()
    np.testing.assert_allclose(h.sum, values.sum())
    np.testing.assert_allclose(h.sum_squares, (values**2).sum())
    assert sum(h.bucket) == 1000
    assert list(h.bucket_limit) == sorted(h.bucket_limit)
    counts = np.asarray(h.bucket)
    assert not np.any((counts[:-1] == 0) & (counts[1:] == 0))  # runs of empty buckets collapse


def test_histogram_of_nan_fails_like_tensorflow():
    s = tf.summary.histogram("w", tf.constant([1.0, np.nan]))
    with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match="Nan in summary"):
        sess.run(s)


def _png_pixels(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, data, header = 8, b"", None
    while pos < len(png):
        length = int.from_bytes(png[pos : pos + 4], "big")
        kind, body = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            data += body
        pos += 12 + length
    width, height = int.from_bytes(header[:4], "big"), int.from_bytes(header[4:8], "big")
    raw = np.frombuffer(zlib.decompress(data), np.uint8).reshape(height, -1)
    return raw[:, 1:].reshape(height, width, -1)


def test_image_summary_encodes_png_and_scales_floats_like_tensorflow():
    images = np.zeros((3, 4, 5, 3), np.float32)
    images[0, 0, 0] = [1.0, 0.5, 0.0]
    s = tf.summary.image("input", tf.constant(images), max_outputs=2)
    u = tf.summary.image("raw", tf.constant(np.full((1, 2, 2, 1), 7, np.uint8)), max_outputs=1)
    with tf.Session() as sess:
        values = _summary(sess.run(s)).value
        (single,) = _summary(sess.run(u)).value
    assert [v.tag for v in values] == ["input/image/0", "input/image/1"]
    image = values[0].image
    assert (image.height, image.width, image.colorspace) == (4, 5, 3)
    pixels = _png_pixels(image.encoded_image_string)
    assert pixels.shape == (4, 5, 3) and list(pixels[0, 0]) == [255, 128, 0]
    assert single.tag == "raw/image" and np.all(_png_pixels(single.image.encoded_image_string) == 7)


def test_audio_summary_encodes_wav():
    clip = np.sin(np.linspace(0, 20, 800)).astype(np.float32)[None, :]
    s = tf.summary.audio("voice", tf.constant(clip), 8000, max_outputs=1)
    with tf.Session() as sess:
        (value,) = _summary(sess.run(s)).value
    assert value.tag == "voice/audio" and value.audio.content_type == "audio/wav"
    with wave.open(io.BytesIO(value.audio.encoded_audio_string)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getnframes()) == (8000, 1, 800)


def test_text_and_tensor_summaries_carry_the_tensor_and_plugin():
    t = tf.summary.text("notes", tf.constant(["a", "b"]))
    u = tf.summary.tensor_summary("grid", tf.constant(np.eye(2)), display_name="Grid")
    with tf.Session() as sess:
        (tv,) = _summary(sess.run(t)).value
        (uv,) = _summary(sess.run(u)).value
    assert tv.metadata.plugin_data.plugin_name == "text"
    assert list(protos.make_ndarray(tv.tensor)) == [b"a", b"b"]
    np.testing.assert_array_equal(protos.make_ndarray(uv.tensor), np.eye(2))
    assert uv.metadata.display_name == "Grid"
    with pytest.raises(ValueError, match="string"):
        tf.summary.text("n", tf.constant(1.0))


def test_merge_all_combines_collected_summaries_and_rejects_duplicate_tags():
    assert tf.summary.merge_all() is None
    x = tf.placeholder(tf.float32, [])
    tf.summary.scalar("a", x)
    tf.summary.histogram("b", tf.stack([x, x]) if hasattr(tf, "stack") else x)
    merged = tf.summary.merge_all()
    dup = tf.summary.merge([tf.summary.scalar("c", x, collections=[]), tf.summary.merge_all()])
    with tf.Session() as sess:
        values = _summary(sess.run(merged, {x: 1.0})).value
        assert [v.tag for v in values] == ["a", "b"]
        sess.run(dup, {x: 1.0})
        twice = tf.summary.merge([merged, merged])
        with pytest.raises(errors.InvalidArgumentError, match="Duplicate tag a"):
            sess.run(twice, {x: 1.0})


@pytest.mark.parametrize("tag", ["loss", "", "layer1/é", "x" * 200])
def test_scalar_summary_bytes_are_protobufs_serialization(tag):
    values = np.array([0.5, -0.0, np.nan, np.inf, 3e38, 1e39, -1e-45, 0.0])
    tags = np.array([tag.encode()] * len(values), dtype=object)
    s = tf.summary.scalar("s", tf.constant(1.0))  # the op's kernel, run on arrays below
    kernel = s.op.op_def.compute
    with np.errstate(over="ignore"):
        expected = protos.Summary(
            value=[protos.Summary.Value(tag=tag, simple_value=float(np.float32(v))) for v in values]
        ).SerializeToString()
    assert kernel(None, tags, values).item() == expected
