"""AdagradDAOptimizer: Adagrad dual averaging, for sparse linear models with L1/L2.

It keeps the sum of all gradients (``gradient_accumulator``) and of their squares
(``gradient_squared_accumulator``, starting at ``initial_gradient_squared_accumulator_value``)
and sets, rather than steps, each variable from them at step t = global_step + 1:

    var = -lr * sign(ga) * max(|ga| - l1 * t, 0) / (l2 * t * lr + sqrt(gga))

The L1 term makes small weights exactly zero. It needs the global step (read before
``minimize`` increments it), as TensorFlow's does.
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import dtypes
from nbflow.ops import array_ops, math_ops
from nbflow.train.optimizer import Optimizer


class AdagradDAOptimizer(Optimizer):
    """Adagrad dual averaging (TensorFlow 1.15's ``tf.train.AdagradDAOptimizer``)."""

    def __init__(
        self,
        learning_rate: Any,
        global_step: Any,
        initial_gradient_squared_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "AdagradDA",
    ):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError(
                "initial_gradient_squared_accumulator_value must be positive: "
                f"{initial_gradient_squared_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._global_step = global_step
        self._initial_gradient_squared_accumulator_value = (
            initial_gradient_squared_accumulator_value
        )
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            self._zeros_slot(v, "gradient_accumulator", self._name)
            self._get_or_make_slot(
                v,
                self._initial_gradient_squared_accumulator_value,
                "gradient_squared_accumulator",
                self._name,
            )

    def _prepare(self) -> None:
        self._set_hyper(
            learning_rate=self._learning_rate,
            l1_regularization_strength=self._l1,
            l2_regularization_strength=self._l2,
        )
        step = math_ops.cast(array_ops.identity(self._global_step), dtypes.int64)
        self._global_step_on_worker = step + 1

    def _inputs(self, var: Any) -> list[Any]:
        return [
            var._ref(),
            self._slot(var, "gradient_accumulator")._ref(),
            self._slot(var, "gradient_squared_accumulator")._ref(),
        ]

    def _hypers(self, var: Any) -> list[Any]:
        return [
            self._cast("learning_rate", var),
            self._cast("l1_regularization_strength", var),
            self._cast("l2_regularization_strength", var),
            self._global_step_on_worker,
        ]

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return self._update_op("ApplyAdagradDA", self._inputs(var) + [grad] + self._hypers(var))

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        inputs = self._inputs(var) + [grad.values, grad.indices] + self._hypers(var)
        return self._update_op("SparseApplyAdagradDA", inputs)
