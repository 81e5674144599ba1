"""Export for inference: SavedModel in a fresh process, and freezing variables to constants."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import nbflow as tf
from nbflow.framework.protos import SavedModel
from tests.tf_interop import run_tensorflow


def _model(rng):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(rng.standard_normal((3, 2)).astype(np.float32), name="dense/w")
    b = tf.Variable(rng.standard_normal(2).astype(np.float32), name="dense/b")
    y = tf.add(tf.matmul(x, w), b, name="y")
    return x, y


_SERVE = """
import json, sys
import numpy as np
import nbflow as tf
export_dir, inputs = sys.argv[1], np.array(json.loads(sys.argv[2]), np.float32)
with tf.Session(graph=tf.Graph()) as sess:
    meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
    sig = meta.signature_def[tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
    out = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: inputs})
print(json.dumps(out.tolist()))
"""


def test_simple_save_then_load_in_a_fresh_process_serves_the_same_predictions(tmp_path, rng):
    x, y = _model(rng)
    batch = rng.standard_normal((4, 3)).astype(np.float32)
    export_dir = str(tmp_path / "export")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(y, {x: batch})
        assert tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y}) == export_dir
    assert sorted(os.listdir(export_dir)) == ["saved_model.pb", "variables"]
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        saved_model = SavedModel.FromString(f.read())
    info = saved_model.meta_graphs[0].signature_def["serving_default"].inputs["x"]
    assert (info.name, info.dtype, [d.size for d in info.tensor_shape.dim]) == ("x:0", 1, [-1, 3])
    result = subprocess.run(
        [sys.executable, "-c", _SERVE, export_dir, json.dumps(batch.tolist())],
        capture_output=True,
        text=True,
        check=True,
    )
    np.testing.assert_allclose(np.array(json.loads(result.stdout)), expected, rtol=1e-6)


def test_builder_refuses_a_non_empty_directory_and_unknown_tags(tmp_path, rng):
    x, y = _model(rng)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "file").write_text("x")
    with pytest.raises(AssertionError, match="already exists"):
        tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "full"))
    builder = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "m"))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        builder.add_meta_graph_and_variables(sess, ["train"])
        with pytest.raises(AssertionError, match="already been saved"):
            builder.add_meta_graph_and_variables(sess, ["train"])
    builder.add_meta_graph(["serve", "gpu"])
    builder.save()
    assert tf.saved_model.loader.maybe_saved_model_directory(str(tmp_path / "m"))
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(RuntimeError, match="could not be found"):
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "m"))
        meta = tf.saved_model.loader.load(sess, ["gpu", "serve"], str(tmp_path / "m"))
        assert list(meta.meta_info_def.tags) == ["serve", "gpu"]


def test_freezing_replaces_variables_by_constants_with_their_values(rng):
    x, y = _model(rng)
    batch = rng.standard_normal((2, 3)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(y, {x: batch})
        frozen = tf.graph_util.convert_variables_to_constants(sess, sess.graph_def, ["y"])
    ops = {n["name"]: n["op"] for n in frozen["node"]}
    assert ops["dense/w"] == "Const" and "VariableV2" not in ops.values()
    assert not any(op == "Assign" for op in ops.values())  # initializers were pruned
    with tf.Graph().as_default():
        (out,) = tf.import_graph_def(
            json.loads(json.dumps(frozen)), return_elements=["y:0"], name=""
        )
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out, {"x:0": batch}), expected)


def test_remove_training_nodes_and_extract_sub_graph(rng):
    x, y = _model(rng)
    tf.identity(y, name="extra")
    graph_def = tf.get_default_graph().as_graph_def()
    sub = tf.graph_util.extract_sub_graph(graph_def, ["y"])
    assert "extra" not in {n["name"] for n in sub["node"]}
    stripped = tf.graph_util.remove_training_nodes(sub)
    names = {n["name"] for n in stripped["node"]}
    assert "dense/w/read" not in names and "y" in names


def test_a_saved_model_tensorflow_wrote_loads_and_computes_tensorflows_outputs():
    fixtures = os.path.join(os.path.dirname(__file__), "fixtures", "tf")
    io = np.load(os.path.join(fixtures, "frozen_io.npz"))  # same model, same input
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(
            sess, [tf.saved_model.tag_constants.SERVING], os.path.join(fixtures, "saved_model")
        )
        signature = meta.signature_def["serving_default"]
        x, y = signature.inputs["x"].name, signature.outputs["y"].name
        np.testing.assert_allclose(sess.run(y, {x: io["x"]}), io["y"], rtol=1e-6)
        with pytest.raises(RuntimeError, match="could not be found"):
            tf.saved_model.loader.load(sess, ["train"], os.path.join(fixtures, "saved_model"))


def test_a_meta_graph_tensorflow_wrote_imports_with_its_variables_and_restores():
    fixtures = os.path.join(os.path.dirname(__file__), "fixtures", "tf")
    saver = tf.train.import_meta_graph(os.path.join(fixtures, "model.meta"))
    assert sorted(v.op.name for v in tf.trainable_variables())[:2] == ["counts", "dense/bias"]
    assert tf.train.get_global_step().op.name == "global_step"
    with tf.Session() as sess:
        saver.restore(sess, os.path.join(fixtures, "ckpt", "model.ckpt-7"))
        kernel, words, step = sess.run(["dense/kernel:0", "words:0", "global_step:0"])
    np.testing.assert_array_equal(kernel, (np.arange(12) * 0.25 - 1).reshape(3, 4))
    assert list(words) == [b"hello", b"world"] and step == 7


def test_tensorflow_loads_a_saved_model_nbflow_wrote_and_serves_the_same(tmp_path, rng):
    x, y = _model(rng)
    batch = rng.standard_normal((4, 3)).astype(np.float32)
    export_dir = str(tmp_path / "export")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(y, {x: batch})
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
    np.save(tmp_path / "x.npy", batch)
    run_tensorflow(
        """
        import sys, numpy as np
        tf1.disable_eager_execution()
        with tf1.Session(graph=tf1.Graph()) as sess:
            meta = tf1.saved_model.loader.load(sess, ["serve"], sys.argv[1])
            sig = meta.signature_def["serving_default"]
            y = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: np.load(sys.argv[2])})
            np.save(sys.argv[3], y)
        """,
        export_dir,
        str(tmp_path / "x.npy"),
        str(tmp_path / "y.npy"),
    )
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=1e-5)
