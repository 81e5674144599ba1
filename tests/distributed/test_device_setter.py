"""replica_device_setter: variables on ps tasks, everything else on the worker."""

from __future__ import annotations

import nbflow as tf
from nbflow.train.device_setter import GreedyLoadBalancingStrategy, replica_device_setter
from nbflow.train.server_lib import ClusterSpec


def test_round_robin_puts_variables_on_ps_tasks_in_turn_and_ops_on_the_worker():
    spec = ClusterSpec({"ps": 2, "worker": ["w0:1", "w1:1"]})
    with tf.device(replica_device_setter(cluster=spec, worker_device="/job:worker/task:1")):
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        c = tf.Variable(3.0, name="c")
        total = a + b + c
    assert [v.op.device for v in (a, b, c)] == [
        "/job:ps/task:0",
        "/job:ps/task:1",
        "/job:ps/task:0",
    ]
    assert total.device == "/job:worker/task:1"


def test_greedy_strategy_balances_bytes_over_ps_tasks():
    greedy = GreedyLoadBalancingStrategy(2)
    with tf.device(replica_device_setter(ps_tasks=2, ps_strategy=greedy)):
        big = tf.Variable(tf.zeros([1000]), name="big")
        small1 = tf.Variable(tf.zeros([10]), name="small1")
        small2 = tf.Variable(tf.zeros([10]), name="small2")
    assert big.op.device == "/job:ps/task:0"
    assert small1.op.device == small2.op.device == "/job:ps/task:1"


def test_an_explicit_device_inside_the_setter_keeps_its_fields():
    with tf.device(replica_device_setter(ps_tasks=1)):
        with tf.device("/job:worker/task:3"):
            x = tf.constant(1.0)
    assert x.device == "/job:worker/task:3"
    assert replica_device_setter(ps_tasks=0) is None
    assert ClusterSpec({"ps": 1}).task_names() == ["/job:ps/replica:0/task:0"]
