"""RMSPropOptimizer: ms = decay ms + (1-decay) g^2; mom = momentum mom + lr g / sqrt(ms + eps);
var -= mom. ``centered`` also tracks mg, the mean gradient, and divides by sqrt(ms - mg^2 + eps).
"""

from __future__ import annotations

from typing import Any

from nbflow.train.optimizer import Optimizer


class RMSPropOptimizer(Optimizer):
    """RMSProp; slots "rms" (ones, as TensorFlow), "momentum" and, centered, "mg" (zeros)."""

    def __init__(
        self,
        learning_rate: Any,
        decay: Any = 0.9,
        momentum: Any = 0.0,
        epsilon: Any = 1e-10,
        use_locking: bool = False,
        centered: bool = False,
        name: str = "RMSProp",
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            self._get_or_make_slot(v, 1.0, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        self._set_hyper(
            learning_rate=self._learning_rate,
            decay=self._decay,
            momentum=self._momentum,
            epsilon=self._epsilon,
        )

    def _inputs(self, var: Any) -> tuple[list[Any], list[Any]]:
        slots = [var._ref()]
        if self._centered:
            slots.append(self._slot(var, "mg")._ref())
        slots += [self._slot(var, "rms")._ref(), self._slot(var, "momentum")._ref()]
        hyper = [self._cast(n, var) for n in ("learning_rate", "decay", "momentum", "epsilon")]
        return slots, hyper

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        slots, hyper = self._inputs(var)
        op_type = "ApplyCenteredRMSProp" if self._centered else "ApplyRMSProp"
        return self._update_op(op_type, slots + hyper + [grad])

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        slots, hyper = self._inputs(var)
        op_type = "SparseApplyCenteredRMSProp" if self._centered else "SparseApplyRMSProp"
        return self._update_op(op_type, slots + hyper + [grad.values, grad.indices])
