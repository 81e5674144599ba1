"""tf.nn.rnn_cell and dynamic_rnn/static_rnn against NumPy re-implementations of TF1's cells."""

import numpy as np
import pytest

import nbflow as tf

BATCH, TIME, DEPTH, UNITS = 3, 5, 4, 6


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _numpy_basic_rnn(v, x, h):
    return np.tanh(np.concatenate([x, h], 1) @ v["kernel"] + v["bias"]), None


def _numpy_gru(v, x, h):
    gates = _sigmoid(np.concatenate([x, h], 1) @ v["gates/kernel"] + v["gates/bias"])
    r, u = np.split(gates, 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ v["candidate/kernel"] + v["candidate/bias"])
    return u * h + (1 - u) * c, None


def _numpy_lstm(v, x, state, forget_bias=1.0, peepholes=False, clip=None, proj=False):
    c, h = state
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ v["kernel"] + v["bias"], 4, axis=1)
    if peepholes:
        f, i = f + v["w_f_diag"] * c, i + v["w_i_diag"] * c
    c = _sigmoid(f + forget_bias) * c + _sigmoid(i) * np.tanh(j)
    if clip is not None:
        c = np.clip(c, -clip, clip)
    if peepholes:
        o = o + v["w_o_diag"] * c
    h = _sigmoid(o) * np.tanh(c)
    if proj:
        h = h @ v["projection/kernel"]
    return h, (c, h)


def _run_numpy(step, v, x, lengths, state):
    """Time-major NumPy loop with dynamic_rnn's rules past each sequence's length."""
    outputs = []
    for t in range(x.shape[0]):
        new_h, new_state = step(v, x[t], state)
        done = (t >= lengths)[:, None]
        outputs.append(np.where(done, 0.0, new_h))
        if new_state is None:
            state = np.where(done, state, new_h)
        else:
            state = tuple(np.where(done, old, new) for old, new in zip(state, new_state))
    return np.stack(outputs), state


def _variables(sess, scope):
    return {
        v.op.name[len(scope) + 1 :]: sess.run(v) for v in tf.global_variables() if scope in v.name
    }


CELLS = {
    "basic_rnn": (lambda: tf.nn.rnn_cell.BasicRNNCell(UNITS), _numpy_basic_rnn, False),
    "gru": (lambda: tf.nn.rnn_cell.GRUCell(UNITS), _numpy_gru, False),
    "basic_lstm": (lambda: tf.nn.rnn_cell.BasicLSTMCell(UNITS), _numpy_lstm, True),
}


@pytest.mark.parametrize("kind", sorted(CELLS))
@pytest.mark.parametrize("time_major", [False, True])
def test_dynamic_rnn_matches_numpy(kind, time_major):
    make_cell, numpy_step, is_lstm = CELLS[kind]
    rng = np.random.default_rng(0)
    x_value = rng.standard_normal((TIME, BATCH, DEPTH))
    lengths = np.array([5, 2, 0])
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float64, [TIME, BATCH, DEPTH] if time_major else [BATCH, TIME, DEPTH])
        cell = make_cell()
        outputs, state = tf.nn.dynamic_rnn(
            cell, x, sequence_length=lengths, dtype=tf.float64, time_major=time_major
        )
        assert outputs.shape.as_list() == (
            [TIME, BATCH, UNITS] if time_major else [BATCH, TIME, UNITS]
        )
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            fed = x_value if time_major else x_value.transpose(1, 0, 2)
            out, final = sess.run([outputs, state], {x: fed})
            variables = _variables(sess, f"rnn/{cell.default_name}")
    zeros = np.zeros((BATCH, UNITS))
    expected, expected_state = _run_numpy(
        numpy_step, variables, x_value, lengths, (zeros, zeros) if is_lstm else zeros
    )
    if not time_major:
        out = out.transpose(1, 0, 2)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)
    if is_lstm:
        assert isinstance(final, tf.nn.rnn_cell.LSTMStateTuple)
        np.testing.assert_allclose(final.c, expected_state[0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(final.h, expected_state[1], rtol=1e-10, atol=1e-12)
    else:
        np.testing.assert_allclose(final, expected_state, rtol=1e-10, atol=1e-12)


def test_lstm_cell_with_peepholes_clip_and_projection():
    rng = np.random.default_rng(2)
    x_value = rng.standard_normal((TIME, BATCH, DEPTH))
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float64, [TIME, BATCH, DEPTH])
        cell = tf.nn.rnn_cell.LSTMCell(
            UNITS, use_peepholes=True, cell_clip=0.5, num_proj=3, forget_bias=0.5
        )
        outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64, time_major=True)
        assert outputs.shape.as_list() == [TIME, BATCH, 3]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for v in tf.global_variables():
                if "_diag" in v.name:  # peepholes start at zero in TF1; make them count
                    sess.run(v.assign(rng.standard_normal(UNITS)))
            out, final = sess.run([outputs, state], {x: x_value})
            variables = _variables(sess, "rnn/lstm_cell")
    state0 = (np.zeros((BATCH, UNITS)), np.zeros((BATCH, 3)))

    def step(v, x_t, s):
        return _numpy_lstm(v, x_t, s, 0.5, peepholes=True, clip=0.5, proj=True)

    expected, expected_state = _run_numpy(step, variables, x_value, np.full(BATCH, TIME), state0)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(final.c, expected_state[0], rtol=1e-10, atol=1e-12)


def test_multi_rnn_cell_names_and_static_rnn_agree_with_numpy():
    rng = np.random.default_rng(4)
    x_value = rng.standard_normal((TIME, BATCH, DEPTH))
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        cells = [tf.nn.rnn_cell.GRUCell(UNITS), tf.nn.rnn_cell.BasicRNNCell(UNITS)]
        cell = tf.nn.rnn_cell.MultiRNNCell(cells)
        inputs = [tf.constant(x_t) for x_t in x_value]
        outputs, state = tf.nn.static_rnn(cell, inputs, dtype=tf.float64)
        names = sorted(v.op.name for v in tf.trainable_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run(outputs)
            gru = _variables(sess, "rnn/multi_rnn_cell/cell_0/gru_cell")
            basic = _variables(sess, "rnn/multi_rnn_cell/cell_1/basic_rnn_cell")
    assert names == [
        "rnn/multi_rnn_cell/cell_0/gru_cell/candidate/bias",
        "rnn/multi_rnn_cell/cell_0/gru_cell/candidate/kernel",
        "rnn/multi_rnn_cell/cell_0/gru_cell/gates/bias",
        "rnn/multi_rnn_cell/cell_0/gru_cell/gates/kernel",
        "rnn/multi_rnn_cell/cell_1/basic_rnn_cell/bias",
        "rnn/multi_rnn_cell/cell_1/basic_rnn_cell/kernel",
    ]
    h1, h2 = np.zeros((BATCH, UNITS)), np.zeros((BATCH, UNITS))
    for t in range(TIME):
        h1, _ = _numpy_gru(gru, x_value[t], h1)
        h2, _ = _numpy_basic_rnn(basic, h1, h2)
        np.testing.assert_allclose(out[t], h2, rtol=1e-10, atol=1e-12)


def test_dynamic_rnn_gradient_matches_finite_differences():
    rng = np.random.default_rng(6)
    x_value = rng.standard_normal((2, 3, 2))
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        x = tf.placeholder(tf.float64, [2, 3, 2])
        outputs, state = tf.nn.dynamic_rnn(
            tf.nn.rnn_cell.BasicLSTMCell(3), x, sequence_length=[3, 2], dtype=tf.float64
        )
        loss = tf.reduce_sum(tf.square(outputs)) + tf.reduce_sum(state.c)
        (grad,) = tf.gradients(loss, [x])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            symbolic = sess.run(grad, {x: x_value})
            numeric = np.zeros_like(x_value)
            for i in np.ndindex(x_value.shape):
                plus, minus = x_value.copy(), x_value.copy()
                plus[i] += 1e-6
                minus[i] -= 1e-6
                numeric[i] = (sess.run(loss, {x: plus}) - sess.run(loss, {x: minus})) / 2e-6
    np.testing.assert_allclose(symbolic, numeric, rtol=1e-5, atol=1e-8)
    assert np.all(symbolic[1, 2] == 0)  # past the second sequence's length


def test_dynamic_rnn_learns_to_count_ones():
    """A GRU reads 0/1 sequences and learns their (scaled) sum; Adam cuts the loss 10x."""
    rng = np.random.default_rng(8)
    bits = rng.integers(0, 2, (64, 8, 1)).astype(np.float32)
    target = bits.sum(axis=(1, 2))[:, None] / 8
    with tf.Graph().as_default():
        tf.set_random_seed(9)
        x = tf.constant(bits)
        outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(8), x, dtype=tf.float32)
        prediction = tf.matmul(state, tf.get_variable("w", [8, 1])) + tf.get_variable("b", [1])
        loss = tf.reduce_mean(tf.square(prediction - target))
        train = tf.train.AdamOptimizer(0.03).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss)
            for _ in range(150):
                sess.run(train)
            last = sess.run(loss)
    assert last < first / 10, (first, last)


def test_dynamic_rnn_needs_a_dtype_or_an_initial_state():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="dtype"):
            tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(2), tf.zeros([1, 2, 3]))
