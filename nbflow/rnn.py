"""``tf.nn.rnn_cell``, ``tf.nn.dynamic_rnn`` and ``tf.nn.static_rnn``.

A cell maps ``(inputs, state)`` to ``(output, new_state)`` and creates its variables with
``get_variable`` under its own scope the first time it is called (TensorFlow 1.x's names:
``rnn/basic_lstm_cell/kernel``...). ``dynamic_rnn`` runs a cell over time inside one
``while_loop`` (OSDI §3.4), reading the inputs from one TensorArray and writing the outputs to
another, so the graph does not grow with the sequence length; past a sequence's
``sequence_length`` its outputs are zeros and its state is carried through unchanged.
``static_rnn`` unrolls the same cell in Python.

    cell = tf.nn.rnn_cell.BasicLSTMCell(64)
    outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Sequence
from typing import Any

from nbflow import nn_impl
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.ops import array_ops, clip_ops, control_flow_ops, init_ops, math_ops, variable_scope
from nbflow.ops.sequence_ops import reverse_sequence
from nbflow.ops.tensor_array_ops import TensorArray

Tensor = ops_lib.Tensor


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM's state: the memory cell ``c`` and the output ``h``."""

    __slots__ = ()

    @property
    def dtype(self) -> dtypes.DType:
        return self.c.dtype


# Nested states (LSTMStateTuple, MultiRNNCell's tuples) flatten and rebuild like loop variables.
_flat = control_flow_ops._flatten
_pack = control_flow_ops._pack_as


def _depth(t: Tensor) -> int:
    depth = t.shape.with_rank_at_least(2)[-1]
    if depth is None:
        raise ValueError(f"The last dimension of the RNN input {t.name} must be known: {t.shape}")
    return depth


def _linear(args: list[Tensor], units: int, bias_start: Any = 0.0, kernel_init=None) -> Tensor:
    """concat(args) @ kernel + bias with TensorFlow's variable names ``kernel`` and ``bias``."""
    depth = sum(_depth(a) for a in args)
    dtype = args[0].dtype.base_dtype
    kernel = variable_scope.get_variable("kernel", [depth, units], dtype, initializer=kernel_init)
    bias = variable_scope.get_variable(
        "bias", [units], dtype, initializer=init_ops.constant_initializer(bias_start)
    )
    joined = args[0] if len(args) == 1 else array_ops.concat(args, 1)
    return math_ops.matmul(joined, kernel) + bias


# --- cells ----------------------------------------------------------------------------------------
class RNNCell:
    """The cell protocol: ``state_size``, ``output_size``, ``zero_state``, ``call``."""

    default_name = "rnn_cell"

    def __init__(self, reuse: Any = None, name: str | None = None, dtype: Any = None):
        self._reuse = reuse
        self._name = name
        self._scope: Any = None  # the VariableScope of the first call, re-entered later
        self._dtype = dtype

    @property
    def state_size(self) -> Any:
        raise NotImplementedError

    @property
    def output_size(self) -> int:
        raise NotImplementedError

    def call(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        raise NotImplementedError

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Tensor, Any]:
        inputs = ops_lib.convert_to_tensor(inputs)
        if scope is not None:
            with variable_scope.variable_scope(scope, reuse=self._reuse):
                return self.call(inputs, state)
        if self._scope is None:
            with variable_scope.variable_scope(
                self._name, default_name=self.default_name, reuse=self._reuse
            ) as vs:
                self._scope = vs
                return self.call(inputs, state)
        with variable_scope.variable_scope(self._scope, reuse=True):
            return self.call(inputs, state)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """Zeros shaped like ``state_size`` for a batch of ``batch_size``."""
        with ops_lib.name_scope(None, f"{type(self).__name__}ZeroState"):
            return _zeros_like_size(self.state_size, batch_size, dtypes.as_dtype(dtype))


def _zeros_like_size(size: Any, batch_size: Any, dtype: dtypes.DType) -> Any:
    if isinstance(size, LSTMStateTuple):
        return LSTMStateTuple(*[_zeros_like_size(s, batch_size, dtype) for s in size])
    if isinstance(size, (list, tuple)):
        return type(size)(_zeros_like_size(s, batch_size, dtype) for s in size)
    zeros = array_ops.zeros(array_ops.stack([batch_size, size]), dtype=dtype)
    static = batch_size if isinstance(batch_size, int) else None
    zeros.set_shape([static, size])
    return zeros


def _activation(activation: Callable[[Tensor], Tensor] | None) -> Callable[[Tensor], Tensor]:
    return activation if activation is not None else math_ops.tanh


class BasicRNNCell(RNNCell):
    """output = new_state = activation(W [inputs, state] + b)."""

    default_name = "basic_rnn_cell"

    def __init__(self, num_units: int, activation=None, reuse=None, name=None, dtype=None):
        super().__init__(reuse, name, dtype)
        self._num_units = num_units
        self._act = _activation(activation)

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def call(self, inputs: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        output = self._act(_linear([inputs, state], self._num_units))
        return output, output


class GRUCell(RNNCell):
    """Gated recurrent unit (Cho et al. 2014) with TensorFlow's gate layout and initial biases."""

    default_name = "gru_cell"

    def __init__(
        self,
        num_units: int,
        activation=None,
        reuse=None,
        kernel_initializer=None,
        bias_initializer=None,
        name=None,
        dtype=None,
    ):
        super().__init__(reuse, name, dtype)
        self._num_units = num_units
        self._act = _activation(activation)
        self._kernel_init = kernel_initializer
        self._bias_init = bias_initializer

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def call(self, inputs: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        with variable_scope.variable_scope("gates"):
            gates = math_ops.sigmoid(
                _linear([inputs, state], 2 * self._num_units, 1.0, self._kernel_init)
            )
        r, u = array_ops.split(gates, 2, axis=1)
        with variable_scope.variable_scope("candidate"):
            c = self._act(_linear([inputs, r * state], self._num_units, 0.0, self._kernel_init))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class BasicLSTMCell(RNNCell):
    """LSTM (Hochreiter & Schmidhuber 1997) without peepholes; gates in TF's order i, j, f, o."""

    default_name = "basic_lstm_cell"

    def __init__(
        self,
        num_units: int,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation=None,
        reuse=None,
        name=None,
        dtype=None,
    ):
        super().__init__(reuse, name, dtype)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._act = _activation(activation)

    @property
    def state_size(self) -> Any:
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self) -> int:
        return self._num_units

    def _split_state(self, state: Any) -> tuple[Tensor, Tensor]:
        if self._state_is_tuple:
            return state
        c, h = array_ops.split(state, 2, axis=1)
        return c, h

    def _join_state(self, c: Tensor, h: Tensor) -> Any:
        return LSTMStateTuple(c, h) if self._state_is_tuple else array_ops.concat([c, h], 1)

    def call(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        c, h = self._split_state(state)
        i, j, f, o = array_ops.split(_linear([inputs, h], 4 * self._num_units), 4, axis=1)
        sigmoid = math_ops.sigmoid
        new_c = c * sigmoid(f + self._forget_bias) + sigmoid(i) * self._act(j)
        new_h = self._act(new_c) * sigmoid(o)
        return new_h, self._join_state(new_c, new_h)


class LSTMCell(BasicLSTMCell):
    """LSTM with optional peepholes, cell clipping and an output projection (Sak et al. 2014)."""

    default_name = "lstm_cell"

    def __init__(
        self,
        num_units: int,
        use_peepholes: bool = False,
        cell_clip: float | None = None,
        initializer=None,
        num_proj: int | None = None,
        proj_clip: float | None = None,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation=None,
        reuse=None,
        name=None,
        dtype=None,
    ):
        super().__init__(num_units, forget_bias, state_is_tuple, activation, reuse, name, dtype)
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip

    @property
    def state_size(self) -> Any:
        h = self._num_proj or self._num_units
        return LSTMStateTuple(self._num_units, h) if self._state_is_tuple else self._num_units + h

    @property
    def output_size(self) -> int:
        return self._num_proj or self._num_units

    def _split_state(self, state: Any) -> tuple[Tensor, Tensor]:
        if self._state_is_tuple:
            return state
        h = self._num_proj or self._num_units
        c, m = array_ops.split(state, [self._num_units, h], axis=1)
        return c, m

    def call(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        c, m = self._split_state(state)
        gates = _linear([inputs, m], 4 * self._num_units, 0.0, self._initializer)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        sigmoid, dtype, n = math_ops.sigmoid, c.dtype.base_dtype, self._num_units
        if self._use_peepholes:
            w_f, w_i, w_o = (
                variable_scope.get_variable(name, [n], dtype, initializer=self._initializer)
                for name in ("w_f_diag", "w_i_diag", "w_o_diag")
            )
            new_c = sigmoid(f + self._forget_bias + w_f * c) * c + sigmoid(i + w_i * c) * self._act(
                j
            )
        else:
            new_c = sigmoid(f + self._forget_bias) * c + sigmoid(i) * self._act(j)
        if self._cell_clip is not None:
            new_c = clip_ops.clip_by_value(new_c, -self._cell_clip, self._cell_clip)
        peephole_o = o + w_o * new_c if self._use_peepholes else o
        new_m = sigmoid(peephole_o) * self._act(new_c)
        if self._num_proj is not None:
            with variable_scope.variable_scope("projection"):
                kernel = variable_scope.get_variable(
                    "kernel", [n, self._num_proj], dtype, initializer=self._initializer
                )
            new_m = math_ops.matmul(new_m, kernel)
            if self._proj_clip is not None:
                new_m = clip_ops.clip_by_value(new_m, -self._proj_clip, self._proj_clip)
        return new_m, self._join_state(new_c, new_m)


class MultiRNNCell(RNNCell):
    """Cells stacked: each cell's output is the next one's input (scopes ``cell_0``...)."""

    default_name = "multi_rnn_cell"

    def __init__(self, cells: Sequence[RNNCell], state_is_tuple: bool = True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(isinstance(c.state_size, tuple) for c in self._cells):
            raise ValueError("state_is_tuple=False needs cells whose states are single tensors")

    @property
    def state_size(self) -> Any:
        sizes = tuple(cell.state_size for cell in self._cells)
        return sizes if self._state_is_tuple else sum(sizes)

    @property
    def output_size(self) -> int:
        return self._cells[-1].output_size

    def call(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        if self._state_is_tuple:
            states = list(state)
        else:
            states = array_ops.split(state, [c.state_size for c in self._cells], axis=1)
        new_states = []
        for k, (cell, s) in enumerate(zip(self._cells, states)):
            with variable_scope.variable_scope(f"cell_{k}"):
                inputs, s = cell(inputs, s)
            new_states.append(s)
        if self._state_is_tuple:
            return inputs, tuple(new_states)
        return inputs, array_ops.concat(new_states, 1)


class DropoutWrapper(RNNCell):
    """Dropout on a cell's inputs, outputs and state, with keep probabilities as in TF1."""

    def __init__(
        self,
        cell: RNNCell,
        input_keep_prob: Any = 1.0,
        output_keep_prob: Any = 1.0,
        state_keep_prob: Any = 1.0,
        seed: int | None = None,
    ):
        super().__init__()
        self._cell = cell
        self._keep = (input_keep_prob, output_keep_prob, state_keep_prob)
        self._seed = seed

    @property
    def state_size(self) -> Any:
        return self._cell.state_size

    @property
    def output_size(self) -> int:
        return self._cell.output_size

    def _dropout(self, x: Any, keep: Any) -> Any:
        if isinstance(keep, (int, float)) and keep == 1.0:
            return x
        return _pack(x, [nn_impl.dropout(t, keep_prob=keep, seed=self._seed) for t in _flat(x)])

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Tensor, Any]:
        inputs = self._dropout(ops_lib.convert_to_tensor(inputs), self._keep[0])
        output, new_state = self._cell(inputs, state, scope=scope)
        return self._dropout(output, self._keep[1]), self._dropout(new_state, self._keep[2])


# --- running a cell over time ---------------------------------------------------------------------
def _initial_state(cell: RNNCell, batch: Any, initial_state: Any, dtype: Any) -> Any:
    if initial_state is not None:
        return initial_state
    if dtype is None:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    return cell.zero_state(batch, dtype)


def _select_rows(done: Tensor, old: Tensor, new: Tensor) -> Tensor:
    """Rows of ``old`` where ``done`` (a [batch] bool), else rows of ``new``."""
    return array_ops.where(done, old, new)


def dynamic_rnn(
    cell: RNNCell,
    inputs: Any,
    sequence_length: Any = None,
    initial_state: Any = None,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
) -> tuple[Tensor, Any]:
    """Run ``cell`` over the time axis of ``inputs`` in a ``while_loop``: (outputs, state).

    ``inputs`` is [batch, time, depth] ([time, batch, depth] with ``time_major``); outputs have
    the same layout with the cell's ``output_size`` as depth.
    """
    with variable_scope.variable_scope(scope or "rnn"):
        inputs = ops_lib.convert_to_tensor(inputs, name="inputs")
        if not time_major:
            inputs = array_ops.transpose(inputs, [1, 0, 2])
        steps, batch = array_ops.shape(inputs)[0], array_ops.shape(inputs)[1]
        state = _initial_state(cell, batch, initial_state, dtype)
        dtype = _flat(state)[0].dtype.base_dtype
        lengths = None
        if sequence_length is not None:
            lengths = math_ops.cast(sequence_length, dtypes.int32, name="sequence_length")
        static_time, static_batch = inputs.shape.dims[0].value, inputs.shape.dims[1].value
        depth = _depth(inputs)
        input_ta = TensorArray(inputs.dtype, size=steps, element_shape=[static_batch, depth])
        input_ta = input_ta.unstack(inputs)
        output_ta = TensorArray(dtype, size=steps, element_shape=[static_batch, cell.output_size])

        def body(t: Tensor, outputs: TensorArray, *flat_state: Tensor) -> Any:
            old = _pack(state, list(flat_state))
            x_t = input_ta.read(t)
            x_t.set_shape([static_batch, depth])
            output, new = cell(x_t, old)
            new_flat = _flat(new)
            if lengths is not None:
                done = t >= lengths
                output = _select_rows(done, array_ops.zeros_like(output), output)
                new_flat = [_select_rows(done, o, n) for o, n in zip(flat_state, new_flat)]
            for o, n in zip(flat_state, new_flat):
                n.set_shape(o.shape)
            return (t + 1, outputs.write(t, output), *new_flat)

        loop = control_flow_ops.while_loop(
            lambda t, *_: t < steps,
            body,
            [array_ops.constant(0, name="time"), output_ta, *_flat(state)],
            parallel_iterations=parallel_iterations or 32,
            swap_memory=swap_memory,
        )
        outputs = loop[1].stack()
        outputs.set_shape([static_time, static_batch, cell.output_size])
        if not time_major:
            outputs = array_ops.transpose(outputs, [1, 0, 2])
        return outputs, _pack(state, list(loop[2:]))


def static_rnn(
    cell: RNNCell,
    inputs: Sequence[Any],
    initial_state: Any = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list[Tensor], Any]:
    """Unroll ``cell`` over a Python list of [batch, depth] inputs: (list of outputs, state)."""
    if not inputs:
        raise ValueError("static_rnn needs at least one input")
    with variable_scope.variable_scope(scope or "rnn"):
        inputs = [ops_lib.convert_to_tensor(x) for x in inputs]
        batch = array_ops.shape(inputs[0])[0]
        state = _initial_state(cell, batch, initial_state, dtype)
        lengths = None
        if sequence_length is not None:
            lengths = math_ops.cast(sequence_length, dtypes.int32, name="sequence_length")
        outputs = []
        for t, x_t in enumerate(inputs):
            output, new = cell(x_t, state)
            if lengths is not None:
                done = t >= lengths
                output = _select_rows(done, array_ops.zeros_like(output), output)
                new = _pack(
                    state, [_select_rows(done, o, n) for o, n in zip(_flat(state), _flat(new))]
                )
            outputs.append(output)
            state = new
        return outputs, state


# --- both directions ----------------------------------------------------------------------------
def _reverse_time(x: Tensor, lengths: Any, time_axis: int, batch_axis: int) -> Tensor:
    """``x`` with each sequence's first ``lengths[b]`` steps reversed (all steps if None)."""
    if lengths is None:
        return array_ops.reverse_v2(x, [time_axis])
    lengths = math_ops.cast(lengths, dtypes.int64)
    return reverse_sequence(x, lengths, seq_axis=time_axis, batch_axis=batch_axis)


def bidirectional_dynamic_rnn(
    cell_fw: RNNCell,
    cell_bw: RNNCell,
    inputs: Any,
    sequence_length: Any = None,
    initial_state_fw: Any = None,
    initial_state_bw: Any = None,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
) -> tuple[tuple[Tensor, Tensor], tuple[Any, Any]]:
    """``dynamic_rnn`` forwards (``cell_fw``) and over the time-reversed inputs (``cell_bw``,
    whose outputs are reversed back): ((outputs_fw, outputs_bw), (state_fw, state_bw)).

    Variables live under ``bidirectional_rnn/fw/...`` and ``bidirectional_rnn/bw/...``, as in
    TensorFlow, so checkpoints carry over.
    """
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)
    with variable_scope.variable_scope(scope or "bidirectional_rnn"):
        common = {
            "sequence_length": sequence_length,
            "dtype": dtype,
            "parallel_iterations": parallel_iterations,
            "swap_memory": swap_memory,
            "time_major": time_major,
        }
        with variable_scope.variable_scope("fw") as fw_scope:
            outputs_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, initial_state=initial_state_fw, scope=fw_scope, **common
            )
        with variable_scope.variable_scope("bw") as bw_scope:
            inputs = ops_lib.convert_to_tensor(inputs, name="inputs")
            reversed_inputs = _reverse_time(inputs, sequence_length, time_axis, batch_axis)
            reversed_outputs, state_bw = dynamic_rnn(
                cell_bw, reversed_inputs, initial_state=initial_state_bw, scope=bw_scope, **common
            )
    outputs_bw = _reverse_time(reversed_outputs, sequence_length, time_axis, batch_axis)
    return (outputs_fw, outputs_bw), (state_fw, state_bw)


def static_bidirectional_rnn(
    cell_fw: RNNCell,
    cell_bw: RNNCell,
    inputs: Sequence[Any],
    initial_state_fw: Any = None,
    initial_state_bw: Any = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list[Tensor], Any, Any]:
    """``static_rnn`` in both directions over a list of [batch, depth] inputs: (outputs, state_fw,
    state_bw), each output the forward and backward outputs of its step concatenated."""
    if not inputs:
        raise ValueError("inputs must not be empty")

    def reverse(steps: Sequence[Any]) -> list[Tensor]:
        if sequence_length is None:
            return list(reversed(steps))
        stacked = _reverse_time(array_ops.stack(list(steps)), sequence_length, 0, 1)
        return array_ops.unstack(stacked, num=len(steps))

    with variable_scope.variable_scope(scope or "bidirectional_rnn"):
        with variable_scope.variable_scope("fw") as fw_scope:
            outputs_fw, state_fw = static_rnn(
                cell_fw, inputs, initial_state_fw, dtype, sequence_length, scope=fw_scope
            )
        with variable_scope.variable_scope("bw") as bw_scope:
            reversed_outputs, state_bw = static_rnn(
                cell_bw, reverse(inputs), initial_state_bw, dtype, sequence_length, scope=bw_scope
            )
    outputs_bw = reverse(reversed_outputs)
    outputs = [array_ops.concat([fw, bw], 1) for fw, bw in zip(outputs_fw, outputs_bw)]
    return outputs, state_fw, state_bw
