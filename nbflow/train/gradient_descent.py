"""GradientDescentOptimizer: var -= learning_rate * grad (sparse: only the gradient's rows)."""

from __future__ import annotations

from typing import Any

from nbflow.train.optimizer import Optimizer


class GradientDescentOptimizer(Optimizer):
    """Plain SGD.

    >>> import nbflow as tf
    >>> opt = tf.train.GradientDescentOptimizer(0.1)
    >>> opt.get_name()
    'GradientDescent'
    """

    def __init__(
        self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent"
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _prepare(self) -> None:
        self._set_hyper(learning_rate=self._learning_rate)

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        lr = self._cast("learning_rate", var)
        return self._update_op("ApplyGradientDescent", [var._ref(), lr, grad])

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        lr = self._cast("learning_rate", var)
        inputs = [var._ref(), lr, grad.values, grad.indices]
        return self._update_op("SparseApplyGradientDescent", inputs)
