"""Normal, Laplace and Uniform: location-scale families, all fully reparameterized.

Each draws standard noise of shape ``[n] + batch_shape`` and moves it with its parameters
(``loc + scale * eps``), so samples differentiate with respect to the parameters. Their
densities, CDFs and entropies are the closed forms, written with nbflow ops.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from nbflow.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    Distribution,
    as_float,
    as_positive_float,
    broadcast_parameters,
)
from nbflow.distributions.kullback_leibler import RegisterKL
from nbflow.framework import ops as ops_lib
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops import array_ops, check_ops, math_ops, random_ops
from nbflow.ops.math_special import erfc

Tensor = ops_lib.Tensor


class _LocationScale(Distribution):
    """Two parameters that broadcast into the batch shape; ``validate_args`` checks the second
    is positive (a scale) unless the subclass's ``_validate`` checks something else."""

    def __init__(
        self,
        parameters: dict[str, Any],
        names: tuple[str, str],
        first: Any,
        second: Any,
        validate_args: bool,
        allow_nan_stats: bool,
        name: str,
    ):
        with ops_lib.name_scope(name, values=[first, second]):
            self._first = as_float(first, names[0])
            self._second = as_float(second, names[1], self._first.dtype.base_dtype)
            if validate_args:
                self._validate(names)
        super().__init__(
            dtype=self._first.dtype.base_dtype,
            reparameterization_type=FULLY_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters=parameters,
            graph_parents=[self._first, self._second],
            name=name,
        )

    def _validate(self, names: tuple[str, str]) -> None:
        self._second = as_positive_float(self._second, names[1], None, True)

    def _batch_shape(self) -> TensorShape:
        return broadcast_parameters(self._first, self._second)

    def _batch_shape_tensor(self) -> Tensor:
        both = array_ops.zeros_like(self._first) + array_ops.zeros_like(self._second)
        return array_ops.shape(both)


class _LocScale(_LocationScale):
    """A ``loc``-``scale`` family symmetric about ``loc``: its mean and mode."""

    @property
    def loc(self) -> Tensor:
        return self._first

    @property
    def scale(self) -> Tensor:
        return self._second

    def _mean(self) -> Tensor:
        return self.loc * self._ones()

    def _mode(self) -> Tensor:
        return self._mean()


class Normal(_LocScale):
    """The normal distribution N(loc, scale^2).

    >>> import nbflow as tf
    >>> d = tf.distributions.Normal(loc=0.0, scale=1.0)
    >>> round(float(tf.Session().run(d.prob(0.0))), 4)
    0.3989
    """

    def __init__(
        self,
        loc: Any,
        scale: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Normal",
    ):
        parameters = dict(locals())
        super().__init__(
            parameters, ("loc", "scale"), loc, scale, validate_args, allow_nan_stats, name
        )

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        noise = random_ops.random_normal(self._sample_shape(n), dtype=self.dtype, seed=seed)
        return noise * self.scale + self.loc

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    def _log_prob(self, x: Tensor) -> Tensor:
        return -0.5 * math_ops.square(self._z(x)) - math_ops.log(self.scale) - _HALF_LOG_TWO_PI

    def _cdf(self, x: Tensor) -> Tensor:
        return 0.5 * erfc(-self._z(x) / math.sqrt(2.0))

    def _entropy(self) -> Tensor:
        return (0.5 * math.log(2.0 * math.pi * math.e) + math_ops.log(self.scale)) * self._ones()

    def _stddev(self) -> Tensor:
        return self.scale * self._ones()


_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)


@RegisterKL(Normal, Normal)
def _kl_normal_normal(a: Normal, b: Normal, name: str | None = None) -> Tensor:
    with ops_lib.name_scope(name, "kl_normal_normal", [a.loc, b.loc]):
        ratio = math_ops.square(a.scale / b.scale)
        diff = math_ops.square((a.loc - b.loc) / b.scale)
        return 0.5 * (ratio + diff - 1.0 - math_ops.log(ratio))


class Laplace(_LocScale):
    """The Laplace distribution: density exp(-|x - loc| / scale) / (2 scale)."""

    def __init__(
        self,
        loc: Any,
        scale: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Laplace",
    ):
        parameters = dict(locals())
        super().__init__(
            parameters, ("loc", "scale"), loc, scale, validate_args, allow_nan_stats, name
        )

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        # u uniform in (-1, 1); loc - scale sign(u) log(1 - |u|) is Laplace (inverse CDF).
        lowest = float(np.nextafter(self.dtype.np.type(-1.0), self.dtype.np.type(0.0)))
        u = random_ops.random_uniform(
            self._sample_shape(n), minval=lowest, maxval=1.0, dtype=self.dtype, seed=seed
        )
        return self.loc - self.scale * math_ops.sign(u) * math_ops.log1p(-math_ops.abs(u))

    def _log_prob(self, x: Tensor) -> Tensor:
        return -math.log(2.0) - math_ops.log(self.scale) - math_ops.abs(x - self.loc) / self.scale

    def _cdf(self, x: Tensor) -> Tensor:
        z = (x - self.loc) / self.scale
        return 0.5 - 0.5 * math_ops.sign(z) * math_ops.expm1(-math_ops.abs(z))

    def _entropy(self) -> Tensor:
        return (math.log(2.0) + 1.0 + math_ops.log(self.scale)) * self._ones()

    def _stddev(self) -> Tensor:
        return math.sqrt(2.0) * self.scale * self._ones()


class Uniform(_LocationScale):
    """The uniform distribution on [low, high)."""

    def __init__(
        self,
        low: Any = 0.0,
        high: Any = 1.0,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Uniform",
    ):
        parameters = dict(locals())
        super().__init__(
            parameters, ("low", "high"), low, high, validate_args, allow_nan_stats, name
        )

    def _validate(self, names: tuple[str, str]) -> None:
        check = check_ops.assert_less(
            self._first, self._second, message="uniform not defined when low >= high."
        )
        with ops_lib.control_dependencies([check]):
            self._first = array_ops.identity(self._first)

    @property
    def low(self) -> Tensor:
        return self._first

    @property
    def high(self) -> Tensor:
        return self._second

    def range(self, name: str = "range") -> Tensor:
        """``high - low``."""
        with self._scope(name):
            return self.high - self.low

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        u = random_ops.random_uniform(self._sample_shape(n), dtype=self.dtype, seed=seed)
        return self.low + (self.high - self.low) * u

    def _prob(self, x: Tensor) -> Tensor:
        inside = math_ops.logical_and(
            math_ops.greater_equal(x, self.low), math_ops.less(x, self.high)
        )
        density = self._ones() / (self.high - self.low) + array_ops.zeros_like(x)
        return array_ops.where_v2(inside, density, array_ops.zeros_like(density))

    def _log_prob(self, x: Tensor) -> Tensor:
        return math_ops.log(self._prob(x))

    def _cdf(self, x: Tensor) -> Tensor:
        fraction = (x - self.low) / (self.high - self.low)
        return math_ops.minimum(math_ops.maximum(fraction, 0.0), 1.0)

    def _entropy(self) -> Tensor:
        return math_ops.log(self.high - self.low) * self._ones()

    def _mean(self) -> Tensor:
        return (self.low + self.high) / 2.0 * self._ones()

    def _variance(self) -> Tensor:
        return math_ops.square(self.high - self.low) / 12.0 * self._ones()


__all__ = ["Laplace", "Normal", "Uniform"]
