"""Stateless random ops: the same ``seed`` input (a pair of integers) gives the same values.

Unlike the stateful ops of ``random_ops``, these keep no generator between runs: each run
builds a NumPy ``Generator`` (PCG64) from the seed pair and draws from it, so the values are a
pure function of ``(shape, seed)`` — reproducible across sessions, processes and machines, and
safe to fold as constants. They are not TensorFlow's bit patterns (TensorFlow draws from Philox
with its own counter layout): a program gets deterministic values, not TensorFlow's values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops import array_ops, math_ops
from nbflow.ops.random_ops import _float_draw, _shape_tensor

Tensor = ops_lib.Tensor

_SEED = np.array([7, -3], np.int64)


def seeded_generator(seed: Any) -> np.random.Generator:
    """The generator of a stateless op's seed pair (negative seeds wrap modulo 2**64)."""
    pair = np.asarray(seed).reshape(-1)
    if pair.shape != (2,):
        raise ValueError(f"seed must have shape [2], got shape {np.shape(seed)}")
    return np.random.default_rng([int(v) % 2**64 for v in pair.tolist()])


def _check_seed(op_type: str, seed: TensorSpec) -> None:
    if not seed.dtype.is_integer:
        raise TypeError(f"{op_type}: seed must be int32 or int64, got {seed.dtype.name}")
    if not seed.shape.is_compatible_with(TensorShape([2])):
        raise ValueError(f"{op_type}: seed must have shape [2], got {seed.shape}")


class _StatelessFloats(OpDef):
    """Base of the stateless float draws: inputs ``shape`` and ``seed``, attr ``dtype``."""

    abstract = True
    differentiable = False
    inputs = ("shape", "seed")
    attrs = {"dtype": dtypes.float32}
    samples = [
        Sample(shape=np.array([2, 3], np.int32), seed=_SEED),
        Sample(shape=np.array([4], np.int32), seed=_SEED.astype(np.int32), dtype=dtypes.float64),
    ]

    def infer(self, shape: TensorSpec, seed: TensorSpec, dtype: dtypes.DType) -> TensorSpec:
        _check_seed(self.type, seed)
        return TensorSpec(array_ops._shape_from_spec(shape), dtype)

    def compute(self, ctx: KernelContext, shape: Any, seed: Any, dtype: dtypes.DType) -> Any:
        dims = [int(d) for d in np.asarray(shape).tolist()]
        return ctx.xp.asarray(self.draw(seeded_generator(seed), dims, dtype))

    def draw(self, rng: np.random.Generator, dims: list[int], dtype: dtypes.DType) -> np.ndarray:
        raise NotImplementedError


class StatelessRandomUniform(_StatelessFloats):
    """Floats uniform in [0, 1), a function of ``seed``."""

    def draw(self, rng, dims, dtype):
        return _float_draw(rng.random, dims, dtype)


class StatelessRandomNormal(_StatelessFloats):
    """Standard normal floats, a function of ``seed``."""

    def draw(self, rng, dims, dtype):
        return _float_draw(rng.standard_normal, dims, dtype)


class StatelessTruncatedNormal(_StatelessFloats):
    """Standard normal floats within two standard deviations of 0, a function of ``seed``."""

    def draw(self, rng, dims, dtype):
        out = _float_draw(rng.standard_normal, dims, dtype)
        bad = np.abs(out) > 2.0
        while bad.any():
            out[bad] = _float_draw(rng.standard_normal, [int(bad.sum())], dtype)
            bad = np.abs(out) > 2.0
        return out


class StatelessRandomUniformInt(OpDef):
    """Integers uniform in [minval, maxval), a function of ``seed``."""

    inputs = ("shape", "seed", "minval", "maxval")
    differentiable = False
    samples = [
        Sample(shape=np.array([3], np.int32), seed=_SEED, minval=np.int32(-4), maxval=np.int32(9))
    ]

    def infer(self, shape: TensorSpec, seed: TensorSpec, minval: TensorSpec, maxval: TensorSpec):
        _check_seed(self.type, seed)
        if minval.dtype.base_dtype is not maxval.dtype.base_dtype:
            raise TypeError(f"minval and maxval differ in dtype: {minval.dtype} vs {maxval.dtype}")
        return TensorSpec(array_ops._shape_from_spec(shape), minval.dtype.base_dtype)

    def compute(self, ctx: KernelContext, shape: Any, seed: Any, minval: Any, maxval: Any):
        if minval >= maxval:
            raise ValueError(f"Need minval < maxval: {minval} >= {maxval}")
        dims = [int(d) for d in np.asarray(shape).tolist()]
        out = seeded_generator(seed).integers(minval, maxval, size=dims, dtype=minval.dtype)
        return ctx.xp.asarray(out)


class StatelessMultinomial(OpDef):
    """``num_samples`` class indices per row of ``logits``, a function of ``seed``."""

    inputs = ("logits", "num_samples", "seed")
    attrs = {"output_dtype": dtypes.int64}
    differentiable = False
    samples = [Sample(logits=(2, 4), num_samples=np.int32(5), seed=_SEED)]

    def infer(self, logits: TensorSpec, num_samples: TensorSpec, seed: TensorSpec, output_dtype):
        _check_seed(self.type, seed)
        n = array_ops._value(num_samples)
        batch = logits.shape.with_rank(2)[0]
        return TensorSpec(TensorShape([batch, None if n is None else int(n)]), output_dtype)

    def compute(self, ctx: KernelContext, logits: Any, num_samples: Any, seed: Any, output_dtype):
        x = np.asarray(logits, dtype=np.float64)
        batch, classes = x.shape
        uniform = seeded_generator(seed).random((batch, int(num_samples), classes))
        gumbel = -np.log(-np.log(uniform + 1e-300))
        return ctx.xp.asarray(np.argmax(x[:, None, :] + gumbel, axis=-1).astype(output_dtype.np))


# --- builders -------------------------------------------------------------------------------------
def _seed_tensor(seed: Any) -> Tensor:
    if isinstance(seed, Tensor):
        return seed
    return ops_lib.convert_to_tensor(np.asarray(seed, np.int64), name="seed")


def _create(op_type: str, inputs: list[Any], attrs: dict[str, Any] | None = None) -> Tensor:
    return ops_lib.get_default_graph().create_op(op_type, inputs, attrs or {}).outputs[0]


def stateless_random_uniform(
    shape: Any,
    seed: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """Values uniform in [minval, maxval), the same for the same ``seed`` (shape [2]).

    >>> import nbflow as tf
    >>> a = tf.random.stateless_uniform([3], seed=[1, 2])
    >>> b = tf.random.stateless_uniform([3], seed=[1, 2])
    >>> sess = tf.Session(); bool((sess.run(a) == sess.run(b)).all())
    True
    """
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype.is_integer and maxval is None:
        raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
    with ops_lib.name_scope(name, "stateless_random_uniform", [shape, seed, minval, maxval]):
        shape_t, seed_t = _shape_tensor(shape), _seed_tensor(seed)
        lo = ops_lib.convert_to_tensor(minval, dtype=dtype, name="min")
        hi = ops_lib.convert_to_tensor(1 if maxval is None else maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return _create("StatelessRandomUniformInt", [shape_t, seed_t, lo, hi])
        rnd = _create("StatelessRandomUniform", [shape_t, seed_t], {"dtype": dtype})
        return math_ops.add(rnd * (hi - lo), lo)


def _stateless_scaled(op_type, shape, seed, mean, stddev, dtype, name, default_name) -> Tensor:
    dtype = dtypes.as_dtype(dtype).base_dtype
    with ops_lib.name_scope(name, default_name, [shape, seed, mean, stddev]):
        shape_t, seed_t = _shape_tensor(shape), _seed_tensor(seed)
        mean_t = ops_lib.convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = ops_lib.convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = _create(op_type, [shape_t, seed_t], {"dtype": dtype})
        return math_ops.add(rnd * stddev_t, mean_t)


def stateless_random_normal(
    shape: Any,
    seed: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """Normal values, the same for the same ``seed`` (shape [2])."""
    return _stateless_scaled(
        "StatelessRandomNormal", shape, seed, mean, stddev, dtype, name, "stateless_random_normal"
    )


def stateless_truncated_normal(
    shape: Any,
    seed: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """Truncated normal values, the same for the same ``seed`` (shape [2])."""
    return _stateless_scaled(
        "StatelessTruncatedNormal", shape, seed, mean, stddev, dtype, name, "stateless_truncated"
    )


def stateless_multinomial(
    logits: Any,
    num_samples: Any,
    seed: Any,
    output_dtype: Any = dtypes.int64,
    name: str | None = None,
) -> Tensor:
    """``num_samples`` class indices per row of ``logits``, the same for the same ``seed``."""
    with ops_lib.name_scope(name, "stateless_multinomial", [logits, seed]):
        logits_t = ops_lib.convert_to_tensor(logits, name="logits")
        n = ops_lib.convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
        attrs = {"output_dtype": dtypes.as_dtype(output_dtype)}
        return _create("StatelessMultinomial", [logits_t, n, _seed_tensor(seed)], attrs)


def stateless_categorical(
    logits: Any, num_samples: Any, seed: Any, dtype: Any = dtypes.int64, name: str | None = None
) -> Tensor:
    """``tf.random.stateless_categorical``: ``stateless_multinomial`` with ``dtype``."""
    return stateless_multinomial(logits, num_samples, seed, output_dtype=dtype, name=name)


__all__ = [
    "seeded_generator",
    "stateless_categorical",
    "stateless_multinomial",
    "stateless_random_normal",
    "stateless_random_uniform",
    "stateless_truncated_normal",
]
