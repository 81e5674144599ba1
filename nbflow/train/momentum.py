"""MomentumOptimizer: accum = momentum * accum + grad; var -= lr * accum (or Nesterov's form)."""

from __future__ import annotations

from typing import Any

from nbflow.train.gradient_descent import _update
from nbflow.train.optimizer import Optimizer


class MomentumOptimizer(Optimizer):
    """Momentum; slot "momentum" (zeros) per variable."""

    def __init__(
        self,
        learning_rate: Any,
        momentum: Any,
        use_locking: bool = False,
        name: str = "Momentum",
        use_nesterov: bool = False,
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        self._hyper["learning_rate"] = self._hyper_tensor("learning_rate", self._learning_rate)
        self._hyper["momentum"] = self._hyper_tensor("momentum", self._momentum)

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        accum = self._slot(var, "momentum")
        return _update(
            "ApplyMomentum",
            [
                var._ref(),
                accum._ref(),
                self._cast("learning_rate", var),
                grad,
                self._cast("momentum", var),
            ],
            self._use_locking,
            use_nesterov=self._use_nesterov,
        )

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        accum = self._slot(var, "momentum")
        return _update(
            "SparseApplyMomentum",
            [
                var._ref(),
                accum._ref(),
                self._cast("learning_rate", var),
                grad.values,
                grad.indices,
                self._cast("momentum", var),
            ],
            self._use_locking,
            use_nesterov=self._use_nesterov,
        )
