"""Exponential moving averages of variables: ``tf.train.ExponentialMovingAverage``.

Each averaged variable ``v`` gets a shadow variable ``v/ExponentialMovingAverage``, started at
``v``'s initial value; every run of the op ``apply`` returns updates it::

    shadow -= (1 - decay) * (shadow - v)

With ``num_updates`` (usually the global step) the decay starts small and grows:
``decay = min(decay, (1 + num_updates) / (10 + num_updates))``. The average of a tensor that is
not a variable starts at zero; with ``zero_debias`` it is divided by ``1 - decay ** t`` after
``t`` updates (Adam's bias correction), so early values are not pulled towards zero.

Evaluation code often restores the averages in place of the variables::

    ema = tf.train.ExponentialMovingAverage(0.999)
    saver = tf.train.Saver(ema.variables_to_restore())  # {"w/ExponentialMovingAverage": w, ...}
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import GraphKeys
from nbflow.ops import array_ops, math_ops, state_ops
from nbflow.ops.control_flow_ops import group
from nbflow.ops.variables import Variable, global_variables, trainable_variables

__all__ = ["ExponentialMovingAverage", "assign_moving_average"]


def _scoped_variable(initial_value: Any, scope: str, name: str, like: Any) -> Variable:
    """A non-trainable variable named ``scope/name`` (absolute), placed with ``like``."""
    graph = ops_lib.get_default_graph()
    with ops_lib.colocate_with(like.op), graph.name_scope(f"{scope}/"):
        return Variable(initial_value, trainable=False, name=name)


def assign_moving_average(
    variable: Variable, value: Any, decay: Any, zero_debias: bool = True, name: str | None = None
) -> ops_lib.Tensor:
    """Move ``variable`` towards ``value``: ``variable -= (1 - decay) * (variable - value)``;
    with ``zero_debias``, ``variable`` becomes the bias-corrected average of a zero-started one."""
    with ops_lib.name_scope(name, "AssignMovingAvg", [variable, value, decay]):
        value = ops_lib.convert_to_tensor(value)
        decay = math_ops.cast(ops_lib.convert_to_tensor(decay), variable.dtype.base_dtype)
        one_minus_decay = 1.0 - decay
        if not zero_debias:
            return state_ops.assign_sub(variable, (variable - value) * one_minus_decay)
        scope = variable.op.name
        zeros = array_ops.zeros(value.shape.as_list(), variable.dtype.base_dtype)
        biased = _scoped_variable(zeros, scope, "biased", variable)
        local_step = _scoped_variable(
            array_ops.zeros([], variable.dtype.base_dtype), scope, "local_step", variable
        )
        new_biased = state_ops.assign_sub(biased, (biased - value) * one_minus_decay)
        step = state_ops.assign_add(local_step, array_ops.ones([], variable.dtype.base_dtype))
        return state_ops.assign(variable, new_biased / (1.0 - math_ops.pow(decay, step)))


class ExponentialMovingAverage:
    """Shadow variables holding exponential moving averages of variables or tensors.

    >>> import nbflow as tf
    >>> w = tf.Variable(1.0, name="w")
    >>> ema = tf.train.ExponentialMovingAverage(0.5)
    >>> update = ema.apply([w])
    >>> ema.average_name(w)
    'w/ExponentialMovingAverage'
    """

    def __init__(
        self,
        decay: Any,
        num_updates: Any = None,
        zero_debias: bool = False,
        name: str = "ExponentialMovingAverage",
    ):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[Any, Variable] = {}

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list: list[Any] | None = None) -> ops_lib.Operation:
        """Create the averages of ``var_list`` (default: the trainable variables) and return an
        op updating them all."""
        if var_list is None:
            var_list = trainable_variables()
        debiased: set[Variable] = set()
        for var in var_list:
            if var.dtype.base_dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var in self._averages:
                raise ValueError(f"Moving average already computed for: {var.name}")
            if isinstance(var, Variable):
                avg = _scoped_variable(var.initialized_value(), var.op.name, self._name, var)
                ops_lib.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
            else:
                zeros = array_ops.zeros(var.shape.as_list(), var.dtype.base_dtype)
                avg = _scoped_variable(zeros, var.op.name, self._name, var)
                if self._zero_debias:
                    debiased.add(avg)
            self._averages[var] = avg
        with ops_lib.name_scope(self._name) as scope:
            decay = ops_lib.convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                steps = math_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + steps) / (10.0 + steps))
            updates = [
                assign_moving_average(
                    self._averages[var],
                    var,
                    decay,
                    zero_debias=self._averages[var] in debiased,
                )
                for var in var_list
            ]
            return group(*updates, name=scope.rstrip("/"))

    def average(self, var: Any) -> Variable | None:
        """The shadow variable of ``var``, or None if ``apply`` did not average it."""
        return self._averages.get(var)

    def average_name(self, var: Any) -> str:
        """The name of ``var``'s shadow variable (also before ``apply``): what a checkpoint
        written during training calls its average."""
        if var in self._averages:
            return self._averages[var].op.name
        return f"{var.op.name}/{self._name}"

    def variables_to_restore(self, moving_avg_variables: list[Any] | None = None) -> dict:
        """A Saver's ``var_list`` restoring each averaged variable from its average and the
        other global variables from themselves."""
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + ops_lib.get_collection(
                GraphKeys.MOVING_AVERAGE_VARIABLES
            )
        name_map: dict[str, Any] = {}
        averaged = list(dict.fromkeys(moving_avg_variables))
        for var in averaged:
            name_map[self.average_name(var)] = var
        averaged_names = {v.name for v in averaged}
        for var in global_variables():
            if var.name not in averaged_names and var.op.name not in name_map:
                name_map[var.op.name] = var
        return name_map
