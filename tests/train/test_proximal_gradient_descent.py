"""ProximalGradientDescentOptimizer against its update written in NumPy, dense and sparse."""

import numpy as np

import nbflow as tf


def numpy_step(var, grad, lr, l1, l2):
    prox = var - lr * grad
    return np.sign(prox) * np.maximum(np.abs(prox) - lr * l1, 0) / (1 + lr * l2)


def test_dense_and_sparse_steps_apply_the_proximal_map():
    start = np.array([[0.5, -0.02], [1.0, 0.01], [-2.0, 0.3]])
    target = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, -1.0]])
    with tf.Graph().as_default():
        dense = tf.Variable(start)
        table = tf.Variable(start)
        opt = tf.train.ProximalGradientDescentOptimizer(
            0.1, l1_regularization_strength=0.2, l2_regularization_strength=0.5
        )
        dense_loss = tf.reduce_sum(tf.square(dense - target))
        rows = tf.gather(table, [2, 0])
        sparse_loss = tf.reduce_sum(tf.square(rows - target[[2, 0]]))
        step = opt.minimize(dense_loss + sparse_loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            got_dense, got_table = sess.run([dense, table])
    want_dense = numpy_step(start, 2 * (start - target), 0.1, 0.2, 0.5)
    np.testing.assert_allclose(got_dense, want_dense, rtol=1e-6)  # float32 hyperparameters
    want = start.copy()
    want[[2, 0]] = numpy_step(start[[2, 0]], 2 * (start[[2, 0]] - target[[2, 0]]), 0.1, 0.2, 0.5)
    np.testing.assert_allclose(got_table, want, rtol=1e-6)
    assert got_dense[0, 1] == 0.0  # l1 shrinks a small weight to exactly zero


def test_proximal_adagrad_scales_the_step_by_the_accumulated_squares():
    start = np.array([[0.5, -0.02], [1.0, 0.01], [-2.0, 0.3]])
    target = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, -1.0]])
    with tf.Graph().as_default():
        dense, table = tf.Variable(start), tf.Variable(start)
        opt = tf.train.ProximalAdagradOptimizer(
            0.5,
            initial_accumulator_value=0.1,
            l1_regularization_strength=0.05,
            l2_regularization_strength=0.1,
        )
        rows = tf.gather(table, [1])
        loss = tf.reduce_sum(tf.square(dense - target)) + tf.reduce_sum(
            tf.square(rows - target[[1]])
        )
        step = opt.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                sess.run(step)
            got_dense, got_table = sess.run([dense, table])
    var, acc = start.copy(), np.full_like(start, 0.1)
    row, row_acc = start[[1]].copy(), np.full((1, 2), 0.1)
    for _ in range(2):
        grad = 2 * (var - target)
        acc += grad * grad
        lr = 0.5 / np.sqrt(acc)
        var = numpy_step(var, grad, lr, 0.05, 0.1)
        row_grad = 2 * (row - target[[1]])
        row_acc += row_grad * row_grad
        row = numpy_step(row, row_grad, 0.5 / np.sqrt(row_acc), 0.05, 0.1)
    np.testing.assert_allclose(got_dense, var, rtol=1e-6)
    want_table = start.copy()
    want_table[[1]] = row
    np.testing.assert_allclose(got_table, want_table, rtol=1e-6)
