"""What TLS costs: the null step and Figure 1's training rate, secure vs ``security=False``.

    python -m tests.faults.tls_cost [--rounds 15]

Two ``Cluster.local`` clusters run side by side, one with the default per-cluster TLS
credentials and one with plain TCP (each one ps and one worker task on two worker processes).
Rounds alternate which cluster goes first; each round times one block per cluster of

- null steps (``bench/distributed.py``'s scalar model: the worker reads a scalar from the ps
  task and sends an update back): the block's median step time;
- Figure 1's MLP (784-256-10, batch 64): weights on the ps task, forward and backward on the
  worker task, the update applied on the ps task, one ``Session.run`` per step: examples/s.

The figures printed are medians over rounds, and the ratio secure / plain. On a loaded machine
wall-clock step times mostly measure the wait for a core, so each block also sums the CPU time
(user + system) that the client and the two worker processes spent: CPU ms per step, the cost
TLS adds whatever the load.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import psutil

import nbflow as tf
from nbflow.distributed import Cluster


def _null_step(target: str):
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(0.0, name="null_scalar")
            counter = tf.Variable(0.0, name="null_counter")
        with tf.device("/job:worker/task:0"):
            value = tf.reduce_sum(v)
        with tf.device("/job:ps/task:0"):
            step = tf.assign_add(counter, value * 0.0 + 1.0)
        init = tf.global_variables_initializer()
    sess = tf.Session(target, graph=graph)
    sess.run(init)
    return sess, step


def _mlp_step(target: str):
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            w1 = tf.Variable(tf.random_normal([784, 256], stddev=0.05, seed=1), name="w1")
            w2 = tf.Variable(tf.random_normal([256, 10], stddev=0.05, seed=2), name="w2")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [64, 784])
            y = tf.placeholder(tf.int32, [64])
            logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
            )
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = tf.global_variables_initializer()
    rng = np.random.default_rng(0)
    feed = {
        x: rng.normal(size=(64, 784)).astype(np.float32),
        y: rng.integers(0, 10, 64).astype(np.int32),
    }
    sess = tf.Session(target, graph=graph)
    sess.run(init)
    return sess, train, feed


def _cpu_seconds(processes: list[psutil.Process]) -> float:
    return sum(sum(p.cpu_times()[:2]) for p in processes)


def _null_block(sess, step, n: int, processes: list) -> tuple[float, float]:
    """(median step seconds, CPU seconds per step)."""
    times = []
    cpu = _cpu_seconds(processes)
    for _ in range(n):
        start = time.perf_counter()
        sess.run(step)
        times.append(time.perf_counter() - start)
    return statistics.median(times), (_cpu_seconds(processes) - cpu) / n


def _mlp_block(sess, train, feed, n: int, processes: list) -> tuple[float, float]:
    """(examples/s, CPU seconds per step)."""
    cpu = _cpu_seconds(processes)
    start = time.perf_counter()
    for _ in range(n):
        sess.run(train, feed)
    return n * 64 / (time.perf_counter() - start), (_cpu_seconds(processes) - cpu) / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--null-steps", type=int, default=200)
    parser.add_argument("--mlp-steps", type=int, default=30)
    args = parser.parse_args()
    spec = {"ps": 1, "worker": 1}
    clusters = {
        "tls": Cluster.local(n_workers=2, memory_limit="1GiB", spec=spec),
        "plain": Cluster.local(n_workers=2, memory_limit="1GiB", spec=spec, security=False),
    }
    try:
        steps = {}
        for kind, cluster in clusters.items():
            pids = {t.pid for t in cluster.tasks.values()}
            processes = [psutil.Process()] + [psutil.Process(p) for p in sorted(pids)]
            null_sess, null_step = _null_step(cluster.target)
            mlp_sess, train, feed = _mlp_step(cluster.target)
            _null_block(null_sess, null_step, 50, processes)  # warm: plans, connections
            _mlp_block(mlp_sess, train, feed, 5, processes)
            steps[kind] = (null_sess, null_step, mlp_sess, train, feed, processes)
        figures: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in clusters}
        for r in range(args.rounds):
            for kind in ("tls", "plain") if r % 2 == 0 else ("plain", "tls"):
                null_sess, null_step, mlp_sess, train, feed, processes = steps[kind]
                null_s, null_cpu = _null_block(null_sess, null_step, args.null_steps, processes)
                rate, mlp_cpu = _mlp_block(mlp_sess, train, feed, args.mlp_steps, processes)
                figures[kind].append((null_s, null_cpu, rate, mlp_cpu))
        medians = {
            kind: [statistics.median(f[i] for f in figures[kind]) for i in range(4)]
            for kind in clusters
        }
        for kind, (null_s, null_cpu, rate, mlp_cpu) in medians.items():
            print(
                f"{kind:5}  null step {null_s * 1e3:6.2f} ms wall, {null_cpu * 1e3:5.2f} ms CPU;  "
                f"Figure 1 MLP {rate:5.0f} examples/s, {mlp_cpu * 1e3:6.2f} ms CPU per step"
            )
        tls, plain = medians["tls"], medians["plain"]
        print(
            f"tls/plain: null step wall x{tls[0] / plain[0]:.2f}, CPU x{tls[1] / plain[1]:.2f}; "
            f"MLP rate x{tls[2] / plain[2]:.2f}, CPU per step x{tls[3] / plain[3]:.2f}"
        )
        print(f"rounds {args.rounds}: null blocks of {args.null_steps}, MLP of {args.mlp_steps}")
    finally:
        for cluster in clusters.values():
            cluster.close()


if __name__ == "__main__":
    main()
