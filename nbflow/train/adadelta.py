"""AdadeltaOptimizer (Zeiler 2012), with TensorFlow's defaults lr=0.001, rho=0.95, eps=1e-8."""

from __future__ import annotations

from typing import Any

from nbflow.train.optimizer import Optimizer


class AdadeltaOptimizer(Optimizer):
    """Adadelta; slots "accum" and "accum_update" (zeros)."""

    def __init__(
        self,
        learning_rate: Any = 0.001,
        rho: Any = 0.95,
        epsilon: Any = 1e-8,
        use_locking: bool = False,
        name: str = "Adadelta",
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._rho = rho
        self._epsilon = epsilon

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self) -> None:
        self._set_hyper(lr=self._learning_rate, rho=self._rho, epsilon=self._epsilon)

    def _inputs(self, var: Any) -> list[Any]:
        return [
            var._ref(),
            self._slot(var, "accum")._ref(),
            self._slot(var, "accum_update")._ref(),
            self._cast("lr", var),
            self._cast("rho", var),
            self._cast("epsilon", var),
        ]

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return self._update_op("ApplyAdadelta", self._inputs(var) + [grad])

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        inputs = self._inputs(var) + [grad.values, grad.indices]
        return self._update_op("SparseApplyAdadelta", inputs)
