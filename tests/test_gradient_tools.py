"""custom_gradient, grad_pass_through and hessians, against hand-derived gradients."""

import numpy as np
import pytest

import nbflow as tf


def test_custom_gradient_replaces_the_gradient_of_the_forward_computation():
    @tf.custom_gradient
    def reverse_gradient(x):
        return tf.square(x), lambda dy: -dy

    x = tf.constant([1.0, 3.0])
    y = reverse_gradient(x)
    (grad,) = tf.gradients(tf.reduce_sum(y * 2.0), x)
    value, g = tf.Session().run([y, grad])
    assert value.tolist() == [1.0, 9.0] and g.tolist() == [-2.0, -2.0]


def test_custom_gradient_with_several_inputs_and_outputs():
    @tf.custom_gradient
    def product_and_sum(a, b):
        def grad(d_product, d_sum):
            return d_product * b + d_sum, d_product * a + d_sum * 10.0

        return [a * b, a + b], grad

    a, b = tf.constant(2.0), tf.constant(5.0)
    product, total = product_and_sum(a, b)
    ga, gb = tf.gradients(product + total, [a, b])
    assert [float(v) for v in tf.Session().run([ga, gb])] == [6.0, 12.0]


def test_custom_gradient_checks_the_number_of_gradients():
    @tf.custom_gradient
    def wrong(a, b):
        return a + b, lambda dy: dy

    a, b = tf.constant(1.0), tf.constant(2.0)
    with pytest.raises(ValueError, match="returned 1 gradients for 2 inputs"):
        tf.gradients(wrong(a, b), [a, b])


def test_grad_pass_through_is_the_straight_through_estimator():
    x = tf.constant([0.4, 1.6])
    y = tf.grad_pass_through(tf.round)(x)
    (grad,) = tf.gradients(tf.reduce_sum(y * 3.0), x)
    value, g = tf.Session().run([y, grad])
    assert value.tolist() == [0.0, 2.0] and g.tolist() == [3.0, 3.0]


def test_hessians_of_a_quadratic_form_is_the_symmetrized_matrix():
    a = np.array([[1.0, 2.0], [0.0, 3.0]])
    x = tf.constant([[0.5, -1.0]], tf.float64)
    f = tf.reduce_sum(tf.matmul(tf.matmul(x, tf.constant(a)), x, transpose_b=True))
    (h,) = tf.hessians(f, x)
    got = tf.Session().run(h)
    assert got.shape == (1, 2, 1, 2)
    np.testing.assert_allclose(got.reshape(2, 2), a + a.T)
