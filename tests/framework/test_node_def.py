"""Operation.node_def is TensorFlow's NodeDef proto, as device functions read it; gradients of
gathers are IndexedSlices with TensorFlow's int32 dense_shape."""

import pickle

import numpy as np

import nbflow as tf


def test_node_def_has_tensorflows_fields():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.device("/cpu:0"):
        y = tf.matmul(x, tf.ones([3, 2]), transpose_b=False, name="y")
    node = y.op.node_def
    assert node.op == "MatMul" and node.name == "y"
    assert list(node.input) == ["x", "ones"]
    assert node.device == "/device:CPU:0"
    assert node.attr["transpose_a"].b is False
    assert x.op.node_def.attr["dtype"].type == 1  # DT_FLOAT
    assert pickle.loads(pickle.dumps(node)) == node  # errors carry it across processes


def test_device_function_reading_node_def_op_places_variables():
    def device_for(op):
        return "/cpu:0" if op.node_def.op in ("VariableV2", "Variable") else "/cpu:1"

    with tf.device(device_for):
        v = tf.Variable(1.0, name="v")
        out = v * 2.0
    assert v.op.device == "/device:CPU:0"
    assert out.op.device == "/device:CPU:1"


def test_gather_gradient_dense_shape_is_int32():
    params = tf.Variable(np.ones([5, 3], np.float32))
    unknown = tf.placeholder(tf.float32, [None, 3])
    indices = tf.constant([0, 2, 0])
    for p in (params, unknown):
        (grad,) = tf.gradients(tf.reduce_sum(tf.gather(p, indices)), [p])
        assert isinstance(grad, tf.IndexedSlices)
        assert grad.dense_shape.dtype == tf.int32
