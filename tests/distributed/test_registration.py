"""A task registers the partitions the master built without inferring their shapes again."""

from __future__ import annotations

import nbflow as tf
from nbflow.devices.device import Device
from nbflow.distributed.master import task_shares
from nbflow.distributed.task import TaskServer, task_of
from nbflow.framework.op_def import registered_ops
from nbflow.runtime import placement
from nbflow.runtime.config import ConfigProto
from nbflow.runtime.master import StepSignature, compile_step

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
