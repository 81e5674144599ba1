"""Bidirectional RNNs against a NumPy loop in both directions, and TensorFlow 1.x's names."""

import numpy as np
import pytest

import nbflow as tf

UNITS, DEPTH = 4, 3


def _numpy_rnn(kernel, bias, x, lengths, reverse):
    """Batch-major BasicRNNCell over each sequence's first lengths[b] steps; zeros after."""
    batch, steps, _ = x.shape
    outputs = np.zeros((batch, steps, UNITS))
    states = np.zeros((batch, UNITS))
    for b in range(batch):
        h = np.zeros(UNITS)
        order = range(lengths[b])[::-1] if reverse else range(lengths[b])
        for t in order:
            h = np.tanh(np.concatenate([x[b, t], h]) @ kernel + bias)
            outputs[b, t] = h
        states[b] = h
    return outputs, states


def _weights(sess, direction):
    scope = f"bidirectional_rnn/{direction}/basic_rnn_cell"
    found = {v.op.name: v for v in tf.global_variables()}
    return sess.run(found[f"{scope}/kernel"]), sess.run(found[f"{scope}/bias"])


@pytest.mark.parametrize("time_major", [False, True])
def test_bidirectional_dynamic_rnn_runs_each_direction(time_major):
    x = np.random.default_rng(0).standard_normal((3, 5, DEPTH)).astype(np.float32)
    lengths = np.array([5, 2, 0])
    fed = x.transpose(1, 0, 2) if time_major else x
    cell_fw, cell_bw = tf.nn.rnn_cell.BasicRNNCell(UNITS), tf.nn.rnn_cell.BasicRNNCell(UNITS)
    (out_fw, out_bw), (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(
        cell_fw, cell_bw, fed, sequence_length=lengths, dtype=tf.float32, time_major=time_major
    )
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([tf.assign(v, tf.random_normal(v.shape, seed=1)) for v in tf.global_variables()])
        got = sess.run([out_fw, out_bw, state_fw, state_bw])
        weights = {d: _weights(sess, d) for d in ("fw", "bw")}
    if time_major:
        got[0], got[1] = got[0].transpose(1, 0, 2), got[1].transpose(1, 0, 2)
    fw, fw_state = _numpy_rnn(*weights["fw"], x, lengths, reverse=False)
    bw, bw_state = _numpy_rnn(*weights["bw"], x, lengths, reverse=True)
    for ours, expected in zip(got, (fw, bw, fw_state, bw_state)):
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)


def test_static_bidirectional_rnn_concatenates_directions():
    x = np.random.default_rng(1).standard_normal((2, 4, DEPTH)).astype(np.float32)
    lengths = np.array([4, 3])
    inputs = [tf.constant(x[:, t]) for t in range(4)]
    outputs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(
        tf.nn.rnn_cell.BasicRNNCell(UNITS),
        tf.nn.rnn_cell.BasicRNNCell(UNITS),
        inputs,
        sequence_length=lengths,
        dtype=tf.float32,
    )
    assert len(outputs) == 4 and outputs[0].shape.as_list() == [2, 2 * UNITS]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(outputs)
        weights = {d: _weights(sess, d) for d in ("fw", "bw")}
    fw, _ = _numpy_rnn(*weights["fw"], x, lengths, reverse=False)
    bw, _ = _numpy_rnn(*weights["bw"], x, lengths, reverse=True)
    np.testing.assert_allclose(np.stack(got, 1), np.concatenate([fw, bw], -1), atol=1e-5)


def test_variable_names_are_tensorflows():
    x = tf.placeholder(tf.float32, [None, 3, DEPTH])
    tf.nn.bidirectional_dynamic_rnn(
        tf.nn.rnn_cell.BasicLSTMCell(UNITS), tf.nn.rnn_cell.GRUCell(UNITS), x, dtype=tf.float32
    )
    assert sorted(v.op.name for v in tf.trainable_variables()) == [
        "bidirectional_rnn/bw/gru_cell/candidate/bias",
        "bidirectional_rnn/bw/gru_cell/candidate/kernel",
        "bidirectional_rnn/bw/gru_cell/gates/bias",
        "bidirectional_rnn/bw/gru_cell/gates/kernel",
        "bidirectional_rnn/fw/basic_lstm_cell/bias",
        "bidirectional_rnn/fw/basic_lstm_cell/kernel",
    ]
