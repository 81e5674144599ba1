"""What the integer zero check costs: small binary steps with and without it, in one process.

    python -m tests.faults.division_cost

``_Division.bind`` gives integer nodes of FloorDiv/FloorMod/TruncateDiv/TruncateMod a kernel that
checks the divisor; float nodes keep the pasted expression. Each variant ("old": the plain
``OpDef.bind``; "new": the check) builds its own sessions of ``a+b``, ``a/b``, float ``a//b``
and int32 ``a//b`` on 2x3 arrays (one operand a variable, so nothing folds). Batches of 200
runs are timed in a shuffled order, 150 rounds; the figures are medians of calls/s. ``a+b`` and
``a/b`` run the same code in both variants: their ratio shows the noise.
"""

from __future__ import annotations

import random
import statistics
import time

import numpy as np

import nbflow as tf
from nbflow.framework.op_def import OpDef
from nbflow.ops import math_binary

CHECKED_BIND = math_binary._Division.bind


def _unchecked_bind(self, op, device_type="CPU"):
    return OpDef.bind(self, op, device_type)


def _build(variant: str):
    math_binary._Division.bind = CHECKED_BIND if variant == "new" else _unchecked_bind
    graph = tf.Graph()
    with graph.as_default():
        af = tf.constant(np.linspace(1, 2, 6, dtype=np.float32).reshape(2, 3))
        bf = tf.Variable(np.full((2, 3), 1.5, np.float32))
        ai = tf.constant(np.arange(1, 7, dtype=np.int32).reshape(2, 3))
        bi = tf.Variable(np.full((2, 3), 2, np.int32))
        fetches = {"a+b": af + bf, "a/b": af / bf, "a//b float": af // bf, "a//b int32": ai // bi}
        sess = tf.Session(graph=graph)
        sess.run(tf.global_variables_initializer())
        for fetch in fetches.values():
            for _ in range(200):
                sess.run(fetch)  # plans compiled (and kernels bound) under this variant
    return sess, fetches


def main() -> None:
    steps = {v: _build(v) for v in ("old", "new")}
    math_binary._Division.bind = CHECKED_BIND
    rates: dict[tuple[str, str], list[float]] = {(v, k): [] for v in steps for k in steps[v][1]}
    order = list(rates)
    random.seed(0)
    for _ in range(150):
        random.shuffle(order)
        for v, k in order:
            run, fetch = steps[v][0].run, steps[v][1][k]
            start = time.perf_counter()
            for _ in range(200):
                run(fetch)
            rates[(v, k)].append(200 / (time.perf_counter() - start))
    for k in steps["old"][1]:
        old, new = statistics.median(rates[("old", k)]), statistics.median(rates[("new", k)])
        print(f"{k:12} old {old:9.0f}/s  new {new:9.0f}/s  new/old {new / old:.3f}")


if __name__ == "__main__":
    main()
