"""Random ops: TensorFlow's graph/op seed rules, per-session sequences, distributions."""

import numpy as np
import pytest

import nbflow as tf
from nbflow.ops.random_ops import DEFAULT_GRAPH_SEED, get_seed


def draws(fetch, runs=2):
    with tf.Session() as sess:
        return [sess.run(fetch) for _ in range(runs)]


def test_get_seed_follows_tensorflow_rules():
    assert get_seed(None) == (None, None)
    assert get_seed(7) == (DEFAULT_GRAPH_SEED, 7)
    tf.set_random_seed(3)
    assert tf.get_default_graph().seed == 3
    assert get_seed(7) == (3, 7)
    graph_seed, op_seed = get_seed(None)
    assert graph_seed == 3 and op_seed == tf.get_default_graph()._id_counter
    tf.set_random_seed(0)
    assert get_seed(0) == (0, 2**31 - 1)


def test_op_seed_gives_same_sequence_in_every_session_and_runs_differ():
    x = tf.random_uniform([4], seed=5)
    first, second = draws(x), draws(x)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert not np.array_equal(first[0], first[1])


def test_graph_seed_makes_graphs_repeatable_and_ops_distinct():
    def build():
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(42)
            a, b = tf.random_normal([3]), tf.random_normal([3])
        with tf.Session(graph=g) as sess:
            return sess.run([a, b])

    (a1, b1), (a2, b2) = build(), build()
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(b1, b2)
    assert not np.array_equal(a1, b1)


def test_unseeded_ops_are_nondeterministic():
    x = tf.random_uniform([8])
    op = tf.get_default_graph().get_operation_by_name("random_uniform/RandomUniform")
    assert op.get_attr("seed") == 0 and op.get_attr("seed2") == 0
    assert not np.array_equal(draws(x, 1)[0], draws(x, 1)[0])


def test_random_uniform_range_dtype_and_names():
    x = tf.random_uniform([200, 10], minval=-2.0, maxval=3.0, seed=1)
    assert x.op.name == "random_uniform" and x.dtype == tf.float32
    assert tf.get_default_graph().get_operation_by_name("random_uniform/RandomUniform")
    value = draws(x, 1)[0]
    assert value.shape == (200, 10) and value.min() >= -2.0 and value.max() < 3.0
    assert abs(value.mean() - 0.5) < 0.1
    ints = tf.random_uniform([1000], minval=3, maxval=7, dtype=tf.int64, seed=2)
    values = draws(ints, 1)[0]
    assert values.dtype == np.int64 and set(values.tolist()) == {3, 4, 5, 6}
    with pytest.raises(ValueError, match="Must specify maxval"):
        tf.random_uniform([2], dtype=tf.int32)


def test_random_normal_and_truncated_normal_statistics():
    n = tf.random_normal([20000], mean=2.0, stddev=3.0, seed=1, dtype=tf.float64)
    t = tf.truncated_normal([20000], mean=-1.0, stddev=0.5, seed=2)
    nv, tv = draws([n, t], 1)[0]
    assert nv.dtype == np.float64 and abs(nv.mean() - 2.0) < 0.1 and abs(nv.std() - 3.0) < 0.1
    assert tv.dtype == np.float32 and np.all(np.abs(tv + 1.0) <= 1.0 + 1e-6)
    assert abs(tv.mean() + 1.0) < 0.02


def test_random_shuffle_permutes_rows():
    x = np.arange(20).reshape(10, 2)
    s = tf.random_shuffle(x, seed=3)
    first, second = draws(s)
    assert sorted(first.tolist()) == x.tolist() and not np.array_equal(first, second)
    assert draws(tf.random_shuffle(np.zeros((0, 2)), seed=1), 1)[0].shape == (0, 2)


def test_random_shape_may_be_dynamic_and_empty():
    n = tf.placeholder(tf.int32, [])
    x = tf.random_normal(tf.stack([n, 2]), seed=1)
    assert x.shape.ndims == 2
    with tf.Session() as sess:
        assert sess.run(x, {n: 3}).shape == (3, 2)
        assert sess.run(x, {n: 0}).shape == (0, 2)


def test_multinomial_samples_the_likely_class():
    logits = np.log(np.array([[0.01, 0.98, 0.01], [0.98, 0.01, 0.01]]))
    samples = draws(tf.multinomial(logits, 500, seed=4), 1)[0]
    assert samples.shape == (2, 500) and samples.dtype == np.int64
    assert (samples[0] == 1).mean() > 0.9 and (samples[1] == 0).mean() > 0.9


def test_random_ops_are_stateful_and_not_differentiable():
    for x in (tf.random_shuffle([1, 2]), tf.random_uniform([2], maxval=3, dtype=tf.int32)):
        assert x.op.op_def.stateful and not x.op.op_def.differentiable
