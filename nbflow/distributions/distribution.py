"""The ``Distribution`` base class of ``tf.distributions`` and its reparameterization types.

A distribution holds parameter tensors and builds graph ops for its statistics; every method is
graph code over nbflow ops, so gradients flow to the parameters. ``sample(sample_shape)`` draws
``[n] + batch_shape + event_shape`` values through the subclass's ``_sample_n`` and reshapes the
leading axis to ``sample_shape``. A FULLY_REPARAMETERIZED distribution's samples are
differentiable functions of its parameters (``loc + scale * eps`` for a Normal, the implicit
gradient of the inverse CDF for a Gamma), so ``tf.gradients`` of a sample-based loss reaches
them; a NOT_REPARAMETERIZED one's samples carry no gradient.

Subclasses implement the underscored hooks they have (``_log_prob``, ``_cdf``, ``_entropy``,
``_mean``, ``_variance`` ...); the public methods supply the usual identities
(``prob = exp(log_prob)``, ``stddev = sqrt(variance)``, ``survival = 1 - cdf``) and raise
``NotImplementedError`` naming the distribution for what neither provides.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from nbflow.distributions import kullback_leibler
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.tensor_shape import TensorShape, broadcast_shapes
from nbflow.ops import array_ops, check_ops, math_ops

Tensor = ops_lib.Tensor


class ReparameterizationType:
    """Whether a distribution's samples are differentiable functions of its parameters."""

    def __init__(self, rep_type: str):
        self._rep_type = rep_type

    def __repr__(self) -> str:
        return f"<Reparameterization Type: {self._rep_type}>"

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


def broadcast_parameters(*params: Tensor) -> TensorShape:
    """The static batch shape of parameters that broadcast against each other."""
    shape = TensorShape([])
    for p in params:
        shape = broadcast_shapes(shape, p.shape)
    return shape


def as_float(value: Any, name: str, dtype: Any = None) -> Tensor:
    """A parameter as a float tensor: Python numbers and lists become float32 (as in
    TensorFlow), NumPy float arrays keep their dtype, ``dtype`` (when given) wins."""
    if dtype is None and not isinstance(value, Tensor):
        kind = np.asarray(value).dtype.kind
        if kind in "iub" or not isinstance(value, (np.ndarray, np.generic)):
            dtype = dtypes.float32
    return ops_lib.convert_to_tensor(value, dtype=dtype, name=name)


def as_positive_float(value: Any, name: str, dtype: Any, validate: bool) -> Tensor:
    """``as_float``, behind a run-time positivity check when ``validate`` (``validate_args``)."""
    tensor = as_float(value, name, dtype)
    if not validate:
        return tensor
    check = check_ops.assert_positive(tensor, message=f"Argument '{name}' must be positive.")
    with ops_lib.control_dependencies([check]):
        return array_ops.identity(tensor)


def nan_where(condition: Tensor, value: Tensor, allow_nan_stats: bool, what: str) -> Tensor:
    """``value`` with NaN where ``condition`` (the statistic is undefined), or, without
    ``allow_nan_stats``, a run-time error there."""
    if allow_nan_stats:
        nan_scalar = ops_lib.convert_to_tensor(np.nan, dtype=value.dtype.base_dtype)
        nan = array_ops.fill(array_ops.shape(value), nan_scalar)
        return array_ops.where_v2(condition, nan, value)
    check = check_ops.assert_equal(
        math_ops.reduce_any(condition), False, message=f"{what} is undefined for these parameters"
    )
    with ops_lib.control_dependencies([check]):
        return array_ops.identity(value)


def categorical_covariance(probs: Tensor) -> Tensor:
    """``diag(p) - p p^T`` for class probabilities ``p`` [..., k]: the covariance of one
    categorical draw, which Multinomial, Dirichlet and DirichletMultinomial scale."""
    k = array_ops.shape(probs)[-1]
    rows = array_ops.reshape(math_ops.range(k), [-1, 1])
    eye = math_ops.cast(math_ops.equal(rows, math_ops.range(k)), probs.dtype.base_dtype)
    outer = array_ops.expand_dims(probs, -1) * array_ops.expand_dims(probs, -2)
    return array_ops.expand_dims(probs, -1) * eye - outer


class Distribution:
    """Base class of ``tf.distributions``: a batch of distributions over events."""

    def __init__(
        self,
        dtype: Any,
        reparameterization_type: ReparameterizationType,
        validate_args: bool,
        allow_nan_stats: bool,
        parameters: dict[str, Any] | None = None,
        graph_parents: list[Tensor] | None = None,
        name: str | None = None,
    ):
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._validate_args = validate_args
        self._allow_nan_stats = allow_nan_stats
        # ``dict(locals())`` of a subclass's __init__: drop ``self`` and the ``__class__`` cell.
        self._parameters = {
            k: v for k, v in (parameters or {}).items() if k != "self" and not k.startswith("__")
        }
        self._graph_parents = list(graph_parents or [])
        self._name = name or type(self).__name__

    # --- properties -----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self._parameters)

    @property
    def reparameterization_type(self) -> ReparameterizationType:
        return self._reparameterization_type

    @property
    def allow_nan_stats(self) -> bool:
        return self._allow_nan_stats

    @property
    def validate_args(self) -> bool:
        return self._validate_args

    @property
    def batch_shape(self) -> TensorShape:
        return self._batch_shape()

    @property
    def event_shape(self) -> TensorShape:
        return self._event_shape()

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Tensor:
        with self._scope(name):
            if self.batch_shape.is_fully_defined():
                return ops_lib.convert_to_tensor(self.batch_shape.as_list(), dtype=dtypes.int32)
            return self._batch_shape_tensor()

    def event_shape_tensor(self, name: str = "event_shape_tensor") -> Tensor:
        with self._scope(name):
            if self.event_shape.is_fully_defined():
                return ops_lib.convert_to_tensor(self.event_shape.as_list(), dtype=dtypes.int32)
            return self._event_shape_tensor()

    def is_scalar_batch(self, name: str = "is_scalar_batch") -> Tensor:
        return ops_lib.convert_to_tensor(self.batch_shape.ndims == 0, name=name)

    def is_scalar_event(self, name: str = "is_scalar_event") -> Tensor:
        return ops_lib.convert_to_tensor(self.event_shape.ndims == 0, name=name)

    def copy(self, **override_parameters: Any) -> Distribution:
        return type(self)(**{**self.parameters, **override_parameters})

    # --- hooks with defaults ----------------------------------------------------------------
    def _batch_shape(self) -> TensorShape:
        return TensorShape(None)

    def _event_shape(self) -> TensorShape:
        return TensorShape([])

    def _batch_shape_tensor(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no dynamic batch shape")

    def _event_shape_tensor(self) -> Tensor:
        return ops_lib.convert_to_tensor(self.event_shape.as_list(), dtype=dtypes.int32)

    @contextlib.contextmanager
    def _scope(self, name: str, values: list[Any] | None = None) -> Iterator[None]:
        """``<distribution name>/<method name>/``, as TensorFlow names a method's ops."""
        with ops_lib.name_scope(self.name, values=self._graph_parents + list(values or [])):
            with ops_lib.name_scope(name):
                yield

    def _missing(self, what: str) -> NotImplementedError:
        return NotImplementedError(f"{what} is not implemented for {type(self).__name__}")

    # --- sampling ---------------------------------------------------------------------------
    def sample(self, sample_shape: Any = (), seed: int | None = None, name: str = "sample"):
        """Samples of shape ``sample_shape + batch_shape + event_shape``."""
        with self._scope(name):
            if isinstance(sample_shape, Tensor):
                shape_t = math_ops.cast(array_ops.reshape(sample_shape, [-1]), dtypes.int32)
                n = math_ops.reduce_prod(shape_t)
            else:
                static = [int(d) for d in np.asarray(sample_shape, dtype=np.int64).reshape(-1)]
                shape_t = ops_lib.convert_to_tensor(static, dtype=dtypes.int32)
                n = ops_lib.convert_to_tensor(int(np.prod(static)), dtype=dtypes.int32)
            draws = self._sample_n(n, seed)
            rest = array_ops.shape(draws)[1:]
            out = array_ops.reshape(draws, array_ops.concat([shape_t, rest], 0))
            if not isinstance(sample_shape, Tensor):
                out.set_shape(TensorShape(static).concatenate(draws.shape[1:]))
            return out

    def _sample_n(self, n: Tensor, seed: int | None) -> Tensor:
        raise self._missing("sample")

    def _ones(self) -> Tensor:
        """Ones of the batch shape: broadcasts a parameter-only statistic to it."""
        return array_ops.ones(self.batch_shape_tensor(), dtype=self.dtype)

    def _sample_shape(self, n: Tensor) -> Tensor:
        """``[n] + batch_shape`` as a tensor, for drawing noise."""
        return array_ops.concat([array_ops.reshape(n, [1]), self.batch_shape_tensor()], 0)

    # --- densities and probabilities --------------------------------------------------------
    def log_prob(self, value: Any, name: str = "log_prob") -> Tensor:
        with self._scope(name, [value]):
            value = self._convert(value)
            if type(self)._log_prob is not Distribution._log_prob:
                return self._log_prob(value)
            if type(self)._prob is not Distribution._prob:
                return math_ops.log(self._prob(value))
            raise self._missing("log_prob")

    def prob(self, value: Any, name: str = "prob") -> Tensor:
        with self._scope(name, [value]):
            value = self._convert(value)
            if type(self)._prob is not Distribution._prob:
                return self._prob(value)
            if type(self)._log_prob is not Distribution._log_prob:
                return math_ops.exp(self._log_prob(value))
            raise self._missing("prob")

    def cdf(self, value: Any, name: str = "cdf") -> Tensor:
        with self._scope(name, [value]):
            return self._cdf(self._convert(value))

    def log_cdf(self, value: Any, name: str = "log_cdf") -> Tensor:
        with self._scope(name, [value]):
            return math_ops.log(self._cdf(self._convert(value)))

    def survival_function(self, value: Any, name: str = "survival_function") -> Tensor:
        with self._scope(name, [value]):
            return 1.0 - self._cdf(self._convert(value))

    def log_survival_function(self, value: Any, name: str = "log_survival_function"):
        with self._scope(name, [value]):
            return math_ops.log1p(-self._cdf(self._convert(value)))

    def quantile(self, value: Any, name: str = "quantile") -> Tensor:
        with self._scope(name, [value]):
            return self._quantile(self._convert(value))

    def _convert(self, value: Any) -> Tensor:
        return ops_lib.convert_to_tensor(value, dtype=self.dtype, name="value")

    def _log_prob(self, value: Tensor) -> Tensor:
        raise self._missing("log_prob")

    def _prob(self, value: Tensor) -> Tensor:
        raise self._missing("prob")

    def _cdf(self, value: Tensor) -> Tensor:
        raise self._missing("cdf")

    def _quantile(self, value: Tensor) -> Tensor:
        raise self._missing("quantile")

    # --- statistics -------------------------------------------------------------------------
    def entropy(self, name: str = "entropy") -> Tensor:
        with self._scope(name):
            return self._entropy()

    def mean(self, name: str = "mean") -> Tensor:
        with self._scope(name):
            return self._mean()

    def mode(self, name: str = "mode") -> Tensor:
        with self._scope(name):
            return self._mode()

    def variance(self, name: str = "variance") -> Tensor:
        with self._scope(name):
            if type(self)._variance is not Distribution._variance:
                return self._variance()
            return math_ops.square(self._stddev())

    def stddev(self, name: str = "stddev") -> Tensor:
        with self._scope(name):
            if type(self)._stddev is not Distribution._stddev:
                return self._stddev()
            return math_ops.sqrt(self._variance())

    def covariance(self, name: str = "covariance") -> Tensor:
        with self._scope(name):
            return self._covariance()

    def _entropy(self) -> Tensor:
        raise self._missing("entropy")

    def _mean(self) -> Tensor:
        raise self._missing("mean")

    def _mode(self) -> Tensor:
        raise self._missing("mode")

    def _variance(self) -> Tensor:
        raise self._missing("variance")

    def _stddev(self) -> Tensor:
        raise self._missing("stddev")

    def _covariance(self) -> Tensor:
        raise self._missing("covariance")

    # --- divergences ------------------------------------------------------------------------
    def kl_divergence(self, other: Distribution, name: str = "kl_divergence") -> Tensor:
        return kullback_leibler.kl_divergence(self, other, name=name)

    def cross_entropy(self, other: Distribution, name: str = "cross_entropy") -> Tensor:
        with self._scope(name):
            return self.entropy() + self.kl_divergence(other)

    def __repr__(self) -> str:
        return (
            f"<tf.distributions.{type(self).__name__} '{self.name}' "
            f"batch_shape={self.batch_shape} event_shape={self.event_shape} "
            f"dtype={getattr(self.dtype, 'name', self.dtype)}>"
        )


class VectorEvent(Distribution):
    """A distribution over vectors: ``_vector_parameter()`` [..., k] holds one k-vector of
    parameters per batch member, so the batch shape is its shape but the last axis, the event
    shape [k]."""

    def _vector_parameter(self) -> Tensor:
        raise NotImplementedError(type(self).__name__)

    def _batch_shape(self) -> TensorShape:
        return self._vector_parameter().shape.with_rank_at_least(1)[:-1]

    def _event_shape(self) -> TensorShape:
        return self._vector_parameter().shape.with_rank_at_least(1)[-1:]

    def _batch_shape_tensor(self) -> Tensor:
        return array_ops.shape(self._vector_parameter())[:-1]

    def _event_shape_tensor(self) -> Tensor:
        return array_ops.shape(self._vector_parameter())[-1:]
