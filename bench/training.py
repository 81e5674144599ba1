"""Issue 3's workloads: training throughput of MLPs, a small CNN and sparse embeddings.

(a) the OSDI Figure 1 MLP, 784-100-10, batch 100, Adagrad 0.01; (b) a larger MLP,
784-1024-1024-10, batch 256, SGD; (c) a small CNN, conv5x5x32-pool-conv5x5x64-pool-fc1024-fc10
on 28x28x1, batch 64, SGD; (d) sparse embedding training: 32 ids looked up in a [1,000,000, 64]
and a [100,000, 64] table, sum loss, SGD with sparse updates.

nbflow and TensorFlow run the very same tf.compat.v1 code; PyTorch runs the same models; a
hand-written NumPy loop of the MLPs is the floor of any NumPy-kernel system and the machine's
NumPy matmul GFLOP/s its ceiling. For the CNN the floor is its matrix products alone, timed at
the shapes an im2col convolution gives BLAS (narrow ones: 64 output channels), so each run
shows how close TensorFlow's oneDNN, which convolves directly, is to what BLAS allows.
"""

from __future__ import annotations

import numpy as np

from bench.common import Result, rate, tensorflow_v1

SUITE = "training"
MLP_SMALL = ("a) Figure 1 MLP 784-100-10 b100 Adagrad", [784, 100, 10], 100)
MLP_LARGE = ("b) MLP 784-1024-1024-10 b256 SGD", [784, 1024, 1024, 10], 256)
CNN = ("c) CNN conv32-pool-conv64-pool-fc1024-fc10 b64", None, 64)
EMBEDDINGS = [
    ("d) sparse embedding [1M,64] b32 ids", 1_000_000),
    ("d) sparse embedding [100k,64] b32 ids", 100_000),
]


def mlp_step_gflop(sizes: list[int], batch: int) -> float:
    """FLOPs of one MLP training step's matrix products (GFLOP): forward, the weight gradients,
    and the input gradients of every layer but the first."""
    products = [fan_in * fan_out for fan_in, fan_out in zip(sizes[:-1], sizes[1:])]
    return 2 * batch * (2 * sum(products) + sum(products[1:])) / 1e9


def cnn_step_gflop(batch: int) -> float:
    """FLOPs of one CNN training step (GFLOP): each convolution's forward work N*OH*OW*KH*KW*C*O
    x2 for the forward, the filter gradient and (but for the first layer's, whose input is
    fed) the input gradient; the fully connected layers as an MLP whose first layer also passes
    its input gradient down to the convolutions."""
    conv1 = 2 * batch * 28 * 28 * 25 * 1 * 32
    conv2 = 2 * batch * 14 * 14 * 25 * 32 * 64
    fc1_input_grad = 2 * batch * 7 * 7 * 64 * 1024
    return (2 * conv1 + 3 * conv2 + fc1_input_grad) / 1e9 + mlp_step_gflop(
        [7 * 7 * 64, 1024, 10], batch
    )


def floor_rows(results: list[Result]) -> list[Result]:
    """How far from the floor each framework runs the large MLP and the CNN: the achieved
    GFLOP/s as a percentage of the NumPy float32 GEMM ceiling measured in the same run."""
    ceiling = next((r for r in results if r.unit == "GFLOP/s" and r.framework == "numpy"), None)
    if ceiling is None:
        return []
    gflop = {
        MLP_LARGE[0]: mlp_step_gflop(MLP_LARGE[1], MLP_LARGE[2]),
        CNN[0]: cnn_step_gflop(CNN[2]),
    }
    batch = {MLP_LARGE[0]: MLP_LARGE[2], CNN[0]: CNN[2]}
    out = []
    for r in results:
        if r.workload in gflop and r.unit == "examples/s":
            per_example = gflop[r.workload] / batch[r.workload] / ceiling.value * 100
            out.append(
                Result(
                    SUITE,
                    f"{r.workload[:2]} % of GEMM ceiling ({gflop[r.workload]:.2f} GFLOP/step)",
                    r.framework,
                    r.value * per_example,
                    "%",
                    r.repeats,
                    (r.spread[0] * per_example, r.spread[1] * per_example),
                    note=f"ceiling {ceiling.value:.0f} GFLOP/s (numpy matmul 1024^2, same run)",
                )
            )
    return out


def _data(batch: int, inputs: int, classes: int = 10):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, inputs)).astype(np.float32)
    y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, batch)]
    return x, y


def _mlp_graph(tf, sizes, optimizer):
    x = tf.placeholder(tf.float32, [None, sizes[0]])
    y = tf.placeholder(tf.float32, [None, sizes[-1]])
    h = x
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        w = tf.Variable(tf.random_normal([fan_in, fan_out], stddev=0.05, seed=i + 1))
        b = tf.Variable(tf.zeros([fan_out]))
        h = tf.matmul(h, w) + b
        if i < len(sizes) - 2:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=h))
    return x, y, optimizer.minimize(loss)


def _cnn_graph(tf):
    x = tf.placeholder(tf.float32, [None, 28, 28, 1])
    y = tf.placeholder(tf.float32, [None, 10])

    def weight(shape, seed):
        return tf.Variable(tf.truncated_normal(shape, stddev=0.05, seed=seed))

    h = tf.nn.relu(tf.nn.conv2d(x, weight([5, 5, 1, 32], 1), [1, 1, 1, 1], "SAME"))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.nn.relu(tf.nn.conv2d(h, weight([5, 5, 32, 64], 2), [1, 1, 1, 1], "SAME"))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.reshape(h, [-1, 7 * 7 * 64])
    h = tf.nn.relu(tf.matmul(h, weight([7 * 7 * 64, 1024], 3)))
    logits = tf.matmul(h, weight([1024, 10], 4))
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
    return x, y, tf.train.GradientDescentOptimizer(0.01).minimize(loss)


def _cnn_products(batch: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The CNN step's matrix products as (a, b, out) with ``a @ b`` of the shapes an im2col
    convolution multiplies: per convolution the forward ``cols @ W``, the filter gradient
    ``dy^T @ cols`` and (the second's only) the input gradient ``dy @ W^T``, then the fully
    connected layers' forward, weight and input gradients. Transposed operands are transposed
    views, as the kernels pass them to BLAS."""
    rng = np.random.default_rng(0)
    shapes = []  # (M, K, N, a transposed)
    for pixels, taps, out_channels, input_grad in ((784, 25, 32, False), (196, 800, 64, True)):
        rows = batch * pixels
        shapes += [(rows, taps, out_channels, False), (out_channels, rows, taps, True)]
        shapes += [(rows, out_channels, taps, False)] if input_grad else []
    for fan_in, fan_out in ((7 * 7 * 64, 1024), (1024, 10)):
        shapes += [(batch, fan_in, fan_out, False), (fan_in, batch, fan_out, True)]
        shapes += [(batch, fan_out, fan_in, False)]
    products = []
    for m, k, n, transposed in shapes:
        a = rng.standard_normal((k, m) if transposed else (m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        products.append((a.T if transposed else a, b, np.empty((m, n), np.float32)))
    return products


def _embedding_graph(tf, rows):
    ids = tf.placeholder(tf.int32, [32])
    table = tf.Variable(tf.zeros([rows, 64]))
    loss = tf.reduce_sum(tf.nn.embedding_lookup(table, ids))
    return ids, tf.train.GradientDescentOptimizer(0.1).minimize(loss)


def run_graph_framework(tf, framework: str, quick: bool) -> list[Result]:
    out = []
    repeats = 3 if quick else 5
    for (name, sizes, batch), opt in (
        (MLP_SMALL, lambda: tf.train.AdagradOptimizer(0.01)),
        (MLP_LARGE, lambda: tf.train.GradientDescentOptimizer(0.01)),
    ):
        graph = tf.Graph()
        with graph.as_default():
            x, y, train = _mlp_graph(tf, sizes, opt())
            init = tf.global_variables_initializer()
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            xs, ys = _data(batch, sizes[0])
            value, spread = rate(
                lambda: sess.run(train, {x: xs, y: ys}),
                work_per_call=batch,
                repeats=repeats,
                min_time=0.5,
            )
        out.append(Result(SUITE, name, framework, value, "examples/s", repeats, spread))
    graph = tf.Graph()
    with graph.as_default():
        x, y, train = _cnn_graph(tf)
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        xs, ys = _data(CNN[2], 784)
        xs = xs.reshape(-1, 28, 28, 1)
        value, spread = rate(
            lambda: sess.run(train, {x: xs, y: ys}),
            work_per_call=CNN[2],
            repeats=repeats,
            min_time=1.0,
            warmup=2,
        )
    out.append(Result(SUITE, CNN[0], framework, value, "examples/s", repeats, spread))
    for name, rows in EMBEDDINGS:
        graph = tf.Graph()
        with graph.as_default():
            ids, train = _embedding_graph(tf, rows)
            init = tf.global_variables_initializer()
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            batches = np.random.default_rng(0).integers(0, rows, (64, 32)).astype(np.int32)
            step = iter(range(10**9))
            value, spread = rate(
                lambda: sess.run(train, {ids: batches[next(step) % 64]}), repeats=repeats
            )
        out.append(Result(SUITE, name, framework, value, "steps/s", repeats, spread))
    return out


def run_nbflow(quick: bool = False) -> list[Result]:
    import nbflow as tf

    return run_graph_framework(tf, "nbflow", quick)


def run_tensorflow(quick: bool = False) -> list[Result]:
    return run_graph_framework(tensorflow_v1(), "tensorflow", quick)


def run_pytorch(quick: bool = False) -> list[Result]:
    import torch
    from torch import nn

    torch.set_num_threads(2)
    torch.manual_seed(0)
    repeats = 3 if quick else 5
    out = []
    for (name, sizes, batch), make_opt in (
        (MLP_SMALL, lambda p: torch.optim.Adagrad(p, lr=0.01, initial_accumulator_value=0.1)),
        (MLP_LARGE, lambda p: torch.optim.SGD(p, lr=0.01)),
    ):
        layers: list[nn.Module] = []
        for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(nn.Linear(fan_in, fan_out))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        model = nn.Sequential(*layers)
        opt = make_opt(model.parameters())
        xs, ys = _data(batch, sizes[0])
        xt, yt = torch.from_numpy(xs), torch.from_numpy(ys.argmax(1))

        def step():
            opt.zero_grad()
            nn.functional.cross_entropy(model(xt), yt).backward()
            opt.step()

        value, spread = rate(step, work_per_call=batch, repeats=repeats, min_time=0.5)
        out.append(Result(SUITE, name, "pytorch", value, "examples/s", repeats, spread))
    model = nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(7 * 7 * 64, 1024),
        nn.ReLU(),
        nn.Linear(1024, 10),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    xs, ys = _data(CNN[2], 784)
    xt, yt = torch.from_numpy(xs.reshape(-1, 1, 28, 28)), torch.from_numpy(ys.argmax(1))

    def cnn_step():
        opt.zero_grad()
        nn.functional.cross_entropy(model(xt), yt).backward()
        opt.step()

    value, spread = rate(cnn_step, work_per_call=CNN[2], repeats=repeats, min_time=1.0, warmup=2)
    out.append(Result(SUITE, CNN[0], "pytorch", value, "examples/s", repeats, spread))
    for name, rows in EMBEDDINGS:
        table = nn.Embedding(rows, 64, sparse=True)
        nn.init.zeros_(table.weight)
        opt = torch.optim.SGD(table.parameters(), lr=0.1)
        batches = torch.from_numpy(np.random.default_rng(0).integers(0, rows, (64, 32)))
        step_no = iter(range(10**9))

        def emb_step():
            opt.zero_grad()
            table(batches[next(step_no) % 64]).sum().backward()
            opt.step()

        value, spread = rate(emb_step, repeats=repeats)
        out.append(Result(SUITE, name, "pytorch", value, "steps/s", repeats, spread))
    return out


def run_numpy(quick: bool = False) -> list[Result]:
    """Hand-written forward/backward/update loops of the two MLPs, the CNN's matrix products
    alone, and the matmul ceiling."""
    repeats = 3 if quick else 5
    out = []
    for (name, sizes, batch), adagrad in ((MLP_SMALL, True), (MLP_LARGE, False)):
        rng = np.random.default_rng(0)
        ws = [
            (rng.standard_normal((a, b)) * 0.05).astype(np.float32)
            for a, b in zip(sizes[:-1], sizes[1:])
        ]
        bs = [np.zeros(b, np.float32) for b in sizes[1:]]
        accs = [np.full_like(p, 0.1) for p in ws + bs]
        xs, ys = _data(batch, sizes[0])

        def step(ws=ws, bs=bs, accs=accs, xs=xs, ys=ys, adagrad=adagrad):
            acts = [xs]
            for i, (w, b) in enumerate(zip(ws, bs)):
                z = acts[-1] @ w + b
                acts.append(np.maximum(z, 0) if i < len(ws) - 1 else z)
            logits = acts[-1]
            e = np.exp(logits - logits.max(1, keepdims=True))
            grad = (e / e.sum(1, keepdims=True) - ys) / len(xs)
            grads = []
            for i in range(len(ws) - 1, -1, -1):
                grads.append((acts[i].T @ grad, grad.sum(0)))
                if i:
                    grad = (grad @ ws[i].T) * (acts[i] > 0)
            grads.reverse()
            params = ws + bs
            flat = [g for g, _ in grads] + [g for _, g in grads]
            for p, g, acc in zip(params, flat, accs):
                if adagrad:
                    acc += g * g
                    p -= 0.01 * g / np.sqrt(acc)
                else:
                    p -= 0.01 * g

        value, spread = rate(step, work_per_call=batch, repeats=repeats, min_time=0.5)
        out.append(
            Result(
                SUITE, name, "numpy", value, "examples/s", repeats, spread, note="hand-written loop"
            )
        )
    products = _cnn_products(CNN[2])
    value, spread = rate(
        lambda: [np.matmul(a, b, out=c) for a, b, c in products],
        work_per_call=CNN[2],
        repeats=repeats,
        min_time=1.0,
    )
    out.append(
        Result(
            SUITE,
            "c) CNN: its matrix products alone",
            "numpy",
            value,
            "examples/s",
            repeats,
            spread,
            note="the step's GEMMs at their im2col shapes, nothing else: any im2col + BLAS "
            "CNN runs at most this fast",
        )
    )
    a = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    value, spread = rate(lambda: a @ a, work_per_call=2 * 1024**3 / 1e9, repeats=repeats)
    out.append(
        Result(
            SUITE,
            "numpy matmul 1024^2 float32 (ceiling)",
            "numpy",
            value,
            "GFLOP/s",
            repeats,
            spread,
        )
    )
    return out
