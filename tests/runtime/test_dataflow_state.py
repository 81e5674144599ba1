"""The dataflow state on its own: driven by hand in one thread, no pool, no locks."""

import numpy as np
import pytest

import nbflow as tf
from nbflow.framework.op_def import cpu_context
from nbflow.ops.control_flow_ops import DEAD, switch
from nbflow.runtime.dataflow import DataflowProgram, StepState
from nbflow.runtime.plan import build_plan


def _plan(fetches, feeds=()):
    return build_plan(fetches, [], list(feeds), lambda op: (op.op_def.bind(op), "CPU:0"))


def _drive(state, fifo=True, observe=None):
    """Run every ready node in turn; returns the names of the ops whose kernels ran."""
    nodes = state.program.plan.nodes
    ctx = cpu_context()
    ready = state.start()
    ran = []
    while ready:
        item = ready.pop(0 if fifo else -1)
        inputs, outputs, dead = state.prepare(item)
        node = nodes[item[0]]
        if outputs is None:
            ran.append(node.op.name)
            result = node.kernel(ctx, *inputs)
            outputs = [result] if node.num_outputs == 1 else list(result or ())
        ready += state.complete(item, outputs, dead)
        if observe is not None:
            observe(state)
    return ran


def test_a_dag_runs_by_pending_counts_and_frees_values_after_their_last_reader():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3], name="x")
        a = tf.exp(x, name="a")
        b = tf.sin(a, name="b")
        c = tf.add(a, b, name="c")
        plan = _plan([c], [x])
    program = DataflowProgram(plan)
    value = np.array([0.1, 0.2, 0.3])
    state = StepState(program, (value,))
    root = state.root.iterations[0]
    held = []
    ran = _drive(state, observe=lambda s: held.append(set(root.values)))
    assert ran == ["a", "b", "c"]
    assert state.done and state.error is None
    np.testing.assert_allclose(state.results()[0], np.exp(value) + np.sin(np.exp(value)))
    a_value = ("node", 0, 0)
    assert a_value in held[0] and a_value not in held[-1]  # c was a's last reader


def test_the_untaken_branch_is_dead_and_runs_no_kernel():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [], name="p")
        x = tf.constant(2.0, name="x")
        out = tf.cond(p, lambda: tf.square(x, name="taken"), lambda: tf.negative(x, name="not"))
        plan = _plan([out], [p])
    program = DataflowProgram(plan)
    state = StepState(program, (np.bool_(True),))
    ran = _drive(state)
    assert any("taken" in name for name in ran)
    assert not any(name.endswith("/not") for name in ran)
    assert state.results()[0] == 4.0


@pytest.mark.parametrize("parallel_iterations", [1, 3])
def test_a_loop_counts_its_iterations_and_keeps_at_most_parallel_iterations_live(
    parallel_iterations,
):
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [], name="n")
        i, total = tf.while_loop(
            lambda i, t: i < n,
            lambda i, t: (i + 1, t + tf.cast(i, tf.float64)),
            [tf.constant(0), tf.constant(0.0, tf.float64)],
            parallel_iterations=parallel_iterations,
        )
        plan = _plan([i, total], [n])
    program = DataflowProgram(plan)
    state = StepState(program, (np.int32(7),))
    live = []

    def observe(s):
        for frame in s.root.children.values():
            live.append(len(frame.iterations))

    _drive(state, observe=observe)
    got_i, got_total = state.results()
    assert got_i == 7 and got_total == sum(range(7))
    assert live and max(live) <= parallel_iterations


def test_a_loop_inside_an_untaken_branch_delivers_dead_exits():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [], name="p")

        def loop():
            return tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])

        out = tf.cond(p, loop, lambda: tf.constant(-1))
        plan = _plan([out], [p])
    state = StepState(DataflowProgram(plan), (np.bool_(False),))
    _drive(state, fifo=False)
    assert state.done and state.results()[0] == -1


def test_fail_ends_the_step_with_the_first_error():
    with tf.Graph().as_default():
        y = tf.identity(tf.constant(1.0), name="y")
        plan = _plan([y])
    state = StepState(DataflowProgram(plan), ())
    state.start()
    first = tf.errors.InternalError(None, None, "first")
    state.fail(first)
    state.fail(tf.errors.InternalError(None, None, "second"))
    assert state.done and state.error is first
    with pytest.raises(tf.errors.InternalError, match="first"):
        state.results()


def test_fetching_the_dead_side_of_a_switch_is_an_error_naming_it():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [], name="p")
        off, on = switch(tf.constant(1.0), p, name="sw")
        plan = _plan([off], [p])
    state = StepState(DataflowProgram(plan), (np.bool_(True),))
    _drive(state)
    assert state.root.iterations[0].values[("node", plan.nodes[-1].index, 0)] is DEAD
    with pytest.raises(tf.errors.InvalidArgumentError, match="sw"):
        state.results()
