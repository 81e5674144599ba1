"""Files and raw bytes as tensors: read_file, write_file, matching_files, decode_raw and
serialize_tensor, checked against NumPy and the file system."""

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors


def test_write_then_read_a_file(tmp_path):
    path = str(tmp_path / "sub" / "data.bin")
    with tf.Session() as sess:
        sess.run(tf.write_file(path, tf.constant(b"\x00\x01abc")))
        assert sess.run(tf.read_file(path)) == b"\x00\x01abc"
        assert sess.run(tf.io.matching_files(str(tmp_path / "sub" / "*.bin"))).tolist() == [
            path.encode()
        ]


def test_reading_a_missing_file_is_not_found(tmp_path):
    with tf.Session() as sess, pytest.raises(errors.NotFoundError, match="nope"):
        sess.run(tf.read_file(str(tmp_path / "nope")))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("little_endian", [True, False])
def test_decode_raw_reads_bytes_as_numpy_does(dtype, little_endian):
    values = np.arange(-3, 9).astype(dtype).reshape(2, 6)
    order = "<" if little_endian else ">"
    rows = [r.astype(np.dtype(dtype).newbyteorder(order)).tobytes() for r in values]
    decoded = tf.decode_raw(tf.constant(rows), tf.as_dtype(dtype), little_endian=little_endian)
    assert decoded.shape.as_list() == [2, None]
    out = tf.Session().run(decoded)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, values)


def test_decode_raw_needs_equal_lengths():
    with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match="same size"):
        sess.run(tf.io.decode_raw(tf.constant([b"ab", b"abcd"]), tf.uint8))


def test_serialize_tensor_round_trips():
    value = np.arange(6, dtype=np.int64).reshape(2, 3)
    back = tf.io.parse_tensor(tf.io.serialize_tensor(value), tf.int64)
    np.testing.assert_array_equal(tf.Session().run(back), value)
