"""Proximal gradient descent and proximal Adagrad: a gradient step, then the proximal map of
l1/l2 (Adagrad's step size is ``lr / sqrt(accumulator)``, accumulator += grad^2 first).

    prox = var - lr * grad
    var  = sign(prox) * max(|prox| - lr * l1, 0) / (1 + lr * l2)

The l1 shrinkage sets small weights exactly to zero (FOBOS, Duchi & Singer 2009). Written with
math ops and ``assign`` (rows of an IndexedSlices gradient: ``scatter_update``).

    >>> import nbflow as tf
    >>> tf.train.ProximalGradientDescentOptimizer(0.1, l1_regularization_strength=0.01).get_name()
    'ProximalGradientDescent'
"""

from __future__ import annotations

from typing import Any

from nbflow.framework.ops import Tensor
from nbflow.ops import array_ops, control_flow_ops, math_ops, state_ops
from nbflow.ops.scatter_ops import scatter_update
from nbflow.train.optimizer import Optimizer


class ProximalGradientDescentOptimizer(Optimizer):
    """Gradient descent with l1 and l2 regularization applied by their proximal map."""

    def __init__(
        self,
        learning_rate: Any,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "ProximalGradientDescent",
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _prepare(self) -> None:
        self._set_hyper(learning_rate=self._learning_rate, l1=self._l1, l2=self._l2)

    def _proximal(self, value: Tensor, grad: Tensor, var: Any, lr: Any = None) -> Tensor:
        l1, l2 = self._cast("l1", var), self._cast("l2", var)
        lr = self._cast("learning_rate", var) if lr is None else lr
        prox = value - lr * grad
        shrunk = math_ops.maximum(math_ops.abs(prox) - lr * l1, array_ops.zeros_like(prox))
        return math_ops.sign(prox) * shrunk / (1 + lr * l2)

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        new = self._proximal(var.read_value(), grad, var)
        return state_ops.assign(var, new, use_locking=self._use_locking).op

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        rows = array_ops.gather(var.read_value(), grad.indices)
        new = self._proximal(rows, grad.values, var)
        return scatter_update(var, grad.indices, new, use_locking=self._use_locking).op


class ProximalAdagradOptimizer(ProximalGradientDescentOptimizer):
    """Adagrad's per-coordinate step size with the l1/l2 proximal map (Duchi et al. 2011)."""

    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "ProximalAdagrad",
    ):
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(
            learning_rate,
            l1_regularization_strength,
            l2_regularization_strength,
            use_locking,
            name,
        )
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            self._get_or_make_slot(v, self._initial_accumulator_value, "accumulator", self._name)

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        acc = self._slot(var, "accumulator")
        new_acc = state_ops.assign(
            acc, acc.read_value() + grad * grad, use_locking=self._use_locking
        )
        lr = self._cast("learning_rate", var) * math_ops.rsqrt(new_acc)
        new = self._proximal(var.read_value(), grad, var, lr)
        return state_ops.assign(var, new, use_locking=self._use_locking).op

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        acc = self._slot(var, "accumulator")
        acc_rows = array_ops.gather(acc.read_value(), grad.indices) + grad.values * grad.values
        acc_update = scatter_update(acc, grad.indices, acc_rows, use_locking=self._use_locking)
        lr = self._cast("learning_rate", var) * math_ops.rsqrt(acc_rows)
        rows = array_ops.gather(var.read_value(), grad.indices)
        new = self._proximal(rows, grad.values, var, lr)
        var_update = scatter_update(var, grad.indices, new, use_locking=self._use_locking)
        return control_flow_ops.group(acc_update, var_update)
