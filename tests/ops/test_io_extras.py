"""The rest of tf.io: base64, compressed strings, JSON Examples, JPEG shape and crop, sparse
serialization and match_filenames_once; checked against the standard library and NumPy."""

import base64
import gzip
import os
import zlib

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_examples")


def test_base64_is_web_safe_and_round_trips():
    data = [b"\xfb\xff?", b"", b"hello"]
    encoded, padded, decoded = tf.Session().run(
        [
            tf.io.encode_base64(data),
            tf.io.encode_base64(data, pad=True),
            tf.io.decode_base64(tf.io.encode_base64(data)),
        ]
    )
    assert padded.tolist() == [base64.urlsafe_b64encode(d) for d in data]
    assert encoded.tolist() == [base64.urlsafe_b64encode(d).rstrip(b"=") for d in data]
    assert decoded.tolist() == data


def test_decode_compressed():
    out = tf.Session().run(
        [
            tf.io.decode_compressed([zlib.compress(b"abc")], "ZLIB"),
            tf.io.decode_compressed([gzip.compress(b"xyz")], "GZIP"),
        ]
    )
    assert [o.tolist() for o in out] == [[b"abc"], [b"xyz"]]
    with tf.Session() as sess, pytest.raises(errors.DataLossError):
        sess.run(tf.io.decode_compressed([b"not zlib"], "ZLIB"))


def test_json_examples_parse_like_binary_ones():
    text = '{"features": {"feature": {"x": {"floatList": {"value": [1.5, 2]}}}}}'
    parsed = tf.io.parse_example(
        tf.io.decode_json_example([text]), {"x": tf.io.FixedLenFeature([2], tf.float32)}
    )
    assert tf.Session().run(parsed["x"]).tolist() == [[1.5, 2.0]]


def test_jpeg_shape_and_crop():
    with open(os.path.join(FIXTURES, "image.jpg"), "rb") as f:
        data = tf.constant(f.read())
    shape, crop, whole = tf.Session().run(
        [
            tf.io.extract_jpeg_shape(data),
            tf.io.decode_and_crop_jpeg(data, [2, 3, 4, 5]),
            tf.image.decode_jpeg(data),
        ]
    )
    assert shape.tolist() == [12, 10, 3]
    np.testing.assert_array_equal(crop, whole[2:6, 3:8])


def test_sparse_serialization_round_trips():
    sp = tf.SparseTensor([[0, 1], [2, 0], [2, 3]], np.array([1, 2, 3], np.int64), [4, 5])
    rows = tf.io.serialize_many_sparse(sp)
    back = tf.io.deserialize_many_sparse(rows, tf.int64, rank=2)
    single = tf.io.serialize_sparse(sp)
    rows_value, value, single_value = tf.Session().run([rows, back, single])
    assert rows_value.shape == (4, 3) and single_value.shape == (3,)
    np.testing.assert_array_equal(value.indices, [[0, 1], [2, 0], [2, 3]])
    np.testing.assert_array_equal(value.values, [1, 2, 3])
    np.testing.assert_array_equal(value.dense_shape, [4, 5])  # each entry keeps its shape [5]
    with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match="float32"):
        sess.run(tf.io.deserialize_many_sparse(rows, tf.float32).values)


def test_match_filenames_once_is_a_local_variable(tmp_path):
    for name in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / name).write_text("x")
    files = tf.io.match_filenames_once(str(tmp_path / "*.txt"))
    assert files in tf.local_variables()
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert [os.path.basename(f) for f in sess.run(files)] == [b"a.txt", b"b.txt"]
