"""One real LocalCluster (2 worker processes) shared by the distributed tests of a module."""

from __future__ import annotations

import numpy as np
import pytest

import nbflow as tf
from nbflow.distributed import Cluster


@pytest.fixture(scope="module")
def cluster():
    with Cluster.local(
        n_workers=2, threads_per_worker=1, memory_limit="1GiB", spec={"ps": 2, "worker": 2}
    ) as c:
        yield c


def linear_model(seed: int = 0):
    """y = x w + b with a least-squares loss; returns (x, y, loss, w, b)."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(np.zeros((3, 1), np.float32), name="w")
    b = tf.Variable(np.zeros((1,), np.float32), name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    return x, y, loss, w, b


def regression_batch(rng: np.random.Generator, n: int = 32):
    xs = rng.normal(size=(n, 3)).astype(np.float32)
    ys = xs @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3
    return xs, ys
