"""Example protos and their parsing against TensorFlow-written fixtures (tests/fixtures/tf_examples,
made by make_fixtures.py there): the same bytes, the same parsed values."""

import json
import os

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors
from tests.tf_interop import run_tensorflow

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_examples")


def _fixture(name):
    return os.path.join(FIXTURES, name)


def _records(name):
    return list(tf.io.tf_record_iterator(_fixture(name)))


def _feature(kind, values):
    if kind == "bytes":
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[v.encode() for v in values]))
    if kind == "float":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _features(spec):
    return tf.train.Features(feature={k: _feature(*v) for k, v in spec.items()})


def _plain(value):
    value = np.asarray(value)
    return value.astype("S") if value.dtype == object else value


def _flatten(prefix, values, out):
    for key, value in values.items():
        if hasattr(value, "dense_shape"):
            for part in ("indices", "values", "dense_shape"):
                out[f"{prefix}/{key}/{part}"] = _plain(getattr(value, part))
        else:
            out[f"{prefix}/{key}"] = _plain(value)


def test_examples_serialize_to_the_bytes_tensorflow_wrote():
    with open(_fixture("examples.json")) as f:
        spec = json.load(f)
    ours = [
        tf.train.Example(features=_features(e)).SerializeToString(deterministic=True)
        for e in spec["examples"]
    ]
    assert ours == _records("examples.tfrecord")
    sequences = []
    for s in spec["sequence_examples"]:
        lists = {
            k: tf.train.FeatureList(feature=[_feature(kind, step) for step in steps])
            for k, (kind, steps) in s["feature_lists"].items()
        }
        proto = tf.train.SequenceExample(
            context=_features(s["context"]), feature_lists=tf.train.FeatureLists(feature_list=lists)
        )
        sequences.append(proto.SerializeToString(deterministic=True))
    assert sequences == _records("sequence_examples.tfrecord")


def test_tensorflow_records_parse_back_into_the_same_messages():
    example = tf.train.Example.FromString(_records("examples.tfrecord")[0])
    assert list(example.features.feature["tokens"].int64_list.value) == [4, 8, 15]
    assert example.features.feature["name"].bytes_list.value == [b"first"]
    sequence = tf.train.SequenceExample.FromString(_records("sequence_examples.tfrecord")[1])
    frames = sequence.feature_lists.feature_list["frames"].feature
    assert [list(f.float_list.value) for f in frames] == [[-1.0, -2.0, -3.0]]


def _example_spec():
    return {
        "label": tf.io.FixedLenFeature([], tf.int64),
        "weights": tf.io.FixedLenFeature([3], tf.float32),
        "name": tf.io.FixedLenFeature([], tf.string),
        "tokens": tf.io.VarLenFeature(tf.int64),
        "opt": tf.io.FixedLenFeature([2], tf.float32, default_value=[-1.0, -2.0]),
        "sparse": tf.io.SparseFeature("idx", "val", tf.float32, 5),
        "seq": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
    }


def test_parsed_values_equal_tensorflows():
    examples, sequences = _records("examples.tfrecord"), _records("sequence_examples.tfrecord")
    context = {
        "length": tf.FixedLenFeature([], tf.int64),
        "ctx_name": tf.FixedLenFeature([], tf.string),
        "missing": tf.FixedLenFeature([1], tf.int64, default_value=[5]),
    }
    sequence = {
        "frames": tf.FixedLenSequenceFeature([3], tf.float32),
        "words": tf.VarLenFeature(tf.int64),
        "tags": tf.FixedLenSequenceFeature([], tf.string),
        "absent": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=True),
    }
    fetches = {
        "batch": tf.parse_example(tf.constant(examples), _example_spec()),
        "single": tf.io.parse_single_example(tf.constant(examples[0]), _example_spec()),
        "singles": [
            tf.parse_single_sequence_example(tf.constant(s), context, sequence) for s in sequences
        ],
        "seq": tf.io.parse_sequence_example(tf.constant(sequences), context, sequence),
    }
    with tf.Session() as sess:
        out = sess.run(fetches)
    got = {}
    _flatten("example", out["batch"], got)
    _flatten("single", out["single"], got)
    for k, (ctx, lists) in enumerate(out["singles"]):
        _flatten(f"sequence{k}/context", ctx, got)
        _flatten(f"sequence{k}/lists", lists, got)
    ctx, lists, lengths = out["seq"]
    _flatten("sequences/context", ctx, got)
    _flatten("sequences/lists", lists, got)
    _flatten("sequences/lengths", lengths, got)
    expected = np.load(_fixture("parsed.npz"))
    assert sorted(got) == sorted(expected.files)
    for key in expected.files:
        assert got[key].dtype == expected[key].dtype, key
        np.testing.assert_array_equal(got[key], expected[key], err_msg=key)


def test_static_shapes_follow_the_feature_spec():
    parsed = tf.parse_example(tf.placeholder(tf.string, [4]), _example_spec())
    assert parsed["weights"].shape.as_list() == [4, 3]
    assert parsed["seq"].shape.as_list() == [4, None, 2]
    assert parsed["tokens"].indices.shape.as_list() == [None, 2]
    assert parsed["sparse"].dense_shape.dtype == tf.int64


def test_missing_required_feature_names_the_key():
    empty = tf.train.Example().SerializeToString()
    parsed = tf.parse_single_example(empty, {"pixels": tf.FixedLenFeature([2], tf.float32)})
    with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match="pixels"):
        sess.run(parsed["pixels"])


def test_wrong_kind_or_count_is_an_invalid_argument():
    ex = tf.train.Example(features=_features({"x": ["int64", [1, 2]]})).SerializeToString()
    as_float = tf.parse_single_example(ex, {"x": tf.FixedLenFeature([2], tf.float32)})
    too_few = tf.parse_single_example(ex, {"x": tf.FixedLenFeature([3], tf.int64)})
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="Data types don't match"):
            sess.run(as_float)
        with pytest.raises(errors.InvalidArgumentError, match="Values size: 2"):
            sess.run(too_few)


def test_sequence_feature_without_allow_missing_is_rejected_in_examples():
    with pytest.raises(ValueError, match="allow_missing"):
        tf.parse_example(["x"], {"x": tf.FixedLenSequenceFeature([], tf.float32)})


def test_examples_read_through_a_tfrecord_dataset():
    dataset = tf.data.TFRecordDataset(_fixture("examples.tfrecord")).map(
        lambda record: tf.parse_single_example(record, {"label": tf.FixedLenFeature([], tf.int64)})
    )
    label = tf.data.make_one_shot_iterator(dataset).get_next()["label"]
    with tf.Session() as sess:
        assert [sess.run(label) for _ in range(3)] == [1, 0, -7]


def test_tensorflow_parses_what_nbflow_serializes(tmp_path):
    path = str(tmp_path / "ours.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(
            tf.train.Example(features=_features({"x": ["float", [0.5, 2.0]]})).SerializeToString()
        )
    out = run_tensorflow(
        """
        import sys
        r = next(iter(tf1.io.tf_record_iterator(sys.argv[1])))
        print(list(tf.train.Example.FromString(r).features.feature["x"].float_list.value))
        """,
        path,
    )
    assert out.strip().splitlines()[-1] == "[0.5, 2.0]"
