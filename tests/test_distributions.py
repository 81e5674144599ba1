"""tf.distributions against scipy.stats: densities, CDFs, moments, entropies, KL divergences,
sample statistics and the gradients of reparameterized samples."""

import numpy as np
import pytest
import scipy.integrate
import scipy.special
import scipy.stats

import nbflow as tf

tfd = tf.distributions
X = np.array([0.2, 0.5, 0.9])


def setup_function():
    tf.reset_default_graph()


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def stats_of(dist, x):
    return run([dist.log_prob(x), dist.prob(x), dist.mean(), dist.stddev(), dist.entropy()])


CASES = [
    (
        lambda: tfd.Normal(np.array([0.0, 1.0, -1.0]), np.array([1.0, 2.0, 0.5])),
        scipy.stats.norm([0.0, 1.0, -1.0], [1.0, 2.0, 0.5]),
    ),
    (
        lambda: tfd.Laplace(np.array([0.0, 1.0, -1.0]), np.array([1.0, 2.0, 0.5])),
        scipy.stats.laplace([0.0, 1.0, -1.0], [1.0, 2.0, 0.5]),
    ),
    (
        lambda: tfd.Uniform(np.array([0.0, 0.1, -1.0]), np.array([1.0, 2.0, 0.95])),
        scipy.stats.uniform([0.0, 0.1, -1.0], [1.0, 1.9, 1.95]),
    ),
    (
        lambda: tfd.Gamma(np.array([0.5, 2.0, 5.0]), np.array([1.0, 3.0, 0.5])),
        scipy.stats.gamma([0.5, 2.0, 5.0], scale=1 / np.array([1.0, 3.0, 0.5])),
    ),
    (
        lambda: tfd.Exponential(np.array([0.5, 2.0, 3.0])),
        scipy.stats.expon(scale=1 / np.array([0.5, 2.0, 3.0])),
    ),
    (
        lambda: tfd.Beta(np.array([0.5, 2.0, 5.0]), np.array([1.5, 3.0, 0.8])),
        scipy.stats.beta([0.5, 2.0, 5.0], [1.5, 3.0, 0.8]),
    ),
]


@pytest.mark.parametrize(
    "make, reference", CASES, ids=lambda c: getattr(c, "dist", c).__class__.__name__
)
def test_continuous_statistics_agree_with_scipy(make, reference):
    dist = make()
    log_prob, prob, mean, stddev, entropy = stats_of(dist, X)
    np.testing.assert_allclose(log_prob, reference.logpdf(X), rtol=1e-10)
    np.testing.assert_allclose(prob, reference.pdf(X), rtol=1e-10)
    np.testing.assert_allclose(mean, reference.mean(), rtol=1e-10)
    np.testing.assert_allclose(stddev, reference.std(), rtol=1e-10)
    np.testing.assert_allclose(entropy, reference.entropy(), rtol=1e-10)
    np.testing.assert_allclose(run(dist.cdf(X)), reference.cdf(X), rtol=1e-10)


def test_python_float_parameters_give_float32_and_numpy_float64_stays():
    assert tfd.Normal(0.0, 1.0).dtype == tf.float32
    assert tfd.Normal(np.float64(0.0), np.float64(1.0)).dtype == tf.float64
    assert tfd.Gamma([1.0, 2.0], 1.0).batch_shape.as_list() == [2]


def test_discrete_distributions_agree_with_scipy():
    p = np.array([0.2, 0.7])
    bern = tfd.Bernoulli(probs=p)
    got = run([bern.log_prob([1, 0]), bern.entropy(), bern.mean(), bern.variance()])
    ref = scipy.stats.bernoulli(p)
    np.testing.assert_allclose(got[0], ref.logpmf([1, 0]), rtol=1e-6)
    np.testing.assert_allclose(got[1], ref.entropy(), rtol=1e-6)
    np.testing.assert_allclose(got[2:], [ref.mean(), ref.var()], rtol=1e-6)

    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    cat = tfd.Categorical(logits=np.log(probs))
    log_prob, entropy, mode, cdf = run(
        [cat.log_prob([2, 0]), cat.entropy(), cat.mode(), cat.cdf([1, 1])]
    )
    np.testing.assert_allclose(log_prob, np.log([0.5, 0.6]), rtol=1e-10)
    np.testing.assert_allclose(entropy, scipy.stats.entropy(probs, axis=1), rtol=1e-10)
    assert mode.tolist() == [2, 0]
    np.testing.assert_allclose(cdf, [0.5, 0.9], rtol=1e-10)

    multi = tfd.Multinomial(total_count=5.0, probs=probs)
    counts = np.array([[1.0, 1.0, 3.0], [5.0, 0.0, 0.0]])
    got_lp, got_mean, got_cov = run([multi.log_prob(counts), multi.mean(), multi.covariance()])
    ref = [scipy.stats.multinomial(5, probs[i]) for i in range(2)]
    np.testing.assert_allclose(got_lp, [r.logpmf(c) for r, c in zip(ref, counts)], rtol=1e-10)
    np.testing.assert_allclose(got_mean, 5 * probs, rtol=1e-10)
    np.testing.assert_allclose(got_cov, [r.cov() for r in ref], rtol=1e-10)


def test_dirichlet_agrees_with_scipy():
    alpha = np.array([0.7, 2.0, 3.5])
    x = np.array([0.2, 0.3, 0.5])
    d = tfd.Dirichlet(alpha)
    ref = scipy.stats.dirichlet(alpha)
    log_prob, entropy, mean, var, cov = run(
        [d.log_prob(x), d.entropy(), d.mean(), d.variance(), d.covariance()]
    )
    np.testing.assert_allclose(log_prob, ref.logpdf(x), rtol=1e-10)
    np.testing.assert_allclose(entropy, ref.entropy(), rtol=1e-10)
    np.testing.assert_allclose(mean, ref.mean(), rtol=1e-10)
    np.testing.assert_allclose(var, ref.var(), rtol=1e-10)
    np.testing.assert_allclose(np.diag(cov), ref.var(), rtol=1e-10)
    assert d.event_shape.as_list() == [3] and d.batch_shape.as_list() == []


def _kl_by_quadrature(p, q, lo, hi):
    value, _ = scipy.integrate.quad(lambda t: p.pdf(t) * (p.logpdf(t) - q.logpdf(t)), lo, hi)
    return value


def test_registered_kl_divergences_agree_with_quadrature_and_sums():
    normal = tfd.kl_divergence(tfd.Normal(np.float64(0.3), 1.5), tfd.Normal(np.float64(-1.0), 0.7))
    gamma = tfd.kl_divergence(tfd.Gamma(np.float64(2.0), 3.0), tfd.Gamma(np.float64(1.5), 1.0))
    beta = tfd.kl_divergence(tfd.Beta(np.float64(2.0), 3.0), tfd.Beta(np.float64(1.5), 4.0))
    expo = tfd.kl_divergence(tfd.Exponential(np.float64(2.0)), tfd.Gamma(np.float64(1.5), 1.0))
    dirichlet = tfd.kl_divergence(
        tfd.Dirichlet(np.array([2.0, 3.0])), tfd.Dirichlet(np.array([1.5, 4.0]))
    )
    p, q = np.array([0.2, 0.8]), np.array([0.5, 0.5])
    bern = tfd.kl_divergence(tfd.Bernoulli(probs=p), tfd.Bernoulli(probs=q))
    cat = tfd.kl_divergence(tfd.Categorical(probs=[p]), tfd.Categorical(probs=[q]))
    got = run([normal, gamma, beta, expo, dirichlet, bern, cat])
    st = scipy.stats
    np.testing.assert_allclose(
        got[0], _kl_by_quadrature(st.norm(0.3, 1.5), st.norm(-1.0, 0.7), -30, 30), rtol=1e-7
    )
    np.testing.assert_allclose(
        got[1],
        _kl_by_quadrature(st.gamma(2.0, scale=1 / 3), st.gamma(1.5), 0, 60),
        rtol=1e-7,
    )
    beta_kl = _kl_by_quadrature(st.beta(2.0, 3.0), st.beta(1.5, 4.0), 0, 1)
    np.testing.assert_allclose(got[2], beta_kl, rtol=1e-7)
    np.testing.assert_allclose(
        got[3], _kl_by_quadrature(st.expon(scale=0.5), st.gamma(1.5), 0, 60), rtol=1e-7
    )
    np.testing.assert_allclose(got[4], beta_kl, rtol=1e-7)  # a 2-class Dirichlet is a Beta
    bern_want = p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))
    np.testing.assert_allclose(got[5], bern_want, rtol=1e-6)
    np.testing.assert_allclose(got[6], [np.sum(p * np.log(p / q))], rtol=1e-6)


def test_kl_of_an_unregistered_pair_raises_and_register_kl_rejects_duplicates():
    with pytest.raises(NotImplementedError, match="No KL"):
        tfd.kl_divergence(tfd.Normal(0.0, 1.0), tfd.Laplace(0.0, 1.0))

    class MyNormal(tfd.Normal):
        pass

    @tfd.RegisterKL(MyNormal, tfd.Laplace)
    def _kl(a, b, name=None):
        return tf.constant(7.0)

    assert run(tfd.kl_divergence(MyNormal(0.0, 1.0), tfd.Laplace(0.0, 1.0))) == 7.0
    with pytest.raises(ValueError, match="already been registered"):
        tfd.RegisterKL(MyNormal, tfd.Laplace)(_kl)


@pytest.mark.parametrize(
    "make, mean, var",
    [
        (lambda: tfd.Normal(np.float64(1.0), 2.0), 1.0, 4.0),
        (lambda: tfd.Laplace(np.float64(1.0), 2.0), 1.0, 8.0),
        (lambda: tfd.Uniform(np.float64(-1.0), 3.0), 1.0, 16 / 12),
        (lambda: tfd.Gamma(np.float64(3.0), 2.0), 1.5, 0.75),
        (lambda: tfd.Exponential(np.float64(2.0)), 0.5, 0.25),
        (lambda: tfd.Beta(np.float64(2.0), 3.0), 0.4, 0.04),
        (lambda: tfd.Bernoulli(probs=np.float64(0.3), dtype=tf.float64), 0.3, 0.21),
    ],
)
def test_samples_have_the_distributions_moments(make, mean, var):
    draws = run(make().sample([100, 200], seed=7))
    assert draws.shape == (100, 200)
    np.testing.assert_allclose(draws.mean(), mean, atol=4 * np.sqrt(var / 20000))
    np.testing.assert_allclose(draws.var(), var, rtol=0.06)


def test_sample_shapes_combine_sample_batch_and_event_shapes():
    assert tfd.Normal(np.zeros((2, 3)), 1.0).sample(4, seed=1).shape.as_list() == [4, 2, 3]
    dirichlet = tfd.Dirichlet(np.ones((2, 3))).sample([5], seed=1)
    multinomial = tfd.Multinomial(4.0, logits=np.zeros((2, 3))).sample(6, seed=2)
    categorical = tfd.Categorical(logits=np.zeros((2, 3))).sample([5, 7], seed=3)
    d, m, c = run([dirichlet, multinomial, categorical])
    assert d.shape == (5, 2, 3) and np.allclose(d.sum(-1), 1.0)
    assert m.shape == (6, 2, 3) and (m.sum(-1) == 4).all()
    assert c.shape == (5, 7, 2) and set(np.unique(c)) <= {0, 1, 2}


def test_reparameterized_samples_carry_gradients_to_the_parameters():
    loc = tf.constant(0.5, tf.float64)
    scale = tf.constant(2.0, tf.float64)
    z = tfd.Normal(loc, scale).sample(1000, seed=3)
    d_loc, d_scale = run(tf.gradients(tf.reduce_mean(z), [loc, scale]))
    noise_mean = run((z - 0.5) / 2.0).mean()
    np.testing.assert_allclose([d_loc, d_scale], [1.0, noise_mean], rtol=1e-10)

    alpha = tf.constant(3.0, tf.float64)
    mean_of_samples = tf.reduce_mean(tfd.Gamma(alpha, 1.0).sample(20000, seed=4))
    # d E[x] / d alpha = 1 for Gamma(alpha, 1): the implicit gradient's average says so.
    np.testing.assert_allclose(run(tf.gradients(mean_of_samples, alpha)[0]), 1.0, rtol=0.03)
    assert tfd.Gamma(1.0, 1.0).reparameterization_type == tfd.FULLY_REPARAMETERIZED
    assert tfd.Bernoulli(probs=0.5).reparameterization_type == tfd.NOT_REPARAMETERIZED


def test_log_prob_gradients_reach_the_parameters():
    loc = tf.constant(0.3, tf.float64)
    scale = tf.constant(1.7, tf.float64)
    x = np.array([0.1, 2.0, -1.0])
    d_loc, d_scale = run(
        tf.gradients(tf.reduce_sum(tfd.Normal(loc, scale).log_prob(x)), [loc, scale])
    )
    np.testing.assert_allclose(d_loc, np.sum((x - 0.3) / 1.7**2), rtol=1e-10)
    np.testing.assert_allclose(d_scale, np.sum((x - 0.3) ** 2 / 1.7**3 - 1 / 1.7), rtol=1e-10)
    conc = tf.constant([2.0, 3.0], tf.float64)
    grad = run(tf.gradients(tfd.Dirichlet(conc).log_prob([0.3, 0.7]), conc)[0])
    want = np.log([0.3, 0.7]) - scipy.special.digamma([2.0, 3.0]) + scipy.special.digamma(5.0)
    np.testing.assert_allclose(grad, want, rtol=1e-10)


def test_validate_args_checks_parameters_at_run_time_and_nan_stats_can_be_disallowed():
    with pytest.raises(tf.errors.InvalidArgumentError, match="scale"):
        run(tfd.Normal(0.0, -1.0, validate_args=True).mean())  # a constant fails at once
    scale = tf.placeholder(tf.float32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="scale"):
        run(tfd.Normal(0.0, scale, validate_args=True).stddev(), {scale: -1.0})
    assert np.isnan(run(tfd.Gamma(0.5, 1.0).mode()))
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tfd.Gamma(0.5, 1.0, allow_nan_stats=False).mode())


def test_student_t_agrees_with_scipy_and_its_samples_have_its_variance():
    df, loc, scale = (
        np.array([3.0, 5.0, 30.0]),
        np.array([0.0, 1.0, -1.0]),
        np.array([1.0, 2.0, 0.5]),
    )
    d = tfd.StudentT(df, loc, scale)
    ref = scipy.stats.t(df, loc, scale)
    log_prob, mean, var, entropy = run([d.log_prob(X), d.mean(), d.variance(), d.entropy()])
    np.testing.assert_allclose(log_prob, ref.logpdf(X), rtol=1e-10)
    np.testing.assert_allclose(run(d.cdf(X - 1.0)), ref.cdf(X - 1.0), rtol=1e-10)
    np.testing.assert_allclose(mean, ref.mean(), rtol=1e-10)
    np.testing.assert_allclose(var, ref.var(), rtol=1e-10)
    np.testing.assert_allclose(entropy, ref.entropy(), rtol=1e-10)
    undefined = run(tfd.StudentT(np.array([0.5, 1.5]), 0.0, 1.0).variance())
    assert np.isnan(undefined[0]) and np.isinf(undefined[1])
    draws = run(tfd.StudentT(np.float64(5.0), 1.0, 2.0).sample(40000, seed=11))
    np.testing.assert_allclose(draws.var(), 4.0 * 5 / 3, rtol=0.08)


def test_dirichlet_multinomial_agrees_with_scipy():
    alpha = np.array([0.5, 2.0, 3.0])
    d = tfd.DirichletMultinomial(6.0, alpha)
    counts = np.array([1.0, 2.0, 3.0])
    ref = scipy.stats.dirichlet_multinomial(alpha, 6)
    log_prob, mean, cov = run([d.log_prob(counts), d.mean(), d.covariance()])
    np.testing.assert_allclose(log_prob, ref.logpmf(counts), rtol=1e-10)
    np.testing.assert_allclose(mean, ref.mean(), rtol=1e-10)
    np.testing.assert_allclose(cov, ref.cov(), rtol=1e-10)
    draws = run(d.sample(4000, seed=5))
    assert draws.shape == (4000, 3) and (draws.sum(-1) == 6).all()
    np.testing.assert_allclose(draws.mean(0), ref.mean(), atol=0.1)


def test_sample_shape_may_be_a_tensor_and_copy_overrides_parameters():
    d = tfd.Normal(np.zeros(3), 1.0)
    shape = tf.placeholder(tf.int32, [2])
    with tf.Session() as sess:
        drawn = sess.run(d.sample(shape, seed=1), {shape: [4, 5]})
    assert drawn.shape == (4, 5, 3)
    wider = d.copy(scale=np.float64(3.0))
    assert isinstance(wider, tfd.Normal) and run(wider.stddev()).tolist() == [3.0, 3.0, 3.0]


def test_multinomial_samples_with_a_fed_total_count_per_batch_member():
    total = tf.placeholder(tf.float32, [2])
    probs = np.array([[0.2, 0.3, 0.5], [0.5, 0.5, 0.0]], np.float32)
    dist = tf.distributions.Multinomial(total_count=total, probs=probs)
    with tf.Session() as sess:
        counts = sess.run(dist.sample(4000, seed=3), {total: [4.0, 7.0]})
    assert counts.shape == (4000, 2, 3)
    np.testing.assert_array_equal(counts.sum(-1), np.broadcast_to([4.0, 7.0], (4000, 2)))
    np.testing.assert_allclose(counts.mean(0), [[0.8, 1.2, 2.0], [3.5, 3.5, 0.0]], atol=0.1)
