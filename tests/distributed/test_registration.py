"""A task registers the partitions the master built without inferring their shapes again."""

from __future__ import annotations

import nbflow as tf
from nbflow.devices.device import Device
from nbflow.distributed.master import task_shares
from nbflow.distributed.task import TaskServer, task_of
from nbflow.framework.op_def import registered_ops
from nbflow.runtime import placement
from nbflow.runtime.config import ConfigProto
from nbflow.runtime.drivers import CallerDriver
from nbflow.runtime.executor import ResumableInline
from nbflow.runtime.master import StepSignature, compile_step
from nbflow.runtime.multi_device import order_by_transfers
from nbflow.runtime.partition import transfer_key

from tests.distributed.conftest import linear_model

PS, WORKER = "/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"


def _train_step_shares():
    with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device=WORKER)):
        x, y, loss, _, _ = linear_model()
        train = tf.train.AdagradOptimizer(0.1).minimize(loss)
    devices = [Device(f"{WORKER}/device:CPU:0"), Device(f"{PS}/device:CPU:0")]
    compiled = compile_step(
        StepSignature((loss,), (train,), (x, y)),
        devices,
        ConfigProto(),
        placement.CostModel(),
        log_placement=False,
        for_cluster=True,
    )
    return compiled, task_shares(compiled, {PS: "tls://ps", WORKER: "tls://worker"})


def test_task_registers_its_partition_without_running_a_shape_function(monkeypatch):
    compiled, shares = _train_step_shares()
    assert {s.task for s in shares} == {PS, WORKER}
    calls = [0]
    for opdef in registered_ops().values():  # every shape function, counted where it is declared

        def counted(*args, _infer=opdef.infer, **kwargs):
            calls[0] += 1
            return _infer(*args, **kwargs)

        monkeypatch.setattr(opdef, "infer", counted)
    servers = {s.task: TaskServer(s.task) for s in shares}
    for share in shares:
        servers[share.task].register(share.handle, share.spec)
    assert calls[0] == 0
    # The task's ops have the master's shapes and dtypes, output for output.
    compared = 0
    for part in compiled.partitions:
        (registered,) = servers[task_of(part.device.name)].graphs.values()
        ops = {n.op.name: n.op for p in registered.parts for n in p.plan.nodes}
        for op in part.ops:
            if op.name in ops:
                got = [(t.dtype, str(t.shape)) for t in ops[op.name].outputs]
                assert got == [(t.dtype, str(t.shape)) for t in op.outputs], op.name
                compared += 1
    assert compared > 10
    # The counter does count: importing the same share the old way infers every node.
    with tf.Graph().as_default():
        tf.import_graph_def(shares[0].spec["graph_def"], name="")
    assert calls[0] == len(shares[0].spec["graph_def"]["node"])


def _ping_pong_shares():
    """A value goes from the worker to the ps and back, and to the ps again: the worker's Recv
    waits, through the ps, for its first Send, though nothing in the worker's own graph joins
    the two."""
    with tf.device(PS):
        x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device(WORKER):
        first = tf.add(x, 1.0, name="first")
    with tf.device(PS):
        back = tf.multiply(first, 2.0, name="back")
    with tf.device(WORKER):
        second = tf.add(back, 1.0, name="second")
    with tf.device(PS):
        result = tf.multiply(second, 3.0, name="result")
    devices = [Device(f"{WORKER}/device:CPU:0"), Device(f"{PS}/device:CPU:0")]
    compiled = compile_step(
        StepSignature((result,), (), (x,)),
        devices,
        ConfigProto(),
        placement.CostModel(),
        log_placement=False,
        for_cluster=True,
    )
    return task_shares(compiled, {PS: "tls://ps", WORKER: "tls://worker"})


def test_a_task_runs_its_partition_in_line_with_its_transfers_in_the_steps_order():
    shares = {s.task: s for s in _ping_pong_shares()}
    server = TaskServer(WORKER)
    share = shares[WORKER]
    server.register(share.handle, share.spec)
    (registered,) = server.graphs.values()
    (driver,) = registered.loop_drivers
    assert isinstance(driver, ResumableInline)  # not the dataflow walk
    (part,) = share.spec["parts"]
    plan = registered.parts[0].plan
    transfers = [
        transfer_key(node.op)
        for node in order_by_transfers(plan, part["transfers"])
        if node.op.op_def.is_send or node.op.op_def.is_recv
    ]
    # Send first, Recv back, Send second: the Recv after the Send it waits for. The worker's own
    # edges do not say so; an order of them alone could put the Recv first and wait forever.
    assert [key.split(":")[0] for key in transfers] == ["first", "back", "second"]
    assert transfers == part["transfers"]
    # a list that contradicts the plan's own edges (back -> second) is refused
    assert order_by_transfers(plan, list(reversed(part["transfers"]))) is None


def test_a_partition_without_the_steps_order_is_walked_as_dataflow():
    shares = {s.task: s for s in _ping_pong_shares()}
    share = shares[WORKER]
    spec = {**share.spec, "parts": [{**p, "transfers": None} for p in share.spec["parts"]]}
    server = TaskServer(WORKER)
    server.register(share.handle, spec)
    (registered,) = server.graphs.values()
    assert [type(d) for d in registered.loop_drivers] == [CallerDriver]
