"""TensorFlow's GraphDef protos: frozen graphs TensorFlow wrote import and compute the same outputs;
malformed, cyclic or unsupported GraphDefs are refused with errors naming the node or op types."""

import os

import numpy as np
import pytest
from google.protobuf import text_format

import nbflow as tf
from tests.tf_interop import run_tensorflow

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "tf")


def _frozen(text=False):
    graph_def = tf.GraphDef()
    if text:
        with open(os.path.join(FIXTURES, "frozen.pbtxt")) as f:
            text_format.Parse(f.read(), graph_def)
    else:
        with open(os.path.join(FIXTURES, "frozen.pb"), "rb") as f:
            graph_def.ParseFromString(f.read())
    return graph_def


@pytest.mark.parametrize("text", [False, True], ids=["pb", "pbtxt"])
def test_a_frozen_tensorflow_graph_imports_and_computes_tensorflows_outputs(text):
    io = np.load(os.path.join(FIXTURES, "frozen_io.npz"))
    x, y = tf.import_graph_def(_frozen(text), return_elements=["x:0", "y:0"], name="")
    assert x.dtype == tf.float32 and x.shape.as_list() == [None, 3]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: io["x"]}), io["y"], rtol=1e-6)
        w = sess.run(tf.get_default_graph().get_tensor_by_name("w:0"))
    n = np.arange(6, dtype=np.float64) * 0.25 - 1  # values([3, 2], 1) of make_tf_fixtures.py
    np.testing.assert_array_equal(w, n.reshape(3, 2).astype(np.float32))


def test_binary_and_text_forms_are_the_same_graph_def():
    assert _frozen(text=False) == _frozen(text=True)


def test_every_missing_op_type_is_named_in_one_error():
    graph_def = _frozen()
    for node, op in zip(graph_def.node[-3:], ["MadeUpNorm", "MadeUpActivation"] * 2):
        node.op = op
    with pytest.raises(tf.errors.NotFoundError) as info:  # TensorFlow's class for this
        tf.import_graph_def(graph_def, name="")
    message = str(info.value)
    assert "2 op type(s)" in message and "MadeUpNorm (nodes add, y)" in message
    assert "MadeUpActivation (node Relu)" in message
    assert tf.get_default_graph().get_operations() == []  # nothing half-imported


@pytest.mark.parametrize(
    "node, pattern",
    [
        ("not a node", "node #0 has no name"),
        ({"name": "a"}, "Node 'a' of graph_def has no op type"),
        ({"name": "a", "op": "NoOp", "input": "b"}, "Node 'a': 'input' must be a list"),
    ],
)
def test_a_malformed_graph_def_names_the_node(node, pattern):
    with pytest.raises(ValueError, match=pattern):
        tf.import_graph_def({"node": [node]})


def test_a_cycle_is_refused_naming_its_nodes():
    graph_def = tf.GraphDef()
    graph_def.node.add(name="a", op="Identity", input=["b"])
    graph_def.node.add(name="b", op="Identity", input=["a"])
    with pytest.raises(ValueError, match="cycle through node 'a': a -> b -> a"):
        tf.import_graph_def(graph_def)


def test_duplicate_names_and_dangling_inputs_are_refused():
    graph_def = tf.GraphDef()
    graph_def.node.add(name="a", op="NoOp")
    graph_def.node.add(name="a", op="NoOp")
    with pytest.raises(ValueError, match="Node 'a' appears twice"):
        tf.import_graph_def(graph_def)
    with pytest.raises(ValueError, match="input 'nowhere' not in the graph_def"):
        tf.import_graph_def({"node": [{"name": "b", "op": "Identity", "input": ["nowhere"]}]})
    with pytest.raises(TypeError, match="must be a GraphDef proto"):
        tf.import_graph_def("\x08\x01garbage")


def test_tensorflow_imports_a_frozen_graph_nbflow_wrote_and_computes_the_same(tmp_path):
    rng = np.random.default_rng(0)
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(rng.standard_normal((3, 4)).astype(np.float32), name="w")
    b = tf.Variable(rng.standard_normal(4).astype(np.float32), name="b")
    h = tf.nn.relu(tf.matmul(x, w) + b)
    y = tf.nn.softmax(tf.reshape(tf.reduce_mean(h, axis=1, keepdims=True) * h, [-1, 4]), name="y")
    feed = rng.standard_normal((2, 3)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(y, {x: feed})
        frozen = tf.graph_util.convert_variables_to_constants(
            sess, tf.get_default_graph().as_graph_def(), ["y"]
        )
    path = tf.train.write_graph(frozen, str(tmp_path), "frozen.pb", as_text=False)
    np.save(tmp_path / "x.npy", feed)
    out = run_tensorflow(
        """
        import sys, numpy as np
        tf1.disable_eager_execution()
        graph_def = tf1.GraphDef()
        graph_def.ParseFromString(open(sys.argv[1], "rb").read())
        x, y = tf1.import_graph_def(graph_def, return_elements=["x:0", "y:0"], name="")
        with tf1.Session() as sess:
            np.save(sys.argv[2], sess.run(y, {x: np.load(sys.argv[3])}))
        """,
        path,
        str(tmp_path / "y.npy"),
        str(tmp_path / "x.npy"),
    )
    del out
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=1e-5)
    # and nbflow reads its own file back
    graph_def = tf.GraphDef()
    graph_def.ParseFromString(open(path, "rb").read())
    with tf.Graph().as_default():
        x2, y2 = tf.import_graph_def(graph_def, return_elements=["x:0", "y:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y2, {x2: feed}), expected, rtol=1e-6)
