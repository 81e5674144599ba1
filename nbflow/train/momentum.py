"""MomentumOptimizer: accum = momentum * accum + grad; var -= lr * accum (or Nesterov's form)."""

from __future__ import annotations

from typing import Any

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
        self._set_hyper(learning_rate=self._learning_rate, momentum=self._momentum)

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return self._apply("ApplyMomentum", var, [grad])

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        return self._apply("SparseApplyMomentum", var, [grad.values, grad.indices])

    def _apply(self, op_type: str, var: Any, grad_inputs: list[Any]) -> Any:
        """The update op; its inputs put the gradient between the learning rate and momentum."""
        accum = self._slot(var, "momentum")
        lr, momentum = self._cast("learning_rate", var), self._cast("momentum", var)
        inputs = [var._ref(), accum._ref(), lr, *grad_inputs, momentum]
        return self._update_op(op_type, inputs, use_nesterov=self._use_nesterov)
