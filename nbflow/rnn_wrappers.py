"""Cell wrappers of ``tf.nn.rnn_cell`` that change where or how a wrapped cell's output is made.

``ResidualWrapper`` adds the cell's input to its output (He et al.'s residual connection, across
time steps of a deep RNN); ``DeviceWrapper`` builds the wrapped cell's ops on one device (the
placement stacked LSTMs used to spread layers over GPUs). Both forward ``state_size`` and
``output_size`` and leave the wrapped cell's variables where the cell puts them.

    >>> import nbflow as tf
    >>> cell = tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.BasicRNNCell(3))
    >>> cell.output_size
    3
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Tensor
from nbflow.ops import math_ops
from nbflow.rnn import RNNCell


class _Wrapper(RNNCell):
    def __init__(self, cell: RNNCell):
        super().__init__()
        self._cell = cell

    @property
    def state_size(self) -> Any:
        return self._cell.state_size

    @property
    def output_size(self) -> Any:
        return self._cell.output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        return self._cell.zero_state(batch_size, dtype)


class ResidualWrapper(_Wrapper):
    """A cell whose output is ``residual_fn(inputs, cell_output)``, by default their sum.

    The input and the cell's output must have the same shape (TF's requirement too).
    """

    def __init__(self, cell: RNNCell, residual_fn: Callable[[Any, Any], Any] | None = None):
        super().__init__(cell)
        self._residual_fn = residual_fn or (lambda inputs, output: math_ops.add(inputs, output))

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Tensor, Any]:
        inputs = ops_lib.convert_to_tensor(inputs)
        output, new_state = self._cell(inputs, state, scope=scope)
        inputs.shape.assert_is_compatible_with(output.shape)
        return self._residual_fn(inputs, output), new_state


class DeviceWrapper(_Wrapper):
    """A cell whose ops (and zero state) are placed on ``device``."""

    def __init__(self, cell: RNNCell, device: str):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with ops_lib.device(self._device):
            return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Tensor, Any]:
        with ops_lib.device(self._device):
            return self._cell(inputs, state, scope=scope)
