"""Issue 5's workloads: the cost of a cross-device edge and a model split over two devices.

(a) a cross-device edge inside one session: x (fed) -> identity on CPU:0 -> identity on CPU:1,
    for a 1 KB and a 100 MB float32 tensor, against the same graph on one device (no transfer)
    and against the floor of a plain in-process copy (``np.copyto``, in the numpy column), in
    calls per second (each result's note gives the MB/s it amounts to). Within one process an
    edge needs no copy when the framework hands the buffer over, so a figure above the floor
    means the transfer is zero-copy, not that it beats memcpy;
(b) the OSDI Figure 1 MLP (784-100-10, batch 100, Adagrad) with layer 1 on CPU:0 and layer 2 on
    CPU:1 (``ConfigProto(device_count={'CPU': 2})``) against the same model on one device, in
    steps per second.

nbflow and TensorFlow run the same tf.compat.v1 code. The GPU figures of issue 5 (c) are not
measured here.

    python -m bench.run --suite devices [--quick]
"""

from __future__ import annotations

import numpy as np

from bench.common import Result, rate, tensorflow_v1
from bench.training import _data

SUITE = "devices"
SIZES = (1024, 100 * 10**6)
MLP_ONE = "b) Figure 1 MLP b100 Adagrad, 1 device"
MLP_SPLIT = "b) Figure 1 MLP b100 Adagrad, layer 1 CPU:0 / layer 2 CPU:1"


def _size(nbytes: int) -> str:
    return f"{nbytes // 1024} KB" if nbytes < 1 << 20 else f"{nbytes // 10**6} MB"


def _edge_label(nbytes: int, split: bool) -> str:
    where = "CPU:0 -> CPU:1 (Send/Recv)" if split else "one device (no transfer)"
    return f"a) {_size(nbytes)} tensor, {where}"


def _figure(calls: float, nbytes: int) -> str:
    """The note beside a calls/s figure: the bytes per second it amounts to."""
    return f"{calls * nbytes / 1e6:,.1f} MB/s"


def _transfer(tf, framework: str, nbytes: int, quick: bool) -> list[Result]:
    repeats = 3 if quick else 7
    min_time = 0.1 if quick else 0.3
    src = np.ones(nbytes // 4, np.float32)
    out = []
    for split in (False, True):
        graph = tf.Graph()
        with graph.as_default():
            x = tf.placeholder(tf.float32, src.shape, name="x")
            with tf.device("/cpu:0"):
                y = tf.identity(x)
            with tf.device("/cpu:1" if split else "/cpu:0"):
                z = tf.identity(y)
        config = tf.ConfigProto(device_count={"CPU": 2 if split else 1})
        with tf.Session(graph=graph, config=config) as sess:
            feed = {x: src}
            calls, spread = rate(lambda: sess.run(z.op, feed), repeats=repeats, min_time=min_time)
        out.append(
            Result(SUITE, _edge_label(nbytes, split), framework, calls, "calls/s", repeats,
                   spread, note=_figure(calls, nbytes))
        )  # fmt: skip
    return out


def _mlp(tf, framework: str, split: bool, quick: bool) -> Result:
    repeats = 3 if quick else 7
    x_value, y_value = _data(100, 784)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 784])
        y = tf.placeholder(tf.float32, [None, 10])
        with tf.device("/cpu:0"):
            w1 = tf.Variable(tf.random_normal([784, 100], stddev=0.05, seed=1))
            b1 = tf.Variable(tf.zeros([100]))
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
        with tf.device("/cpu:1" if split else "/cpu:0"):
            w2 = tf.Variable(tf.random_normal([100, 10], stddev=0.05, seed=2))
            b2 = tf.Variable(tf.zeros([10]))
            logits = tf.matmul(h, w2) + b2
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf.train.AdagradOptimizer(0.01).minimize(loss)
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(device_count={"CPU": 2 if split else 1})
    with tf.Session(graph=graph, config=config) as sess:
        sess.run(init)
        feed = {x: x_value, y: y_value}
        steps, spread = rate(
            lambda: sess.run(train, feed), repeats=repeats, min_time=0.2 if quick else 0.5
        )
    return Result(SUITE, MLP_SPLIT if split else MLP_ONE, framework, steps, "steps/s", repeats,
                  spread)  # fmt: skip


def run_graph_framework(tf, framework: str, quick: bool) -> list[Result]:
    out = []
    for nbytes in SIZES:
        out += _transfer(tf, framework, nbytes, quick)
    return out + [_mlp(tf, framework, False, quick), _mlp(tf, framework, True, quick)]


def run_nbflow(quick: bool = False) -> list[Result]:
    import nbflow as tf

    return run_graph_framework(tf, "nbflow", quick)


def run_tensorflow(quick: bool = False) -> list[Result]:
    return run_graph_framework(tensorflow_v1(), "tensorflow", quick)


def run_numpy(quick: bool = False) -> list[Result]:
    """The floor of a cross-device edge in one process: one plain copy into a preallocated
    buffer (``np.copyto``)."""
    repeats = 3 if quick else 7
    out = []
    for nbytes in SIZES:
        src = np.ones(nbytes // 4, np.float32)
        dst = np.empty_like(src)
        calls, spread = rate(
            lambda: np.copyto(dst, src), repeats=repeats, min_time=0.1 if quick else 0.3
        )
        out.append(
            Result(SUITE, _edge_label(nbytes, True), "numpy", calls, "calls/s", repeats, spread,
                   note=f"np.copyto; {_figure(calls, nbytes)}")
        )  # fmt: skip
    return out


if __name__ == "__main__":
    import sys

    quick = "--quick" in sys.argv
    for r in run_nbflow(quick) + run_numpy(quick):
        print(f"{r.workload:60s} {r.framework:8s} {r.value:14,.1f} {r.unit:8s} {r.note}")
