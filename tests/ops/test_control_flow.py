"""cond, case, while_loop, map_fn/fold/scan and their gradients."""

import collections

import numpy as np
import pytest

import nbflow as tf
from nbflow.framework.importer import import_graph_def


def _assert_fails(x):
    """An op that raises when it runs (proves a branch did not run)."""
    return (
        tf.check_numerics(x / 0.0 * 0.0, "ran the untaken branch")
        if hasattr(tf, "check_numerics")
        else x
    )


def test_cond_runs_only_the_taken_branch():
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(x > 0.0, lambda: x * 10.0, lambda: tf.check_numerics(tf.log(x - 1e9), "bad"))
    with tf.Session() as sess:
        assert sess.run(y, {x: 2.0}) == pytest.approx(20.0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad"):
            sess.run(y, {x: -2.0})


def test_cond_with_nested_outputs_and_constants_in_branches():
    p = tf.placeholder(tf.bool, [])
    out = tf.cond(
        p,
        lambda: (tf.constant(1), {"a": tf.constant(2.0)}),
        lambda: (tf.constant(3), {"a": tf.constant(4.0)}),
    )
    with tf.Session() as sess:
        assert sess.run(out, {p: True}) == (1, {"a": 2.0})
        assert sess.run(out, {p: False}) == (3, {"a": 4.0})


def test_case_selects_first_true_predicate_and_default():
    x = tf.placeholder(tf.int32, [])
    r = tf.case(
        [(x < 0, lambda: tf.constant(-1)), (x < 10, lambda: tf.constant(1))],
        default=lambda: tf.constant(100),
    )
    with tf.Session() as sess:
        assert [sess.run(r, {x: v}) for v in (-5, 5, 50)] == [-1, 1, 100]


def test_case_exclusive_rejects_two_true_predicates():
    x = tf.placeholder(tf.int32, [])
    r = tf.case(
        {x < 5: lambda: tf.constant(1), x < 10: lambda: tf.constant(2)},
        default=lambda: tf.constant(0),
        exclusive=True,
    )
    with tf.Session() as sess:
        assert sess.run(r, {x: 7}) == 2
        with pytest.raises(tf.errors.InvalidArgumentError, match="exclusive"):
            sess.run(r, {x: 1})


def test_while_loop_counts_and_reads_outside_tensors():
    limit = tf.placeholder(tf.int32, [])
    step = tf.constant(2)
    i, total = tf.while_loop(
        lambda i, s: i < limit, lambda i, s: (i + 1, s + step), [tf.constant(0), tf.constant(0)]
    )
    with tf.Session() as sess:
        assert sess.run([i, total], {limit: 7}) == [7, 14]
        assert sess.run([i, total], {limit: 0}) == [0, 0]


Pair = collections.namedtuple("Pair", "a b")


def test_while_loop_nested_structure_and_shape_invariants():
    def body(i, state):
        return i + 1, Pair(tf.concat([state.a, [tf.cast(i, tf.float32)]], 0), state.b * 2.0)

    i, state = tf.while_loop(
        lambda i, s: i < 4,
        body,
        [tf.constant(0), Pair(tf.zeros([0]), tf.constant(1.0))],
        shape_invariants=[tf.TensorShape([]), Pair(tf.TensorShape([None]), tf.TensorShape([]))],
    )
    with tf.Session() as sess:
        _, (a, b) = sess.run([i, state])
    np.testing.assert_array_equal(a, [0, 1, 2, 3])
    assert b == 16.0


def test_while_loop_shape_change_without_invariant_is_value_error():
    with pytest.raises(ValueError, match="shape_invariants"):
        tf.while_loop(lambda x: tf.size(x) < 4, lambda x: tf.concat([x, x], 0), [tf.zeros([1])])


def test_while_loop_maximum_iterations():
    r = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [tf.constant(0)], maximum_iterations=5)
    with tf.Session() as sess:
        assert sess.run(r) == 5


def test_nested_while_loops_and_cond_inside_loop():
    def outer(i, acc):
        inner = tf.while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a + 1), [0, acc])[1]
        return i + 1, tf.cond(tf.equal(i % 2, 0), lambda: inner * 10, lambda: inner)

    r = tf.while_loop(lambda i, a: i < 4, outer, [tf.constant(0), tf.constant(0)])[1]

    def py():
        acc = 0
        for i in range(4):
            acc += i
            acc = acc * 10 if i % 2 == 0 else acc
        return acc

    with tf.Session() as sess:
        assert sess.run(r) == py()


def test_map_fold_scan_match_numpy():
    x = np.arange(1.0, 6.0, dtype=np.float32)
    t = tf.constant(x)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(tf.map_fn(lambda v: v * v, t)), x * x)
        assert sess.run(tf.foldl(lambda a, v: a * 2 + v, t)) == pytest.approx(
            (((1 * 2 + 2) * 2 + 3) * 2 + 4) * 2 + 5
        )
        assert sess.run(tf.foldr(lambda a, v: a - v, t, initializer=0.0)) == -15.0
        np.testing.assert_allclose(sess.run(tf.scan(lambda a, v: a + v, t)), np.cumsum(x))
        np.testing.assert_allclose(
            sess.run(tf.scan(lambda a, v: a + v, t, reverse=True)), np.cumsum(x[::-1])[::-1]
        )
        pair = tf.map_fn(lambda v: (v[0], -v[1]), (t, t))
        np.testing.assert_allclose(sess.run(pair)[1], -x)


def test_gradient_through_cond_takes_only_the_taken_branch():
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(x > 0.0, lambda: x * x * 3.0, lambda: -x)
    (g,) = tf.gradients(y, [x])
    with tf.Session() as sess:
        assert sess.run(g, {x: 2.0}) == pytest.approx(12.0)
        assert sess.run(g, {x: -2.0}) == pytest.approx(-1.0)


def _rnn_grads(unrolled: bool):
    rng = np.random.default_rng(0)
    steps, batch, hidden = 6, 3, 4
    x = tf.constant(rng.standard_normal((steps, batch, hidden)))
    w = tf.Variable(rng.standard_normal((hidden, hidden)) * 0.5, name="w")
    h0 = tf.constant(rng.standard_normal((batch, hidden)))
    if unrolled:
        h = h0
        for t in range(steps):
            h = tf.tanh(tf.matmul(h, w) + x[t])
    else:
        _, h = tf.while_loop(
            lambda i, h: i < steps,
            lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w) + tf.gather(x, i))),
            [tf.constant(0), h0],
        )
    loss = tf.reduce_sum(h * h)
    return w, loss, tf.gradients(loss, [w, h0, x])


def test_rnn_gradients_through_while_loop_match_unrolled():
    results = []
    for unrolled in (False, True):
        tf.reset_default_graph()
        w, loss, grads = _rnn_grads(unrolled)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            results.append(sess.run([loss] + grads))
    for a, b in zip(*results):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)


def test_rnn_in_while_loop_trains():
    w, loss, _ = _rnn_grads(unrolled=False)
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, var_list=[w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(30):
            sess.run(train)
        assert sess.run(loss) < 0.5 * first


def test_gradient_through_map_fn_and_back_prop_false():
    x = tf.constant([1.0, 2.0, 3.0])
    (g,) = tf.gradients(tf.reduce_sum(tf.map_fn(lambda v: v * v, x)), [x])
    i, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 2.0), [0, x], back_prop=False)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g), [2.0, 4.0, 6.0])
    assert tf.gradients(tf.reduce_sum(y), [x]) == [None]


def test_loop_graph_round_trips_through_graph_def():
    a = tf.placeholder(tf.int32, [], name="a")
    r = tf.while_loop(lambda i: i < a, lambda i: i + 3, [tf.constant(0)], name="loop")
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        feed = tf.placeholder(tf.int32, [])
        (out,) = import_graph_def(
            graph_def, input_map={"a:0": feed}, return_elements=[r.name], name="imported"
        )
        with tf.Session() as sess:
            assert sess.run(out, {feed: 10}) == 12


@pytest.mark.parametrize("reverse", [False, True])
def test_gradient_through_scan_matches_finite_differences(reverse):
    x_value = np.random.default_rng(3).standard_normal((5, 2))

    def loss(x):
        states = tf.scan(
            lambda a, e: (a[0] * tf.sin(e) + a[1], a[1] * 0.5 + e),
            x,
            initializer=(tf.ones([2], tf.float64), tf.zeros([2], tf.float64)),
            reverse=reverse,
        )
        return tf.reduce_sum(states[0] * states[0]) + tf.reduce_sum(states[1])

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [5, 2])
        value = loss(x)
        (grad,) = tf.gradients(value, [x])
        with tf.Session() as sess:
            symbolic = sess.run(grad, {x: x_value})
            numeric = np.zeros_like(x_value)
            for i in np.ndindex(x_value.shape):
                plus, minus = x_value.copy(), x_value.copy()
                plus[i] += 1e-6
                minus[i] -= 1e-6
                numeric[i] = (sess.run(value, {x: plus}) - sess.run(value, {x: minus})) / 2e-6
    np.testing.assert_allclose(symbolic, numeric, rtol=1e-5, atol=1e-8)


def test_map_fn_of_many_rows_stacks_in_one_pass():
    rows = np.arange(3000.0).reshape(1000, 3)
    with tf.Graph().as_default():
        out = tf.map_fn(lambda r: (r * 2.0, tf.reduce_sum(r)), tf.constant(rows))
        with tf.Session() as sess:
            doubled, sums = sess.run(out)
    np.testing.assert_array_equal(doubled, rows * 2)
    np.testing.assert_array_equal(sums, rows.sum(1))
