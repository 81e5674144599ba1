"""AdagradOptimizer: accum += grad^2; var -= lr * grad / sqrt(accum) (no epsilon, as TF)."""

from __future__ import annotations

from typing import Any

from nbflow.train.optimizer import Optimizer


class AdagradOptimizer(Optimizer):
    """Adagrad; slot "accumulator" starts at ``initial_accumulator_value`` (0.1)."""

    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        use_locking: bool = False,
        name: str = "Adagrad",
    ):
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            self._get_or_make_slot(v, self._initial_accumulator_value, "accumulator", self._name)

    def _prepare(self) -> None:
        self._set_hyper(learning_rate=self._learning_rate)

    def _inputs(self, var: Any) -> list[Any]:
        acc = self._slot(var, "accumulator")
        return [var._ref(), acc._ref(), self._cast("learning_rate", var)]

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return self._update_op("ApplyAdagrad", self._inputs(var) + [grad])

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        inputs = self._inputs(var) + [grad.values, grad.indices]
        return self._update_op("SparseApplyAdagrad", inputs)
