"""Very large models on a real LocalCluster (OSDI §4.2): partitioned variables whose shards live
on different ps tasks, sharded embedding lookups with sparse updates there, sampled softmax and
a softmax matmul offloaded to the shards' tasks."""

from __future__ import annotations

import numpy as np
import pytest

import nbflow as tf
from nbflow.runtime.config import RunMetadata, RunOptions
from nbflow.train.device_setter import replica_device_setter
from nbflow.train.server_lib import ClusterSpec

SPEC = ClusterSpec({"ps": 2, "worker": 2})
PS = ["/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0"]


def ops_by_device(metadata: RunMetadata) -> dict[str, set[str]]:
    return {g["device"]: {n["op"] for n in g["node"]} for g in metadata.partition_graphs}


def test_partitioners_cut_one_axis():
    assert tf.fixed_size_partitioner(4)([10, 3], tf.float32) == [4, 1]
    assert tf.fixed_size_partitioner(4, axis=1)([10, 3], tf.float32) == [1, 3]
    # 1000 x 64 float32 = 256000 bytes; 100000-byte shards hold 390 rows: 3 shards
    assert tf.variable_axis_size_partitioner(100000)([1000, 64], tf.float32) == [3, 1]
    assert tf.variable_axis_size_partitioner(100000, max_shards=2)([1000, 64], tf.float32) == [
        2,
        1,
    ]
    assert tf.min_max_variable_partitioner(8, min_slice_size=64 << 10)([1000, 64], tf.float32) == [
        3,
        1,
    ]
    assert tf.min_max_variable_partitioner(2, min_slice_size=1)([1000, 64], tf.float32) == [2, 1]


def test_get_variable_with_a_partitioner_makes_named_shards_that_concatenate():
    table = np.arange(30, dtype=np.float32).reshape(10, 3)
    with tf.Graph().as_default():
        with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(3)):
            v = tf.get_variable("table", [10, 3], initializer=table)
        with tf.variable_scope("emb", reuse=True, partitioner=tf.fixed_size_partitioner(3)):
            assert tf.get_variable("table", [10, 3]) is v
        assert isinstance(v, tf.PartitionedVariable) and len(v) == 3
        assert [s.op.name for s in v] == [
            "emb/table/part_0",
            "emb/table/part_1",
            "emb/table/part_2",
        ]
        assert [s.shape.as_list() for s in v] == [[4, 3], [3, 3], [3, 3]]
        whole = tf.convert_to_tensor(v)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(whole), table)
            sess.run(v.assign(table * 2))
            np.testing.assert_array_equal(sess.run(v.as_tensor()), table * 2)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_sharded_embedding_lookup_gathers_on_each_ps_and_updates_only_touched_rows(
    cluster, strategy
):
    rows, dim = 11, 4
    table = np.random.default_rng(1).normal(size=(rows, dim)).astype(np.float32)
    with tf.Graph().as_default() as graph:
        with tf.device(replica_device_setter(cluster=SPEC, worker_device="/job:worker/task:0")):
            with tf.variable_scope(f"lookup_{strategy}", partitioner=tf.fixed_size_partitioner(2)):
                emb = tf.get_variable("emb", [rows, dim], initializer=np.zeros((rows, dim)))
            ids = tf.placeholder(tf.int32, [None])
            looked_up = tf.nn.embedding_lookup(emb, ids, partition_strategy=strategy)
            loss = tf.reduce_sum(looked_up * looked_up) / 2.0  # gradient: the rows themselves
            train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        # the shard layout of each strategy, to fill the shards from the NumPy table
        if strategy == "mod":
            shard_rows = [np.arange(rows)[np.arange(rows) % 2 == p] for p in range(2)]
        else:
            shard_rows = [np.arange(6), np.arange(6, 11)]
        fills = [tf.assign(s, table[r]) for s, r in zip(emb, shard_rows)]
    assert {s.device for s in emb} == {"/job:ps/task:0", "/job:ps/task:1"}
    feed_ids = np.array([3, 0, 8, 3, 10], np.int32)
    with tf.Session(cluster.target, graph=graph) as sess:
        sess.run(fills)
        options, metadata = RunOptions(output_partition_graphs=True), RunMetadata()
        got = sess.run(looked_up, {ids: feed_ids}, options=options, run_metadata=metadata)
        np.testing.assert_allclose(got, table[feed_ids], rtol=1e-6)
        by_device = ops_by_device(metadata)
        for ps in PS:
            assert "GatherV2" in by_device[ps] or "Gather" in by_device[ps], by_device[ps]
        worker_ops = by_device["/job:worker/replica:0/task:0/device:CPU:0"]
        assert {"DynamicPartition", "DynamicStitch"} <= worker_ops
        sess.run(train, {ids: feed_ids}, options=options, run_metadata=metadata)
        for ps in PS:  # each shard's sparse update runs on its own ps task
            assert "SparseApplyGradientDescent" in ops_by_device(metadata)[ps]
        shards = sess.run(list(emb))
    after = np.zeros_like(table)
    for s, r in zip(shards, shard_rows):
        after[r] = s
    expected = table.copy()
    for i in feed_ids:  # each occurrence subtracts 0.5 * its row
        expected[i] -= 0.5 * table[i]
    np.testing.assert_allclose(after, expected, rtol=1e-5, atol=1e-6)
    untouched = np.setdiff1d(np.arange(rows), feed_ids)
    np.testing.assert_array_equal(after[untouched], table[untouched])


def test_sampled_softmax_over_sharded_weights_matches_numpy(cluster):
    classes, dim, batch, num_sampled = 40, 5, 4, 8
    rng = np.random.default_rng(2)
    weights = rng.normal(size=(classes, dim)).astype(np.float32)
    biases = rng.normal(size=classes).astype(np.float32)
    x = rng.normal(size=(batch, dim)).astype(np.float32)
    labels = np.array([[1], [7], [30], [2]], np.int64)
    with tf.Graph().as_default() as graph:
        with tf.device(replica_device_setter(cluster=SPEC, worker_device="/job:worker/task:1")):
            with tf.variable_scope("softmax", partitioner=tf.fixed_size_partitioner(2)):
                w = tf.get_variable("w", [classes, dim], initializer=weights)
                b = tf.get_variable("b", [classes], initializer=biases)
            sampled = tf.nn.log_uniform_candidate_sampler(
                labels, 1, num_sampled, True, classes, seed=5
            )
            loss = tf.nn.sampled_softmax_loss(
                w, b, labels, x, num_sampled, classes, sampled_values=sampled,
                partition_strategy="div",
            )  # fmt: skip
            init = tf.global_variables_initializer()
    with tf.Session(cluster.target, graph=graph) as sess:
        sess.run(init)
        (ids, true_q, sampled_q), got = sess.run([sampled, loss])
    assert len(set(ids.tolist())) == num_sampled and ids.max() < classes
    true_logits = (x * weights[labels[:, 0]]).sum(1, keepdims=True) + biases[labels]
    sampled_logits = x @ weights[ids].T + biases[ids]
    sampled_logits += (labels == ids[None, :]) * np.finfo(np.float32).min
    logits = np.concatenate(
        [true_logits - np.log(true_q), sampled_logits - np.log(sampled_q)], 1
    ).astype(np.float64)
    top = logits.max(1, keepdims=True)
    expected = np.log(np.exp(logits - top).sum(1)) + top[:, 0] - logits[:, 0]
    np.testing.assert_allclose(got, expected, rtol=1e-4)


def test_softmax_matmul_runs_next_to_its_weight_shards(cluster):
    """Project Adam's scheme (OSDI §4.2): each shard's logits and their gradient are computed
    on the shard's ps task; only activations and logits cross tasks."""
    classes, dim, batch = 12, 3, 2
    rng = np.random.default_rng(3)
    weights = rng.normal(size=(classes, dim)).astype(np.float32)
    x = rng.normal(size=(batch, dim)).astype(np.float32)
    labels = np.array([3, 10], np.int32)
    with tf.Graph().as_default() as graph:
        with tf.device(replica_device_setter(cluster=SPEC, worker_device="/job:worker/task:0")):
            with tf.variable_scope("full", partitioner=tf.fixed_size_partitioner(2)):
                w = tf.get_variable("w", [classes, dim], initializer=weights)
            h = tf.constant(x)
            parts = []
            for shard in w:
                with tf.colocate_with(shard):
                    parts.append(tf.matmul(h, shard, transpose_b=True))
            logits = tf.concat(parts, 1)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            )
            train = tf.train.GradientDescentOptimizer(0.1).minimize(
                loss, colocate_gradients_with_ops=True
            )
            init = tf.global_variables_initializer()
    with tf.Session(cluster.target, graph=graph) as sess:
        sess.run(init)
        options, metadata = RunOptions(output_partition_graphs=True), RunMetadata()
        got = sess.run(logits, options=options, run_metadata=metadata)
        np.testing.assert_allclose(got, x @ weights.T, rtol=1e-5)
        for ps in PS:
            assert "MatMul" in ops_by_device(metadata)[ps]
        sess.run(train, options=options, run_metadata=metadata)
        for ps in PS:
            assert "MatMul" in ops_by_device(metadata)[ps]  # the weight gradient, too
