"""AdamOptimizer (Kingma & Ba), in TensorFlow's form: the bias corrections are folded into
lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t) and epsilon is added to sqrt(v) ("epsilon hat").
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.ops import control_flow_ops, state_ops
from nbflow.train.optimizer import Optimizer


class AdamOptimizer(Optimizer):
    """Adam; slots "m" and "v" (zeros), and the shared beta1_power/beta2_power variables."""

    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta1: Any = 0.9,
        beta2: Any = 0.999,
        epsilon: Any = 1e-8,
        use_locking: bool = False,
        name: str = "Adam",
    ):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _create_slots(self, var_list: list[Any]) -> None:
        first = min(var_list, key=lambda v: v.name)
        self._get_or_make_non_slot(self._beta1, "beta1_power", first)
        self._get_or_make_non_slot(self._beta2, "beta2_power", first)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name + "_1")

    def _powers(self) -> tuple[Any, Any]:
        return self._get_non_slot("beta1_power"), self._get_non_slot("beta2_power")

    def _prepare(self) -> None:
        self._set_hyper(
            learning_rate=self._lr, beta1=self._beta1, beta2=self._beta2, epsilon=self._epsilon
        )

    def _inputs(self, var: Any) -> list[Any]:
        beta1_power, beta2_power = self._powers()
        return [
            var._ref(),
            self._slot(var, "m")._ref(),
            self._slot(var, "v")._ref(),
            ops_lib.convert_to_tensor(beta1_power, dtype=var.dtype.base_dtype),
            ops_lib.convert_to_tensor(beta2_power, dtype=var.dtype.base_dtype),
            self._cast("learning_rate", var),
            self._cast("beta1", var),
            self._cast("beta2", var),
            self._cast("epsilon", var),
        ]

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return self._update_op("ApplyAdam", self._inputs(var) + [grad])

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        inputs = self._inputs(var) + [grad.values, grad.indices]
        return self._update_op("SparseApplyAdam", inputs)

    def _finish(self, update_ops: list[Any], name_scope: str) -> Any:
        """After every variable's update: beta1_power *= beta1, beta2_power *= beta2."""
        graph = ops_lib.get_default_graph()
        beta1_power, beta2_power = self._powers()
        with graph.control_dependencies(update_ops), graph.colocate_with(beta1_power.op):
            beta1 = self._cast("beta1", beta1_power)
            beta2 = self._cast("beta2", beta2_power)
            update1 = state_ops.assign(beta1_power, beta1_power * beta1, use_locking=False)
            update2 = state_ops.assign(beta2_power, beta2_power * beta2, use_locking=False)
        return control_flow_ops.group(*update_ops, update1, update2, name=name_scope)
