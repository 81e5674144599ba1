"""Random ops, with TensorFlow 1.x's graph-level and op-level seeds.

Each random op carries two seeds, ``seed`` and ``seed2``, chosen at graph construction by
``get_seed(op_seed)`` from the graph seed (``tf.set_random_seed``) and the op's own seed:

    graph seed | op seed | seeds of the op
    -----------+---------+-------------------------------------------------------------
    set        | None    | (graph seed, an op seed derived from the graph's op count)
    set        | set     | (graph seed, op seed)
    None       | set     | (DEFAULT_GRAPH_SEED, op seed)
    None       | None    | (0, 0): nondeterministic

At run time each (session, op) pair owns one NumPy ``Generator``, created from ``(seed, seed2)``
on the op's first run and advanced by every run. It lives in the device's resource manager
(container ``__rng__``, keyed by the op's name), so two sessions over the same graph with the
same seeds see the same sequence, and successive runs of one op differ. Random ops are stateful,
so graph optimizations never fold or merge them.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.special

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec, kernel_attrs
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops import array_ops, check_ops, math_ops

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
_RNG_CONTAINER = "__rng__"

Tensor = ops_lib.Tensor


def set_random_seed(seed: int | None) -> None:
    """Set the graph-level seed of the default graph (see the module docstring)."""
    ops_lib.get_default_graph().seed = seed


def get_seed(op_seed: int | None) -> tuple[int | None, int | None]:
    """The (graph seed, op seed) pair a random op built now should use.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> get_seed(7)
    (87654321, 7)
    """
    graph = ops_lib.get_default_graph()
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = graph._id_counter  # the id of the last op created, as TF's _last_id
        seeds: tuple[int | None, int | None] = (global_seed % _MAXINT32, op_seed % _MAXINT32)
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, op_seed % _MAXINT32)
    else:
        seeds = (None, None)
    if seeds == (0, 0):  # (0, 0) means "nondeterministic" to the kernels
        return 0, _MAXINT32
    return seeds


def new_generator(seed: int, seed2: int) -> np.random.Generator:
    """A generator for seeds ``(seed, seed2)``; ``(0, 0)`` draws fresh OS entropy."""
    if seed == 0 and seed2 == 0:
        return np.random.default_rng()
    return np.random.default_rng([seed, seed2])


class _RandomOp(OpDef):
    """Base of random ops: seeds as attrs, a per-(session, op) generator passed as ``rng``."""

    abstract = True
    stateful = True
    differentiable = False
    attrs: ClassVar[dict[str, Any]] = {"seed": 0, "seed2": 0}

    def bind(self, op: Any, device_type: str = "CPU"):
        attrs = kernel_attrs(op.attrs)
        seed, seed2, key = attrs["seed"], attrs["seed2"], op.name
        compute = self.compute

        def factory() -> np.random.Generator:
            return new_generator(seed, seed2)

        def random_kernel(ctx: KernelContext, *inputs: Any) -> Any:
            rng = ctx.resources.lookup_or_create(_RNG_CONTAINER, key, factory)
            return compute(ctx, *inputs, rng=rng, **attrs, **self.session_state(ctx, key, attrs))

        return random_kernel

    def session_state(self, ctx: KernelContext, key: str, attrs: dict[str, Any]) -> dict:
        """More per-(session, op) state for the kernel, as keyword arguments (default none)."""
        return {}


def _float_draw(draw: Any, dims: list[int], dtype: dtypes.DType) -> np.ndarray:
    """``draw(size, dtype)`` in ``dtype``; half precision types are drawn as float32."""
    if dtype.np in (np.float32, np.float64):
        return draw(dims, dtype=dtype.np)
    return draw(dims, dtype=np.float32).astype(dtype.np)


class _RandomFloats(_RandomOp):
    """Base of the float draws of ``shape`` in ``dtype`` (the builders scale and shift them)."""

    abstract = True
    inputs = ("shape",)
    attrs = {"dtype": dtypes.float32, "seed": 0, "seed2": 0}

    def infer(self, shape: TensorSpec, dtype: dtypes.DType, seed: int, seed2: int):
        return TensorSpec(array_ops._shape_from_spec(shape), dtype)


class RandomUniform(_RandomFloats):
    """Floats uniform in [0, 1) of ``shape``."""

    samples = [
        Sample(shape=np.array([2, 3], np.int32), seed=1, seed2=2),
        Sample(shape=np.array([0], np.int64), dtype=dtypes.float64),
        Sample(shape=np.array([3], np.int32), dtype=dtypes.float16, seed=3),
    ]

    def compute(self, ctx: KernelContext, shape: Any, dtype, seed, seed2, rng=None) -> Any:
        rng = rng or new_generator(seed, seed2)
        return ctx.xp.asarray(_float_draw(rng.random, shape.tolist(), dtype))


class RandomStandardNormal(_RandomFloats):
    """Floats from the standard normal distribution, of ``shape``."""

    samples = [
        Sample(shape=np.array([2, 3], np.int32), seed=1, seed2=2),
        Sample(shape=np.array([], np.int32), dtype=dtypes.float64),
    ]

    def compute(self, ctx: KernelContext, shape: Any, dtype, seed, seed2, rng=None) -> Any:
        rng = rng or new_generator(seed, seed2)
        return ctx.xp.asarray(_float_draw(rng.standard_normal, shape.tolist(), dtype))


class TruncatedNormal(_RandomFloats):
    """Standard normal floats, redrawn until within two standard deviations of 0."""

    samples = [Sample(shape=np.array([4, 5], np.int32), seed=5, seed2=6)]

    def compute(self, ctx: KernelContext, shape: Any, dtype, seed, seed2, rng=None) -> Any:
        rng = rng or new_generator(seed, seed2)
        out = _float_draw(rng.standard_normal, shape.tolist(), dtype)
        bad = np.abs(out) > 2.0
        while bad.any():
            out[bad] = _float_draw(rng.standard_normal, [int(bad.sum())], dtype)
            bad = np.abs(out) > 2.0
        return ctx.xp.asarray(out)


class RandomUniformInt(_RandomOp):
    """Integers uniform in [minval, maxval) of ``shape``."""

    inputs = ("shape", "minval", "maxval")
    samples = [
        Sample(shape=np.array([2, 3], np.int32), minval=np.int32(-2), maxval=np.int32(5), seed=1),
        Sample(shape=np.array([4], np.int32), minval=np.int64(0), maxval=np.int64(10**12)),
    ]

    def infer(self, shape: TensorSpec, minval: TensorSpec, maxval: TensorSpec, seed, seed2):
        if minval.dtype.base_dtype is not maxval.dtype.base_dtype:
            raise TypeError(f"minval and maxval differ in dtype: {minval.dtype} vs {maxval.dtype}")
        minval.shape.with_rank(0)
        maxval.shape.with_rank(0)
        return TensorSpec(array_ops._shape_from_spec(shape), minval.dtype.base_dtype)

    def compute(self, ctx: KernelContext, shape, minval, maxval, seed, seed2, rng=None) -> Any:
        if minval >= maxval:
            raise ValueError(f"Need minval < maxval: {minval} >= {maxval}")
        rng = rng or new_generator(seed, seed2)
        out = rng.integers(minval, maxval, size=shape.tolist(), dtype=minval.dtype)
        return ctx.xp.asarray(out)


class RandomShuffle(_RandomOp):
    """``value`` with its first dimension randomly permuted."""

    inputs = ("value",)
    samples = [Sample(value=(5, 2), seed=1), Sample(value=()), Sample(value=(0,))]

    def infer(self, value: TensorSpec, seed: int, seed2: int) -> TensorSpec:
        return TensorSpec(value.shape, value.dtype.base_dtype)

    def compute(self, ctx: KernelContext, value: Any, seed, seed2, rng=None) -> Any:
        if value.ndim == 0 or value.shape[0] <= 1:
            return value
        rng = rng or new_generator(seed, seed2)
        return value[ctx.xp.asarray(rng.permutation(value.shape[0]))]


class Multinomial(_RandomOp):
    """``num_samples`` class indices per row of ``logits`` (unnormalized log-probabilities)."""

    inputs = ("logits", "num_samples")
    attrs = {"output_dtype": dtypes.int64, "seed": 0, "seed2": 0}
    samples = [Sample(logits=(2, 4), num_samples=np.int32(5), seed=1)]

    def infer(self, logits: TensorSpec, num_samples: TensorSpec, output_dtype, seed, seed2):
        n = array_ops._value(num_samples)
        batch = logits.shape.with_rank(2)[0]
        return TensorSpec(TensorShape([batch, None if n is None else int(n)]), output_dtype)

    def compute(self, ctx: KernelContext, logits, num_samples, output_dtype, seed, seed2, rng=None):
        rng = rng or new_generator(seed, seed2)
        x = np.asarray(logits, dtype=np.float64)
        batch, classes = x.shape
        gumbel = -np.log(-np.log(rng.random((batch, int(num_samples), classes)) + 1e-300))
        out = np.argmax(x[:, None, :] + gumbel, axis=-1).astype(output_dtype.np)
        return ctx.xp.asarray(out)


class RandomGamma(_RandomOp):
    """Gamma(alpha, 1) draws of shape ``shape + alpha.shape``, by inverting the CDF at uniform
    draws, so a draw is a smooth function of ``alpha`` for a fixed seed: the gradient with
    respect to ``alpha`` is the implicit reparameterization dx/dalpha = -(dF/dalpha)/(dF/dx)
    (``RandomGammaGrad``), as TensorFlow's."""

    inputs = ("shape", "alpha")
    differentiable = True
    cpu_only = True  # SciPy's inverse incomplete gamma function
    samples = [
        Sample(shape=np.array([3], np.int32), alpha=np.array([0.7, 2.5]), seed=1, seed2=2),
        Sample(shape=np.array([2, 2], np.int32), alpha=np.float64(4.0), seed=3),
    ]

    def infer(self, shape: TensorSpec, alpha: TensorSpec, seed: int, seed2: int) -> TensorSpec:
        if not alpha.dtype.is_floating:
            raise TypeError(f"RandomGamma: alpha must be a float tensor, got {alpha.dtype}")
        out = array_ops._shape_from_spec(shape).concatenate(alpha.shape)
        return TensorSpec(out, alpha.dtype.base_dtype)

    def compute(self, ctx: KernelContext, shape, alpha, seed, seed2, rng=None) -> Any:
        rng = rng or new_generator(seed, seed2)
        alpha = np.asarray(alpha)
        dims = tuple(shape.tolist()) + alpha.shape
        u = rng.random(dims)
        draws = scipy.special.gammaincinv(alpha.astype(np.float64), u)
        tiny = np.finfo(alpha.dtype).tiny
        return ctx.xp.asarray(np.maximum(draws, tiny).astype(alpha.dtype))

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        shape, alpha = op.inputs
        sample = op.outputs[0]
        partial = (
            ops_lib.get_default_graph().create_op("RandomGammaGrad", [alpha, sample], {}).outputs[0]
        )
        batch_axes = math_ops.range(array_ops.size(shape))
        return [None, math_ops.reduce_sum(grad * partial, batch_axes)]


class RandomGammaGrad(OpDef):
    """d sample / d alpha of Gamma(alpha, 1) draws at fixed CDF value (implicit
    reparameterization): -(dF/dalpha) / (dF/dx), F the regularized lower incomplete gamma.
    dF/dalpha is a central difference in float64 (relative error about 1e-9)."""

    inputs = ("alpha", "sample")
    differentiable = False
    cpu_only = True
    samples = [Sample(alpha=np.array([0.7, 2.5]), sample=np.array([[0.3, 2.0], [1.1, 4.0]]))]

    def infer(self, alpha: TensorSpec, sample: TensorSpec) -> TensorSpec:
        return TensorSpec(sample.shape, alpha.dtype.base_dtype)

    def compute(self, ctx: KernelContext, alpha: Any, sample: Any) -> Any:
        a = np.broadcast_to(np.asarray(alpha, np.float64), np.shape(sample))
        x = np.asarray(sample, np.float64)
        h = 1e-6 * np.maximum(a, 1.0)
        d_alpha = (scipy.special.gammainc(a + h, x) - scipy.special.gammainc(a - h, x)) / (2 * h)
        log_density = (a - 1.0) * np.log(x) - x - scipy.special.gammaln(a)
        return ctx.xp.asarray((-d_alpha / np.exp(log_density)).astype(np.asarray(alpha).dtype))


class RandomPoissonV2(_RandomOp):
    """Poisson(rate) draws of shape ``shape + rate.shape`` in ``dtype``."""

    inputs = ("shape", "rate")
    attrs = {"dtype": dtypes.int64, "seed": 0, "seed2": 0}
    samples = [Sample(shape=np.array([4], np.int32), rate=np.array([0.5, 3.0]), seed=1)]

    def infer(self, shape: TensorSpec, rate: TensorSpec, dtype, seed, seed2) -> TensorSpec:
        out = array_ops._shape_from_spec(shape).concatenate(rate.shape)
        return TensorSpec(out, dtype)

    def compute(self, ctx: KernelContext, shape, rate, dtype, seed, seed2, rng=None) -> Any:
        rng = rng or new_generator(seed, seed2)
        rate = np.asarray(rate)
        draws = rng.poisson(rate.astype(np.float64), size=tuple(shape.tolist()) + rate.shape)
        return ctx.xp.asarray(draws.astype(dtype.np))


# --- builders -------------------------------------------------------------------------------------
def _random(op_type: str, inputs: list[Any], attrs: dict[str, Any], seed: Any, name=None):
    seed1, seed2 = get_seed(seed)
    attrs = {**attrs, "seed": seed1 or 0, "seed2": seed2 or 0}
    return ops_lib.get_default_graph().create_op(op_type, inputs, attrs, name=name).outputs[0]


def _shape_tensor(shape: Any) -> Tensor:
    if isinstance(shape, Tensor):
        return shape
    if ops_lib._contains_tensor(shape):
        return array_ops.stack(list(shape), name="shape")
    return ops_lib.convert_to_tensor(list(TensorShape(shape)), dtype=dtypes.int32, name="shape")


def random_uniform(
    shape: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Values uniform in [minval, maxval); integer dtypes need ``maxval``.

    >>> import nbflow as tf
    >>> tf.random_uniform([2, 3], seed=1).shape
    TensorShape([2, 3])
    """
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype.is_integer and maxval is None:
        raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
    with ops_lib.name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape_t = _shape_tensor(shape)
        lo = ops_lib.convert_to_tensor(minval, dtype=dtype, name="min")
        hi = ops_lib.convert_to_tensor(1 if maxval is None else maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return _random("RandomUniformInt", [shape_t, lo, hi], {}, seed, name=scope)
        rnd = _random("RandomUniform", [shape_t], {"dtype": dtype}, seed)
        return math_ops.add(rnd * (hi - lo), lo, name=scope)


def _scaled_normal(op_type, shape, mean, stddev, dtype, seed, name, default_name) -> Tensor:
    dtype = dtypes.as_dtype(dtype).base_dtype
    with ops_lib.name_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape_t = _shape_tensor(shape)
        mean_t = ops_lib.convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = ops_lib.convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = _random(op_type, [shape_t], {"dtype": dtype}, seed)
        return math_ops.add(rnd * stddev_t, mean_t, name=scope)


def random_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Values from a normal distribution with ``mean`` and ``stddev``."""
    return _scaled_normal(
        "RandomStandardNormal", shape, mean, stddev, dtype, seed, name, "random_normal"
    )


def truncated_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Normal values redrawn until within two ``stddev`` of ``mean``."""
    return _scaled_normal(
        "TruncatedNormal", shape, mean, stddev, dtype, seed, name, "truncated_normal"
    )


def random_shuffle(value: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """``value`` shuffled along its first dimension."""
    return _random("RandomShuffle", [ops_lib.convert_to_tensor(value)], {}, seed, name=name)


def multinomial(
    logits: Any,
    num_samples: Any,
    seed: int | None = None,
    name: str | None = None,
    output_dtype: Any = None,
) -> Tensor:
    """``num_samples`` class indices per row of ``logits`` ([batch, classes])."""
    with ops_lib.name_scope(name, "multinomial", [logits]) as scope:
        logits = ops_lib.convert_to_tensor(logits, name="logits")
        n = ops_lib.convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
        attrs = {"output_dtype": dtypes.as_dtype(output_dtype or dtypes.int64)}
        return _random("Multinomial", [logits, n], attrs, seed, name=scope)


def random_gamma(
    shape: Any,
    alpha: Any,
    beta: Any = None,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Gamma(alpha, beta) draws (``beta`` is the rate), of shape ``shape + alpha.shape``;
    differentiable with respect to ``alpha`` and ``beta``.

    >>> import nbflow as tf
    >>> tf.random.gamma([5], [1.0, 2.0], seed=1).shape
    TensorShape([5, 2])
    """
    dtype = dtypes.as_dtype(dtype).base_dtype
    with ops_lib.name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape_t = _shape_tensor(shape)
        alpha_t = ops_lib.convert_to_tensor(alpha, dtype=dtype, name="alpha")
        beta_t = ops_lib.convert_to_tensor(1 if beta is None else beta, dtype=dtype, name="beta")
        alpha_b = alpha_t + array_ops.zeros_like(beta_t)
        draws = _random("RandomGamma", [shape_t, alpha_b], {}, seed)
        return math_ops.maximum(draws / beta_t, float(np.finfo(dtype.np).tiny))


def random_poisson(
    lam: Any,
    shape: Any,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Poisson(lam) draws of shape ``shape + lam.shape`` (TF1's argument order: lam first)."""
    with ops_lib.name_scope(name, "random_poisson", [lam, shape]):
        shape_t = _shape_tensor(shape)
        rate = ops_lib.convert_to_tensor(lam, name="lam")
        attrs = {"dtype": dtypes.as_dtype(dtype).base_dtype}
        return _random("RandomPoissonV2", [shape_t, rate], attrs, seed)


def categorical(
    logits: Any,
    num_samples: Any,
    dtype: Any = None,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """``num_samples`` class indices per row of ``logits`` (``tf.random.categorical``)."""
    return multinomial(
        logits, num_samples, seed=seed, name=name or "categorical", output_dtype=dtype
    )


def random_crop(value: Any, size: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """A random block of ``value`` of shape ``size`` (the same offset for the whole block).

    >>> import nbflow as tf
    >>> tf.random_crop(tf.zeros([5, 6, 3]), [2, 2, 3], seed=1).shape
    TensorShape([2, 2, 3])
    """
    with ops_lib.name_scope(name, "random_crop", [value, size]):
        value = ops_lib.convert_to_tensor(value, name="value")
        size_t = ops_lib.convert_to_tensor(size, dtype=dtypes.int32, name="size")
        if value.shape.ndims is not None and size_t.shape.is_fully_defined():
            if size_t.shape.num_elements() != value.shape.ndims:
                raise ValueError(f"random_crop: size {size} does not fit value shape {value.shape}")
        shape = array_ops.shape(value)
        check = check_ops.assert_greater_equal(
            shape, size_t, message="Need value.shape >= size, got"
        )
        with ops_lib.control_dependencies([check]):
            limit = shape - size_t + 1
        offset = random_uniform(
            array_ops.shape(size_t), maxval=dtypes.int32.max, dtype=dtypes.int32, seed=seed
        )
        return array_ops.slice(value, math_ops.floormod(offset, limit), size_t)


__all__ = [
    "categorical",
    "get_seed",
    "multinomial",
    "random_crop",
    "random_gamma",
    "random_normal",
    "random_poisson",
    "random_shuffle",
    "random_uniform",
    "set_random_seed",
    "truncated_normal",
]
