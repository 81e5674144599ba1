"""Gradients through nested control flow match the same computation unrolled in Python.

Each case builds a loss twice in float64 — once with ``while_loop``/``cond`` nested in each
other, once unrolled (Python loops; data-dependent decisions as top-level ``cond``s) — and
compares the loss and its gradients. Every case runs both as structured loop code and on the
frame-tagged dataflow executor, where iterations overlap.
"""

import numpy as np
import pytest

import nbflow as tf
from nbflow.runtime import step as step_lib

HIDDEN = 3


@pytest.fixture(params=["structured", "tagged_frames"])
def executor(request, monkeypatch):
    if request.param == "tagged_frames":
        monkeypatch.setattr(step_lib, "structured_loops", False)
    return request.param


def _params(seed: int = 0):
    rng = np.random.default_rng(seed)
    w = tf.Variable(rng.standard_normal((HIDDEN, HIDDEN)) * 0.5, name="w")
    u = tf.Variable(rng.standard_normal((HIDDEN, HIDDEN)) * 0.5, name="u")
    h0 = tf.constant(rng.standard_normal((2, HIDDEN)), name="h0")
    xs = tf.constant(rng.standard_normal((4, 2, HIDDEN)), name="xs")
    return w, u, h0, xs


def _compare(build, feeds=None):
    """Loss and gradients of ``build(loops=True)`` equal those of ``build(loops=False)``."""
    results = []
    for loops in (True, False):
        tf.reset_default_graph()
        loss, xs = build(loops)
        grads = tf.gradients(loss, xs)
        assert all(g is not None for g in grads)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            results.append([sess.run([loss] + grads, feed) for feed in feeds or [None]])
    for looped, unrolled, feed in zip(*results, feeds or [None]):
        for a, b, name in zip(looped, unrolled, ["loss"] + [x.name for x in xs]):
            np.testing.assert_allclose(
                np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-8, err_msg=f"{name} {feed}"
            )


def test_gradient_of_cond_inside_while_loop_body(executor):
    def build(loops):
        w, u, h0, xs = _params()

        def step(i, h):
            # the branch depends on the loop state; u is read in one branch only
            return tf.cond(
                tf.reduce_sum(h) > 0.0,
                lambda: tf.tanh(tf.matmul(h, w) + xs[i]),
                lambda: tf.matmul(h, u) * 0.5 - xs[i],
            )

        if loops:
            _, h = tf.while_loop(lambda i, h: i < 4, lambda i, h: (i + 1, step(i, h)), [0, h0])
        else:
            h = h0
            for i in range(4):
                h = step(i, h)
        return tf.reduce_sum(h * h), [w, u, h0, xs]

    _compare(build)


def test_gradient_of_cond_on_loop_counter_inside_while_loop(executor):
    def build(loops):
        w, u, h0, _ = _params(1)

        def step(i, h):
            return tf.cond(
                tf.equal(i % 2, 0), lambda: tf.sin(tf.matmul(h, w)), lambda: h * tf.reduce_sum(u)
            )

        if loops:
            _, h = tf.while_loop(
                lambda i, h: i < 5, lambda i, h: (i + 1, step(i, h)), [tf.constant(0), h0]
            )
        else:
            h = h0
            for i in range(5):
                h = step(tf.constant(i), h)
        return tf.reduce_sum(h), [w, u, h0]

    _compare(build)


def test_gradient_of_while_loop_inside_while_loop(executor):
    def build(loops):
        w, u, h0, xs = _params(2)

        def inner_step(h, k):
            return tf.tanh(tf.matmul(h, w) + xs[k])

        if loops:

            def outer_body(i, h):
                # the inner trip count varies with the outer iteration
                _, h = tf.while_loop(
                    lambda j, h: j <= i, lambda j, h: (j + 1, inner_step(h, j)), [0, h]
                )
                return i + 1, tf.matmul(h, u)

            _, h = tf.while_loop(lambda i, h: i < 3, outer_body, [0, h0])
        else:
            h = h0
            for i in range(3):
                for j in range(i + 1):
                    h = inner_step(h, j)
                h = tf.matmul(h, u)
        return tf.reduce_sum(h * h), [w, u, h0, xs]

    _compare(build)


def test_gradient_of_while_loop_inside_cond_branch(executor):
    def build(loops):
        w, u, h0, _ = _params(3)
        p = tf.placeholder(tf.bool, [], name="p")

        def looped():
            if loops:
                return tf.while_loop(
                    lambda i, h: i < 3, lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w))), [0, h0]
                )[1]
            h = h0
            for _ in range(3):
                h = tf.tanh(tf.matmul(h, w))
            return h

        h = tf.cond(p, looped, lambda: tf.matmul(h0, u))
        return tf.reduce_sum(h * h), [w, u, h0]

    _compare(build, [{"p:0": True}, {"p:0": False}])


def test_gradient_of_while_in_cond_in_while(executor):
    def build(loops):
        w, u, h0, _ = _params(4)

        def inner(h):
            if loops:
                return tf.while_loop(
                    lambda j, h: j < 2, lambda j, h: (j + 1, tf.sin(tf.matmul(h, w))), [0, h]
                )[1]
            for _ in range(2):
                h = tf.sin(tf.matmul(h, w))
            return h

        def step(i, h):
            return tf.cond(tf.equal(i % 2, 1), lambda: inner(h), lambda: tf.matmul(h, u))

        if loops:
            _, h = tf.while_loop(
                lambda i, h: i < 4, lambda i, h: (i + 1, step(i, h)), [tf.constant(0), h0]
            )
        else:
            h = h0
            for i in range(4):
                h = step(tf.constant(i), h)
        return tf.reduce_sum(h), [w, u, h0]

    _compare(build)


def test_gradient_of_nested_map_fn(executor):
    def build(loops):
        rng = np.random.default_rng(5)
        x = tf.constant(rng.standard_normal((3, 4)))
        w = tf.Variable(rng.standard_normal(4))

        def row(r):
            if loops:
                return tf.reduce_sum(tf.map_fn(lambda v: tf.sin(v * w), tf.stack([r, r * 2.0])))
            return tf.reduce_sum(tf.sin(r * w)) + tf.reduce_sum(tf.sin(r * 2.0 * w))

        if loops:
            y = tf.map_fn(row, x)
        else:
            y = tf.stack([row(x[k]) for k in range(3)])
        return tf.reduce_sum(y * y), [x, w]

    _compare(build)


@pytest.mark.parametrize("parallel_iterations", [1, 4])
def test_gradient_of_nested_loops_with_parallel_iterations(parallel_iterations, executor):
    def build(loops):
        w, _, h0, _ = _params(6)
        if loops:

            def outer_body(i, h):
                _, h = tf.while_loop(
                    lambda j, h: j < 2,
                    lambda j, h: (j + 1, tf.tanh(tf.matmul(h, w)) + tf.cast(i, tf.float64)),
                    [0, h],
                    parallel_iterations=parallel_iterations,
                )
                return i + 1, h

            _, h = tf.while_loop(
                lambda i, h: i < 3, outer_body, [0, h0], parallel_iterations=parallel_iterations
            )
        else:
            h = h0
            for i in range(3):
                for _ in range(2):
                    h = tf.tanh(tf.matmul(h, w)) + float(i)
        return tf.reduce_sum(h * h), [w, h0]

    _compare(build)


def test_gradient_taken_inside_a_loop_body_is_per_iteration(executor):
    w = tf.constant(3.0, dtype=tf.float64)

    def body(i, acc):
        y = w * w * tf.cast(i, tf.float64)
        (g,) = tf.gradients(y, [w])  # 2 w i, inside the loop
        return i + 1, acc + g

    _, acc = tf.while_loop(lambda i, a: i < 4, body, [0, tf.constant(0.0, tf.float64)])
    with tf.Session() as sess:
        assert sess.run(acc) == pytest.approx(2 * 3.0 * (0 + 1 + 2 + 3))


def test_gradient_of_inner_loop_taken_inside_outer_body_is_unimplemented():
    x = tf.constant(2.0, dtype=tf.float64)

    def outer_body(i, acc):
        inner = tf.while_loop(lambda j, v: j < 2, lambda j, v: (j + 1, v * x), [0, acc])[1]
        (g,) = tf.gradients(inner, [acc])
        return i + 1, g

    with pytest.raises(tf.errors.UnimplementedError, match="inside the body of the loop"):
        tf.while_loop(lambda i, a: i < 2, outer_body, [0, tf.constant(1.0, tf.float64)])


def test_two_gradients_of_one_loop_fetched_together(executor):
    w = tf.constant(np.eye(3) * 0.5)
    h0 = tf.constant(np.ones((2, 3)))
    _, h = tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tf.sin(tf.matmul(h, w))), [0, h0])
    (g1,) = tf.gradients(tf.reduce_sum(h), [w])
    (g2,) = tf.gradients(tf.reduce_sum(h * h), [w])
    with tf.Session() as sess:
        together = sess.run([g1, g2])
        np.testing.assert_allclose(together[0], sess.run(g1))
        np.testing.assert_allclose(together[1], sess.run(g2))


def test_gradient_of_three_nested_loops_with_a_cond_inside(executor):
    def build(loops):
        w, _, h0, _ = _params(7)

        def step(h, parity):
            return tf.cond(
                tf.equal(parity % 2, 0), lambda: tf.sin(tf.matmul(h, w)), lambda: h * 0.9
            )

        if loops:

            def middle(i, h):
                def inner(j, h):
                    return j + 1, tf.while_loop(
                        lambda k, h: k < 2, lambda k, h: (k + 1, step(h, i + j + k)), [0, h]
                    )[1]

                return i + 1, tf.while_loop(lambda j, h: j < 2, inner, [0, h])[1]

            h = tf.while_loop(lambda i, h: i < 2, middle, [0, h0])[1]
        else:
            h = h0
            for n in range(8):
                i, j, k = n // 4, n // 2 % 2, n % 2
                h = step(h, tf.constant(i + j + k))
        return tf.reduce_sum(h * h), [w, h0]

    _compare(build)
