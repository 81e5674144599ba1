"""GradientDescentOptimizer: var -= learning_rate * grad (sparse: only the gradient's rows)."""

from __future__ import annotations

from typing import Any

from nbflow.framework import ops as ops_lib
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
        self._hyper["learning_rate"] = self._hyper_tensor("learning_rate", self._learning_rate)

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return _update(
            "ApplyGradientDescent",
            [var._ref(), self._cast("learning_rate", var), grad],
            self._use_locking,
        )

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        return _update(
            "SparseApplyGradientDescent",
            [var._ref(), self._cast("learning_rate", var), grad.values, grad.indices],
            self._use_locking,
        )


def _update(op_type: str, inputs: list[Any], use_locking: bool, **attrs: Any) -> Any:
    """Create a fused update op (named after its type inside the update_<var> scope)."""
    graph = ops_lib.get_default_graph()
    return graph.create_op(op_type, inputs, {"use_locking": use_locking, **attrs}).outputs[0].op
