"""The three graphs the Board's graph view is compared with TensorBoard on, logged by nbflow:

mlp   the demo's OSDI Figure 1 MLP (784-100-10, Adagrad, init, Saver, a loss summary)
rnn   a 100-step ``static_rnn`` of a BasicRNNCell (cells rnn/basic_rnn_cell_0 … _99 alike)
cnn   two conv/pool layers, a dense layer and Adam

``layered_graph()`` is a GraphDef of about 10,000 ops in 60 scopes (the graph view's budget).

python -m tests.board.graph_logs LOGDIR     writes LOGDIR/{mlp,rnn,cnn}
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import nbflow as tf
import nbflow.summary as summary
from nbflow.demo import train


def layered_graph(scopes: int = 60) -> dict:
    """About 10,000 ops: ``scopes`` chains of 140 + i ops each (no two alike), chained on."""
    kinds = ["MatMul", "Add", "Relu", "Mul", "Sub", "Tanh", "Identity"]
    node, previous = [], None
    for i in range(scopes):
        for j in range(140 + i):
            op = kinds[(i + j) % len(kinds)]
            name = f"layer{i}/step{j}_{op}"  # no trailing number: no series of one op type
            node.append(
                {"name": name, "op": op, "input": [previous] if previous else [], "device": ""}
            )
            previous = name
    return {"node": node, "versions": {"producer": 1}}


def write_mlp(logdir: Path) -> None:
    train(steps=2, log_every=1, verbose=False, logdir=str(logdir))


def _log(graph: tf.Graph, logdir: Path) -> None:
    summary.FileWriter(str(logdir), graph).close()


def write_rnn(logdir: Path, steps: int = 100) -> None:
    graph = tf.Graph()
    with graph.as_default():
        inputs = [tf.placeholder(tf.float32, [None, 8], name=f"x_{t}") for t in range(steps)]
        cell = tf.nn.rnn_cell.BasicRNNCell(16)
        outputs, _ = tf.nn.static_rnn(cell, inputs, dtype=tf.float32)
        with tf.name_scope("loss"):
            loss = tf.reduce_mean(tf.square(outputs[-1]))
        tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        tf.global_variables_initializer()
    _log(graph, logdir)


def write_cnn(logdir: Path) -> None:
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 28, 28, 1], name="images")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        h = x
        for i, channels in enumerate((16, 32), start=1):
            with tf.name_scope(f"conv{i}"):
                w = tf.Variable(
                    tf.truncated_normal([5, 5, int(h.shape[-1]), channels], stddev=0.1), name="W"
                )
                b = tf.Variable(tf.zeros([channels]), name="b")
                h = tf.nn.relu(tf.nn.conv2d(h, w, [1, 1, 1, 1], "SAME") + b)
                h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        with tf.name_scope("dense"):
            flat = tf.reshape(h, [-1, 7 * 7 * 32])
            w = tf.Variable(tf.truncated_normal([7 * 7 * 32, 10], stddev=0.1), name="W")
            b = tf.Variable(tf.zeros([10]), name="b")
            logits = tf.matmul(flat, w) + b
        with tf.name_scope("loss"):
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            )
        tf.summary.scalar("loss", loss)
        tf.train.AdamOptimizer(1e-3).minimize(loss)
        tf.global_variables_initializer()
        tf.train.Saver()
    _log(graph, logdir)


def write_all(logdir: Path) -> None:
    np.random.seed(0)
    write_mlp(logdir / "mlp")
    write_rnn(logdir / "rnn")
    write_cnn(logdir / "cnn")


if __name__ == "__main__":
    write_all(Path(sys.argv[1]))
