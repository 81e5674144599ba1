"""The distributed training bench (bench/distributed_training.py) runs: a couple of blocks of a
tiny MLP on a real LocalCluster, asynchronous and with SyncReplicasOptimizer's accumulators."""

from __future__ import annotations

import importlib.util

import pytest

from bench import distributed_training as bench


def test_nbflow_side_trains_async_and_sync():
    configs = [bench.Config("tiny", 1), bench.Config("tiny", 2, sync=True)]
    results = bench.measure(configs, cycles=1, block_s=0.2, with_tensorflow=False)
    by = {(r.workload, r.framework): r for r in results}
    for config in configs:
        rate = by[(config.label, "nbflow")]
        assert rate.unit == "examples/s" and rate.value > 0, rate  # sync: the global step moved
        assert by[(config.label + " (step)", "nbflow")].value > 0
        if config.sync:  # counted while the loops run, not stretched by a pause
            assert by[(config.label + " (global steps)", "nbflow")].value > 0
    floor = by[(bench.Config("tiny", 1).label, "floor")]
    assert floor.value > 0 and "KB each way" in floor.note
    assert "tiny, sync, 2 workers" in bench.table(results)


@pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None, reason="tensorflow is not importable"
)
def test_tensorflow_side_trains_the_same_configuration():
    tf = bench.tensorflow_v1()
    config = bench.Config("tiny", 1)
    graph, init, train, (x, y), hook, global_step = bench.Replicas._build(tf, config, 0)
    assert hook is None and global_step.device.startswith("/job:ps/task:0")
    assert train.device.startswith("/job:worker/task:0") or train.device == ""
