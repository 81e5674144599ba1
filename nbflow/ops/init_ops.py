"""Initializers: callables ``init(shape, dtype=None, partition_info=None)`` returning a tensor.

``tf.get_variable`` calls one to build a variable's initial value; they are plain objects, as in
TensorFlow 1.x, so they can be passed around, configured once and reused:

    init = tf.truncated_normal_initializer(stddev=0.1, seed=1)
    w = tf.get_variable("w", [784, 10], initializer=init)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.ops import array_ops, random_ops
from nbflow.ops import variables as variables_lib


class Initializer:
    """Base class of initializers."""

    dtype: dtypes.DType = dtypes.float32

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None):
        raise TypeError(f"{type(self).__name__} does not define __call__")

    def get_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Initializer:
        return cls(**config)

    def _dtype(self, dtype: Any) -> dtypes.DType:
        return dtypes.as_dtype(dtype if dtype is not None else self.dtype).base_dtype


class Zeros(Initializer):
    """Tensors of zeros."""

    def __init__(self, dtype: Any = dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None):
        return array_ops.zeros(shape, self._dtype(dtype))

    def get_config(self) -> dict[str, Any]:
        return {"dtype": self.dtype.name}


class Ones(Zeros):
    """Tensors of ones."""

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None):
        return array_ops.ones(shape, self._dtype(dtype))


class Constant(Initializer):
    """Tensors holding ``value``: a scalar fills the shape; a list or array must fit it."""

    def __init__(self, value: Any = 0, dtype: Any = dtypes.float32, verify_shape: bool = False):
        if not np.isscalar(value) and not isinstance(value, (list, tuple, np.ndarray)):
            raise TypeError(
                f"Invalid type for initial value: {type(value).__name__} (expected Python "
                "scalar, list or tuple of values, or numpy.ndarray)."
            )
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(
        self, shape: Any, dtype: Any = None, partition_info: Any = None, verify_shape=None
    ):
        verify = self._verify_shape if verify_shape is None else verify_shape
        return array_ops.constant(
            self.value, dtype=self._dtype(dtype), shape=shape, verify_shape=verify
        )

    def get_config(self) -> dict[str, Any]:
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Values uniform in [minval, maxval)."""

    def __init__(
        self,
        minval: Any = 0,
        maxval: Any = None,
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ):
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None):
        return random_ops.random_uniform(
            shape, self.minval, self.maxval, self._dtype(dtype), seed=self.seed
        )

    def get_config(self) -> dict[str, Any]:
        return {
            "minval": self.minval,
            "maxval": self.maxval,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class RandomNormal(Initializer):
    """Values from a normal distribution."""

    def __init__(
        self,
        mean: float = 0.0,
        stddev: float = 1.0,
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ):
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None):
        return random_ops.random_normal(
            shape, self.mean, self.stddev, self._dtype(dtype), seed=self.seed
        )

    def get_config(self) -> dict[str, Any]:
        return {
            "mean": self.mean,
            "stddev": self.stddev,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class TruncatedNormal(RandomNormal):
    """Normal values redrawn until within two standard deviations of the mean."""

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None):
        return random_ops.truncated_normal(
            shape, self.mean, self.stddev, self._dtype(dtype), seed=self.seed
        )


class VarianceScaling(Initializer):
    """Values with variance ``scale / n``, n the fan-in, fan-out or their mean (``mode``), from
    a truncated normal (``distribution="normal"``/"truncated_normal"), an untruncated normal or a
    uniform distribution."""

    def __init__(
        self,
        scale: float = 1.0,
        mode: str = "fan_in",
        distribution: str = "truncated_normal",
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ):
        if scale <= 0.0:
            raise ValueError(f"`scale` must be a positive float, got {scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution not in ("normal", "uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None):
        dtype = self._dtype(dtype)
        dims = [int(d) for d in (partition_info.full_shape if partition_info else shape)]
        fan_in, fan_out = _compute_fans(dims)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / 0.87962566103423978  # stddev of N(0,1) cut at ±2
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


def _compute_fans(shape: list[int]) -> tuple[float, float]:
    """(fan_in, fan_out) of a weight shape; conv kernels multiply by the receptive field."""
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = float(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class GlorotUniform(VarianceScaling):
    """Uniform in ±sqrt(6 / (fan_in + fan_out)) (Xavier uniform)."""

    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out)) (Xavier normal)."""

    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self.seed, "dtype": self.dtype.name}


class Orthogonal(Initializer):
    """An orthogonal matrix (rows or columns orthonormal), times ``gain``; higher-rank shapes
    are flattened to [prod(shape[:-1]), shape[-1]]."""

    def __init__(self, gain: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32):
        self.gain, self.seed = gain, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None):
        dtype = self._dtype(dtype)
        dims = [int(d) for d in shape]
        if len(dims) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows, cols = int(np.prod(dims[:-1])), dims[-1]
        # QR of a seeded normal matrix, computed once here: the value is a graph constant.
        seed1, seed2 = random_ops.get_seed(self.seed)
        rng = random_ops.new_generator(seed1 or 0, seed2 or 0)
        q, r = np.linalg.qr(rng.standard_normal((max(rows, cols), min(rows, cols))))
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return array_ops.constant((self.gain * q).reshape(dims), dtype=dtype)

    def get_config(self) -> dict[str, Any]:
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal


def he_normal(seed: int | None = None) -> VarianceScaling:
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed: int | None = None) -> VarianceScaling:
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed: int | None = None) -> VarianceScaling:
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed: int | None = None) -> VarianceScaling:
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


# ``tf.initializers.*`` names (this module is exported as ``tf.initializers``).
zeros = Zeros
ones = Ones
constant = Constant
random_uniform = RandomUniform
random_normal = RandomNormal
truncated_normal = TruncatedNormal
variance_scaling = VarianceScaling
glorot_uniform = GlorotUniform
glorot_normal = GlorotNormal
orthogonal = Orthogonal


def global_variables() -> Any:
    """``tf.initializers.global_variables()``: the op initializing every global variable."""
    return variables_lib.global_variables_initializer()


def local_variables() -> Any:
    return variables_lib.local_variables_initializer()


def variables(var_list: list[Any], name: str = "init") -> Any:
    return variables_lib.variables_initializer(var_list, name=name)


# --- issue 16 (api-more): the rest of tf.initializers ---------------------------------------------
class Identity(Initializer):
    """The identity matrix times ``gain``, for a 2-D shape (rectangular: ones on the diagonal)."""

    def __init__(self, gain: float = 1.0, dtype: Any = dtypes.float32):
        self.gain = gain
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None):
        dims = [int(d) for d in shape]
        if len(dims) != 2:
            raise ValueError(
                f"Identity matrix initializer can only be used for 2D matrices: {dims}"
            )
        return array_ops.constant(self.gain * np.eye(dims[0], dims[1]), dtype=self._dtype(dtype))

    def get_config(self) -> dict[str, Any]:
        return {"gain": self.gain, "dtype": self.dtype.name}


class UniformUnitScaling(Initializer):
    """Uniform in [-m, m], m = factor * sqrt(3 / fan_in), fan_in = prod(shape[:-1]): keeps the
    scale of a linear layer's input (TF 1.x, deprecated there for variance_scaling)."""

    def __init__(self, factor: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32):
        self.factor, self.seed = factor, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None):
        dims = [int(d) for d in shape]
        fan_in = float(np.prod(dims[:-1])) if dims else 1.0
        limit = math.sqrt(3 / fan_in) * self.factor
        dtype = self._dtype(dtype)
        return random_ops.random_uniform(dims, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


identity = identity_initializer = Identity
uniform_unit_scaling = uniform_unit_scaling_initializer = UniformUnitScaling
from nbflow.ops.lookup_ops import tables_initializer  # noqa: E402, F401
