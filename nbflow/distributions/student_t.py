"""StudentT and DirichletMultinomial: the two compound distributions of ``tf.distributions``.

``StudentT(df, loc, scale)`` is a Normal whose precision is Gamma(df/2, df/2)-distributed: a draw
is ``loc + scale * z / sqrt(g / df)`` with ``z`` normal and ``g`` chi-squared, fully
reparameterized through both. ``DirichletMultinomial(total_count, concentration)`` draws
probabilities from a Dirichlet and then counts from a Multinomial; its samples carry no
gradient.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from nbflow.distributions.discrete import Multinomial
from nbflow.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    NOT_REPARAMETERIZED,
    Distribution,
    as_float,
    as_positive_float,
    broadcast_parameters,
    categorical_covariance,
    nan_where,
    VectorEvent,
)
from nbflow.distributions.gamma_family import Dirichlet
from nbflow.framework import ops as ops_lib
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops import array_ops, math_ops, random_ops
from nbflow.ops.math_special import betainc, digamma, lgamma

Tensor = ops_lib.Tensor


def _lbeta(a: Tensor, b: Tensor) -> Tensor:
    return lgamma(a) + lgamma(b) - lgamma(a + b)


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, ``loc`` and ``scale``.

    >>> import nbflow as tf
    >>> d = tf.distributions.StudentT(df=3.0, loc=0.0, scale=1.0)
    >>> round(float(tf.Session().run(d.prob(0.0))), 4)
    0.3676
    """

    def __init__(
        self,
        df: Any,
        loc: Any,
        scale: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "StudentT",
    ):
        parameters = dict(locals())
        with ops_lib.name_scope(name, values=[df, loc, scale]):
            self._df = as_positive_float(df, "df", None, validate_args)
            dtype = self._df.dtype.base_dtype
            self._loc = as_float(loc, "loc", dtype)
            self._scale = as_float(scale, "scale", dtype)
        super().__init__(
            dtype=dtype,
            reparameterization_type=FULLY_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters=parameters,
            graph_parents=[self._df, self._loc, self._scale],
            name=name,
        )

    @property
    def df(self) -> Tensor:
        return self._df

    @property
    def loc(self) -> Tensor:
        return self._loc

    @property
    def scale(self) -> Tensor:
        return self._scale

    def _batch_shape(self) -> TensorShape:
        return broadcast_parameters(self._df, self._loc, self._scale)

    def _batch_shape_tensor(self) -> Tensor:
        return array_ops.shape(self._df * self._loc * self._scale)

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        normal = random_ops.random_normal(self._sample_shape(n), dtype=self.dtype, seed=seed)
        df = self._df * self._ones()
        seed2 = None if seed is None else (seed * 7919 + 29) % (2**31 - 1)
        chi2 = random_ops.random_gamma(
            array_ops.reshape(n, [1]), 0.5 * df, beta=0.5, dtype=self.dtype, seed=seed2
        )
        return self._loc + self._scale * normal * math_ops.rsqrt(chi2 / df)

    def _log_prob(self, x: Tensor) -> Tensor:
        df = self._df
        y = (x - self._loc) / self._scale
        return (
            -0.5 * (df + 1.0) * math_ops.log1p(math_ops.square(y) / df)
            - math_ops.log(math_ops.abs(self._scale))
            - 0.5 * math_ops.log(df)
            - 0.5 * math.log(math.pi)
            - lgamma(0.5 * df)
            + lgamma(0.5 * (df + 1.0))
        )

    def _cdf(self, x: Tensor) -> Tensor:
        # P(T <= t) = 1 - I_{df/(df+t^2)}(df/2, 1/2) / 2 for t >= 0, mirrored for t < 0.
        df = self._df * self._ones()
        t = (x - self._loc) / self._scale
        tail = 0.5 * betainc(
            0.5 * df, 0.5 * array_ops.ones_like(df), df / (df + math_ops.square(t))
        )
        return array_ops.where_v2(math_ops.less(t, 0.0), tail, 1.0 - tail)

    def _entropy(self) -> Tensor:
        df = self._df * self._ones()
        half = 0.5 * (df + 1.0)
        return (
            half * (digamma(half) - digamma(0.5 * df))
            + 0.5 * math_ops.log(df)
            + _lbeta(0.5 * df, 0.5 * array_ops.ones_like(df))
            + math_ops.log(math_ops.abs(self._scale))
        )

    def _mean(self) -> Tensor:
        mean = self._loc * self._ones()
        undefined = math_ops.less_equal(self._df * self._ones(), 1.0)
        return nan_where(undefined, mean, self.allow_nan_stats, "mean (df <= 1)")

    def _mode(self) -> Tensor:
        return self._loc * self._ones()

    def _variance(self) -> Tensor:
        df = self._df * self._ones()
        safe_df = array_ops.where_v2(math_ops.greater(df, 2.0), df, 3.0 * array_ops.ones_like(df))
        variance = math_ops.square(self._scale) * safe_df / (safe_df - 2.0)
        infinite = array_ops.fill(
            array_ops.shape(df), ops_lib.convert_to_tensor(np.inf, dtype=self.dtype)
        )
        variance = array_ops.where_v2(math_ops.greater(df, 2.0), variance, infinite)
        undefined = math_ops.less_equal(df, 1.0)
        return nan_where(undefined, variance, self.allow_nan_stats, "variance (df <= 1)")


class DirichletMultinomial(VectorEvent):
    """Counts of ``total_count`` draws whose class probabilities are Dirichlet(concentration)."""

    def __init__(
        self,
        total_count: Any,
        concentration: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "DirichletMultinomial",
    ):
        parameters = dict(locals())
        with ops_lib.name_scope(name, values=[total_count, concentration]):
            self._concentration = as_positive_float(
                concentration, "concentration", None, validate_args
            )
            dtype = self._concentration.dtype.base_dtype
            self._total_count = as_float(total_count, "total_count", dtype)
            self._total_concentration = math_ops.reduce_sum(self._concentration, -1)
        super().__init__(
            dtype=dtype,
            reparameterization_type=NOT_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters=parameters,
            graph_parents=[self._total_count, self._concentration],
            name=name,
        )

    @property
    def total_count(self) -> Tensor:
        return self._total_count

    @property
    def concentration(self) -> Tensor:
        return self._concentration

    @property
    def total_concentration(self) -> Tensor:
        return self._total_concentration

    def _vector_parameter(self) -> Tensor:
        return self._concentration

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        probs = Dirichlet(self._concentration).sample(n, seed=seed)  # [n] + batch + [k]
        seed2 = None if seed is None else (seed * 7919 + 31) % (2**31 - 1)
        counts = Multinomial(self._total_count, probs=probs).sample(1, seed=seed2)
        return array_ops.squeeze(counts, [0])

    def _log_prob(self, counts: Tensor) -> Tensor:
        alpha = self._concentration

        def log_beta(a: Tensor) -> Tensor:
            return math_ops.reduce_sum(lgamma(a), -1) - lgamma(math_ops.reduce_sum(a, -1))

        coefficient = lgamma(self._total_count + 1.0) - math_ops.reduce_sum(
            lgamma(counts + 1.0), -1
        )
        return coefficient + log_beta(alpha + counts) - log_beta(alpha)

    def _mean(self) -> Tensor:
        n = array_ops.expand_dims(self._total_count, -1)
        return n * self._concentration / array_ops.expand_dims(self._total_concentration, -1)

    def _dispersion(self) -> Tensor:
        n = self._total_count
        total = self._total_concentration
        return array_ops.expand_dims((n + total) / (1.0 + total), -1)

    def _variance(self) -> Tensor:
        n = array_ops.expand_dims(self._total_count, -1)
        p = self._concentration / array_ops.expand_dims(self._total_concentration, -1)
        return n * p * (1.0 - p) * self._dispersion()

    def _covariance(self) -> Tensor:
        n = array_ops.expand_dims(array_ops.expand_dims(self._total_count, -1), -1)
        p = self._concentration / array_ops.expand_dims(self._total_concentration, -1)
        dispersion = array_ops.expand_dims(self._dispersion(), -1)
        return n * categorical_covariance(p) * dispersion


__all__ = ["DirichletMultinomial", "StudentT"]
