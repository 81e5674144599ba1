"""GraphDef: a graph as JSON and back, with input_map and return_elements."""

import json

import numpy as np
from google.protobuf import text_format
import pytest

import nbflow as tf
from nbflow.framework.graph_def import node_def_of
from nbflow.framework.op_def import registered_ops


def _build():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.constant(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), name="w")
    with tf.name_scope("layer"):
        y = tf.matmul(x, w, transpose_b=True, name="y")
    init = tf.no_op(name="init")
    with tf.control_dependencies([init]):
        z = tf.identity(y, name="z")
    return x, z


def test_graph_def_is_json_with_nodes_inputs_and_control_inputs():
    _build()
    graph_def = tf.get_default_graph().as_graph_def()
    text = json.dumps(graph_def)
    nodes = {n["name"]: n for n in json.loads(text)["node"]}
    assert nodes["layer/y"]["op"] == "MatMul"
    assert nodes["layer/y"]["input"] == ["x", "w"]
    assert nodes["layer/y"]["attr"]["transpose_b"] is True
    assert nodes["z"]["input"] == ["layer/y", "^init"]


def test_round_trip_keeps_the_program_runnable():
    _build()
    graph_def = json.loads(json.dumps(tf.get_default_graph().as_graph_def()))
    g2 = tf.Graph()
    with g2.as_default():
        x, z = tf.import_graph_def(graph_def, return_elements=["x:0", "z:0"], name="")
        with tf.Session() as sess:
            out = sess.run(z, {x: [[1.0, 1.0]]})
    np.testing.assert_allclose(out, [[3.0, 7.0]])


def test_import_with_input_map_replaces_a_tensor():
    _build()
    graph_def = tf.get_default_graph().as_graph_def()
    g2 = tf.Graph()
    with g2.as_default():
        fed = tf.constant([[2.0, 0.0]])
        (z,) = tf.import_graph_def(graph_def, input_map={"x:0": fed}, return_elements=["z:0"])
        assert z.name == "import/z:0"
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(z), [[2.0, 6.0]])


def test_import_rejects_unknown_input_map_keys_and_op_types():
    _build()
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="not found in graph_def"):
            tf.import_graph_def(graph_def, input_map={"nope:0": tf.constant(1.0)})
        with pytest.raises(tf.errors.NotFoundError, match="not registered"):
            tf.import_graph_def({"node": [{"name": "a", "op": "NoSuchOp", "input": []}]})


def test_variables_survive_the_round_trip_as_ops():
    v = tf.Variable(tf.constant([1.0, 2.0]), name="v")
    doubled = tf.multiply(v, 2.0, name="doubled")
    del doubled
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        init, out = tf.import_graph_def(graph_def, return_elements=["v/Assign", "doubled:0"])
        with tf.Session() as sess:
            sess.run(init)
            np.testing.assert_allclose(sess.run(out), [2.0, 4.0])


@pytest.mark.parametrize("as_text", [False, True])
def test_write_graph_writes_tensorflows_graph_def_that_imports_back(tmp_path, as_text):
    _build()
    path = tf.train.write_graph(tf.get_default_graph(), str(tmp_path), "g", as_text=as_text)
    graph_def = tf.GraphDef()
    if as_text:
        text_format.Parse(open(path).read(), graph_def)
    else:
        graph_def.ParseFromString(open(path, "rb").read())
    assert {n.op for n in graph_def.node} >= {"Placeholder", "MatMul"}
    with tf.Graph().as_default():
        x, z = tf.import_graph_def(graph_def, return_elements=["x:0", "z:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(z, {x: [[1.0, 0.0]]}), [[1.0, 3.0]])


def _count_shape_functions(monkeypatch) -> list[int]:
    """Count every shape function call, wrapping each OpDef the registry holds."""
    calls = [0]
    for opdef in registered_ops().values():

        def counted(*args, _infer=opdef.infer, **kwargs):
            calls[0] += 1
            return _infer(*args, **kwargs)

        monkeypatch.setattr(opdef, "infer", counted)
    return calls


def test_import_with_trusted_shapes_runs_no_shape_function_and_keeps_shapes(monkeypatch):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    _, total = tf.while_loop(
        lambda i, acc: i < 4, lambda i, acc: (i + 1, acc + tf.reduce_sum(x, 1)), [0, tf.zeros([2])]
    )
    out = tf.identity(tf.reshape(total, [1, 2]), name="out")
    graph = tf.get_default_graph()
    graph_def = {
        "node": [node_def_of(op, add_specs=True) for op in graph.get_operations()],
        "versions": {"producer": 1},
    }
    calls = _count_shape_functions(monkeypatch)
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(graph_def, name="", trusted_shapes=True)
    assert calls[0] == 0
    for op in graph.get_operations():
        for t in op.outputs:
            imported = g2.get_tensor_by_name(t.name)
            assert (imported.dtype, imported.shape.as_list()) == (t.dtype, t.shape.as_list()), t
    with g2.as_default():
        tf.import_graph_def(graph_def, name="again")  # untrusted: every node inferred
    assert calls[0] == len(graph.get_operations())
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session(graph=g2) as sess:
        got = sess.run(g2.get_tensor_by_name(out.name), {g2.get_tensor_by_name(x.name): xs})
    np.testing.assert_allclose(got, 4 * xs.sum(1, keepdims=True).T)
