"""get_variable / variable_scope: naming, reuse, errors, initializers and regularizers."""

import numpy as np
import pytest

import nbflow as tf


def test_get_variable_names_by_variable_scope():
    with tf.variable_scope("layer1"):
        w = tf.get_variable("weights", [784, 100])
        with tf.variable_scope("inner"):
            b = tf.get_variable("b", [3])
    assert w.name == "layer1/weights:0" and b.name == "layer1/inner/b:0"
    assert w.dtype == tf.float32_ref or w.dtype.base_dtype == tf.float32
    assert w.shape.as_list() == [784, 100]
    assert w in tf.trainable_variables() and w in tf.global_variables()


def test_reuse_true_returns_the_same_variable():
    with tf.variable_scope("foo"):
        v = tf.get_variable("w", [2])
    with tf.variable_scope("foo", reuse=True):
        assert tf.get_variable("w", [2]) is v
        assert tf.get_variable("w") is v
    with tf.variable_scope("foo") as scope:
        scope.reuse_variables()
        assert scope.reuse is True
        assert tf.get_variable("w") is v


def test_creating_twice_without_reuse_raises_tensorflows_error():
    with tf.variable_scope("foo"):
        tf.get_variable("w", [2])
    with pytest.raises(ValueError) as e, tf.variable_scope("foo"):
        tf.get_variable("w", [2])
    assert str(e.value).startswith(
        "Variable foo/w already exists, disallowed. Did you mean to set reuse=True or "
        "reuse=tf.AUTO_REUSE in VarScope?"
    )


def test_reusing_a_missing_variable_raises_tensorflows_error():
    with pytest.raises(ValueError) as e, tf.variable_scope("foo", reuse=True):
        tf.get_variable("w", [2])
    assert str(e.value).startswith(
        "Variable foo/w does not exist, or was not created with tf.get_variable(). Did you "
        "mean to set reuse=tf.AUTO_REUSE in VarScope?"
    )


def test_auto_reuse_creates_then_shares():
    def layer():
        with tf.variable_scope("dense", reuse=tf.AUTO_REUSE):
            return tf.get_variable("kernel", [3, 2])

    assert layer() is layer()
    assert len(tf.global_variables()) == 1


def test_sharing_with_a_different_shape_raises():
    with tf.variable_scope("s"):
        tf.get_variable("w", [2])
    with pytest.raises(ValueError, match="Trying to share variable s/w"):
        with tf.variable_scope("s", reuse=True):
            tf.get_variable("w", [3])


def test_reentering_a_scope_uniquifies_the_name_scope_only():
    with tf.variable_scope("scope"):
        a = tf.get_variable("a", [1])
        x = tf.constant(1.0, name="x")
    with tf.variable_scope("scope", reuse=tf.AUTO_REUSE) as scope:
        y = tf.constant(1.0, name="x")
        assert tf.get_variable("a", [1]) is a
        b = tf.get_variable("b", [1])
    assert x.op.name == "scope/x" and y.op.name == "scope_1/x"
    assert b.name == "scope/b:0" and scope.name == "scope"
    assert scope.original_name_scope == "scope_1/"


def test_reentering_with_a_scope_object_keeps_its_full_name():
    with tf.variable_scope("outer"):
        with tf.variable_scope("inner") as inner:
            pass
    with tf.variable_scope("other"):
        with tf.variable_scope(inner, reuse=tf.AUTO_REUSE) as again:
            v = tf.get_variable("v", [1])
            op = tf.constant(0.0, name="c").op
    assert again.name == "outer/inner" and v.name == "outer/inner/v:0"
    assert op.name == "other/inner/c"


def test_default_name_is_made_unique():
    names = []
    for _ in range(2):
        with tf.variable_scope(None, default_name="dense") as scope:
            names.append(scope.name)
            tf.get_variable("k", [1])
    assert names == ["dense", "dense_1"]
    with pytest.raises(TypeError, match="default_name is None"):
        with tf.variable_scope(None):
            pass


def test_reuse_is_inherited_and_false_does_not_turn_it_off():
    with tf.variable_scope("a"):
        v = tf.get_variable("v", [1])
    with tf.variable_scope("a", reuse=True):
        with tf.variable_scope("", reuse=False) as inner:
            pass
        assert tf.get_variable_scope().reuse is True
    assert inner.reuse is True
    with tf.variable_scope("a", reuse=True), tf.variable_scope("b"):
        assert tf.get_variable_scope().reuse is True
    assert tf.get_variable_scope().name == "" and not tf.get_variable_scope().reuse
    assert v.name == "a/v:0"


def test_get_variable_ignores_name_scopes():
    with tf.name_scope("ns"):
        v = tf.get_variable("v", [1])
        with tf.variable_scope("vs"):
            w = tf.get_variable("w", [1])
    assert v.name == "v:0" and w.name == "vs/w:0"


def test_default_initializers_glorot_for_floats_and_zeros_for_ints():
    w = tf.get_variable("w", [30, 20])
    n = tf.get_variable("n", [3], dtype=tf.int32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        wv, nv = sess.run([w, n])
    limit = np.sqrt(6.0 / 50)
    assert wv.dtype == np.float32 and np.abs(wv).max() <= limit and wv.std() > limit / 4
    np.testing.assert_array_equal(nv, [0, 0, 0])


def test_scope_initializer_and_explicit_initializers():
    with tf.variable_scope("init", initializer=tf.constant_initializer(3.0)):
        a = tf.get_variable("a", [2])
        b = tf.get_variable("b", [2], initializer=tf.ones_initializer())
        c = tf.get_variable("c", initializer=tf.constant([1.0, 2.0, 3.0]))
        d = tf.get_variable("d", [2, 2], initializer=[[1.0, 2.0], [3.0, 4.0]])
        e = tf.get_variable("e", [2], initializer=tf.zeros_initializer)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        av, bv, cv, dv, ev = sess.run([a, b, c, d, e])
    np.testing.assert_array_equal(av, [3.0, 3.0])
    np.testing.assert_array_equal(bv, [1.0, 1.0])
    np.testing.assert_array_equal(cv, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(dv, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(ev, [0.0, 0.0])
    with pytest.raises(ValueError, match="do not specify shape"):
        tf.get_variable("f", [3], initializer=tf.constant([1.0, 2.0, 3.0]))


def test_regularizer_adds_a_regularization_loss():
    def l2(v):
        return tf.reduce_sum(v * v)

    with tf.variable_scope("reg", regularizer=l2):
        v = tf.get_variable("v", [2], initializer=tf.constant_initializer(2.0))
        tf.get_variable("u", [1], regularizer=lambda v: None)
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1 and losses[0].op.name.startswith("reg/v/Regularizer/")
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(losses[0]) == pytest.approx(8.0)


def test_trainable_and_collections_arguments():
    v = tf.get_variable("v", [1], trainable=False, collections=["mine"])
    assert v not in tf.trainable_variables() and tf.get_collection("mine") == [v]
    local = tf.get_local_variable("local", [1])
    assert local in tf.local_variables() and local not in tf.trainable_variables()


def test_partitioner_makes_a_partitioned_variable_of_named_shards():
    p = tf.get_variable("p", [10, 2], partitioner=lambda shape, dtype: [2, 1])
    assert isinstance(p, tf.PartitionedVariable)
    assert [v.op.name for v in p] == ["p/part_0", "p/part_1"]
    with pytest.raises(ValueError, match="one dimension"):
        tf.get_variable("q", [10, 2], partitioner=lambda shape, dtype: [2, 2])


def test_variable_stores_are_per_graph():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        a = tf.get_variable("v", [1])
    with g2.as_default():
        b = tf.get_variable("v", [1])
    assert a is not b and a.graph is g1 and b.graph is g2


def test_scope_dtype_and_custom_getter():
    calls = []

    def getter(next_getter, name, **kwargs):
        calls.append(name)
        return next_getter(name, **kwargs)

    with tf.variable_scope("typed", dtype=tf.float64, custom_getter=getter):
        v = tf.get_variable("v", [2])
    assert v.dtype.base_dtype == tf.float64 and calls == ["typed/v"]


@pytest.mark.parametrize(
    "initializer, check",
    [
        (tf.random_uniform_initializer(-1.0, 1.0, seed=1), lambda v: np.abs(v).max() <= 1.0),
        (tf.random_normal_initializer(5.0, 0.1, seed=1), lambda v: abs(v.mean() - 5.0) < 0.05),
        (tf.truncated_normal_initializer(0.0, 1.0, seed=1), lambda v: np.abs(v).max() <= 2.0),
        (
            tf.glorot_normal_initializer(seed=1),
            lambda v: np.abs(v).max() <= 2 * 0.2 / 0.8796 + 1e-6,
        ),
        (
            tf.variance_scaling_initializer(2.0, "fan_in", "uniform", seed=1),
            lambda v: np.abs(v).max() <= np.sqrt(0.6),
        ),
        (tf.orthogonal_initializer(seed=1), lambda v: np.allclose(v.T @ v, np.eye(20), atol=1e-5)),
    ],
    ids=["uniform", "normal", "truncated", "glorot_normal", "variance_scaling", "orthogonal"],
)
def test_initializers_draw_from_their_distribution(initializer, check):
    w = tf.get_variable("w", [30, 20], initializer=initializer)
    with tf.Session() as sess:
        sess.run(w.initializer)
        value = sess.run(w)
    assert value.shape == (30, 20) and check(value)


def test_initializers_namespace():
    assert tf.initializers.zeros is tf.zeros_initializer
    value = tf.initializers.constant([1, 2], dtype=tf.int32)([2])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(value), [1, 2])


def test_get_variable_inside_a_loop_body_is_created_once_outside_the_loop():
    def body(i, h):
        w = tf.get_variable("w", [2, 2], initializer=tf.random_normal_initializer(seed=1))
        return i + 1, tf.matmul(h, w)

    with tf.Graph().as_default() as graph:
        _, h = tf.while_loop(lambda i, h: i < 3, body, [0, tf.ones([1, 2])])
        (w,) = tf.global_variables()
        assert not [
            op
            for op in graph.get_operations()
            if op.type == "Enter" and "Initializer" in op.inputs[0].name
        ]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w_value, h_value = sess.run([w, h])
    np.testing.assert_allclose(h_value, np.ones((1, 2)) @ w_value @ w_value @ w_value, rtol=1e-5)
