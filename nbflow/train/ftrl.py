"""FtrlOptimizer: FTRL-proximal (McMahan et al. 2013), as TensorFlow's ApplyFtrl."""

from __future__ import annotations

from typing import Any

from nbflow.train.optimizer import Optimizer


class FtrlOptimizer(Optimizer):
    """FTRL; slots "accum" (initial_accumulator_value) and "linear" (zeros)."""

    def __init__(
        self,
        learning_rate: Any,
        learning_rate_power: float = -0.5,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "Ftrl",
    ):
        if initial_accumulator_value < 0.0:
            raise ValueError("initial_accumulator_value must be >= 0")
        if learning_rate_power > 0.0:
            raise ValueError("learning_rate_power must be <= 0")
        if l1_regularization_strength < 0.0 or l2_regularization_strength < 0.0:
            raise ValueError("regularization strengths must be >= 0")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            self._get_or_make_slot(v, self._initial_accumulator_value, "accum", self._name)
            self._zeros_slot(v, "linear", self._name + "_1")

    def _prepare(self) -> None:
        # Keyed by the update ops' input names; the tensors keep TensorFlow's argument names.
        self._hyper["learning_rate"] = self._hyper_tensor("learning_rate", self._learning_rate)
        self._hyper["l1"] = self._hyper_tensor("l1_regularization_strength", self._l1)
        self._hyper["l2"] = self._hyper_tensor("l2_regularization_strength", self._l2)
        self._hyper["lr_power"] = self._hyper_tensor(
            "learning_rate_power", self._learning_rate_power
        )

    def _hyper_inputs(self, var: Any) -> list[Any]:
        return [self._cast(n, var) for n in ("learning_rate", "l1", "l2", "lr_power")]

    def _slots_of(self, var: Any) -> list[Any]:
        return [var._ref(), self._slot(var, "accum")._ref(), self._slot(var, "linear")._ref()]

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        inputs = self._slots_of(var) + [grad] + self._hyper_inputs(var)
        return self._update_op("ApplyFtrl", inputs)

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        inputs = self._slots_of(var) + [grad.values, grad.indices] + self._hyper_inputs(var)
        return self._update_op("SparseApplyFtrl", inputs)
