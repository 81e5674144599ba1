"""ProximalGradientDescentOptimizer: a gradient step, then the proximal map of l1/l2.

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
from nbflow.ops import array_ops, math_ops, state_ops
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

    def _proximal(self, value: Tensor, grad: Tensor, var: Any) -> Tensor:
        lr, l1, l2 = (self._cast(k, var) for k in ("learning_rate", "l1", "l2"))
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
