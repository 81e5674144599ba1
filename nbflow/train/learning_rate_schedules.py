"""TF 1.15's other learning-rate decays: cosine (with warm restarts, linear, noisy), inverse
time and natural exponential, each ``f(learning_rate, global_step, ...)`` built from math ops.

All read ``global_step`` as a float; ``staircase`` floors ``global_step / decay_steps`` so the
rate drops in steps. The cosine family follows Loshchilov & Hutter (SGDR, 2017):

    decayed = (1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> lr = tf.train.cosine_decay(0.1, 50, 100)
    >>> with tf.Session() as s: print(round(float(s.run(lr)), 6))
    0.05
"""

from __future__ import annotations

import math
from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Tensor
from nbflow.ops import math_ops, random_ops
from nbflow.train.learning_rate_decay import piecewise_constant

__all__ = [
    "cosine_decay",
    "cosine_decay_restarts",
    "inverse_time_decay",
    "linear_cosine_decay",
    "natural_exp_decay",
    "noisy_linear_cosine_decay",
    "piecewise_constant_decay",
]

piecewise_constant_decay = piecewise_constant


def _float(value: Any, dtype: Any = None) -> Tensor:
    tensor = ops_lib.convert_to_tensor(value)
    return math_ops.cast(
        tensor, dtype or (tensor.dtype if tensor.dtype.is_floating else dtypes.float32)
    )


def _required(global_step: Any, what: str) -> None:
    if global_step is None:
        raise ValueError(f"global_step is required for {what}.")


def _progress(global_step: Any, decay_steps: Any, dtype: Any, staircase: bool) -> Tensor:
    progress = _float(global_step, dtype) / _float(decay_steps, dtype)
    return math_ops.floor(progress) if staircase else progress


def natural_exp_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Tensor:
    """``learning_rate * exp(-decay_rate * global_step / decay_steps)``."""
    _required(global_step, "natural_exp_decay")
    with ops_lib.name_scope(name, "NaturalExpDecay", [learning_rate, global_step]):
        lr = _float(learning_rate)
        progress = _progress(global_step, decay_steps, lr.dtype, staircase)
        return lr * math_ops.exp(-_float(decay_rate, lr.dtype) * progress)


def inverse_time_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Tensor:
    """``learning_rate / (1 + decay_rate * global_step / decay_steps)``."""
    _required(global_step, "inverse_time_decay")
    with ops_lib.name_scope(name, "InverseTimeDecay", [learning_rate, global_step]):
        lr = _float(learning_rate)
        progress = _progress(global_step, decay_steps, lr.dtype, staircase)
        return lr / (1 + _float(decay_rate, lr.dtype) * progress)


def cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    alpha: float = 0.0,
    name: str | None = None,
) -> Tensor:
    """A half cosine from ``learning_rate`` down to ``alpha * learning_rate`` over decay_steps."""
    _required(global_step, "cosine_decay")
    with ops_lib.name_scope(name, "CosineDecay", [learning_rate, global_step]):
        lr = _float(learning_rate)
        steps = _float(decay_steps, lr.dtype)
        step = math_ops.minimum(_float(global_step, lr.dtype), steps)
        cosine = 0.5 * (1 + math_ops.cos(math.pi * step / steps))
        return lr * ((1 - alpha) * cosine + alpha)


def cosine_decay_restarts(
    learning_rate: Any,
    global_step: Any,
    first_decay_steps: Any,
    t_mul: float = 2.0,
    m_mul: float = 1.0,
    alpha: float = 0.0,
    name: str | None = None,
) -> Tensor:
    """Cosine decay restarted after each period; period i lasts ``first_decay_steps * t_mul^i``
    steps and starts at ``learning_rate * m_mul^i`` (SGDR)."""
    _required(global_step, "cosine_decay_restarts")
    with ops_lib.name_scope(name, "SGDRDecay", [learning_rate, global_step]):
        lr = _float(learning_rate)
        dtype = lr.dtype
        fraction = _float(global_step, dtype) / _float(first_decay_steps, dtype)
        if t_mul == 1.0:
            completed = math_ops.floor(fraction)
            fraction = fraction - completed
        else:
            completed = math_ops.floor(math_ops.log(1 - fraction * (1 - t_mul)) / math.log(t_mul))
            before = (1 - math_ops.pow(_float(t_mul, dtype), completed)) / (1 - t_mul)
            fraction = (fraction - before) / math_ops.pow(_float(t_mul, dtype), completed)
        m_fac = math_ops.pow(_float(m_mul, dtype), completed)
        cosine = 0.5 * m_fac * (1 + math_ops.cos(math.pi * fraction))
        return lr * ((1 - alpha) * cosine + alpha)


def linear_cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    num_periods: float = 0.5,
    alpha: float = 0.0,
    beta: float = 0.001,
    name: str | None = None,
) -> Tensor:
    """``lr * ((alpha + linear) * cosine + beta)``, linear falling from 1 to 0 and cosine
    making ``num_periods`` periods over ``decay_steps`` (Bello et al. 2017)."""
    _required(global_step, "linear_cosine_decay")
    with ops_lib.name_scope(name, "LinearCosineDecay", [learning_rate, global_step]):
        lr = _float(learning_rate)
        steps = _float(decay_steps, lr.dtype)
        step = math_ops.minimum(_float(global_step, lr.dtype), steps)
        linear = (steps - step) / steps
        cosine = 0.5 * (1 + math_ops.cos(math.pi * 2 * num_periods * step / steps))
        return lr * ((alpha + linear) * cosine + beta)


def noisy_linear_cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    initial_variance: float = 1.0,
    variance_decay: float = 0.55,
    num_periods: float = 0.5,
    alpha: float = 0.0,
    beta: float = 0.001,
    name: str | None = None,
) -> Tensor:
    """``linear_cosine_decay`` with Gaussian noise of variance
    ``initial_variance / (1 + step)^variance_decay`` added to the linear term."""
    _required(global_step, "noisy_linear_cosine_decay")
    with ops_lib.name_scope(name, "NoisyLinearCosineDecay", [learning_rate, global_step]):
        lr = _float(learning_rate)
        steps = _float(decay_steps, lr.dtype)
        step = math_ops.minimum(_float(global_step, lr.dtype), steps)
        linear = (steps - step) / steps
        variance = initial_variance / math_ops.pow(1 + step, variance_decay)
        noise = random_ops.random_normal([], stddev=math_ops.sqrt(variance), dtype=lr.dtype)
        cosine = 0.5 * (1 + math_ops.cos(math.pi * 2 * num_periods * step / steps))
        return lr * ((alpha + linear + noise) * cosine + beta)
