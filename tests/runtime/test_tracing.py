"""Traced steps: step statistics, Chrome traces, peak memory, partition graphs."""

import json

import numpy as np

import nbflow as tf
from nbflow.client import timeline

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def _two_device_graph():
    x = tf.placeholder(tf.float32, [16, 16], name="x")
    with tf.device("/cpu:0"):
        h = tf.matmul(x, x, name="h")
    with tf.device("/cpu:1"):
        y = tf.reduce_sum(tf.tanh(h), name="y")
    return x, y


def _traced_run(sess, fetches, feeds):
    meta = tf.RunMetadata()
    out = sess.run(fetches, feeds, options=FULL, run_metadata=meta)
    return out, meta


def test_full_trace_fills_step_stats_per_device_with_times_threads_and_sizes():
    x, y = _two_device_graph()
    value = np.ones((16, 16), np.float32)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        plain = sess.run(y, {x: value})
        traced, meta = _traced_run(sess, y, {x: value})
    assert traced == plain
    devices = {d.device: d for d in meta.step_stats.dev_stats}
    assert set(devices) == {f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in (0, 1)}
    nodes = {n.node_name: n for d in devices.values() for n in d.node_stats}
    h = nodes["h"]
    assert h.op_type == "MatMul" and h.thread_id and h.all_start_micros > 0
    assert h.output[0].tensor_description.allocated_bytes == 16 * 16 * 4
    assert h.output[0].tensor_description.shape == [16, 16]
    recv = next(n for n in nodes.values() if n.op_type == "_Recv")
    assert recv.all_end_rel_micros >= 0 and recv.output[0].tensor_description.shape == [16, 16]
    assert all(d.peak_bytes > 0 for d in devices.values())


def test_chrome_trace_is_valid_trace_event_json():
    x, y = _two_device_graph()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        _, meta = _traced_run(sess, y, {x: np.ones((16, 16), np.float32)})
    trace = json.loads(timeline.Timeline(meta.step_stats).generate_chrome_trace_format(True, True))
    events = trace["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    assert {"MatMul", "_Send", "_Recv", "Tanh"} <= {e["name"] for e in complete}
    for e in complete:
        assert {"pid", "tid", "ts", "dur", "name", "args"} <= set(e) and e["ts"] >= 0
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {f"/job:localhost/replica:0/task:0/device:CPU:{i} Compute" for i in (0, 1)}
    flows = [e for e in events if e["ph"] in ("s", "f")]
    assert sorted(e["ph"] for e in flows) == ["f", "s"]
    assert any(e["ph"] == "C" for e in events)


def test_single_device_trace_and_peak_memory_estimate():
    a = tf.placeholder(tf.float64, [100], name="a")
    b = tf.exp(a) * 2.0
    c = tf.reduce_sum(b)
    with tf.Session() as sess:
        _, meta = _traced_run(sess, c, {a: np.zeros(100)})
    (dev,) = meta.step_stats.dev_stats
    assert [n.node_name for n in dev.node_stats][-1] == "Sum"
    assert 800 <= dev.peak_bytes <= 2 * 800 + 64  # exp and mul outputs overlap at most


def test_untraced_runs_do_not_use_the_traced_plan():
    x = tf.placeholder(tf.float32, [], name="x")
    y = x + 1.0
    with tf.Session() as sess:
        sess.run(y, {x: 1.0})
        _traced_run(sess, y, {x: 1.0})
        plain = [k for k in sess._steps if k[-1] != "traced"]
        traced = [k for k in sess._steps if k[-1] == "traced"]
        assert len(plain) == 1 and len(traced) == 1
        meta = tf.RunMetadata()
        sess.run(y, {x: 2.0}, run_metadata=meta)
        assert meta.step_stats is None


def test_traced_step_feeds_the_cost_model_and_replaces_static_placement():
    x, y = _two_device_graph()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(y, {x: np.ones((16, 16), np.float32)})
        key = next(iter(sess._steps))
        assert not sess._steps[key].measured
        _traced_run(sess, y, {x: np.ones((16, 16), np.float32)})
        assert ("h", "CPU") in sess._cost_model.measured
        sess.run(y, {x: np.ones((16, 16), np.float32)})
        assert sess._steps[key].measured


def test_output_partition_graphs_lists_one_graph_per_device():
    x, y = _two_device_graph()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        meta = tf.RunMetadata()
        sess.run(
            y, {x: np.ones((16, 16), np.float32)}, tf.RunOptions(output_partition_graphs=True), meta
        )
    ops = {g["device"][-5:]: [n["op"] for n in g["node"]] for g in meta.partition_graphs}
    assert "_Send" in ops["CPU:0"] and "_Recv" in ops["CPU:1"]
    json.dumps(meta.partition_graphs)  # JSON-serialisable GraphDefs
