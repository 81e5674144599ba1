"""tf.gradients: the reverse walk's semantics, checked against hand-derived NumPy values."""

import numpy as np
import pytest

import nbflow as tf
from nbflow.framework.indexed_slices import IndexedSlices, IndexedSlicesValue


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def test_gradient_of_product_rule():
    x = tf.constant([1.0, 2.0, 3.0])
    y = tf.reduce_sum(x * x * 3.0)
    (g,) = tf.gradients(y, [x])
    np.testing.assert_allclose(_run(g), 6.0 * np.array([1.0, 2.0, 3.0]))


def test_partial_gradients_of_several_paths_are_summed():
    x = tf.constant(2.0)
    a = x * 3.0
    b = x * x
    y = a + b + x  # dy/dx = 3 + 2x + 1
    (g,) = tf.gradients(y, x)
    assert _run(g) == pytest.approx(3.0 + 4.0 + 1.0)
    addn = [op for op in tf.get_default_graph().get_operations() if op.type == "AddN"]
    assert addn, "paths meeting at x should be summed with AddN"


def test_gradient_ops_live_under_gradients_op_grad_scope():
    x = tf.constant([1.0, 2.0])
    y = tf.reduce_sum(tf.nn.relu(x, name="act"), name="total")
    (g,) = tf.gradients(y, x)
    names = [op.name for op in tf.get_default_graph().get_operations()]
    assert any(n.startswith("gradients/act_grad/") for n in names), names
    assert any(n.startswith("gradients/total_grad/") for n in names), names
    assert g.op.name.startswith("gradients/")


def test_several_ys_sum_their_gradients():
    x = tf.constant(3.0)
    (g,) = tf.gradients([x * 2.0, x * x], [x])
    assert _run(g) == pytest.approx(2.0 + 6.0)


def test_grad_ys_weight_the_initial_gradient():
    x = tf.constant([1.0, 2.0])
    y = x * x
    (g,) = tf.gradients(y, x, grad_ys=tf.constant([10.0, -1.0]))
    np.testing.assert_allclose(_run(g), [20.0, -4.0])


def test_grad_ys_with_wrong_dtype_is_rejected():
    x = tf.constant([1.0, 2.0])
    with pytest.raises((TypeError, ValueError)):
        tf.gradients(x * x, x, grad_ys=tf.constant([1.0, 1.0], dtype=tf.float64))


def test_unconnected_x_gets_none():
    x = tf.constant(1.0)
    z = tf.constant(2.0)
    assert tf.gradients(x * 2.0, [x, z])[1] is None


def test_stop_gradient_blocks_the_path():
    x = tf.constant(3.0)
    y = tf.stop_gradient(x * x) * x + x  # d/dx = x^2 (treated constant) + 1
    (g,) = tf.gradients(y, x)
    assert _run(g) == pytest.approx(9.0 + 1.0)


def test_stop_gradient_on_the_only_path_gives_none():
    x = tf.constant(3.0)
    assert tf.gradients(tf.stop_gradient(x) * 2.0, x) == [None]


def test_stop_gradients_argument_treats_tensors_as_constants():
    a = tf.constant(0.0)
    b = 2 * a
    (ga, gb) = tf.gradients(a + b, [a, b], stop_gradients=[a, b])
    assert _run([ga, gb]) == [1.0, 1.0]


def test_integer_paths_give_none():
    x = tf.constant([1, 2, 3])
    y = tf.cast(x, tf.float32) * 2.0
    assert tf.gradients(y, x) == [None]
    assert tf.gradients(tf.reduce_sum(x), x) == [None]


def test_gradient_through_integer_index_arithmetic_reaches_float_params():
    params = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    ids = tf.constant([2, 0]) + tf.constant(0)
    y = tf.reduce_sum(tf.gather(params, ids) * tf.constant([[1.0, 10.0], [100.0, 1000.0]]))
    (g,) = tf.gradients(y, params)
    dense = _densify(_run(g), (3, 2))
    np.testing.assert_allclose(dense, [[100.0, 1000.0], [0.0, 0.0], [1.0, 10.0]])


def test_unused_output_of_multi_output_op_gets_zeros():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    parts = tf.split(x, 3, axis=1)
    y = tf.reduce_sum(parts[0] * 2.0)  # parts 1 and 2 unused
    (g,) = tf.gradients(y, x)
    np.testing.assert_allclose(_run(g), [[2.0, 0.0, 0.0], [2.0, 0.0, 0.0]])


def test_fused_cross_entropy_gives_zeros_to_its_backprop_output():
    logits = tf.constant([[1.0, 2.0, 3.0]])
    labels = tf.constant([[0.0, 0.0, 1.0]])
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    (g,) = tf.gradients(loss, logits)
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(_run(g), [e / e.sum() - [0.0, 0.0, 1.0]], rtol=1e-6)


def test_missing_gradient_raises_lookup_error_naming_the_op():
    from nbflow.framework.op_def import OpDef, TensorSpec

    class NoGradientForTest(OpDef):
        inputs = ("x",)

        def infer(self, x):
            return TensorSpec(x.shape, x.dtype)

        def compute(self, ctx, x):
            return x

    x = tf.constant(1.0)
    y = tf.get_default_graph().create_op("NoGradientForTest", [x], name="mystery").outputs[0]
    with pytest.raises(LookupError, match="No gradient defined for operation 'mystery'"):
        tf.gradients(y * 2.0, x)
    from nbflow.framework import op_def

    del op_def._REGISTRY["NoGradientForTest"]


def test_op_without_gradient_off_the_path_is_never_asked():
    x = tf.constant(1.0)
    unrelated = tf.argmax(tf.constant([1.0, 2.0]))  # no gradient needed
    y = x * tf.cast(unrelated, tf.float32)
    (g,) = tf.gradients(y, x)
    assert _run(g) == pytest.approx(1.0)


def test_gradient_with_respect_to_variable_reaches_every_read():
    v = tf.Variable([1.0, 2.0])
    y = tf.reduce_sum(v * 3.0) + tf.reduce_sum(v.read_value() * v.read_value())
    (g,) = tf.gradients(y, v)
    np.testing.assert_allclose(_run(g), [3.0 + 2.0, 3.0 + 4.0])


def test_gradient_with_respect_to_intermediate_tensor():
    x = tf.constant(2.0)
    h = x * x
    y = h * 3.0
    gh, gx = tf.gradients(y, [h, x])
    assert _run([gh, gx]) == [pytest.approx(3.0), pytest.approx(12.0)]


def test_gather_gradient_is_indexed_slices_and_fetches_as_value():
    params = tf.constant(np.arange(12.0).reshape(4, 3))
    (g,) = tf.gradients(tf.reduce_sum(tf.gather(params, [3, 1, 3])), params)
    assert isinstance(g, IndexedSlices)
    value = _run(g)
    assert isinstance(value, IndexedSlicesValue)
    np.testing.assert_array_equal(value.indices, [3, 1, 3])
    np.testing.assert_allclose(value.values, np.ones((3, 3)))
    np.testing.assert_array_equal(value.dense_shape, [4, 3])


def test_sparse_gradients_of_two_gathers_stay_sparse():
    params = tf.constant(np.ones((5, 2)))
    y = tf.reduce_sum(tf.gather(params, [0, 1])) + tf.reduce_sum(tf.gather(params, [1, 4]) * 2.0)
    (g,) = tf.gradients(y, params)
    assert isinstance(g, IndexedSlices)
    dense = _densify(_run(g), (5, 2))
    np.testing.assert_allclose(dense[:, 0], [1.0, 3.0, 0.0, 0.0, 2.0])


def test_sparse_and_dense_partials_are_densified_and_added():
    params = tf.constant(np.ones((3, 2)))
    y = tf.reduce_sum(tf.gather(params, [2])) + tf.reduce_sum(params * 5.0)
    (g,) = tf.gradients(y, params)
    assert not isinstance(g, IndexedSlices)
    np.testing.assert_allclose(_run(g), [[5.0, 5.0], [5.0, 5.0], [6.0, 6.0]])


def test_indexed_slices_converts_to_dense_tensor():
    slices = IndexedSlices(
        tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
        tf.constant([0, 2, 0]),
        tf.constant([3, 2]),
    )
    dense = tf.convert_to_tensor(slices)
    np.testing.assert_allclose(_run(dense), [[6.0, 8.0], [0.0, 0.0], [3.0, 4.0]])
    assert slices.dtype == tf.float32
    assert slices.graph is tf.get_default_graph()
    assert slices.get_shape().as_list() == [3, 2]


def test_aggregation_method_and_gating_give_the_same_values():
    x = tf.constant([[1.0, 2.0]])
    w = tf.constant([[3.0], [4.0]])
    y = tf.reduce_sum(tf.matmul(x, w) * tf.matmul(x, w))
    plain = tf.gradients(y, [x, w])
    gated = tf.gradients(
        y, [x, w], gate_gradients=True, aggregation_method=tf.AggregationMethod.ADD_N
    )
    a, b = _run([plain, gated])
    for p, q in zip(a, b):
        np.testing.assert_allclose(p, q)
    np.testing.assert_allclose(a[0], 2 * 11.0 * np.array([[3.0, 4.0]]))


def test_x_equal_to_y_gives_grad_ys():
    x = tf.constant([1.0, 2.0])
    (g,) = tf.gradients(x, x)
    np.testing.assert_allclose(_run(g), [1.0, 1.0])


def _densify(value, shape):
    out = np.zeros(shape)
    np.add.at(out, value.indices, value.values)
    return out


def test_register_gradient_and_override_map_replace_an_ops_gradient():
    @tf.RegisterGradient("TestGradientTimesTen")
    def _times_ten(op, grad):
        return [grad * 10.0]

    x = tf.constant([1.0, 2.0])
    with tf.gradient_override_map({"Identity": "TestGradientTimesTen"}):
        y = tf.identity(x)
    z = tf.identity(x)  # created outside: the OpDef's own gradient
    gy, gz = tf.gradients(y, x)[0], tf.gradients(z, x)[0]
    np.testing.assert_allclose(_run(gy), [10.0, 10.0])
    np.testing.assert_allclose(_run(gz), [1.0, 1.0])


def test_not_differentiable_registration_blocks_the_path():
    from nbflow.framework.op_def import OpDef, TensorSpec

    class TestOpaqueScale(OpDef):
        inputs = ("x",)

        def infer(self, x):
            return TensorSpec(x.shape, x.dtype)

        def compute(self, ctx, x):
            return 2 * x

    tf.NotDifferentiable("TestOpaqueScale")
    x = tf.constant(1.0)
    y = tf.get_default_graph().create_op("TestOpaqueScale", [x]).outputs[0]
    assert tf.gradients(y * 3.0, x) == [None]
    from nbflow.framework import op_def

    del op_def._REGISTRY["TestOpaqueScale"]
