"""Bernoulli, Categorical and Multinomial: distributions over counts and classes.

Each takes ``logits`` or ``probs`` (exactly one) and derives the other. None is
reparameterized: samples are integer draws (``random_uniform`` thresholds, ``multinomial``
class draws) that carry no gradient; ``log_prob`` differentiates with respect to the logits.
"""

from __future__ import annotations

from typing import Any

from nbflow import nn
from nbflow.distributions.distribution import (
    NOT_REPARAMETERIZED,
    Distribution,
    VectorEvent,
    as_float,
    categorical_covariance,
)
from nbflow.distributions.kullback_leibler import RegisterKL
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops import array_ops, math_ops, random_ops
from nbflow.ops.math_special import lgamma
from nbflow.ops.scan_ops import cumsum

Tensor = ops_lib.Tensor


def _logits_and_probs(logits: Any, probs: Any, multiclass: bool) -> tuple[Tensor, Tensor]:
    """Both parameterizations from the one given: sigmoid/logit or softmax/log."""
    if (logits is None) == (probs is None):
        raise ValueError("Must pass probs or logits, but not both.")
    if logits is not None:
        logits_t = as_float(logits, "logits")
        probs_t = nn.softmax(logits_t) if multiclass else math_ops.sigmoid(logits_t)
        return logits_t, probs_t
    probs_t = as_float(probs, "probs")
    if multiclass:
        return math_ops.log(probs_t), probs_t
    return math_ops.log(probs_t) - math_ops.log1p(-probs_t), probs_t


class _LogitsOrProbs(Distribution):
    """Integer draws parameterized by ``logits`` or ``probs`` (exactly one, the other derived):
    Bernoulli's one success probability or Categorical's k class probabilities."""

    def __init__(
        self,
        parameters: dict[str, Any],
        logits: Any,
        probs: Any,
        dtype: Any,
        multiclass: bool,
        validate_args: bool,
        allow_nan_stats: bool,
        name: str,
    ):
        with ops_lib.name_scope(name, values=[logits, probs]):
            self._logits, self._probs = _logits_and_probs(logits, probs, multiclass)
        super().__init__(
            dtype=dtypes.as_dtype(dtype),
            reparameterization_type=NOT_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters=parameters,
            graph_parents=[self._logits, self._probs],
            name=name,
        )

    @property
    def logits(self) -> Tensor:
        return self._logits

    @property
    def probs(self) -> Tensor:
        return self._probs

    def _convert(self, value: Any) -> Tensor:
        return ops_lib.convert_to_tensor(value, name="value")


class Bernoulli(_LogitsOrProbs):
    """Bernoulli draws (0 or 1 of ``dtype``) with success probability ``probs``.

    >>> import nbflow as tf
    >>> d = tf.distributions.Bernoulli(probs=0.25)
    >>> float(tf.Session().run(d.prob(1)))
    0.25
    """

    def __init__(
        self,
        logits: Any = None,
        probs: Any = None,
        dtype: Any = dtypes.int32,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Bernoulli",
    ):
        parameters = dict(locals())
        super().__init__(
            parameters, logits, probs, dtype, False, validate_args, allow_nan_stats, name
        )

    def _batch_shape(self) -> TensorShape:
        return self._logits.shape

    def _batch_shape_tensor(self) -> Tensor:
        return array_ops.shape(self._logits)

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        u = random_ops.random_uniform(self._sample_shape(n), dtype=self._probs.dtype, seed=seed)
        return math_ops.cast(math_ops.less(u, self._probs), self.dtype)

    def _log_prob(self, x: Tensor) -> Tensor:
        event = math_ops.cast(x, self._logits.dtype.base_dtype)
        logits = self._logits * array_ops.ones_like(event)  # both broadcast to one shape
        event = event * array_ops.ones_like(logits)
        return -nn.sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self) -> Tensor:
        return nn.softplus(self._logits) - self._probs * self._logits

    def _mean(self) -> Tensor:
        return array_ops.identity(self._probs)

    def _variance(self) -> Tensor:
        return self._probs * (1.0 - self._probs)

    def _mode(self) -> Tensor:
        return math_ops.cast(math_ops.greater(self._probs, 0.5), self.dtype)


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a: Bernoulli, b: Bernoulli, name: str | None = None) -> Tensor:
    with ops_lib.name_scope(name, "kl_bernoulli_bernoulli"):
        delta_probs0 = nn.softplus(-b.logits) - nn.softplus(-a.logits)
        delta_probs1 = nn.softplus(b.logits) - nn.softplus(a.logits)
        return (
            math_ops.sigmoid(a.logits) * delta_probs0 + math_ops.sigmoid(-a.logits) * delta_probs1
        )


class Categorical(_LogitsOrProbs):
    """Class indices 0..k-1 drawn with probabilities ``probs`` [..., k] (or ``logits``)."""

    def __init__(
        self,
        logits: Any = None,
        probs: Any = None,
        dtype: Any = dtypes.int32,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Categorical",
    ):
        parameters = dict(locals())
        super().__init__(
            parameters, logits, probs, dtype, True, validate_args, allow_nan_stats, name
        )

    @property
    def event_size(self) -> Tensor:
        return array_ops.shape(self._logits)[-1]

    def _batch_shape(self) -> TensorShape:
        return self._logits.shape.with_rank_at_least(1)[:-1]

    def _batch_shape_tensor(self) -> Tensor:
        return array_ops.shape(self._logits)[:-1]

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        logits_2d = array_ops.reshape(self._logits, [-1, self.event_size])
        draws = random_ops.multinomial(logits_2d, n, seed=seed, output_dtype=self.dtype)
        draws = array_ops.transpose(draws)  # [n, batch]
        return array_ops.reshape(draws, self._sample_shape(n))

    def _log_prob(self, k: Tensor) -> Tensor:
        log_probs = nn.log_softmax(self._logits)
        one_hot = array_ops.one_hot(
            math_ops.cast(k, dtypes.int32), self.event_size, dtype=log_probs.dtype.base_dtype
        )
        return math_ops.reduce_sum(one_hot * log_probs, -1)

    def _cdf(self, k: Tensor) -> Tensor:
        cumulative = cumsum(self._probs, axis=-1)
        index = math_ops.cast(k, dtypes.int32)
        one_hot = array_ops.one_hot(index, self.event_size, dtype=self._probs.dtype.base_dtype)
        inside = math_ops.reduce_sum(one_hot * cumulative, -1)
        above = math_ops.cast(math_ops.greater_equal(index, self.event_size), inside.dtype)
        return math_ops.maximum(inside, above)

    def _entropy(self) -> Tensor:
        return -math_ops.reduce_sum(nn.softmax(self._logits) * nn.log_softmax(self._logits), -1)

    def _mode(self) -> Tensor:
        return math_ops.cast(math_ops.argmax(self._logits, axis=-1), self.dtype)


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a: Categorical, b: Categorical, name: str | None = None):
    with ops_lib.name_scope(name, "kl_categorical_categorical"):
        log_a, log_b = nn.log_softmax(a.logits), nn.log_softmax(b.logits)
        return math_ops.reduce_sum(nn.softmax(a.logits) * (log_a - log_b), -1)


class Multinomial(VectorEvent):
    """Counts of ``total_count`` draws over k classes with ``probs`` [..., k] (or ``logits``)."""

    def __init__(
        self,
        total_count: Any,
        logits: Any = None,
        probs: Any = None,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Multinomial",
    ):
        parameters = dict(locals())
        with ops_lib.name_scope(name, values=[total_count, logits, probs]):
            self._logits, self._probs = _logits_and_probs(logits, probs, multiclass=True)
            dtype = self._probs.dtype.base_dtype
            self._total_count = as_float(total_count, "total_count", dtype)
        super().__init__(
            dtype=dtype,
            reparameterization_type=NOT_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters=parameters,
            graph_parents=[self._total_count, self._logits, self._probs],
            name=name,
        )

    @property
    def total_count(self) -> Tensor:
        return self._total_count

    @property
    def logits(self) -> Tensor:
        return self._logits

    @property
    def probs(self) -> Tensor:
        return self._probs

    def _vector_parameter(self) -> Tensor:
        return self._logits

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        # Each batch member draws max(total_count) categories per sample and counts only its
        # first total_count draws, so total_count may be any tensor broadcasting to the batch.
        k = array_ops.shape(self._logits)[-1]
        logits_2d = array_ops.reshape(self._logits, array_ops.stack([-1, k]))
        batch = array_ops.shape(self._logits)[:-1]
        totals = math_ops.cast(self._total_count, dtypes.int32) + array_ops.zeros(
            batch, dtypes.int32
        )
        totals = array_ops.reshape(totals, [-1, 1, 1])  # [B, 1, 1]
        most = math_ops.reduce_max(totals)
        draws = random_ops.multinomial(logits_2d, n * most, seed=seed)  # [B, n * most]
        draws = array_ops.reshape(draws, array_ops.stack([-1, n, most]))
        kept = math_ops.cast(math_ops.range(most) < totals, self.dtype)  # [B, 1, most]
        one_hot = array_ops.one_hot(draws, k, dtype=self.dtype)  # [B, n, most, k]
        counts = math_ops.reduce_sum(one_hot * array_ops.expand_dims(kept, -1), -2)
        counts = array_ops.transpose(counts, [1, 0, 2])  # [n, B, k]
        shape = array_ops.concat([array_ops.reshape(n, [1]), array_ops.shape(self._logits)], 0)
        return array_ops.reshape(counts, shape)

    def _log_prob(self, counts: Tensor) -> Tensor:
        log_probs = nn.log_softmax(self._logits)
        log_coefficient = lgamma(self._total_count + 1.0) - math_ops.reduce_sum(
            lgamma(counts + 1.0), -1
        )
        return log_coefficient + math_ops.reduce_sum(counts * log_probs, -1)

    def _mean(self) -> Tensor:
        return array_ops.expand_dims(self._total_count, -1) * self._probs

    def _variance(self) -> Tensor:
        n = array_ops.expand_dims(self._total_count, -1)
        return n * self._probs * (1.0 - self._probs)

    def _covariance(self) -> Tensor:
        n = array_ops.expand_dims(array_ops.expand_dims(self._total_count, -1), -1)
        return n * categorical_covariance(self._probs)


__all__ = ["Bernoulli", "Categorical", "Multinomial"]
