"""Issue 2's workloads: session-call overhead and the executor's per-node cost.

(a) feed a scalar, fetch a+b; (b) a chain of 10 and (c) of 100 elementwise ops on a [16]
vector; (d) 10,000 NoOps chained by control dependencies, run as one step (null ops per
second). Each framework builds the same graph; PyTorch runs the same arithmetic eagerly.
"""

from __future__ import annotations

import numpy as np

from bench.common import Result, rate, tensorflow_v1

SUITE = "core"


def _chain(x, n, mul, add):
    for i in range(n):
        x = mul(x, 1.0001) if i % 2 == 0 else add(x, 0.5)
    return x


def run_graph_framework(tf, framework: str, quick: bool) -> list[Result]:
    """The workloads for nbflow and TensorFlow's tf.compat.v1 (same API)."""
    out = []
    repeats = 3 if quick else 7
    graph = tf.Graph()
    with graph.as_default():
        a = tf.placeholder(tf.float32, [], name="a")
        b = tf.constant(2.0)
        total = a + b
        x = tf.placeholder(tf.float32, [16], name="x")
        chain10 = _chain(x, 10, lambda t, c: t * c, lambda t, c: t + c)
        chain100 = _chain(x, 100, lambda t, c: t * c, lambda t, c: t + c)
        last = tf.no_op(name="start")
        for i in range(10_000):
            with tf.control_dependencies([last]):
                last = tf.no_op(name=f"n{i}")
        null_chain = last
    with tf.Session(graph=graph) as sess:
        vector = np.ones(16, np.float32)
        value, spread = rate(lambda: sess.run(total, {a: 1.0}), repeats=repeats)
        out.append(
            Result(SUITE, "a) feed scalar, fetch a+b", framework, value, "calls/s", repeats, spread)
        )
        for name, fetch in (
            ("b) chain of 10 ops [16]", chain10),
            ("c) chain of 100 ops [16]", chain100),
        ):
            value, spread = rate(lambda f=fetch: sess.run(f, {x: vector}), repeats=repeats)
            out.append(Result(SUITE, name, framework, value, "calls/s", repeats, spread))
        value, spread = rate(
            lambda: sess.run(null_chain), work_per_call=10_001, repeats=repeats, min_time=0.5
        )
        out.append(
            Result(
                SUITE, "d) 10,000 chained no_ops", framework, value, "null ops/s", repeats, spread
            )
        )
    return out


def run_nbflow(quick: bool = False) -> list[Result]:
    import nbflow as tf

    return run_graph_framework(tf, "nbflow", quick)


def run_tensorflow(quick: bool = False) -> list[Result]:
    return run_graph_framework(tensorflow_v1(), "tensorflow", quick)


def run_pytorch(quick: bool = False) -> list[Result]:
    import torch

    torch.set_num_threads(2)
    repeats = 3 if quick else 7
    out = []
    b = torch.tensor(2.0)
    value, spread = rate(lambda: (torch.as_tensor(1.0) + b).numpy(), repeats=repeats)
    out.append(
        Result(
            SUITE,
            "a) feed scalar, fetch a+b",
            "pytorch",
            value,
            "calls/s",
            repeats,
            spread,
            note="eager",
        )
    )
    vector = np.ones(16, np.float32)
    for name, n in (("b) chain of 10 ops [16]", 10), ("c) chain of 100 ops [16]", 100)):
        fn = lambda n=n: _chain(torch.from_numpy(vector), n, torch.mul, torch.add).numpy()
        value, spread = rate(fn, repeats=repeats)
        out.append(Result(SUITE, name, "pytorch", value, "calls/s", repeats, spread, note="eager"))
    return out


def run_numpy(quick: bool = False) -> list[Result]:
    """The floor: the same arithmetic as bare NumPy calls, no framework at all."""
    repeats = 3 if quick else 7
    vector = np.ones(16, np.float32)
    out = []
    for name, n in (("b) chain of 10 ops [16]", 10), ("c) chain of 100 ops [16]", 100)):
        c1, c2 = np.float32(1.0001), np.float32(0.5)
        fn = lambda n=n: _chain(vector, n, lambda t, c: t * c1, lambda t, c: t + c2)
        value, spread = rate(fn, repeats=repeats)
        out.append(Result(SUITE, name, "numpy", value, "calls/s", repeats, spread))
    return out
