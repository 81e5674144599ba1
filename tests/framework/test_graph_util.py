"""tf.graph_util.must_run_on_cpu: TensorFlow's rule for ops whose tensors live in host memory.

The expected answers are TensorFlow 2.21's (``tf.compat.v1.graph_util.must_run_on_cpu`` on the
same ops and NodeDefs).
"""

import pytest

import nbflow as tf
from nbflow.framework.graph_def import encode_attr


def _node(op_type: str, **attrs) -> dict:
    return {"name": "n", "op": op_type, "attr": {k: encode_attr(v) for k, v in attrs.items()}}


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def test_int32_and_string_constants_must_run_on_cpu_float_ones_need_not():
    assert tf.graph_util.must_run_on_cpu(tf.constant([1, 2], tf.int32).op)
    assert tf.graph_util.must_run_on_cpu(tf.constant(["a"]).op)
    assert not tf.graph_util.must_run_on_cpu(tf.constant([1.0]).op)


def test_variables_are_pinned_to_the_cpu_only_when_asked():
    v = tf.Variable([1.0, 2.0], name="v")
    assert not tf.graph_util.must_run_on_cpu(v.op)
    assert tf.graph_util.must_run_on_cpu(v.op, pin_variables_on_cpu=True)


def test_node_defs_are_judged_by_their_type_attrs():
    assert tf.graph_util.must_run_on_cpu(_node("Cast", SrcT=tf.int32, DstT=tf.float32))
    assert not tf.graph_util.must_run_on_cpu(_node("Cast", SrcT=tf.string, DstT=tf.float32))
    assert not tf.graph_util.must_run_on_cpu(_node("Cast", SrcT=tf.bool, DstT=tf.float32))
    assert tf.graph_util.must_run_on_cpu(_node("DynamicStitch", T=tf.int32))
    assert not tf.graph_util.must_run_on_cpu(_node("DynamicStitch", T=tf.float32))
    assert tf.graph_util.must_run_on_cpu(_node("Const", dtype=tf.int32))


def test_an_operation_is_judged_by_the_type_attrs_its_node_def_would_carry():
    assert tf.graph_util.must_run_on_cpu(tf.cast(tf.constant([1, 2]), tf.float32).op)
    assert not tf.graph_util.must_run_on_cpu(tf.cast(tf.constant([1.0]), tf.int32).op)


def test_an_op_type_nbflow_does_not_implement_has_no_cpu_rule():
    assert not tf.graph_util.must_run_on_cpu(_node("SomeTensorFlowOnlyOp", T=tf.int32))
