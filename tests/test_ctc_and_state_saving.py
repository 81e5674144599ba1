"""ctc_greedy_decoder / ctc_unique_labels against NumPy loops; static_state_saving_rnn."""

import numpy as np
import pytest

import nbflow as tf

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def numpy_greedy(logits, lengths, merge_repeated):
    """TensorFlow's CTCGreedyDecoder kernel, one row at a time."""
    blank = logits.shape[2] - 1
    rows, neg_sums = [], []
    for b, length in enumerate(lengths):
        row, previous, total = [], -1, 0.0
        for t in range(length):
            label = int(np.argmax(logits[t, b]))
            total += logits[t, b, label]
            if label != blank and not (merge_repeated and label == previous):
                row.append(label)
            previous = label
        rows.append(row)
        neg_sums.append([-total])
    return rows, np.array(neg_sums)


@pytest.mark.parametrize("merge_repeated", [True, False])
def test_ctc_greedy_decoder_matches_tensorflows_kernel(merge_repeated):
    logits = RNG.standard_normal((7, 4, 3))  # few classes, so repeats and blanks occur
    lengths = np.array([7, 3, 0, 5])
    (decoded,), neg_sum = tf.nn.ctc_greedy_decoder(logits, lengths, merge_repeated)
    with tf.Session() as sess:
        got, got_neg = sess.run([decoded, neg_sum])
    rows, want_neg = numpy_greedy(logits, lengths, merge_repeated)
    want_indices = [[b, i] for b, row in enumerate(rows) for i in range(len(row))]
    np.testing.assert_array_equal(got.indices.reshape(-1, 2), np.array(want_indices).reshape(-1, 2))
    np.testing.assert_array_equal(got.values, [v for row in rows for v in row])
    np.testing.assert_array_equal(got.dense_shape, [4, max(len(r) for r in rows)])
    np.testing.assert_allclose(got_neg, want_neg)


def test_ctc_unique_labels_in_order_of_first_appearance():
    labels = np.array([[3, 1, 3, 2], [5, 5, 5, 5]])
    unique, index = tf.nn.ctc_unique_labels(labels)
    with tf.Session() as sess:
        got_unique, got_index = sess.run([unique, index])
    np.testing.assert_array_equal(got_unique, [[3, 1, 2, 0], [5, 0, 0, 0]])
    np.testing.assert_array_equal(got_index, [[0, 1, 0, 2], [0, 0, 0, 0]])


class DictStateSaver:
    """The state-saver protocol over variables: state(name), save_state(name, value)."""

    def __init__(self, size):
        self.variables = {"h": tf.Variable(np.ones((2, size), np.float32), name="saved_h")}

    def state(self, name):
        return self.variables[name].read_value()

    def save_state(self, name, value):
        return tf.assign(self.variables[name], value)


def test_static_state_saving_rnn_starts_from_and_saves_the_state():
    saver = DictStateSaver(3)
    cell = tf.nn.rnn_cell.BasicRNNCell(3)
    inputs = [tf.constant(RNG.standard_normal((2, 2)), tf.float32) for _ in range(2)]
    outputs, state = tf.nn.static_state_saving_rnn(cell, inputs, saver, "h")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, bias = sess.run(tf.trainable_variables()[-2:])  # the cell's, made last
        xs = sess.run(inputs)
        last, final = sess.run([outputs[-1], state])
        saved = sess.run(saver.variables["h"])
    h = np.ones((2, 3))
    for x in xs:
        h = np.tanh(np.concatenate([x, h], axis=1) @ kernel + bias)
    np.testing.assert_allclose(last, h, rtol=1e-5, atol=1e-6)  # float32 against float64
    np.testing.assert_allclose(saved, final)
