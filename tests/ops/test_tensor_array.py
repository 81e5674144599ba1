"""TensorArray: element ops, TensorFlow's errors, step scoping, and gradients checked against
central finite differences."""

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors


def _numeric_gradient(loss_of, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[i] += eps
        minus[i] -= eps
        grad[i] = (loss_of(plus) - loss_of(minus)) / (2 * eps)
    return grad


def _check_gradient(build, shape, seed: int = 0) -> None:
    """build(x) -> scalar loss; its tf.gradients must match central differences at a random x."""
    x_value = np.random.default_rng(seed).standard_normal(shape)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, shape)
        loss = build(x)
        (grad,) = tf.gradients(loss, [x])
        with tf.Session() as sess:
            symbolic = sess.run(grad, {x: x_value})
            numeric = _numeric_gradient(lambda v: sess.run(loss, {x: v}), x_value)
    np.testing.assert_allclose(symbolic, numeric, rtol=1e-5, atol=1e-7)


def test_write_read_stack_and_size():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False)
        for i in range(3):
            ta = ta.write(i, tf.fill([2], float(i)))
        stacked, second, size = ta.stack(), ta.read(1), ta.size()
        assert stacked.shape.as_list() == [None, 2]
        assert second.shape.as_list() == [2]
        with tf.Session() as sess:
            s, r, n = sess.run([stacked, second, size])
    np.testing.assert_array_equal(s, [[0, 0], [1, 1], [2, 2]])
    np.testing.assert_array_equal(r, [1, 1])
    assert n == 3


def test_unstack_gather_scatter_concat_split():
    value = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=4).unstack(value)
        gathered = ta.gather([3, 0])
        scattered = tf.TensorArray(tf.float32, size=2).scatter([1, 0], value[:2]).stack()
        split = tf.TensorArray(tf.float32, size=2).split(value, [1, 3])
        first = split.read(0)
        concat = tf.TensorArray(tf.float32, size=2, clear_after_read=False).split(value, [3, 1])
        with tf.Session() as sess:
            g, s, f, c = sess.run([gathered, scattered, first, concat.concat()])
    np.testing.assert_array_equal(g, value[[3, 0]])
    np.testing.assert_array_equal(s, value[[1, 0]])
    np.testing.assert_array_equal(f, value[:1])
    np.testing.assert_array_equal(c, value)


def test_each_step_gets_a_fresh_array():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        read = tf.TensorArray(tf.float32, size=1).write(0, x).read(0)
        with tf.Session() as sess:
            assert sess.run(read, {x: 1.0}) == 1.0
            assert sess.run(read, {x: 2.0}) == 2.0  # no "already written" from the last step


def test_dynamic_size_grows_and_fixed_size_does_not():
    with tf.Graph().as_default():
        grown = tf.TensorArray(tf.int32, size=0, dynamic_size=True).write(4, 7)
        fixed = tf.TensorArray(tf.int32, size=2).write(2, 7)
        with tf.Session() as sess:
            assert sess.run(grown.size()) == 5
            with pytest.raises(errors.InvalidArgumentError, match="not resizeable and size is: 2"):
                sess.run(fixed.flow)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: tf.TensorArray(tf.float32, 1).write(0, 1.0).write(0, 2.0).flow, "already been"),
        (lambda: tf.TensorArray(tf.float32, 2).write(0, 1.0).read(1), "not yet been written"),
        (lambda: tf.TensorArray(tf.float32, 1).write(0, 1.0).read(3), "array size is: 1"),
        (
            lambda: (
                tf.TensorArray(tf.float32, 2, infer_shape=False)
                .write(0, [1.0])
                .write(1, [1.0, 2.0])
                .stack()
            ),
            "inconsistent shapes",
        ),
    ],
)
def test_run_time_errors_name_the_array(build, message):
    with tf.Graph().as_default():
        fetch = build()
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=message) as info:
                sess.run(fetch)
    assert "TensorArray" in str(info.value)


def test_reading_twice_needs_clear_after_read_false():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=1).write(0, 3.0)
        twice = ta.read(0) + ta.read(0)
        kept = tf.TensorArray(tf.float32, size=1, clear_after_read=False).write(0, 3.0)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="clear_after_read"):
                sess.run(twice)
            assert sess.run(kept.read(0) + kept.read(0)) == 6.0


def test_graph_time_dtype_and_shape_checks():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=2)
        with pytest.raises(errors.InvalidArgumentError, match="dtype is float32"):
            ta.write(0, tf.constant(1, tf.int32))
        ta = ta.write(0, tf.zeros([2, 3]))
        with pytest.raises(ValueError, match="Inconsistent shapes"):
            ta.write(1, tf.zeros([3]))


def test_closed_array_rejects_reads():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=1).write(0, 1.0)
        close = ta.close()
        with tf.control_dependencies([close]):
            read = ta.read(0)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="closed"):
                sess.run(read)


def test_gradient_through_unstack_read_write_stack():
    def build(x):
        ta = tf.TensorArray(tf.float64, size=4).unstack(x)
        a, b = ta.read(1) * 2.0, ta.read(3)
        out = tf.TensorArray(tf.float64, size=2).write(0, a).write(1, b * b).stack()
        return tf.reduce_sum(out * out)

    _check_gradient(build, (4, 3))


def test_gradient_through_gather_scatter():
    def build(x):
        ta = tf.TensorArray(tf.float64, size=5).scatter([4, 0, 2], x)
        picked = ta.gather([2, 4])
        return tf.reduce_sum(tf.sin(picked) * tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64))

    _check_gradient(build, (3, 2))


def test_gradient_through_split_concat():
    def build(x):
        ta = tf.TensorArray(tf.float64, size=3).split(x, [2, 1, 3])
        return tf.reduce_sum(tf.square(ta.concat()) * tf.range(6, dtype=tf.float64)[:, None])

    _check_gradient(build, (6, 2))


def test_gradient_of_an_element_read_twice_adds_up():
    def build(x):
        ta = tf.TensorArray(tf.float64, size=2, clear_after_read=False).unstack(x)
        return tf.reduce_sum(ta.read(0) * ta.read(0) + 3.0 * ta.read(0) * ta.read(1))

    _check_gradient(build, (2, 3))


def test_elements_that_miss_the_loss_get_zero_gradient():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3, 2])
        ta = tf.TensorArray(tf.float64, size=3).unstack(x)
        (grad,) = tf.gradients(tf.reduce_sum(ta.read(1)), [x])
        with tf.Session() as sess:
            value = sess.run(grad, {x: np.ones((3, 2))})
    np.testing.assert_array_equal(value, [[0, 0], [1, 1], [0, 0]])


def _rnn_reference(x, w):
    h, outputs = np.zeros(x.shape[1:]), []
    for x_t in x:
        h = np.tanh(h @ w + x_t)
        outputs.append(h)
    return np.stack(outputs)


def _tensor_array_rnn(x, w, steps):
    """dynamic_rnn's pattern: inputs unstacked into one array, outputs written to another."""
    inputs = tf.TensorArray(x.dtype, size=steps).unstack(x)
    outputs = tf.TensorArray(x.dtype, size=steps)

    def body(t, h, outputs):
        h = tf.tanh(tf.matmul(h, w) + inputs.read(t))
        return t + 1, h, outputs.write(t, h)

    h0 = tf.zeros_like(x[0])
    _, _, outputs = tf.while_loop(lambda t, *_: t < steps, body, [tf.constant(0), h0, outputs])
    return outputs.stack()


def test_while_loop_carries_tensor_arrays():
    rng = np.random.default_rng(0)
    x_value, w_value = rng.standard_normal((6, 3, 4)), rng.standard_normal((4, 4)) * 0.3
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [6, 3, 4])
        outputs = _tensor_array_rnn(x, tf.constant(w_value), 6)
        with tf.Session() as sess:
            value = sess.run(outputs, {x: x_value})
    np.testing.assert_allclose(value, _rnn_reference(x_value, w_value), rtol=1e-12)


def test_gradient_through_a_while_loop_of_tensor_arrays():
    w_value = np.random.default_rng(1).standard_normal((4, 4)) * 0.3

    def loss_of_x(x):
        return tf.reduce_sum(tf.square(_tensor_array_rnn(x, tf.constant(w_value), 5)))

    _check_gradient(loss_of_x, (5, 2, 4))
    x_value = np.random.default_rng(2).standard_normal((5, 2, 4))

    def loss_of_w(w):
        return tf.reduce_sum(tf.square(_tensor_array_rnn(tf.constant(x_value), w, 5)))

    _check_gradient(loss_of_w, (4, 4))


def test_dynamic_size_array_filled_by_a_loop_of_unknown_length():
    with tf.Graph().as_default():
        limit = tf.placeholder(tf.int32, [])
        squares = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        _, squares = tf.while_loop(
            lambda i, ta: i < limit, lambda i, ta: (i + 1, ta.write(i, i * i)), [0, squares]
        )
        stacked = squares.stack()
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(stacked, {limit: 5}), [0, 1, 4, 9, 16])
            np.testing.assert_array_equal(sess.run(stacked, {limit: 2}), [0, 1])


def test_cond_returns_tensor_arrays():
    with tf.Graph().as_default():
        pick = tf.placeholder(tf.bool, [])
        ta = tf.TensorArray(tf.float32, size=2).write(0, 1.0)
        ta = tf.cond(pick, lambda: ta.write(1, 10.0), lambda: ta.write(1, 20.0))
        assert isinstance(ta, tf.TensorArray)
        stacked = ta.stack()
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(stacked, {pick: True}), [1, 10])
            np.testing.assert_array_equal(sess.run(stacked, {pick: False}), [1, 20])


def test_gradient_arrays_follow_their_gradients_call_into_backward_loops():
    """The backward loop is built outside the ``gradients_1`` name scope; its gradient arrays
    must still be the ones of that call, or the gradient silently comes out zero."""

    def loss_of_w(w):
        tf.gradients(tf.reduce_sum(w * w), [w])  # an earlier gradients() call: "gradients"
        return tf.reduce_sum(tf.square(_tensor_array_rnn(tf.constant(np.ones((3, 2, 4))), w, 3)))

    _check_gradient(loss_of_w, (4, 4))
