"""Gamma, Exponential, Beta and Dirichlet: the distributions built on Gamma draws.

All four are fully reparameterized: a Gamma draw is the inverse CDF at a uniform draw, and its
gradient with respect to the concentration is the implicit one (``RandomGamma``'s gradient);
a Beta draw is ``g1 / (g1 + g0)`` and a Dirichlet draw ``g / sum(g)`` of Gamma draws, so their
gradients follow. Densities use ``lgamma``; entropies and KL divergences ``digamma``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    Distribution,
    as_float,
    as_positive_float,
    broadcast_parameters,
    categorical_covariance,
    nan_where,
    VectorEvent,
)
from nbflow.distributions.kullback_leibler import RegisterKL
from nbflow.framework import ops as ops_lib
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops import array_ops, math_ops, random_ops
from nbflow.ops.math_special import betainc, digamma, igamma, lgamma

Tensor = ops_lib.Tensor


class Gamma(Distribution):
    """The Gamma distribution with ``concentration`` (shape) and ``rate`` (inverse scale).

    >>> import nbflow as tf
    >>> d = tf.distributions.Gamma(concentration=2.0, rate=1.0)
    >>> float(tf.Session().run(d.mean()))
    2.0
    """

    def __init__(
        self,
        concentration: Any,
        rate: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Gamma",
    ):
        parameters = dict(locals())
        with ops_lib.name_scope(name, values=[concentration, rate]):
            self._concentration = as_positive_float(
                concentration, "concentration", None, validate_args
            )
            dtype = self._concentration.dtype.base_dtype
            self._rate = as_positive_float(rate, "rate", dtype, validate_args)
        super().__init__(
            dtype=dtype,
            reparameterization_type=FULLY_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters=parameters,
            graph_parents=[self._concentration, self._rate],
            name=name,
        )

    @property
    def concentration(self) -> Tensor:
        return self._concentration

    @property
    def rate(self) -> Tensor:
        return self._rate

    def _batch_shape(self) -> TensorShape:
        return broadcast_parameters(self.concentration, self.rate)

    def _batch_shape_tensor(self) -> Tensor:
        return array_ops.shape(self.concentration * self.rate)

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        shape = array_ops.reshape(n, [1])
        return random_ops.random_gamma(
            shape, self.concentration, beta=self.rate, dtype=self.dtype, seed=seed
        )

    def _log_prob(self, x: Tensor) -> Tensor:
        a, b = self.concentration, self.rate
        return (a - 1.0) * math_ops.log(x) - b * x - lgamma(a) + a * math_ops.log(b)

    def _cdf(self, x: Tensor) -> Tensor:
        return igamma(self.concentration * self._ones(), self.rate * x)

    def _entropy(self) -> Tensor:
        a, b = self.concentration, self.rate
        return a - math_ops.log(b) + lgamma(a) + (1.0 - a) * digamma(a)

    def _mean(self) -> Tensor:
        return self.concentration / self.rate

    def _variance(self) -> Tensor:
        return self.concentration / math_ops.square(self.rate)

    def _mode(self) -> Tensor:
        mode = (self.concentration - 1.0) / self.rate
        undefined = math_ops.less(self.concentration * self._ones(), 1.0)
        return nan_where(undefined, mode, self.allow_nan_stats, "mode (concentration < 1)")


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(g0: Gamma, g1: Gamma, name: str | None = None) -> Tensor:
    with ops_lib.name_scope(name, "kl_gamma_gamma"):
        a0, b0, a1, b1 = g0.concentration, g0.rate, g1.concentration, g1.rate
        return (
            (a0 - a1) * digamma(a0)
            + lgamma(a1)
            - lgamma(a0)
            + a1 * math_ops.log(b0)
            - a1 * math_ops.log(b1)
            + a0 * (b1 / b0 - 1.0)
        )


class Exponential(Gamma):
    """The exponential distribution with ``rate``: Gamma(1, rate)."""

    def __init__(
        self,
        rate: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Exponential",
    ):
        parameters = dict(locals())
        rate_t = as_float(rate, "rate")
        super().__init__(
            concentration=array_ops.ones_like(rate_t),
            rate=rate_t,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            name=name,
        )
        self._parameters = {
            k: v for k, v in parameters.items() if k != "self" and not k.startswith("__")
        }

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        # -log(u) / rate with u in (0, 1]: the inverse CDF, reparameterized through rate.
        u = random_ops.random_uniform(
            self._sample_shape(n),
            minval=float(np.finfo(self.dtype.np).tiny),
            maxval=1.0,
            dtype=self.dtype,
            seed=seed,
        )
        return -math_ops.log(u) / self.rate

    def _log_prob(self, x: Tensor) -> Tensor:
        return math_ops.log(self.rate) - self.rate * x

    def _cdf(self, x: Tensor) -> Tensor:
        return -math_ops.expm1(-self.rate * x)


class Beta(Distribution):
    """The Beta distribution on (0, 1) with ``concentration1`` (alpha) and ``concentration0``
    (beta)."""

    def __init__(
        self,
        concentration1: Any = None,
        concentration0: Any = None,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Beta",
    ):
        parameters = dict(locals())
        with ops_lib.name_scope(name, values=[concentration1, concentration0]):
            self._c1 = as_positive_float(concentration1, "concentration1", None, validate_args)
            dtype = self._c1.dtype.base_dtype
            self._c0 = as_positive_float(concentration0, "concentration0", dtype, validate_args)
        super().__init__(
            dtype=dtype,
            reparameterization_type=FULLY_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters=parameters,
            graph_parents=[self._c1, self._c0],
            name=name,
        )

    @property
    def concentration1(self) -> Tensor:
        return self._c1

    @property
    def concentration0(self) -> Tensor:
        return self._c0

    @property
    def total_concentration(self) -> Tensor:
        return self._c1 + self._c0

    def _batch_shape(self) -> TensorShape:
        return broadcast_parameters(self._c1, self._c0)

    def _batch_shape_tensor(self) -> Tensor:
        return array_ops.shape(self.total_concentration)

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        ones = array_ops.ones_like(self.total_concentration)
        shape = array_ops.reshape(n, [1])
        g1 = random_ops.random_gamma(shape, self._c1 * ones, dtype=self.dtype, seed=seed)
        seed0 = None if seed is None else (seed * 7919 + 17) % (2**31 - 1)
        g0 = random_ops.random_gamma(shape, self._c0 * ones, dtype=self.dtype, seed=seed0)
        return g1 / (g1 + g0)

    def _log_normalization(self) -> Tensor:
        return lgamma(self._c1) + lgamma(self._c0) - lgamma(self.total_concentration)

    def _log_prob(self, x: Tensor) -> Tensor:
        unnormalized = (self._c1 - 1.0) * math_ops.log(x) + (self._c0 - 1.0) * math_ops.log1p(-x)
        return unnormalized - self._log_normalization()

    def _cdf(self, x: Tensor) -> Tensor:
        ones = array_ops.ones_like(self.total_concentration)
        return betainc(self._c1 * ones, self._c0 * ones, x * ones)

    def _entropy(self) -> Tensor:
        a, b, total = self._c1, self._c0, self.total_concentration
        return (
            self._log_normalization()
            - (a - 1.0) * digamma(a)
            - (b - 1.0) * digamma(b)
            + (total - 2.0) * digamma(total)
        )

    def _mean(self) -> Tensor:
        return self._c1 / self.total_concentration

    def _variance(self) -> Tensor:
        total = self.total_concentration
        return self._c1 * self._c0 / (math_ops.square(total) * (total + 1.0))

    def _mode(self) -> Tensor:
        mode = (self._c1 - 1.0) / (self.total_concentration - 2.0)
        undefined = math_ops.logical_or(
            math_ops.less_equal(self._c1 + 0.0 * self._c0, 1.0),
            math_ops.less_equal(self._c0 + 0.0 * self._c1, 1.0),
        )
        return nan_where(undefined, mode, self.allow_nan_stats, "mode (a concentration <= 1)")


@RegisterKL(Beta, Beta)
def _kl_beta_beta(d1: Beta, d2: Beta, name: str | None = None) -> Tensor:
    with ops_lib.name_scope(name, "kl_beta_beta"):
        a1, b1, t1 = d1.concentration1, d1.concentration0, d1.total_concentration
        a2, b2 = d2.concentration1, d2.concentration0
        return (
            d2._log_normalization()
            - d1._log_normalization()
            + (a1 - a2) * digamma(a1)
            + (b1 - b2) * digamma(b1)
            + (a2 - a1 + b2 - b1) * digamma(t1)
        )


class Dirichlet(VectorEvent):
    """The Dirichlet distribution over the simplex, with ``concentration`` [..., k]."""

    def __init__(
        self,
        concentration: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Dirichlet",
    ):
        parameters = dict(locals())
        with ops_lib.name_scope(name, values=[concentration]):
            self._concentration = as_positive_float(
                concentration, "concentration", None, validate_args
            )
            self._total = math_ops.reduce_sum(self._concentration, -1)
        super().__init__(
            dtype=self._concentration.dtype.base_dtype,
            reparameterization_type=FULLY_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters=parameters,
            graph_parents=[self._concentration],
            name=name,
        )

    @property
    def concentration(self) -> Tensor:
        return self._concentration

    @property
    def total_concentration(self) -> Tensor:
        return self._total

    def _vector_parameter(self) -> Tensor:
        return self._concentration

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        g = random_ops.random_gamma(
            array_ops.reshape(n, [1]), self._concentration, dtype=self.dtype, seed=seed
        )
        return g / math_ops.reduce_sum(g, -1, keepdims=True)

    def _log_normalization(self) -> Tensor:
        return math_ops.reduce_sum(lgamma(self._concentration), -1) - lgamma(self._total)

    def _log_prob(self, x: Tensor) -> Tensor:
        unnormalized = math_ops.reduce_sum((self._concentration - 1.0) * math_ops.log(x), -1)
        return unnormalized - self._log_normalization()

    def _entropy(self) -> Tensor:
        k = math_ops.cast(array_ops.shape(self._concentration)[-1], self.dtype)
        return (
            self._log_normalization()
            + (self._total - k) * digamma(self._total)
            - math_ops.reduce_sum((self._concentration - 1.0) * digamma(self._concentration), -1)
        )

    def _mean(self) -> Tensor:
        return self._concentration / array_ops.expand_dims(self._total, -1)

    def _variance(self) -> Tensor:
        total = array_ops.expand_dims(self._total, -1)
        mean = self._concentration / total
        return mean * (1.0 - mean) / (total + 1.0)

    def _covariance(self) -> Tensor:
        total = array_ops.expand_dims(array_ops.expand_dims(self._total, -1), -1)
        return categorical_covariance(self._mean()) / (total + 1.0)


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(d1: Dirichlet, d2: Dirichlet, name: str | None = None) -> Tensor:
    with ops_lib.name_scope(name, "kl_dirichlet_dirichlet"):
        c1, c2 = d1.concentration, d2.concentration
        expected_log = digamma(c1) - array_ops.expand_dims(digamma(d1.total_concentration), -1)
        return (
            d2._log_normalization()
            - d1._log_normalization()
            + math_ops.reduce_sum((c1 - c2) * expected_log, -1)
        )


__all__ = ["Beta", "Dirichlet", "Exponential", "Gamma"]
