"""``python -m nbflow.demo``: the OSDI paper's Figure 1 MLP learns handwritten digits.

The model is Figure 1's: 784 inputs, a 100-unit ReLU layer, 10 logits, softmax cross-entropy,
Adagrad. The data is scikit-learn's bundled 8x8 digits (no download), each image upsampled 3x
and padded to 28x28 = 784 pixels, split 80/20 into training and test sets.

By default the job runs as the papers' system does: the variables on a parameter-server task
and the training step on a worker task, both on an embedded Dask LocalCluster of two worker
processes. ``--in-process`` runs it in this process instead. Either way the run writes its loss
curve, graph and a checkpoint to ``--logdir`` for TensorBoard or the nbflow Board.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import nbflow as tf

BATCH_SIZE = 100


def load_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(train images, train one-hot labels, test images, test labels) as float32 [N, 784]."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = digits.images.astype(np.float32) / 16.0  # [N, 8, 8] in [0, 1]
    images = np.kron(images, np.ones((1, 3, 3), np.float32))  # [N, 24, 24]
    images = np.pad(images, ((0, 0), (2, 2), (2, 2))).reshape(len(images), 784)
    labels = np.eye(10, dtype=np.float32)[digits.target]
    order = np.random.default_rng(seed).permutation(len(images))
    split = int(0.8 * len(images))
    train, test = order[:split], order[split:]
    return images[train], labels[train], images[test], labels[test]


def train(
    steps: int = 600,
    learning_rate: float = 0.1,
    seed: int = 0,
    log_every: int = 100,
    verbose: bool = True,
    target: str = "",
    logdir: str | None = None,
) -> float:
    """Train Figure 1's MLP; returns the test accuracy.

    ``target`` is a session target: "" for this process, or a cluster's ``target`` (then the
    variables live on /job:ps/task:0 and the step runs on /job:worker/task:0).
    """
    x_train, y_train, x_test, y_test = load_data(seed)
    graph = tf.Graph()
    placement = (
        tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")
        if target
        else None
    )
    with graph.as_default(), tf.device(placement):
        tf.set_random_seed(seed)
        # 1. Construct a graph representing the model (OSDI Figure 1).
        x = tf.placeholder(tf.float32, [None, 784])  # Placeholder for input.
        y = tf.placeholder(tf.float32, [None, 10])  # Placeholder for labels.
        W_1 = tf.Variable(tf.truncated_normal([784, 100], stddev=0.05))  # 784x100 weights.
        b_1 = tf.Variable(tf.zeros([100]))  # 100-element bias vector.
        layer_1 = tf.nn.relu(tf.matmul(x, W_1) + b_1)  # Output of hidden layer.
        W_2 = tf.Variable(tf.truncated_normal([100, 10], stddev=0.05))  # 100x10 weights.
        b_2 = tf.Variable(tf.zeros([10]))  # 10-element bias vector.
        layer_2 = tf.matmul(layer_1, W_2) + b_2  # Output of linear layer.
        # 2. Add nodes that represent the optimization algorithm.
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=layer_2))
        train_op = tf.train.AdagradOptimizer(learning_rate).minimize(loss)
        correct = tf.equal(tf.argmax(layer_2, 1), tf.argmax(y, 1))
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        init = tf.global_variables_initializer()
        loss_summary = tf.summary.scalar("loss", loss)
        saver = tf.train.Saver()
    writer = tf.summary.FileWriter(logdir, graph) if logdir else None

    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    # 3. Execute the graph on batches of input data.
    # The model is small: BLAS already uses every core inside each matmul, and a step is too
    # short for an inter-op thread pool to pay, so the session runs each step inline.
    config = tf.ConfigProto(inter_op_parallelism_threads=1)
    with tf.Session(target, graph=graph, config=config) as sess:
        sess.run(init)  # Randomly initialize weights.
        order = rng.permutation(len(x_train))
        position = 0
        for step in range(1, steps + 1):
            if position + BATCH_SIZE > len(order):
                order, position = rng.permutation(len(x_train)), 0
            batch = order[position : position + BATCH_SIZE]
            position += BATCH_SIZE
            feed = {x: x_train[batch], y: y_train[batch]}
            if log_every and step % log_every == 0:
                _, batch_loss, summary = sess.run([train_op, loss, loss_summary], feed)
                if writer is not None:
                    writer.add_summary(summary, step)
            if verbose and log_every and step % log_every == 0:
                test_accuracy = sess.run(accuracy, {x: x_test, y: y_test})
                print(
                    f"step {step:5d}  loss {batch_loss:.4f}  test accuracy {test_accuracy:.4f}  "
                    f"({time.perf_counter() - start:.1f} s)"
                )
            else:
                sess.run(train_op, feed)  # Perform one training step.
        final = float(sess.run(accuracy, {x: x_test, y: y_test}))
        if logdir:
            saver.save(sess, f"{logdir}/model.ckpt", global_step=steps)
    if writer is not None:
        writer.close()
    if verbose:
        elapsed = time.perf_counter() - start
        print(
            f"final test accuracy {final:.4f} on {len(x_test)} held-out digits after {steps} "
            f"steps of {BATCH_SIZE} ({elapsed:.1f} s, {steps * BATCH_SIZE / elapsed:,.0f} "
            "examples/s)"
        )
    return final


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--logdir", default="runs/demo", help="summaries and checkpoints")
    parser.add_argument(
        "--in-process", action="store_true", help="no Dask cluster: run in this process"
    )
    args = parser.parse_args(argv)
    if args.in_process:
        train(args.steps, args.learning_rate, args.seed, logdir=args.logdir)
        return
    from nbflow.distributed import Cluster

    print("starting an embedded Dask LocalCluster: /job:ps/task:0 and /job:worker/task:0")
    with Cluster.local(n_workers=2, threads_per_worker=1, spec={"ps": 1, "worker": 1}) as cluster:
        print(cluster.summary())
        train(args.steps, args.learning_rate, args.seed, target=cluster.target, logdir=args.logdir)
    print(f"logs and checkpoint in {args.logdir}/ (open them in the nbflow Board or TensorBoard)")


if __name__ == "__main__":
    main()
