"""``tf.nn.static_state_saving_rnn``: a static RNN whose state lives in a state saver.

Truncated back-propagation over long sequences (TensorFlow's ``SequenceQueueingStateSaver``)
splits each sequence into segments; the RNN of one segment starts from the state the saver
holds for it and hands its final state back. Any object with ``state(name)`` and
``save_state(name, value)`` serves; the saves run before the last output can be read, so a
step that fetches the outputs also stores the state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Tensor
from nbflow.ops import array_ops, control_flow_ops
from nbflow.rnn import RNNCell, static_rnn

__all__ = ["static_state_saving_rnn"]


def static_state_saving_rnn(
    cell: RNNCell,
    inputs: Sequence[Any],
    state_saver: Any,
    state_name: Any,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list[Tensor], Any]:
    """``static_rnn`` from ``state_saver.state(state_name)``, saving the final state back.

    With a tuple ``state_size``, ``state_name`` is a matching tuple of names.
    """
    flat_sizes = control_flow_ops._flatten(cell.state_size)
    names = list(state_name) if isinstance(state_name, (tuple, list)) else [state_name]
    if len(names) != len(flat_sizes):
        raise ValueError(
            f"state_name should have {len(flat_sizes)} names for the cell's state_size "
            f"{cell.state_size}, got {state_name!r}"
        )
    flat_initial = [state_saver.state(name) for name in names]
    initial = control_flow_ops._pack_as(cell.state_size, flat_initial)
    outputs, state = static_rnn(
        cell, inputs, initial_state=initial, sequence_length=sequence_length, scope=scope
    )
    saves = [
        state_saver.save_state(name, value)
        for name, value in zip(names, control_flow_ops._flatten(state), strict=True)
    ]
    with ops_lib.control_dependencies(saves):
        outputs[-1] = array_ops.identity(outputs[-1])
    return outputs, state
