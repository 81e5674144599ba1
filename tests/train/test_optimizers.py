"""Optimizers against hand-computed TensorFlow update rules (NumPy), dense and sparse."""

import numpy as np
import pytest

import nbflow as tf

STEPS = 3


def _train(
    opt,
    grads0=(0.1, 0.1),
    grads1=(0.01, 0.01),
    init0=(1.0, 2.0),
    init1=(3.0, 4.0),
    dtype=np.float32,
    steps=STEPS,
):
    """Apply constant gradients to two variables for ``steps`` steps; their values each step."""
    var0 = tf.Variable(np.array(init0, dtype))
    var1 = tf.Variable(np.array(init1, dtype))
    g0 = tf.constant(np.array(grads0, dtype))
    g1 = tf.constant(np.array(grads1, dtype))
    update = opt.apply_gradients([(g0, var0), (g1, var1)])
    history = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(update)
            history.append(sess.run([var0, var1]))
    return history, (var0, var1)


def _reference(update, state0, state1, steps=STEPS):
    """Run a NumPy update rule ``update(var, g, state, t) -> (var, state)`` on both variables."""
    out = []
    (v0, g0, s0), (v1, g1, s1) = state0, state1
    for t in range(1, steps + 1):
        v0, s0 = update(v0, g0, s0, t)
        v1, s1 = update(v1, g1, s1, t)
        out.append([v0, v1])
    return out


def _check(history, expected, rtol=1e-6):
    for got, want in zip(history, expected):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-7)


def _a(*values):
    return np.array(values, dtype=np.float64)


def test_gradient_descent():
    history, _ = _train(tf.train.GradientDescentOptimizer(3.0), steps=1)
    _check(history, [[_a(1 - 3 * 0.1, 2 - 3 * 0.1), _a(3 - 3 * 0.01, 4 - 3 * 0.01)]])


def test_momentum_matches_tensorflow_values():
    history, _ = _train(tf.train.MomentumOptimizer(2.0, 0.9), steps=2)
    _check(
        history,
        [
            [_a(1 - 0.1 * 2.0, 2 - 0.1 * 2.0), _a(3 - 0.01 * 2.0, 4 - 0.01 * 2.0)],
            [
                _a(
                    1 - 0.1 * 2.0 - (0.9 * 0.1 + 0.1) * 2.0, 2 - 0.1 * 2.0 - (0.9 * 0.1 + 0.1) * 2.0
                ),
                _a(
                    3 - 0.01 * 2.0 - (0.9 * 0.01 + 0.01) * 2.0,
                    4 - 0.01 * 2.0 - (0.9 * 0.01 + 0.01) * 2.0,
                ),
            ],
        ],
    )


def test_nesterov_momentum():
    lr, mu = 2.0, 0.9

    def update(var, g, accum, t):
        var = var + accum * lr * mu
        accum = accum * mu + g
        var = var - lr * accum
        var = var - accum * lr * mu
        return var, accum

    history, _ = _train(tf.train.MomentumOptimizer(lr, mu, use_nesterov=True))
    expected = _reference(update, (_a(1, 2), _a(0.1, 0.1), 0.0), (_a(3, 4), _a(0.01, 0.01), 0.0))
    _check(history, expected)


def test_adagrad_matches_tensorflow_values():
    history, _ = _train(tf.train.AdagradOptimizer(3.0, initial_accumulator_value=0.1))
    _check(
        history[-1:],
        [[_a(-1.6026098728179932, -0.6026098728179932), _a(2.715679168701172, 3.715679168701172)]],
        rtol=1e-5,
    )


def test_adagrad_rejects_nonpositive_initial_accumulator():
    with pytest.raises(ValueError):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)


def test_adadelta():
    lr, rho, eps = 1.0, 0.95, 1e-8

    def update(var, g, state, t):
        accum, accum_update = state
        accum = accum * rho + g**2 * (1 - rho)
        step = np.sqrt(accum_update + eps) / np.sqrt(accum + eps) * g
        accum_update = accum_update * rho + step**2 * (1 - rho)
        return var - lr * step, (accum, accum_update)

    history, _ = _train(tf.train.AdadeltaOptimizer(lr, rho, eps), dtype=np.float64)
    zeros = (np.zeros(2), np.zeros(2))
    expected = _reference(
        update, (_a(1, 2), _a(0.1, 0.1), zeros), (_a(3, 4), _a(0.01, 0.01), zeros)
    )
    _check(history, expected, rtol=1e-10)


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_rmsprop(centered, momentum):
    lr, decay, eps = 2.0, 0.9, 1e-2

    def update(var, g, state, t):
        mg, rms, mom = state
        rms = rms * decay + (1 - decay) * g * g
        denom = rms + eps
        if centered:
            mg = mg * decay + (1 - decay) * g
            denom = denom - mg * mg
        mom = momentum * mom + lr * g / np.sqrt(denom)
        return var - mom, (mg, rms, mom)

    opt = tf.train.RMSPropOptimizer(lr, decay, momentum, eps, centered=centered)
    history, _ = _train(opt, dtype=np.float64, steps=4)
    start = (np.zeros(2), np.ones(2), np.zeros(2))  # "rms" starts at one, as TensorFlow's
    expected = _reference(
        update, (_a(1, 2), _a(0.1, 0.1), start), (_a(3, 4), _a(0.01, 0.01), start), steps=4
    )
    _check(history, expected, rtol=1e-10)


def test_adam():
    lr, b1, b2, eps = 0.001, 0.9, 0.999, 1e-8

    def update(param, g, state, t):
        m, v = state
        lr_t = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        return param - lr_t * m / (np.sqrt(v) + eps), (m, v)

    opt = tf.train.AdamOptimizer()
    history, (var0, _) = _train(opt, dtype=np.float64)
    zeros = (np.zeros(2), np.zeros(2))
    expected = _reference(
        update, (_a(1, 2), _a(0.1, 0.1), zeros), (_a(3, 4), _a(0.01, 0.01), zeros)
    )
    _check(history, expected, rtol=1e-10)
    assert opt.get_slot_names() == ["m", "v"]
    assert opt.get_slot(var0, "m").name == "Variable/Adam:0"
    assert opt.get_slot(var0, "v").name == "Variable/Adam_1:0"


def test_ftrl_matches_tensorflow_values():
    opt = tf.train.FtrlOptimizer(3.0, initial_accumulator_value=0.1)
    history, _ = _train(
        opt, grads0=(0.1, 0.2), grads1=(0.01, 0.02), init0=(0.0, 0.0), init1=(0.0, 0.0)
    )
    _check(history[-1:], [[_a(-2.60260963, -4.29698515), _a(-0.28432083, -0.56694895)]], rtol=1e-5)


def test_ftrl_with_l1_and_l2():
    lr, l1, l2 = 3.0, 0.001, 2.0

    def update(var, g, state, t):
        accum, linear = state
        new_accum = accum + g * g
        linear = linear + g - (np.sqrt(new_accum) - np.sqrt(accum)) / lr * var
        quadratic = np.sqrt(new_accum) / lr + 2 * l2
        var = np.where(np.abs(linear) > l1, (np.sign(linear) * l1 - linear) / quadratic, 0.0)
        return var, (new_accum, linear)

    opt = tf.train.FtrlOptimizer(lr, l1_regularization_strength=l1, l2_regularization_strength=l2)
    history, _ = _train(
        opt,
        grads0=(0.1, 0.2),
        grads1=(0.01, 0.02),
        init0=(1.0, 2.0),
        init1=(4.0, 3.0),
        dtype=np.float64,
    )
    start = (np.full(2, 0.1), np.zeros(2))
    expected = _reference(
        update, (_a(1, 2), _a(0.1, 0.2), start), (_a(4, 3), _a(0.01, 0.02), start)
    )
    _check(history, expected, rtol=1e-10)


# --- the Optimizer protocol ------------------------------------------------------------------------
def test_minimize_with_global_step_and_var_list():
    x = tf.Variable(5.0)
    y = tf.Variable(1.0)
    step = tf.train.get_or_create_global_step()
    assert tf.train.get_global_step() is step
    loss = x * x + y * y
    train = tf.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=step, var_list=[x])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):
            sess.run(train)
        assert sess.run(step) == 2
        assert sess.run(x) == pytest.approx(5.0 * 0.5 * 0.5)
        assert sess.run(y) == pytest.approx(1.0)
    assert train in tf.get_collection(tf.GraphKeys.TRAIN_OP)


def test_global_step_is_created_once():
    step = tf.train.create_global_step()
    with pytest.raises(ValueError):
        tf.train.create_global_step()
    assert tf.train.get_or_create_global_step() is step
    assert step.dtype.base_dtype == tf.int64


def test_compute_gradients_pairs_and_none_for_unused_variable():
    x = tf.Variable(2.0)
    unused = tf.Variable(3.0)
    opt = tf.train.GradientDescentOptimizer(0.1)
    pairs = opt.compute_gradients(x * x)
    assert [v for _, v in pairs] == [x, unused]
    assert pairs[1][0] is None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(pairs[0][0]) == pytest.approx(4.0)


def test_minimize_without_any_gradient_raises():
    tf.Variable(1.0)
    with pytest.raises(ValueError, match="No gradients provided"):
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.constant(1.0) * 2.0)


def test_minimize_without_variables_raises():
    with pytest.raises(ValueError, match="No variables to optimize"):
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.constant(1.0) * 2.0)


def test_slots_are_non_trainable_colocated_and_named_after_the_variable():
    w = tf.Variable([1.0, 2.0], name="w")
    opt = tf.train.AdagradOptimizer(0.1)
    opt.minimize(tf.reduce_sum(w * w))
    slot = opt.get_slot(w, "accumulator")
    assert slot.name == "w/Adagrad:0"
    assert slot not in tf.trainable_variables()
    assert opt.get_slot_names() == ["accumulator"]
    assert opt.get_slot(w, "nope") is None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(slot), [0.1, 0.1])


def test_learning_rate_may_be_a_tensor_and_float64_variables_work():
    lr = tf.placeholder(tf.float32, [])
    w = tf.Variable(np.array([1.0], np.float64))
    train = tf.train.GradientDescentOptimizer(lr).minimize(tf.reduce_sum(w * w))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {lr: 0.25})
        np.testing.assert_allclose(sess.run(w), [0.5])


# --- sparse updates -------------------------------------------------------------------------------------
SPARSE_OPTIMIZERS = [
    lambda: tf.train.GradientDescentOptimizer(0.5),
    lambda: tf.train.MomentumOptimizer(0.5, 0.9),
    lambda: tf.train.MomentumOptimizer(0.5, 0.9, use_nesterov=True),
    lambda: tf.train.AdagradOptimizer(0.5),
    lambda: tf.train.AdadeltaOptimizer(1.0),
    lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5),
    lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True),
    lambda: tf.train.FtrlOptimizer(0.5, l1_regularization_strength=0.01),
]


def _embedding_step(make_opt, sparse, steps=2):
    table = np.arange(12.0).reshape(6, 2) / 10
    weights = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, 1.0]])
    params = tf.Variable(table)
    ids = tf.constant([1, 4, 1])  # a duplicate: its two gradient rows add up
    rows = (
        tf.gather(params, ids)
        if sparse
        else tf.matmul(tf.one_hot(ids, 6, dtype=tf.float64), params)
    )
    loss = tf.reduce_sum(rows * weights)
    opt = make_opt()
    train = opt.minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
        return sess.run(params), table


@pytest.mark.parametrize("make_opt", SPARSE_OPTIMIZERS)
def test_sparse_update_touches_only_gathered_rows_and_matches_dense(make_opt):
    sparse, table = _embedding_step(make_opt, sparse=True)
    tf.reset_default_graph()
    dense, _ = _embedding_step(make_opt, sparse=False)
    untouched = [0, 2, 3, 5]
    np.testing.assert_array_equal(sparse[untouched], table[untouched])
    np.testing.assert_allclose(sparse[[1, 4]], dense[[1, 4]], rtol=1e-10)
    assert not np.allclose(sparse[[1, 4]], table[[1, 4]])


def test_sparse_adam_follows_tensorflow_dense_decay_of_moments():
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
    table = np.ones((4, 2))
    params = tf.Variable(table)
    loss = tf.reduce_sum(tf.gather(params, [2, 2]) * 3.0)  # duplicate id: gradient 6
    f64 = [tf.constant(x, tf.float64) for x in (lr, b1, b2, eps)]
    opt = tf.train.AdamOptimizer(*f64)
    train = opt.minimize(loss)
    g = np.zeros((4, 2))
    g[2] = 6.0
    m = np.zeros((4, 2))
    v = np.zeros((4, 2))
    expected = table.copy()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for t in (1, 2):
            sess.run(train)
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            expected = expected - lr * np.sqrt(1 - b2**t) / (1 - b1**t) * m / (np.sqrt(v) + eps)
        np.testing.assert_allclose(sess.run(params), expected, rtol=1e-12)


def test_sparse_gradient_reaches_the_optimizer_without_densifying():
    params = tf.Variable(np.zeros((1000, 4), np.float32))
    ids = tf.placeholder(tf.int32, [None])
    loss = tf.reduce_sum(tf.nn.embedding_lookup(params, ids))
    train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    graph = tf.get_default_graph()
    types = {op.type for op in graph.get_operations()}
    assert "SparseApplyGradientDescent" in types
    assert "ApplyGradientDescent" not in types
    dense_makers = {"UnsortedSegmentSum", "ScatterNd", "SparseToDense", "ZerosLike", "Fill"}
    path = _ancestors(train)
    assert not {op.type for op in path} & dense_makers, sorted(op.type for op in path)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {ids: [3, 997, 3]})
        value = sess.run(params)
    np.testing.assert_array_equal(np.nonzero(value.any(axis=1))[0], [3, 997])
    np.testing.assert_allclose(value[3], -2.0)
    np.testing.assert_allclose(value[997], -1.0)


def _ancestors(op):
    seen, stack = set(), [op]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(t.op for t in node.inputs)
        stack.extend(node.control_inputs)
    return seen


def test_sparse_update_rejects_out_of_range_ids():
    params = tf.Variable(np.zeros((3, 2)))
    grad = tf.IndexedSlices(tf.constant(np.ones((1, 2))), tf.constant([5]), tf.constant([3, 2]))
    train = tf.train.GradientDescentOptimizer(1.0).apply_gradients([(grad, params)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match="Index 5"):
            sess.run(train)


# --- schedules ----------------------------------------------------------------------------------------
def test_exponential_decay_and_staircase():
    step = tf.placeholder(tf.int64, [])
    smooth = tf.train.exponential_decay(0.1, step, 10, 0.5)
    stair = tf.train.exponential_decay(0.1, step, 10, 0.5, staircase=True)
    with tf.Session() as sess:
        a, b = sess.run([smooth, stair], {step: 15})
    assert a == pytest.approx(0.1 * 0.5**1.5, rel=1e-6)
    assert b == pytest.approx(0.05, rel=1e-6)


def test_piecewise_constant():
    step = tf.placeholder(tf.int32, [])
    lr = tf.train.piecewise_constant(step, [10, 20], [1.0, 0.5, 0.1])
    with tf.Session() as sess:
        got = [sess.run(lr, {step: s}) for s in (0, 10, 11, 20, 21)]
    np.testing.assert_allclose(got, [1.0, 1.0, 0.5, 0.5, 0.1])


def test_polynomial_decay():
    step = tf.placeholder(tf.int32, [])
    lr = tf.train.polynomial_decay(1.0, step, 10, end_learning_rate=0.0, power=2.0)
    with tf.Session() as sess:
        got = [sess.run(lr, {step: s}) for s in (0, 5, 20)]
    np.testing.assert_allclose(got, [1.0, 0.25, 0.0], atol=1e-7)
