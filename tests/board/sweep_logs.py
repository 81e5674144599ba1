"""A learning-rate sweep logged by nbflow for comparing runs: linear regression trained by SGD
on noisy mini-batches, started with ``start_training(arguments=...)`` so each run records its
hyperparameters (TensorBoard's HParams summary) beside its loss, weight histogram and graph.

    python -m tests.board.sweep_logs LOGDIR     writes LOGDIR/{lr0.3,lr0.1,lr0.03}

At step 60 each run meets one bad batch (an outlier label), so its loss spikes once: what
"ignore outliers in chart scaling" is for.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import nbflow as tf
import nbflow.summary as summary
from nbflow.notebook.training import TrainingRun, start_training

LOSS_TAG = "loss"
RATES = (0.3, 0.1, 0.03)
SPIKE_STEP = 60


def train_regression(run: TrainingRun, logdir: Path, lr: float, steps: int, batch: int) -> float:
    """SGD on y = x . w_true + noise; logs loss and the weights' histogram every step."""
    rng = np.random.default_rng(7)
    w_true = rng.normal(size=(8, 1))
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 8], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        with tf.name_scope("model"):
            w = tf.Variable(np.zeros((8, 1), np.float32), name="weights")
            prediction = tf.matmul(x, w)
        with tf.name_scope("mse"):
            loss = tf.reduce_mean(tf.square(prediction - y))
        step_op = tf.train.GradientDescentOptimizer(lr).minimize(loss)
        summaries = summary.merge([summary.scalar(LOSS_TAG, loss), summary.histogram("weights", w)])
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess, summary.FileWriter(str(logdir), graph) as writer:
        sess.run(init)
        value = 0.0
        for step in range(steps):
            if not run.check():
                break
            xs = rng.normal(size=(batch, 8))
            ys = xs @ w_true + rng.normal(scale=0.5, size=(batch, 1))
            if step == SPIKE_STEP:
                ys[0] += 40.0  # one mislabelled example
            value, logged, _ = sess.run([loss, summaries, step_op], {x: xs, y: ys})
            writer.add_summary(logged, step)
    return float(value)


def write_sweep(root: Path, steps: int = 150, rates: tuple[float, ...] = RATES) -> list[str]:
    """One run per learning rate under ``root``; returns the run names."""
    names = []
    for lr in rates:
        name = f"lr{lr:g}"
        logdir = root / name
        arguments = {"lr": lr, "optimizer": "sgd", "batch_size": 16, "steps": steps}
        training = start_training(
            lambda run, d=logdir, lr=lr: train_regression(run, d, lr, steps, 16),
            logdir=logdir,
            name=name,
            arguments=arguments,
        )
        if not training.wait(120) or training.error is not None:
            raise RuntimeError(f"run {name} did not finish: {training.error!r}")
        names.append(name)
    return names


if __name__ == "__main__":
    write_sweep(Path(sys.argv[1]))
