"""Session.run: fetch structures, partial execution, errors, concurrency, both executors."""

import collections
import threading
import weakref

import numpy as np
import pytest

import nbflow as tf
from nbflow.framework.op_def import KernelContext, OpDef, TensorSpec


class _Boom(OpDef):
    """Test op: fails whenever it runs (proves a branch is pruned)."""

    type = "TestBoom"
    inputs = ("x",)
    differentiable = False

    def infer(self, x):
        return x

    def compute(self, ctx: KernelContext, x):
        raise RuntimeError("this branch must not run")


class _Rendezvous(OpDef):
    """Test op: returns only once a second copy of it runs at the same time."""

    type = "TestRendezvous"
    inputs = ("x",)
    differentiable = False
    stateful = True  # a side effect (the barrier): never merged (CSE) nor folded
    cost = "expensive"
    barrier = threading.Barrier(2, timeout=10)

    def infer(self, x):
        return x

    def compute(self, ctx: KernelContext, x):
        self.barrier.wait()
        return x


def _op(op_type, x):
    return tf.get_default_graph().create_op(op_type, [x]).outputs[0]


@pytest.fixture(params=["inline", "parallel"])
def session(request):
    sess = tf.Session()
    sess._executor_choice = request.param
    yield sess
    sess.close()


def test_fetch_structures_are_rebuilt(session):
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    Pair = collections.namedtuple("Pair", "x y")
    out = session.run({"sum": a + b, "pair": Pair(a, [b, (a,)]), "op": a.op})
    assert out["sum"] == 3.0
    assert out["pair"].x == 1.0 and out["pair"].y[0] == 2.0 and out["pair"].y[1] == (1.0,)
    assert out["op"] is None


def test_fetch_by_name_and_repeated_fetches(session):
    tf.constant([1.0, 2.0], name="c")
    c0, c1, c2 = session.run(["c:0", "c:0", tf.get_default_graph().get_tensor_by_name("c:0")])
    np.testing.assert_array_equal(c0, [1.0, 2.0])
    np.testing.assert_array_equal(c1, c2)


def test_unneeded_branch_is_pruned(session):
    x = tf.constant(1.0)
    _op("TestBoom", x)
    assert session.run(x + 1.0) == 2.0


def test_any_tensor_can_be_fed_and_cuts_the_graph(session):
    x = tf.constant(1.0)
    boom = _op("TestBoom", x)
    y = boom * 3.0
    assert session.run(y, {boom: 2.0}) == 6.0
    assert session.run(boom, {boom: 5.0}) == 5.0


def test_control_dependencies_run_before_dependents(session):
    v = tf.Variable(tf.constant(1.0), name="v")
    with tf.control_dependencies([tf.assign(v, 10.0)]):
        read = tf.identity(v)
    session.run(v.initializer)
    assert session.run(read) == 10.0


def test_kernel_failure_is_an_op_error_naming_the_node_and_session_survives(session):
    x = tf.placeholder(tf.float32, [None], name="x")
    boom = tf.get_default_graph().create_op("TestBoom", [x], name="exploder").outputs[0]
    with pytest.raises(tf.errors.OpError) as info:
        session.run(boom, {x: [1.0, 2.0]})
    assert "exploder" in str(info.value) and "float32[2]" in str(info.value)
    assert info.value.op is boom.op
    assert session.run(x * 2.0, {x: [1.0]}) == [2.0]


def test_numpy_errors_become_invalid_argument_with_shapes(session):
    a = tf.placeholder(tf.float32, None, name="a")
    b = tf.placeholder(tf.float32, None, name="b")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"float32\[2\], float32\[3\]"):
        session.run(tf.matmul(a, b) if False else a + b, {a: [1.0, 2.0], b: [1.0, 2.0, 3.0]})


def test_feed_errors(session):
    x = tf.placeholder(tf.float32, [2], name="x")
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key"):
        session.run(x, {"nope:0": [1.0, 2.0]})
    with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
        session.run(x, {x: tf.constant([1.0, 2.0])})
    i = tf.identity(tf.placeholder(tf.int32, [1], name="i"))
    # As TensorFlow's session: floats truncate into an int32; an int that does not fit raises.
    np.testing.assert_array_equal(session.run(i, {"i:0": [1.5]}), [1])
    s = tf.identity(tf.placeholder(tf.int32, [], name="s"))
    with pytest.raises(TypeError, match="'s:0'"):
        session.run(s, {"s:0": 2**40})
    with pytest.raises(ValueError, match="cannot be interpreted as a Tensor"):
        session.run("missing:0")


def test_fetched_variable_values_are_copies(session):
    v = tf.Variable(tf.constant([1.0, 2.0]))
    session.run(v.initializer)
    out = session.run(v)
    out[0] = 100.0
    np.testing.assert_array_equal(session.run(v.value()), [1.0, 2.0])


def test_fetched_constants_are_writable_copies(session):
    c = tf.constant([1.0, 2.0])
    out = session.run(c)
    out[0] = 5.0
    np.testing.assert_array_equal(session.run(c), [1.0, 2.0])


def test_eval_and_run_use_the_default_session():
    v = tf.Variable(tf.constant(3.0))
    with tf.Session() as sess:
        v.initializer.run()
        assert (v * 2.0).eval() == 6.0
        assert sess is tf.get_default_session()
    with pytest.raises(ValueError, match="default session"):
        (v * 2.0).eval()


def test_interactive_session_installs_itself_as_default():
    sess = tf.InteractiveSession()
    try:
        assert tf.constant(4.0).eval() == 4.0
    finally:
        sess.close()
    assert tf.get_default_session() is None


def test_concurrent_runs_share_variables(session):
    counter = tf.Variable(tf.constant(0.0), name="counter")
    increment = tf.assign_add(counter, 1.0, use_locking=True)
    session.run(counter.initializer)
    errors = []

    def worker():
        try:
            for _ in range(250):
                session.run(increment.op)
        except Exception as e:  # collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert session.run(counter) == 2000.0


def test_dataflow_executor_runs_independent_kernels_in_parallel():
    x = tf.constant(1.0)
    y = _op("TestRendezvous", x) + _op("TestRendezvous", x)
    config = tf.ConfigProto(inter_op_parallelism_threads=2)
    with tf.Session(config=config) as sess:  # two independent expensive kernels: a pool
        assert sess.run(y) == 2.0


def test_inline_executor_releases_values_after_last_reader():
    seen = []

    class _Probe(OpDef):
        type = "TestProbe"
        inputs = ("x",)
        differentiable = False

        def infer(self, x):
            return TensorSpec(x.shape, x.dtype)

        def compute(self, ctx, x):
            seen.append(weakref.ref(x))
            return np.zeros(1)

    big = tf.placeholder(tf.float64, [1000], name="big")
    doubled = big * 2.0
    probe = tf.get_default_graph().create_op("TestProbe", [doubled]).outputs[0]
    with tf.Session() as sess:
        sess.run(probe, {big: np.ones(1000)})
    assert seen[0]() is None


def test_repeated_runs_reuse_the_compiled_step():
    a = tf.placeholder(tf.float32, [], name="a")
    total = a + 1.0
    with tf.Session() as sess:
        sess.run(total, {a: 1.0})
        steps = dict(sess._steps)
        for i in range(5):
            assert sess.run(total, {a: float(i)}) == i + 1.0
        assert sess._steps == steps


def test_integer_true_division_gives_float64():
    with tf.Session() as sess:
        out = sess.run(tf.constant(7) / tf.constant(2))
    assert out.dtype == np.float64 and out == 3.5


def test_intra_op_threads_cap_the_blas_pool():
    from threadpoolctl import threadpool_info

    before = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
    try:
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)):
            after = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
        assert after and all(n == 1 for n in after)
    finally:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=max(before or [1]), user_api="blas")


def test_report_uninitialized_variables_names_exactly_the_uninitialized_ones():
    with tf.device("/cpu:0"):
        a = tf.Variable(tf.constant(1.0), name="a")
    with tf.device("/cpu:1"):
        b = tf.Variable(tf.constant(2.0), name="b")
    report = tf.report_uninitialized_variables()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        assert list(sess.run(report)) == [b"a", b"b"]
        sess.run(a.initializer)
        assert list(sess.run(report)) == [b"b"]
        sess.run(b.initializer)
        assert sess.run(report).shape == (0,)
