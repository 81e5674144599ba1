"""Learning-rate schedules of the global step: exponential, piecewise constant, polynomial."""

from __future__ import annotations

from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.framework import dtypes
from nbflow.ops import array_ops, math_ops


def _as_float(value: Any, dtype: Any = None) -> Any:
    tensor = ops_lib.convert_to_tensor(value)
    target = dtype or (tensor.dtype.base_dtype if tensor.dtype.is_floating else dtypes.float32)
    return math_ops.cast(tensor, target)


def exponential_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Any:
    """learning_rate * decay_rate ^ (global_step / decay_steps) (floored when staircase)."""
    if global_step is None:
        raise ValueError("global_step is required for exponential_decay.")
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "ExponentialDecay"):
        lr = _as_float(learning_rate)
        dtype = lr.dtype.base_dtype
        p = _as_float(global_step, dtype) / _as_float(decay_steps, dtype)
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(lr, math_ops.pow(_as_float(decay_rate, dtype), p), name="lr")


def piecewise_constant(x: Any, boundaries: list[Any], values: list[Any], name: str | None = None):
    """values[0] while x <= boundaries[0], values[i] while x in (b[i-1], b[i]], then values[-1]."""
    if len(values) != len(boundaries) + 1:
        raise ValueError("The length of values should be one more than the length of boundaries")
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "PiecewiseConstant"):
        x = ops_lib.convert_to_tensor(x)
        result = ops_lib.convert_to_tensor(values[0])
        dtype = result.dtype.base_dtype
        for boundary, value in zip(boundaries, values[1:]):
            boundary = ops_lib.convert_to_tensor(boundary, dtype=x.dtype.base_dtype)
            value = ops_lib.convert_to_tensor(value, dtype=dtype)
            result = array_ops.where(math_ops.greater(x, boundary), value, result)
        return result


def polynomial_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    end_learning_rate: Any = 0.0001,
    power: Any = 1.0,
    cycle: bool = False,
    name: str | None = None,
) -> Any:
    """(lr - end) * (1 - min(step, decay_steps) / decay_steps) ^ power + end."""
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "PolynomialDecay"):
        lr = _as_float(learning_rate)
        dtype = lr.dtype.base_dtype
        step = _as_float(global_step, dtype)
        steps = _as_float(decay_steps, dtype)
        if cycle:
            multiplier = math_ops.maximum(math_ops.ceil(step / steps), 1.0)
            steps = steps * multiplier
        else:
            step = math_ops.minimum(step, steps)
        end = _as_float(end_learning_rate, dtype)
        fraction = math_ops.pow(1 - step / steps, _as_float(power, dtype))
        return math_ops.add((lr - end) * fraction, end, name="lr")
