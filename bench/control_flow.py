"""Issue 4's workloads: a while_loop RNN and a queue-based input pipeline.

(a) an RNN as ``tf.while_loop``: 50 steps of h = tanh(h @ W + x_t), h [32,128], x [50,32,128]
fed each call; forward only (fetch h_final) and forward+backward (fetch the gradient of
reduce_sum(h_final) w.r.t. W from ``tf.gradients``), in sequences per second. nbflow and
TensorFlow run the same tf.compat.v1 code; PyTorch runs a plain Python loop (forward under
no_grad; forward+backward with autograd); NumPy runs a plain Python loop with a hand-written
backward pass (the floor of any NumPy-kernel system).

(b) an input pipeline: generated CSV files → string_input_producer → TextLineReader →
decode_csv → shuffle_batch(batch_size=100) filled by queue runners, batches dequeued in the main
thread, in records per second.

(c) training fed by a queue, as TF1 programs without feed_dict do: the Figure 1 MLP (784-100-10,
Adagrad) reading its batches of 100 from ``tf.train.batch`` over ``slice_input_producer`` on
5,000 generated examples held in constants; the queue runner's thread enqueues one example per
step, so both threads' steps count. In training steps per second.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from bench.common import Result, rate, tensorflow_v1

SUITE = "control_flow"
STEPS, BATCH, HIDDEN = 50, 32, 128
RNN_FORWARD = "a) while_loop RNN 50x[32,128] forward"
RNN_BACKWARD = "a) while_loop RNN 50x[32,128] forward+backward"
PIPELINE = "b) CSV TextLineReader->decode_csv->shuffle_batch(100)"
QUEUE_FED = "c) Figure 1 MLP trained from slice_input_producer->batch(100)"
CSV_FILES, CSV_ROWS, CSV_COLUMNS = 4, 5_000, 5


def _rnn_data():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((HIDDEN, HIDDEN)) * 0.05).astype(np.float32)
    xs = (rng.standard_normal((STEPS, BATCH, HIDDEN)) * 0.1).astype(np.float32)
    return w, xs


def _rnn(tf, framework: str, quick: bool) -> list[Result]:
    repeats = 3 if quick else 7
    min_time = 0.2 if quick else 0.5
    w_value, xs = _rnn_data()
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [STEPS, BATCH, HIDDEN], name="x")
        w = tf.Variable(tf.constant(w_value), name="W")
        h0 = tf.zeros([BATCH, HIDDEN])

        def body(i, h):
            return i + 1, tf.tanh(tf.matmul(h, w) + x[i])

        _, h_final = tf.while_loop(lambda i, h: i < STEPS, body, [tf.constant(0), h0])
        (grad_w,) = tf.gradients(tf.reduce_sum(h_final), [w])
        init = tf.global_variables_initializer()
    out = []
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for name, fetch in ((RNN_FORWARD, h_final), (RNN_BACKWARD, grad_w)):
            value, spread = rate(
                lambda f=fetch: sess.run(f, {x: xs}), repeats=repeats, min_time=min_time
            )
            out.append(Result(SUITE, name, framework, value, "sequences/s", repeats, spread))
    return out


def _write_csv(directory: Path) -> list[str]:
    rng = np.random.default_rng(0)
    paths = []
    for k in range(CSV_FILES):
        values = rng.standard_normal((CSV_ROWS, CSV_COLUMNS - 1)).astype(np.float32)
        labels = rng.integers(0, 10, CSV_ROWS)
        path = directory / f"part{k}.csv"
        path.write_text(
            "".join(
                ",".join(f"{v:.5f}" for v in row) + f",{label}\n"
                for row, label in zip(values, labels)
            )
        )
        paths.append(str(path))
    return paths


def _pipeline(tf, framework: str, quick: bool) -> Result:
    repeats = 3 if quick else 5
    batch = 100
    with tempfile.TemporaryDirectory(prefix="nbflow-bench-csv-") as directory:
        paths = _write_csv(Path(directory))
        graph = tf.Graph()
        with graph.as_default():
            files = tf.train.string_input_producer(paths, shuffle=False)
            _, line = tf.TextLineReader().read(files)
            columns = tf.decode_csv(line, [[0.0]] * (CSV_COLUMNS - 1) + [[0]])
            features = tf.stack(columns[:-1])
            batch_x, batch_y = tf.train.shuffle_batch(
                [features, columns[-1]],
                batch_size=batch,
                capacity=2_000,
                min_after_dequeue=1_000,
                seed=1,
            )
        with tf.Session(graph=graph) as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            try:
                value, spread = rate(
                    lambda: sess.run([batch_x, batch_y]),
                    work_per_call=batch,
                    repeats=repeats,
                    min_time=0.3 if quick else 1.0,
                    warmup=15,  # lets the queue fill past min_after_dequeue first
                )
            finally:
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
    return Result(SUITE, PIPELINE, framework, value, "records/s", repeats, spread)


def _queue_fed_training(tf, framework: str, quick: bool) -> Result:
    rng = np.random.default_rng(0)
    images = rng.standard_normal((5_000, 784)).astype(np.float32)
    labels = rng.integers(0, 10, 5_000).astype(np.int32)
    graph = tf.Graph()
    with graph.as_default():
        image, label = tf.train.slice_input_producer(
            [tf.constant(images), tf.constant(labels)], shuffle=True, seed=1
        )
        x, y = tf.train.batch([image, label], batch_size=100, capacity=2_000)
        w1 = tf.Variable(tf.random_normal([784, 100], stddev=0.05, seed=1))
        w2 = tf.Variable(tf.random_normal([100, 10], stddev=0.05, seed=2))
        b1, b2 = tf.Variable(tf.zeros([100])), tf.Variable(tf.zeros([10]))
        logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        train = tf.train.AdagradOptimizer(0.01).minimize(loss)
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            value, spread = rate(
                lambda: sess.run(train),
                repeats=3 if quick else 5,
                min_time=0.3 if quick else 1.0,
                warmup=30,
            )
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return Result(SUITE, QUEUE_FED, framework, value, "steps/s", 3 if quick else 5, spread)


def run_graph_framework(tf, framework: str, quick: bool) -> list[Result]:
    return _rnn(tf, framework, quick) + [
        _pipeline(tf, framework, quick),
        _queue_fed_training(tf, framework, quick),
    ]


def run_nbflow(quick: bool = False) -> list[Result]:
    import nbflow as tf

    return run_graph_framework(tf, "nbflow", quick)


def run_tensorflow(quick: bool = False) -> list[Result]:
    return run_graph_framework(tensorflow_v1(), "tensorflow", quick)


def run_pytorch(quick: bool = False) -> list[Result]:
    import torch

    torch.set_num_threads(2)
    repeats = 3 if quick else 7
    min_time = 0.2 if quick else 0.5
    w_value, xs_value = _rnn_data()
    w = torch.from_numpy(w_value).requires_grad_(True)
    xs = torch.from_numpy(xs_value)

    def forward():
        with torch.no_grad():
            h = torch.zeros(BATCH, HIDDEN)
            for t in range(STEPS):
                h = torch.tanh(h @ w + xs[t])
        return h.numpy()

    def forward_backward():
        h = torch.zeros(BATCH, HIDDEN)
        for t in range(STEPS):
            h = torch.tanh(h @ w + xs[t])
        (grad,) = torch.autograd.grad(h.sum(), [w])
        return grad.numpy()

    out = []
    for name, fn in ((RNN_FORWARD, forward), (RNN_BACKWARD, forward_backward)):
        value, spread = rate(fn, repeats=repeats, min_time=min_time)
        out.append(
            Result(SUITE, name, "pytorch", value, "sequences/s", repeats, spread, note="eager loop")
        )
    return out


def run_numpy(quick: bool = False) -> list[Result]:
    """A plain Python loop over NumPy, backward by hand: the floor of a NumPy-kernel system."""
    repeats = 3 if quick else 7
    min_time = 0.2 if quick else 0.5
    w, xs = _rnn_data()

    def forward():
        h = np.zeros((BATCH, HIDDEN), np.float32)
        for t in range(STEPS):
            h = np.tanh(h @ w + xs[t])
        return h

    def forward_backward():
        hs = [np.zeros((BATCH, HIDDEN), np.float32)]
        for t in range(STEPS):
            hs.append(np.tanh(hs[-1] @ w + xs[t]))
        grad_w = np.zeros_like(w)
        dh = np.ones_like(hs[-1])
        for t in range(STEPS, 0, -1):
            dz = dh * (1 - hs[t] * hs[t])
            grad_w += hs[t - 1].T @ dz
            dh = dz @ w.T
        return grad_w

    out = []
    for name, fn in ((RNN_FORWARD, forward), (RNN_BACKWARD, forward_backward)):
        value, spread = rate(fn, repeats=repeats, min_time=min_time)
        out.append(
            Result(SUITE, name, "numpy", value, "sequences/s", repeats, spread, note="hand-written")
        )
    return out
