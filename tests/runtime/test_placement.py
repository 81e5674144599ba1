"""Placement: device requests, soft placement, colocation, the greedy cost-model simulation."""

import numpy as np
import pytest

import nbflow as tf
from nbflow.devices.device import Device, local_cpu_devices
from nbflow.framework.op_def import OpDef, TensorSpec
from nbflow.runtime import graph_optimizer, placement
from nbflow.runtime.step_stats import DeviceStepStats, NodeExecStats, StepStats


def _config(cpus=4, **kwargs):
    return tf.ConfigProto(device_count={"CPU": cpus}, **kwargs)


def _mlp(rng, devices):
    """A two-layer MLP whose layers (and variables) sit on ``devices``; returns (x, loss, init)."""
    x = tf.placeholder(tf.float32, [8, 6], name="x")
    h = x
    for i, device in enumerate(devices):
        with tf.device(device):
            w = tf.Variable(rng.standard_normal((6, 6)).astype(np.float32), name=f"w{i}")
            h = tf.tanh(tf.matmul(h, w))
    with tf.device(devices[-1]):
        loss = tf.reduce_sum(h * h)
    return x, h, loss


def _placed(sess):
    """Op name -> device of every node of every cached plan."""
    out = {}
    for step in sess._steps.values():
        for device, plan in step.plans:
            for node in plan.nodes:
                out[node.op.name] = device
    return out


def test_graph_placed_on_four_cpu_devices_gives_the_same_results_as_on_one():
    x_value = np.random.default_rng(1).standard_normal((8, 6)).astype(np.float32)
    results = []
    for cpus, devices in ((1, ["/cpu:0"] * 4), (4, ["/cpu:0", "/cpu:1", "/cpu:2", "/cpu:3"])):
        tf.reset_default_graph()
        x, h, loss = _mlp(np.random.default_rng(0), devices)
        with tf.Session(config=_config(cpus)) as sess:
            sess.run(tf.global_variables_initializer())
            results.append(sess.run([h, loss], {x: x_value}))
            if cpus == 4:
                assert len({d for d in _placed(sess).values()}) == 4
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


def test_unconstrained_small_graph_stays_on_one_device():
    a = tf.constant([1.0, 2.0])
    b = tf.placeholder(tf.float32, [2])
    c = a * b + a
    with tf.Session(config=_config(4)) as sess:
        np.testing.assert_allclose(sess.run(c, {b: [3.0, 4.0]}), [4.0, 10.0])
        assert set(_placed(sess).values()) == {"/job:localhost/replica:0/task:0/device:CPU:0"}


def test_missing_device_is_invalid_argument_naming_node_device_and_devices():
    with tf.device("/device:GPU:3"):
        c = tf.constant(1.0, name="on_gpu")
    with tf.Session(config=_config(2)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(c + 1.0)
    message = str(info.value)
    assert "on_gpu" in message and "/device:GPU:3" in message
    assert "/job:localhost/replica:0/task:0/device:CPU:1" in message


def test_soft_placement_puts_unsatisfiable_requests_on_an_existing_device():
    with tf.device("/device:GPU:0"):
        c = tf.constant(2.0) * 3.0
    with tf.device("/cpu:7"):
        d = c + 1.0
    with tf.Session(config=_config(2, allow_soft_placement=True)) as sess:
        assert sess.run(d) == 7.0


class _HostOnly(OpDef):
    """Test op without a GPU kernel."""

    type = "TestHostOnly"
    inputs = ("x",)
    cpu_only = True
    differentiable = False

    def infer(self, x):
        return TensorSpec(x.shape, x.dtype)

    def compute(self, ctx, x):
        return x


def _with_fake_gpu():
    """Two CPUs and a GPU-typed device (NumPy-backed: placement only looks at names and kernels)."""
    return local_cpu_devices(2) + [Device("/job:localhost/replica:0/task:0/device:GPU:0")]


def test_op_without_gpu_kernel_goes_to_cpu_and_explicit_gpu_request_fails_without_soft():
    x = tf.constant([1.0])
    host_only = tf.get_default_graph().create_op("TestHostOnly", [x], name="host_only")
    ops = [x.op, host_only]
    devices = _with_fake_gpu()
    assert all(
        d.device_type == "CPU" for d in placement.feasible_devices(host_only, devices, False)
    )
    chosen = placement.place(ops, devices, placement.CostModel())
    assert chosen[host_only].device_type == "CPU"
    host_only._device = "/device:GPU:0"
    with pytest.raises(tf.errors.InvalidArgumentError, match="no supported kernel for GPU"):
        placement.feasible_devices(host_only, devices, False)
    assert placement.feasible_devices(host_only, devices, True)[0].device_type == "CPU"


def test_colocate_with_and_variable_updates_follow_the_variable():
    with tf.device("/cpu:2"):
        v = tf.Variable(tf.zeros([2]), name="v")
    with tf.device("/cpu:1"):
        other = tf.placeholder_with_default([5.0, 5.0], [2])
    with tf.colocate_with(v.op):
        near = tf.identity(other, name="near")
    update = tf.assign_add(v, near, name="update")
    with tf.Session(config=_config(3)) as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(update), [5.0, 5.0])
        placed = _placed(sess)
    assert placed["near"].endswith("CPU:2") and placed["update"].endswith("CPU:2")


def test_conflicting_update_device_errors_or_follows_variable_under_soft_placement():
    with tf.device("/cpu:1"):
        v = tf.Variable(tf.zeros([2]), name="v")
    with tf.device("/cpu:0"):
        update = tf.assign_add(v, [1.0, 1.0], name="misplaced")
    with tf.Session(config=_config(2)) as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot colocate"):
            sess.run(update)
    with tf.Session(config=_config(2, allow_soft_placement=True)) as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(update), [1.0, 1.0])
        assert _placed(sess)["misplaced"].endswith("CPU:1")


def test_log_device_placement_prints_each_node(capsys):
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:1"):
        c = x + 1.0
    with tf.Session(config=_config(2, log_device_placement=True)) as sess:
        sess.run(c, {x: 1.0})
    err = capsys.readouterr().err
    assert "add: (Add): /job:localhost/replica:0/task:0/device:CPU:1" in err


def _two_matmuls():
    a = tf.placeholder(tf.float32, [512, 512], name="a")
    b = tf.placeholder(tf.float32, [512, 512], name="b")
    left, right = tf.matmul(a, a, name="left"), tf.matmul(b, b, name="right")
    return left, right, left + right


def test_simulation_spreads_independent_expensive_ops_over_devices():
    left, right, total = _two_matmuls()
    step = graph_optimizer.copy_step_graph([total], [], [left.op.inputs[0], right.op.inputs[0]])
    chosen = placement.place(step.ops, local_cpu_devices(2), placement.CostModel())
    by_name = {op.name: d.name for op, d in chosen.items()}
    assert by_name["left"] != by_name["right"]
    assert not tf.get_default_graph().get_operation_by_name("left").device  # user graph intact


def test_measured_times_replace_static_estimates():
    a = tf.placeholder(tf.float32, [4, 4], name="a")
    b = tf.placeholder(tf.float32, [4, 4], name="b")
    left, right = tf.matmul(a, a, name="left"), tf.matmul(b, b, name="right")
    total = left + right
    model = placement.CostModel()
    step = graph_optimizer.copy_step_graph([total], [], [a, b])
    chosen = placement.place(step.ops, local_cpu_devices(2), model)
    assert len(set(chosen.values())) == 1  # small matmuls: not worth a second device
    stats = StepStats(
        [
            DeviceStepStats(
                "/job:localhost/replica:0/task:0/device:CPU:0",
                [
                    NodeExecStats(node_name=name, op_end_rel_micros=5000, all_end_rel_micros=5000)
                    for name in ("left", "right")
                ],
            )
        ]
    )
    model.record(stats)
    assert model.compute_micros(left.op, "CPU") == 5000.0
    step = graph_optimizer.copy_step_graph([total], [], [a, b])
    chosen = placement.place(step.ops, local_cpu_devices(2), model)
    by_name = {op.name: d.name for op, d in chosen.items()}
    assert by_name["left"] != by_name["right"]  # measured: slow enough to split
