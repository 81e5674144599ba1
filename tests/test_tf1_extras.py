"""make_template shares variables across calls; sparse_matmul, recompute_grad, VERSION."""

import numpy as np

import nbflow as tf


def scaled(x, units=2):
    w = tf.get_variable("w", [x.shape[-1], units], initializer=tf.ones_initializer())
    return tf.matmul(x, w)


def test_make_template_calls_share_the_first_calls_variables():
    with tf.Graph().as_default():
        for create_now in (False, True):
            layer = tf.make_template("layer", scaled, create_scope_now_=create_now, units=3)
            a, b = layer(tf.ones([1, 2])), layer(tf.ones([4, 2]))
            assert a.shape.as_list() == [1, 3] and b.shape.as_list() == [4, 3]
        names = sorted(v.op.name for v in tf.trainable_variables())
        assert names == ["layer/w", "layer_1/w"]


def test_sparse_matmul_and_recompute_grad_keep_values():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(tf.sparse_matmul(a, b, a_is_sparse=True))
        double = tf.recompute_grad(lambda t: 2 * t)
        value = sess.run(double(tf.constant(3.0)))
    np.testing.assert_allclose(got, a @ b)
    assert value == 6.0
    assert tf.VERSION.startswith("1.")
