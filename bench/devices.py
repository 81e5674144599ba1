"""Issue 5 benchmarks: the cost of a cross-device edge and a model split over two devices.

(a) Send/Recv between two CPU devices of one session, for a 1 KB and a 100 MB float32 tensor:
    steps per second and MB/s, against the floor of a plain in-process copy (``np.copyto``)
    and against the same graph on one device (no transfer);
(b) the OSDI Figure 1 MLP (784-100-10, batch 100, Adagrad) with its layers on two CPU devices
    against the same model on one device.

    python -m bench.devices [--quick]
"""

from __future__ import annotations

import sys

import numpy as np

from bench.common import Result, rate

SUITE = "devices"


def _transfer(tf, nbytes: int, quick: bool) -> list[Result]:
    n = nbytes // 4
    results = []
    src = np.ones(n, np.float32)
    dst = np.empty_like(src)
    min_time = 0.05 if quick else 0.2
    copy_rate, spread = rate(lambda: np.copyto(dst, src), min_time=min_time)
    label = f"a) cross-device edge {_size(nbytes)}"
    results.append(
        Result(SUITE, label, "numpy copy (floor)", copy_rate, "calls/s", 7, spread,
               note=f"{copy_rate * nbytes / 1e6:,.0f} MB/s")
    )  # fmt: skip
    for cpus, name in ((1, "nbflow 1 device"), (2, "nbflow CPU:0->CPU:1")):
        tf.reset_default_graph()
        x = tf.placeholder(tf.float32, [n], name="x")
        with tf.device("/cpu:0"):
            y = tf.identity(x)
        with tf.device(f"/cpu:{cpus - 1}"):
            z = tf.identity(y)
        sess = tf.Session(config=tf.ConfigProto(device_count={"CPU": cpus}))
        feed = {x: src}
        sess.run(z.op, feed)
        calls, spread = rate(lambda: sess.run(z.op, feed), min_time=min_time)
        sess.close()
        results.append(
            Result(SUITE, label, name, calls, "calls/s", 7, spread,
                   note=f"{calls * nbytes / 1e6:,.0f} MB/s")
        )  # fmt: skip
    return results


def _size(nbytes: int) -> str:
    return f"{nbytes // 1024} KB" if nbytes < 1 << 20 else f"{nbytes // 10**6} MB"


def _mlp(tf, split: bool, quick: bool) -> Result:
    tf.reset_default_graph()
    rng = np.random.default_rng(0)
    x_value = rng.standard_normal((100, 784)).astype(np.float32)
    y_value = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 100)]
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
    sess = tf.Session(config=tf.ConfigProto(device_count={"CPU": 2 if split else 1}))
    sess.run(tf.global_variables_initializer())
    feed = {x: x_value, y: y_value}
    steps, spread = rate(lambda: sess.run(train, feed), min_time=0.05 if quick else 0.3)
    sess.close()
    name = "nbflow 2 CPU devices" if split else "nbflow 1 device"
    return Result(SUITE, "b) Figure 1 MLP 784-100-10 b100 Adagrad", name, steps, "steps/s", 7,
                  spread)  # fmt: skip


def run_nbflow(quick: bool = False) -> list[Result]:
    import nbflow as tf

    results = _transfer(tf, 1024, quick) + _transfer(tf, 100 * 10**6, quick)
    results += [_mlp(tf, False, quick), _mlp(tf, True, quick)]
    return results


if __name__ == "__main__":
    for r in run_nbflow(quick="--quick" in sys.argv):
        print(f"{r.workload:45s} {r.framework:22s} {r.value:12,.1f} {r.unit:8s} {r.note}")
