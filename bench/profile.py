"""Where a training step's time goes: a per-op-type profile from the tracer's step stats.

    python -m bench.profile               # the CNN and the large MLP, BLAS on 1 thread
    python -m bench.profile --threads 2

Each traced step (``RunOptions(trace_level=FULL_TRACE)``) records every kernel's span in
``RunMetadata.step_stats``; the profile takes, per node, the median over the traced steps and
sums the nodes of one op type. Convolutions and matrix products also get their floating-point
work (``op_flops``, from the shapes the step saw), so each line says how many GFLOP/s that op
type reached against the same process's 1024³ GEMM, timed between the steps: the floor of a
NumPy-kernel system is the step's FLOPs at that rate. Kernels of independent branches may
overlap, so the per-op sum can exceed the step's wall time.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time
from typing import Any

import numpy as np

from bench.common import run_header
from bench.training import CNN, MLP_LARGE, MLP_SMALL, _cnn_graph, _data, _mlp_graph

_CONVOLUTIONS = ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")


def op_flops(op: Any, shapes: dict[str, list[int]]) -> float:
    """Multiply-adds x 2 of a MatMul or a 2-D convolution (or its backward ops); 0 otherwise.
    ``shapes`` maps tensor names to the shapes they had in the step.

    Every convolution op does the forward's work: N*OH*OW*KH*KW*C*O products, with the input
    (N, H, W, C), the filter [KH, KW, C, O] and the output (N, OH, OW, O) in NHWC."""

    def shape(t: Any) -> list[int]:
        return shapes.get(t.name) or t.shape.as_list()

    if op.type == "MatMul":
        a, b = (shape(t) for t in op.inputs)
        m = a[1] if op.get_attr("transpose_a") else a[0]
        k = a[0] if op.get_attr("transpose_a") else a[1]
        n = b[0] if op.get_attr("transpose_b") else b[1]
        return 2.0 * m * k * n
    if op.type not in _CONVOLUTIONS or op.get_attr("data_format") != "NHWC":
        return 0.0
    if op.type == "Conv2D":
        filter_shape, out_shape = shape(op.inputs[1]), shape(op.outputs[0])
    elif op.type == "Conv2DBackpropInput":
        filter_shape, out_shape = shape(op.inputs[1]), shape(op.inputs[2])
    else:
        filter_shape, out_shape = shape(op.outputs[0]), shape(op.inputs[2])
    kh, kw, c, o = filter_shape
    n, oh, ow, _ = out_shape
    return 2.0 * n * oh * ow * kh * kw * c * o


def _gemm_seconds(a: np.ndarray) -> float:
    start = time.perf_counter()
    a @ a
    return time.perf_counter() - start


def profile_step(tf: Any, sess: Any, fetch: Any, feed: dict, steps: int = 15) -> dict[str, Any]:
    """Median step time (untraced) and, per op type, the summed per-node medians of ``steps``
    traced steps with their FLOPs: ``{"step_ms", "ops": {type: (ms, gflop)}, "ceiling"}``.
    The ceiling (float32 GEMM 1024³, GFLOP/s) is timed between the steps, so that a shared
    machine's load weighs on the floor as on the step."""
    a = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    gemm = []
    for _ in range(3):
        sess.run(fetch, feed)
    wall = []
    for _ in range(steps):
        start = time.perf_counter()
        sess.run(fetch, feed)
        wall.append(time.perf_counter() - start)
        gemm.append(_gemm_seconds(a))
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    per_node: dict[str, list[float]] = collections.defaultdict(list)
    shapes = {t.name: list(np.shape(v)) for t, v in feed.items()}
    for _ in range(steps):
        metadata = tf.RunMetadata()
        sess.run(fetch, feed, options=options, run_metadata=metadata)
        gemm.append(_gemm_seconds(a))
        for device in metadata.step_stats.dev_stats:
            for node in device.node_stats:
                per_node[node.node_name].append(node.op_end_rel_micros - node.op_start_rel_micros)
                for out in node.output:
                    shapes[f"{node.node_name}:{out.slot}"] = out.tensor_description.shape
    ops: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
    for name, micros in per_node.items():
        op = sess.graph.get_operation_by_name(name)
        ops[op.type][0] += statistics.median(micros) / 1e3
        ops[op.type][1] += op_flops(op, shapes) / 1e9
    return {
        "step_ms": statistics.median(wall) * 1e3,
        "ops": {k: tuple(v) for k, v in ops.items()},
        "ceiling": 2 * 1024**3 / statistics.median(gemm) / 1e9,
    }


def format_profile(title: str, profile: dict[str, Any]) -> str:
    ceiling = profile["ceiling"]
    ops = sorted(profile["ops"].items(), key=lambda kv: -kv[1][0])
    total_ms = sum(ms for ms, _ in profile["ops"].values())
    total_gflop = sum(g for _, g in profile["ops"].values())
    floor_ms = total_gflop / ceiling * 1e3
    lines = [
        f"### {title}: {profile['step_ms']:.1f} ms/step (untraced), kernels {total_ms:.1f} ms, "
        f"{total_gflop:.2f} GFLOP, floor {floor_ms:.1f} ms at {ceiling:.0f} GFLOP/s "
        f"(step = {profile['step_ms'] / floor_ms:.2f}x floor)",
        "",
        "| op type | ms | share | GFLOP | GFLOP/s | of GEMM ceiling |",
        "|---|---|---|---|---|---|",
    ]
    for op_type, (ms, gflop) in ops:
        if ms < 0.05:
            continue
        rate = f"{gflop / ms * 1e3:.1f}" if gflop else ""
        share = f"{gflop / ms * 1e3 / ceiling:.0%}" if gflop else ""
        gf = f"{gflop:.3f}" if gflop else ""
        lines.append(f"| {op_type} | {ms:.2f} | {ms / total_ms:.0%} | {gf} | {rate} | {share} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (threadpoolctl)")
    parser.add_argument("--steps", type=int, default=15)
    args = parser.parse_args()
    print(run_header())
    from threadpoolctl import threadpool_limits

    import nbflow as tf

    with threadpool_limits(args.threads):
        workloads = []
        graph = tf.Graph()
        with graph.as_default():
            x, y, train = _cnn_graph(tf)
            init = tf.global_variables_initializer()
        xs, ys = _data(CNN[2], 784)
        workloads.append((CNN[0], graph, init, train, {x: xs.reshape(-1, 28, 28, 1), y: ys}))
        for (name, sizes, batch), optimizer in (
            (MLP_LARGE, tf.train.GradientDescentOptimizer),
            (MLP_SMALL, tf.train.AdagradOptimizer),
        ):
            graph = tf.Graph()
            with graph.as_default():
                x, y, train = _mlp_graph(tf, sizes, optimizer(0.01))
                init = tf.global_variables_initializer()
            xs, ys = _data(batch, sizes[0])
            workloads.append((name, graph, init, train, {x: xs, y: ys}))
        for title, graph, init, train, feed in workloads:
            with tf.Session(graph=graph) as sess:
                sess.run(init)
                profile = profile_step(tf, sess, train, feed, args.steps)
            title = f"{title}, {args.threads} BLAS thread(s)"
            print(format_profile(title, profile))
            print()


if __name__ == "__main__":
    main()
