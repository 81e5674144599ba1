"""tf.saved_model's constants and signature helpers against what TensorFlow's produce.

The fixture tests/fixtures/tf/saved_model_api.json was written by
tests/fixtures/make_saved_model_api.py with real TensorFlow.
"""

import json
import os

import numpy as np
import pytest
from google.protobuf import text_format

import nbflow as tf
from nbflow.framework import protos
from nbflow.train import meta_graph

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "tf", "saved_model_api.json")
# Not at nbflow's tf.saved_model top level: newer than TensorFlow 1.15 (debug info), or TPU
# (excluded from the ledger); each still has its value in the submodule named here.
NOT_TOP_LEVEL = {
    "DEBUG_DIRECTORY": "constants",
    "DEBUG_INFO_FILENAME_PB": "constants",
    "TPU": "tag_constants",
}


@pytest.fixture(scope="module")
def fixture():
    with open(FIXTURE) as f:
        return json.load(f)


def test_constants_have_tensorflows_values(fixture):
    for name, value in fixture["constants"].items():
        if name in NOT_TOP_LEVEL:
            assert getattr(getattr(tf.saved_model, NOT_TOP_LEVEL[name]), name) == value
        else:
            assert getattr(tf.saved_model, name) == value, name
    assert tf.saved_model.tag_constants.TRAINING == "train"
    assert tf.saved_model.signature_constants.REGRESS_METHOD_NAME == "tensorflow/serving/regress"


def _placeholders():
    return (
        tf.placeholder(tf.string, [None], name="examples"),
        tf.placeholder(tf.string, [None, 3], name="classes"),
        tf.placeholder(tf.float32, [None, 3], name="scores"),
        tf.placeholder(tf.float32, [None, 1], name="preds"),
    )


def test_signature_helpers_build_tensorflows_signature_defs(fixture):
    sm = tf.saved_model
    with tf.Graph().as_default():
        examples, classes, scores, preds = _placeholders()
        built = {
            "classify": sm.classification_signature_def(examples, classes, scores),
            "classify_scores_only": sm.classification_signature_def(examples, None, scores),
            "regress": sm.regression_signature_def(examples, preds),
            "predict": sm.predict_signature_def({"x": scores}, {"y": preds}),
            "custom": sm.build_signature_def(
                {"x": sm.utils.build_tensor_info(scores)},
                {"y": sm.utils.build_tensor_info(preds)},
                "my/method",
            ),
        }
    for key, signature in built.items():
        expected = text_format.Parse(fixture["signatures"][key], protos.SignatureDef())
        assert meta_graph.signature_def_proto(signature) == expected, key
        assert sm.is_valid_signature(signature) == fixture["is_valid"][key], key
        assert sm.is_valid_signature(expected) == fixture["is_valid"][key], key
    assert not sm.is_valid_signature(None)


def test_signature_helpers_reject_wrong_dtypes_as_tensorflow_does():
    sm = tf.saved_model
    with tf.Graph().as_default():
        examples, classes, scores, preds = _placeholders()
        with pytest.raises(ValueError, match="examples must be a string Tensor"):
            sm.classification_signature_def(scores, classes, scores)
        with pytest.raises(ValueError, match="cannot both be None"):
            sm.classification_signature_def(examples, None, None)
        with pytest.raises(ValueError, match="scores must be a float Tensor"):
            sm.classification_signature_def(examples, classes, classes)
        with pytest.raises(ValueError, match="predictions must be a float Tensor"):
            sm.regression_signature_def(examples, examples)


def test_main_op_initializes_locals_and_main_op_with_restore_restores(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(np.float32(3.0), name="v")
        local = tf.Variable(
            np.arange(3, dtype=np.float32), name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES]
        )
        saver = tf.train.Saver([v])
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "ckpt"))
            sess.run(v.assign(7.0))
            sess.run(tf.saved_model.main_op.main_op())
            np.testing.assert_array_equal(sess.run(local), [0.0, 1.0, 2.0])
            assert sess.run(v) == 7.0
            op = tf.saved_model.main_op_with_restore(saver.saver_def["restore_op_name"])
            sess.run(op, {saver.saver_def["filename_tensor_name"]: path})
            assert sess.run(v) == 3.0


def test_contains_saved_model(tmp_path):
    assert not tf.saved_model.contains_saved_model(str(tmp_path))
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.identity(x * 2.0, name="y")
        with tf.Session() as sess:
            tf.saved_model.simple_save(sess, str(tmp_path / "m"), {"x": x}, {"y": y})
    assert tf.saved_model.contains_saved_model(str(tmp_path / "m"))
    assert os.path.isfile(tmp_path / "m" / tf.saved_model.SAVED_MODEL_FILENAME_PB)
