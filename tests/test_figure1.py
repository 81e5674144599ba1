"""The papers' Figure 1 programs run as written, with ``import nbflow as tf``; the demo learns."""

import numpy as np

import nbflow as tf

BATCH_SIZE = 100
NUM_STEPS = 20


def _batches(seed=0):
    """Separable synthetic 'images': class k lights up pixels [78k, 78k + 78)."""
    rng = np.random.default_rng(seed)
    while True:
        labels = rng.integers(0, 10, BATCH_SIZE)
        x = rng.random((BATCH_SIZE, 784)).astype(np.float32) * 0.1
        for i, k in enumerate(labels):
            x[i, 78 * k : 78 * k + 78] += 1.0
        yield x, np.eye(10, dtype=np.float32)[labels]


def test_osdi_figure_1_runs_verbatim():
    data = _batches()
    losses = []
    # --- OSDI 2016, Figure 1 (typos of the printed figure fixed: "W 1", b_2 in layer_1) ---------
    # 1. Construct a graph representing the model.
    x = tf.placeholder(tf.float32, [BATCH_SIZE, 784])  # Placeholder for input.
    y = tf.placeholder(tf.float32, [BATCH_SIZE, 10])  # Placeholder for labels.
    W_1 = tf.Variable(tf.random_uniform([784, 100]))  # 784x100 weight matrix.
    b_1 = tf.Variable(tf.zeros([100]))  # 100-element bias vector.
    layer_1 = tf.nn.relu(tf.matmul(x, W_1) + b_1)  # Output of hidden layer.
    W_2 = tf.Variable(tf.random_uniform([100, 10]))  # 100x10 weight matrix.
    b_2 = tf.Variable(tf.zeros([10]))  # 10-element bias vector.
    layer_2 = tf.matmul(layer_1, W_2) + b_2  # Output of linear layer.
    # 2. Add nodes that represent the optimization algorithm.
    loss = tf.nn.softmax_cross_entropy_with_logits(layer_2, y)
    train_op = tf.train.AdagradOptimizer(0.01).minimize(loss)
    # 3. Execute the graph on batches of input data.
    with tf.Session() as sess:  # Connect to the TF runtime.
        sess.run(tf.initialize_all_variables())  # Randomly initialize weights.
        for step in range(NUM_STEPS):  # noqa: B007 - Train iteratively for NUM_STEPS.
            x_data, y_data = next(data)  # Load one batch of input data.
            sess.run(train_op, {x: x_data, y: y_data})  # Perform one training step.
            # --- end of the figure; the test watches the loss ---
            losses.append(sess.run(tf.reduce_mean(loss), {x: x_data, y: y_data}))
    assert loss.shape.as_list() == [BATCH_SIZE]
    assert all(np.isfinite(losses))
    assert np.mean(losses[-5:]) < np.mean(losses[:5])
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"SoftmaxCrossEntropyWithLogits", "ReluGrad", "ApplyAdagrad"} <= types


def test_whitepaper_figure_1_completed():
    # --- Whitepaper 2015, Figure 1, with the elided parts filled in: a 100-d input, a cost ------
    b = tf.Variable(tf.zeros([100]))  # 100-d vector, init to zeroes
    W = tf.Variable(tf.random_uniform([784, 100], -1, 1))  # 784x100 matrix w/rnd vals
    x = tf.placeholder(name="x", dtype=tf.float32)  # Placeholder for input
    relu = tf.nn.relu(tf.matmul(x, W) + b)  # Relu(Wx+b)
    C = tf.reduce_sum(tf.square(relu - 1.0))  # Cost computed as a function of Relu
    s = tf.Session()
    s.run(tf.global_variables_initializer())
    results = []
    rng = np.random.default_rng(0)
    for step in range(0, 10):  # noqa: B007
        input = rng.standard_normal((1, 784)).astype(np.float32)  # construct the input array
        result = s.run(C, feed_dict={x: input})  # Fetch cost, feeding x=input
        results.append(result)
        w, bias = s.run([W, b])
        expected = np.sum((np.maximum(input @ w + bias, 0) - 1.0) ** 2)
        np.testing.assert_allclose(result, expected, rtol=1e-4)
    # The graph of the whitepaper's Figure 2: MatMul -> Add -> ReLU -> cost.
    assert [
        op.type for op in (relu.op, relu.op.inputs[0].op, relu.op.inputs[0].op.inputs[0].op)
    ] == [
        "Relu",
        "Add",
        "MatMul",
    ]
    s.close()


def test_demo_trains_figure_1_mlp_on_digits_to_95_percent():
    from nbflow import demo

    accuracy = demo.train(steps=200, verbose=False)
    assert accuracy >= 0.95
