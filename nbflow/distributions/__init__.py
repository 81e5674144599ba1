"""``tf.distributions``: TensorFlow 1.15's probability distributions, built from nbflow ops.

    d = tf.distributions.Normal(loc=mu, scale=sigma)
    loss = -tf.reduce_mean(d.log_prob(x))          # gradients reach mu and sigma
    z = d.sample(16)                               # reparameterized: differentiable too
    kl = tf.distributions.kl_divergence(d, tf.distributions.Normal(0.0, 1.0))

``distribution`` holds the base class and the reparameterization types, ``kullback_leibler``
the KL registry; ``continuous`` (Normal, Laplace, Uniform), ``gamma_family`` (Gamma,
Exponential, Beta, Dirichlet) and ``discrete`` (Bernoulli, Categorical, Multinomial) the
distributions. Not here: ``StudentT`` and ``DirichletMultinomial``.
"""

from nbflow.distributions.continuous import Laplace, Normal, Uniform
from nbflow.distributions.discrete import Bernoulli, Categorical, Multinomial
from nbflow.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    NOT_REPARAMETERIZED,
    Distribution,
    ReparameterizationType,
)
from nbflow.distributions.gamma_family import Beta, Dirichlet, Exponential, Gamma
from nbflow.distributions.kullback_leibler import RegisterKL, kl_divergence
from nbflow.distributions.student_t import DirichletMultinomial, StudentT

__all__ = [
    "FULLY_REPARAMETERIZED",
    "NOT_REPARAMETERIZED",
    "Bernoulli",
    "Beta",
    "Categorical",
    "Dirichlet",
    "DirichletMultinomial",
    "Distribution",
    "Exponential",
    "Gamma",
    "Laplace",
    "Multinomial",
    "Normal",
    "RegisterKL",
    "ReparameterizationType",
    "StudentT",
    "Uniform",
    "kl_divergence",
]
