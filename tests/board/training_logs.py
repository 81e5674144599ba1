"""A real nbflow run writing event logs for the board tests: a two-layer model in name scopes,
its graph, a scalar per step, a histogram and an image summary, and a Chrome trace of one step.

    python -m tests.board.training_logs LOGDIR --steps 30 [--start 0] [--delay 0.2]

keeps appending (``--delay`` between steps) so a test can watch a live run.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import nbflow as tf
import nbflow.summary as summary
from nbflow.runtime.timeline import Timeline

LOSS_TAG = "train/loss"


def build_model() -> dict:
    """Ops under scopes layer1/, layer2/ (same structure) and loss/; returns handles."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        h = x
        for i, width in ((1, 4), (2, 4)):
            with tf.name_scope(f"layer{i}"):
                w = tf.Variable(np.full((4, width), 0.1, np.float32), name="weights")
                b = tf.Variable(np.zeros(width, np.float32), name="bias")
                h = tf.nn.relu(tf.matmul(h, w) + b)
        with tf.name_scope("loss"):
            loss = tf.reduce_mean(tf.square(h - 1.0))
        image = tf.placeholder(tf.float32, [1, 8, 8, 3], name="image")
        summaries = [
            summary.histogram("weights", w),
            summary.image("input", image, max_outputs=1),
        ]
        merged = summary.merge(summaries)
        init = tf.global_variables_initializer()
    return {"graph": graph, "x": x, "loss": loss, "merged": merged, "init": init, "image": image}


def write_run(logdir: str | Path, steps: int, start: int = 0, delay: float = 0.0) -> None:
    """Write ``steps`` steps of a run to ``logdir`` (a run folder), flushing after each."""
    m = build_model()
    rng = np.random.default_rng(start)
    logdir = Path(logdir)
    with tf.Session(graph=m["graph"]) as sess:
        sess.run(m["init"])
        writer = summary.FileWriter(str(logdir), sess.graph if start == 0 else None)
        for step in range(start, start + steps):
            feed = {m["x"]: rng.normal(size=(8, 4)), m["image"]: rng.random((1, 8, 8, 3))}
            traced = step == 0
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE) if traced else None
            metadata = tf.RunMetadata() if traced else None
            loss, merged = sess.run(
                [m["loss"], m["merged"]], feed, options=options, run_metadata=metadata
            )
            value = float(loss) + 1.0 / (1 + step)
            writer.add_summary(
                summary.Summary(value=[summary.Summary.Value(tag=LOSS_TAG, simple_value=value)]),
                step,
            )
            writer.add_summary(merged, step)
            if traced:
                trace = Timeline(metadata.step_stats).generate_chrome_trace_format()
                (logdir / "step0.trace.json").write_text(trace)
            writer.flush()
            if delay:
                time.sleep(delay)  # pacing a live run, not waiting on a condition
        writer.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("logdir")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    write_run(args.logdir, args.steps, args.start, args.delay)
