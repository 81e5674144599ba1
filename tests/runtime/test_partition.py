"""Partitioning with Send/Recv, the rendezvous, Recv scheduling and lossy transfers."""

import threading

import numpy as np
import pytest

import nbflow as tf
from nbflow.framework.op_def import OpDef, TensorSpec
from nbflow.runtime import graph_optimizer, partition, placement
from nbflow.runtime.rendezvous import LocalRendezvous

CPU = "/job:localhost/replica:0/task:0/device:CPU:{}"


def _config(cpus=3, **graph_options):
    return tf.ConfigProto(
        device_count={"CPU": cpus}, graph_options=tf.GraphOptions(**graph_options)
    )


def _partition_graphs(sess, fetches, feeds):
    meta = tf.RunMetadata()
    out = sess.run(fetches, feeds, tf.RunOptions(output_partition_graphs=True), meta)
    return out, {g["device"]: g["node"] for g in meta.partition_graphs}


def test_one_recv_per_tensor_and_device_however_many_consumers():
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:0"):
        shared = tf.exp(x, name="shared")
    with tf.device("/cpu:1"):
        on_1 = [shared + 1.0, shared * 2.0, tf.sin(shared)]
    with tf.device("/cpu:2"):
        on_2 = [shared - 1.0, tf.cos(shared)]
    with tf.Session(config=_config(3)) as sess:
        value = np.array([0.0, 1.0, 2.0], np.float32)
        out, graphs = _partition_graphs(sess, on_1 + on_2, {x: value})
    e = np.exp(value)
    for got, want in zip(out, [e + 1, e * 2, np.sin(e), e - 1, np.cos(e)]):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    sends = [n for n in graphs[CPU.format(0)] if n["op"] == "_Send"]
    assert sorted(n["attr"]["recv_device"] for n in sends) == [CPU.format(1), CPU.format(2)]
    for d in (1, 2):
        recvs = [n for n in graphs[CPU.format(d)] if n["op"] == "_Recv"]
        assert len(recvs) == 1 and recvs[0]["attr"]["tensor_name"] == "shared:0"


def test_cross_device_control_edge_orders_the_consumer():
    with tf.device("/cpu:0"):
        v = tf.Variable(1.0, name="v")
        bump = tf.assign_add(v, 10.0)
    with tf.device("/cpu:1"), tf.control_dependencies([bump]):
        after = tf.constant(0.0) + 1.0
    with tf.Session(config=_config(2)) as sess:
        sess.run(v.initializer)
        _, graphs = _partition_graphs(sess, after, None)
        assert sess.run(v) == 11.0  # the bump ran before `after`
    assert any(n["op"] == "_ControlRecv" for n in graphs[CPU.format(1)])


def test_partitioned_plan_is_cached_per_step_signature():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        y = x * 3.0
    with tf.Session(config=_config(2)) as sess:
        sess.run(y, {x: [1.0, 2.0]})
        steps = dict(sess._steps)
        for i in range(3):
            np.testing.assert_allclose(sess.run(y, {x: [i, 1.0]}), [3.0 * i, 3.0])
        assert sess._steps == steps


class _Fail(OpDef):
    """Test op: always fails."""

    type = "TestPartitionFail"
    inputs = ("x",)
    stateful = True
    differentiable = False

    def infer(self, x):
        return TensorSpec(x.shape, x.dtype)

    def compute(self, ctx, x):
        raise ValueError("broken on purpose")


def test_error_on_one_device_ends_the_step_on_all_devices():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        bad = tf.get_default_graph().create_op("TestPartitionFail", [x], name="bad").outputs[0]
    with tf.device("/cpu:0"):
        waits = bad + 1.0  # a Recv that never gets its value
    with tf.Session(config=_config(2)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="broken on purpose") as info:
            sess.run(waits, {x: [1.0, 2.0]})
        assert info.value.op is bad.op
        np.testing.assert_allclose(sess.run(x * 2.0, {x: [1.0, 2.0]}), [2.0, 4.0])


def test_rendezvous_matches_send_and_recv_in_either_order_and_aborts_waiters():
    rendezvous = LocalRendezvous(1)
    got = []
    rendezvous.send("a", 1)
    rendezvous.recv("a", lambda v, src, err: got.append((v, err)))
    rendezvous.recv("b", lambda v, src, err: got.append((v, err)))
    assert rendezvous.pending_keys == ["b"]
    rendezvous.send("b", 2)
    rendezvous.recv("c", lambda v, src, err: got.append((v, err)))
    failure = tf.errors.CancelledError(None, None, "stop")
    rendezvous.abort(failure)
    assert got == [(1, None), (2, None), (None, failure)]


def test_blocked_recvs_pin_no_threads():
    """More Recvs wait at once than the inter-op pool has threads, and the step finishes."""
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:0"):
        slow = tf.identity(x)
    with tf.device("/cpu:1"):
        outs = [slow + float(i) for i in range(6)]
        for i, out in enumerate(outs[1:]):
            outs[i + 1] = tf.identity(out) + slow  # another consumer: still one Recv
    config = _config(2)
    config.inter_op_parallelism_threads = 2
    with tf.Session(config=config) as sess:
        got = sess.run(outs, {x: 1.0})
    assert got[0] == 1.0 and got[5] == 7.0


def test_bfloat16_sendrecv_truncates_the_mantissa():
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:0"):
        y = tf.identity(x)
    with tf.device("/cpu:1"):
        z = y * 1.0
    value = np.array([1.0 + 2.0**-10, np.pi, -3.0e-5], np.float32)
    with tf.Session(config=_config(2, enable_bfloat16_sendrecv=True)) as sess:
        got = sess.run(z, {x: value})
    truncated = (value.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    np.testing.assert_array_equal(got, truncated)
    np.testing.assert_allclose(got, value, rtol=2.0**-7)


def test_recv_scheduling_delays_a_recv_with_slack_and_keeps_results():
    x = tf.placeholder(tf.float32, [64, 64], name="x")
    with tf.device("/cpu:0"):
        early = tf.identity(x, name="early")
    with tf.device("/cpu:1"):
        chain = x
        for i in range(4):
            chain = tf.matmul(chain, chain, name=f"chain{i}")
        late = tf.add(chain, early, name="late")
    step = graph_optimizer.copy_step_graph([late], [], [x])
    devices = {d.name: d for d in tf.Session(config=_config(2)).list_devices()}
    placed = placement.place(step.ops, list(devices.values()), placement.CostModel())
    parts = partition.partition_step(step, placed)
    assert partition.schedule_recvs(parts, placement.CostModel()) == 1
    recv = next(op for op in parts[CPU.format(1)].ops if op.type == "_Recv")
    assert [c.name for c in recv.control_inputs] == ["chain2"]
    value = np.eye(64, dtype=np.float32) * 0.5
    for scheduling in (True, False):
        with tf.Session(config=_config(2, enable_recv_scheduling=scheduling)) as sess:
            np.testing.assert_allclose(sess.run(late, {x: value}), value**16 + value)


def test_measured_recv_scheduling_never_creates_a_cycle():
    """After a traced step the cost model has measurements and Recvs get delayed; delaying
    one Recv must account for the edges added for the others (4 towers share the weights)."""
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 8], name="x")
    with tf.device("/cpu:0"):
        w = tf.Variable(tf.truncated_normal([8, 6], stddev=0.1), name="w")
        v = tf.Variable(tf.truncated_normal([6, 3], stddev=0.1), name="v")
    losses, grads = [], []
    for i, xs in enumerate(tf.split(x, 4)):
        with tf.device(f"/cpu:{i}"):
            loss = tf.reduce_mean(tf.matmul(tf.nn.relu(tf.matmul(xs, w)), v))
            losses.append(loss)
            grads.append(tf.gradients(loss, [w, v]))
    with tf.device("/cpu:0"):
        train = tf.train.GradientDescentOptimizer(0.1).apply_gradients(
            [(tf.add_n(list(g)), p) for g, p in zip(zip(*grads), [w, v])]
        )
        total = tf.add_n(losses)
    feed = {x: np.random.default_rng(0).random((16, 8), np.float32)}
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 4})) as sess:
        sess.run(tf.global_variables_initializer())
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        sess.run(train, feed, options=options, run_metadata=tf.RunMetadata())
        assert np.isfinite(sess.run(total, feed))
        sess.run([train, total], feed)


def _ops(graphs, device, op_type):
    return [n["name"] for n in graphs.get(CPU.format(device), []) if n["op"] == op_type]


def test_a_group_on_another_device_is_bypassed_and_still_orders_its_waiters():
    """``minimize`` under ``replica_device_setter``: the updates on one device, their group on
    another, the global step's increment back on the first. The group goes, so no control
    message crosses, and the increment still runs after every update."""
    with tf.device("/cpu:0"):
        weights = [tf.Variable(float(i), name=f"w{i}") for i in range(4)]
        steps = tf.Variable(0.0, name="steps")
        updates = [tf.assign_add(w, 1.0) for w in weights]
    with tf.device("/cpu:1"):
        grouped = tf.group(*updates, name="update")
    with tf.device("/cpu:0"), tf.control_dependencies([grouped]):
        total = tf.add_n([w.read_value() for w in weights])
        bump = tf.assign_add(steps, total, name="bump")
    with tf.Session(config=_config(2)) as sess:
        sess.run(tf.global_variables_initializer())
        for k in range(1, 4):  # each read sees this step's four updates
            out, graphs = _partition_graphs(sess, bump, None)
            assert out == sum(0.0 + 1 + 2 + 3 + 4 * j for j in range(1, k + 1))
    assert not [n for g in graphs.values() for n in g if n["op"].startswith("_Control")]
    assert "update" not in [n["name"] for g in graphs.values() for n in g]


def test_a_group_stays_where_bypassing_it_would_cost_messages_or_it_is_the_target():
    with tf.device("/cpu:0"):
        v = tf.Variable(0.0, name="v")
        updates = [tf.assign_add(v, 1.0, name=f"up{i}") for i in range(3)]
        grouped = tf.group(*updates, name="update")  # 3 sources here, waiters on cpu:1
    with tf.device("/cpu:1"), tf.control_dependencies([grouped]):
        waiters = [tf.constant(1.0) + 1.0, tf.constant(2.0) * 3.0]
    with tf.Session(config=_config(2)) as sess:
        sess.run(v.initializer)
        out, graphs = _partition_graphs(sess, waiters, None)
        assert out == [2.0, 6.0] and sess.run(v) == 3.0
        assert "update" in _ops(graphs, 0, "NoOp")  # one control message either way: it stays
        assert len(_ops(graphs, 0, "_ControlSend")) == 1
        with tf.device("/cpu:1"):
            target = tf.group(*updates, name="target")
        _, graphs = _partition_graphs(sess, target, None)
        assert "target" in _ops(graphs, 1, "NoOp")


def test_a_small_constant_is_copied_to_the_device_that_reads_it_not_sent():
    """A learning rate made on the worker for an update on the ps: no Send/Recv each step."""
    with tf.device("/cpu:0"):
        v = tf.Variable([1.0, 2.0], name="v")
    with tf.device("/cpu:1"):
        rate = tf.constant(0.5, name="rate")
        big = tf.constant(np.arange(20000, dtype=np.float32), name="big")  # 80 KB: sent
    with tf.device("/cpu:0"):
        total = tf.reduce_sum(big * v[0])
        with tf.control_dependencies([total]):
            step = tf.assign_sub(v, rate * tf.identity(v))
    with tf.Session(config=_config(2)) as sess:
        sess.run(v.initializer)
        (after, summed), graphs = _partition_graphs(sess, [step, total], None)
    np.testing.assert_allclose(after, [0.5, 1.0])
    assert summed == np.arange(20000, dtype=np.float32).sum()
    assert "rate/_on_localhost_0_CPU_0" in _ops(graphs, 0, "Const")
    recvs = [n["attr"]["tensor_name"] for n in graphs[CPU.format(0)] if n["op"] == "_Recv"]
    assert recvs == ["big:0"]


def test_the_control_edges_from_one_device_into_an_op_are_one_message():
    with tf.device("/cpu:0"):
        v = tf.Variable(0.0, name="v")
        updates = [tf.assign_add(v, 1.0, name=f"up{i}") for i in range(4)]
    with tf.device("/cpu:1"):
        with tf.control_dependencies(updates):
            after_all = tf.identity(tf.constant(1.0))
        with tf.control_dependencies(updates[:2]):
            after_two = tf.identity(tf.constant(2.0))
        with tf.control_dependencies(updates):  # the same set: the same message
            also_after_all = tf.identity(tf.constant(3.0))
    with tf.device("/cpu:0"), tf.control_dependencies([after_all, also_after_all]):
        seen = tf.identity(v.read_value())  # runs after both, hence after all four updates
    with tf.Session(config=_config(2)) as sess:
        sess.run(v.initializer)
        out, graphs = _partition_graphs(sess, [after_two, seen], None)
    assert out == [2.0, 4.0]
    assert len(_ops(graphs, 0, "_ControlSend")) == 2  # the four updates; the first two
    assert len(_ops(graphs, 1, "_ControlSend")) == 1  # both waiters, back to cpu:0


@pytest.mark.parametrize("runner", ["auto", "parallel"])
def test_a_local_step_over_devices_runs_in_the_calling_thread_when_no_cores_are_spare(runner):
    """With one inter-op thread, partitions whose only async kernels are Recvs are driven in
    the caller: each Send resumes the partition waiting for it. Either way, the same values."""
    seen = []

    def where(v):
        seen.append(threading.get_ident())
        return v

    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:0"):
        a = tf.py_func(where, [x * 2.0], tf.float32)
    with tf.device("/cpu:1"):
        b = tf.py_func(where, [a + 1.0], tf.float32)
    with tf.device("/cpu:0"):
        c = tf.py_func(where, [b * 3.0], tf.float32)  # back to the first device
    config = _config(2)
    config.inter_op_parallelism_threads = 1
    sess = tf.Session(config=config)
    sess._executor_choice = runner
    values = np.array([1.0, -2.0, 0.5], np.float32)
    with sess:
        for _ in range(3):
            np.testing.assert_allclose(sess.run(c, {x: values}), (values * 2 + 1) * 3)
    if runner == "auto":
        assert set(seen) == {threading.get_ident()}


def _in_caller_session():
    config = _config(2)
    config.inter_op_parallelism_threads = 1  # no cores spare: the step runs in the caller
    return tf.Session(config=config)


def _driven_in_caller(sess):
    from nbflow.runtime.executor import ResumableInline

    (runner,) = [s.runner for s in sess._steps.values() if getattr(s.runner, "in_caller", 0)]
    return all(type(d) is ResumableInline for d in runner.in_caller)


def test_a_split_model_trains_in_the_caller_as_it_does_in_numpy():
    """Independent Recvs in one partition (h and g on CPU:1), a gradient sent back: every
    partition is generated code that parks at its Recvs, in one global order."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((4, 3)).astype(np.float32)
    w0 = rng.standard_normal((3, 2)).astype(np.float32)
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    with tf.device("/cpu:0"):
        w = tf.Variable(w0, name="w")
        h = tf.matmul(x, w)
        g = tf.reduce_sum(x, axis=1, keepdims=True)
    with tf.device("/cpu:1"):
        out = tf.reduce_sum(tf.tanh(h) * g)  # two independent Recvs: h and g
    step = tf.train.GradientDescentOptimizer(0.1).minimize(out)
    with _in_caller_session() as sess:
        sess.run(w.initializer)
        got = [sess.run([out, step], {x: xs})[0] for _ in range(3)]
        assert _driven_in_caller(sess)
    weights, expected = w0.astype(np.float64), []
    for _ in range(3):
        hv, gv = xs @ weights, xs.sum(axis=1, keepdims=True)
        expected.append((np.tanh(hv) * gv).sum())
        weights = weights - 0.1 * xs.T @ ((1 - np.tanh(hv) ** 2) * gv)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_values_crossing_back_and_forth_between_devices_do_not_deadlock_in_the_caller():
    """CPU:1 receives ``a`` and, later, ``c``, which CPU:0 computes from what CPU:1 sent it:
    neither Recv depends on the other inside CPU:1's partition, so only an order over both
    partitions tells which to wait for first."""
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:0"):
        a = x * 2.0
        side = x - 1.0
    with tf.device("/cpu:1"):
        b = a + 1.0
    with tf.device("/cpu:0"):
        c = b * 3.0 + side
    with tf.device("/cpu:1"):
        d = c + a
    values = np.array([1.0, -2.0, 0.5], np.float32)
    with _in_caller_session() as sess:
        got_c, got_d = sess.run([c, d], {x: values}, options=tf.RunOptions(timeout_in_ms=5000))
        assert _driven_in_caller(sess)
    expected_c = (values * 2 + 1) * 3 + (values - 1)
    np.testing.assert_allclose(got_c, expected_c)
    np.testing.assert_allclose(got_d, expected_c + values * 2)
