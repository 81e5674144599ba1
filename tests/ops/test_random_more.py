"""tf.random's gamma, poisson, categorical, random_crop and the stateless ops."""

import numpy as np
import pytest
import scipy.special
import scipy.stats

import nbflow as tf


def setup_function():
    tf.reset_default_graph()


def run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_gamma_draws_have_the_gamma_moments_and_scale_by_beta():
    x = run(tf.random.gamma([20000], [0.5, 3.0], beta=[1.0, 2.0], dtype=tf.float64, seed=1))
    assert x.shape == (20000, 2) and (x > 0).all()
    np.testing.assert_allclose(x.mean(0), [0.5, 1.5], rtol=0.03)
    np.testing.assert_allclose(x.var(0), [0.5, 0.75], rtol=0.06)
    assert scipy.stats.kstest(x[:, 0], "gamma", args=(0.5,)).pvalue > 1e-3


def test_gamma_sample_gradient_is_the_implicit_reparameterization():
    # d/dalpha of the alpha-quantile map at fixed u, checked against scipy's inverse CDF.
    alpha = tf.constant([0.7, 2.5], tf.float64)
    x = tf.random.gamma([5], alpha, dtype=tf.float64, seed=3)
    grad = tf.gradients(tf.reduce_sum(x), alpha)[0]
    draws, got = run([x, grad])
    u = scipy.special.gammainc([0.7, 2.5], draws)
    h = 1e-6
    fd = (
        scipy.special.gammaincinv(np.array([0.7, 2.5]) + h, u)
        - scipy.special.gammaincinv(np.array([0.7, 2.5]) - h, u)
    ) / (2 * h)
    np.testing.assert_allclose(got, fd.sum(0), rtol=1e-5)


def test_poisson_draws_have_the_poisson_mean_in_the_requested_dtype():
    x = run(tf.random.poisson([1.0, 10.0], [5000], dtype=tf.int32, seed=2))
    assert x.dtype == np.int32 and x.shape == (5000, 2)
    np.testing.assert_allclose(x.mean(0), [1.0, 10.0], rtol=0.05)


def test_categorical_follows_the_logits():
    logits = np.log([[0.1, 0.9], [0.7, 0.3]])
    k = run(tf.random.categorical(logits, 4000, seed=4, dtype=tf.int32))
    assert k.dtype == np.int32 and k.shape == (2, 4000)
    np.testing.assert_allclose(k.mean(1), [0.9, 0.3], atol=0.03)


def test_random_crop_takes_one_block_of_the_value():
    value = np.arange(5 * 6 * 3).reshape(5, 6, 3)
    got = run(tf.random_crop(value, [2, 3, 3], seed=5))
    starts = [(i, j) for i in range(4) for j in range(4)]
    assert any((got == value[i : i + 2, j : j + 3]).all() for i, j in starts)
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.random_crop(value, [6, 1, 3]))


def test_stateless_ops_are_a_function_of_the_seed_across_graphs_and_sessions():
    def draw(seed):
        with tf.Graph().as_default():
            ops = [
                tf.random.stateless_uniform([3], seed=seed),
                tf.random.stateless_normal([3], seed=seed, dtype=tf.float64),
                tf.random.stateless_truncated_normal([1000], seed=seed),
                tf.random.stateless_uniform([4], seed=seed, minval=2, maxval=9, dtype=tf.int64),
                tf.random.stateless_categorical([[0.0, 1.0]], 6, seed=seed),
            ]
            with tf.Session() as sess:
                return sess.run(ops)

    first, again, other = draw([1, 2]), draw([1, 2]), draw([2, 1])
    for a, b, c in zip(first, again, other):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == c.dtype and not np.array_equal(a, c)
    assert (np.abs(first[2]) <= 2).all()
    assert first[3].min() >= 2 and first[3].max() < 9


def test_stateless_op_rejects_a_seed_that_is_not_a_pair():
    with pytest.raises(ValueError, match="seed must have shape"):
        tf.random.stateless_uniform([3], seed=[1, 2, 3])


def test_candidate_samplers_draw_from_their_distributions():
    true = tf.constant([[1], [3]], tf.int64)
    uniform = tf.random.uniform_candidate_sampler(true, 1, 4000, False, 8, seed=1)
    fixed = tf.random.fixed_unigram_candidate_sampler(
        true, 1, 4000, False, 4, unigrams=[1.0, 3.0, 4.0], num_reserved_ids=1, seed=2
    )
    every = tf.random.all_candidate_sampler(true, 1, 5, True)
    unique = tf.random.uniform_candidate_sampler(true, 1, 8, True, 8, seed=3)
    (u, u_true, _), (f, _, f_count), (a, a_true, a_count), (q, _, _) = run(
        [uniform, fixed, every, unique]
    )
    np.testing.assert_allclose(np.bincount(u, minlength=8) / 4000, 1 / 8, atol=0.02)
    np.testing.assert_allclose(u_true, [[500.0], [500.0]])
    np.testing.assert_allclose(
        np.bincount(f, minlength=4) / 4000, [0, 0.125, 0.375, 0.5], atol=0.025
    )
    assert a.tolist() == [0, 1, 2, 3, 4] and (a_true == 1).all() and (a_count == 1).all()
    assert sorted(q.tolist()) == list(range(8))
    assert f_count.shape == (4000,)


def test_learned_unigram_sampler_learns_from_the_true_classes_it_sees():
    true = tf.constant([[3]] * 50, tf.int64)
    sampled, _, _ = tf.random.learned_unigram_candidate_sampler(true, 1, 200, False, 6, seed=4)
    with tf.Session() as sess:
        first = sess.run(sampled)
        for _ in range(20):
            last = sess.run(sampled)
    assert (first == 3).mean() > 0.8 and (last == 3).mean() > (first == 3).mean() - 0.05
    assert (last == 3).mean() > 0.95
