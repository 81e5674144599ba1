"""tf.Assert and the assert_* builders: run-time checks name the Assert node, static ones raise
while the graph is built, and messages list the data as TensorFlow 1.x prints them."""

import numpy as np
import pytest

import nbflow as tf
from nbflow.framework.op_def import all_samples, cpu_context, get_op_def
from nbflow.runtime import step as step_lib


@pytest.fixture(params=["inline", "parallel"])
def session(request):
    sess = tf.Session()
    sess._executor_choice = request.param
    yield sess
    sess.close()


@pytest.fixture(params=["structured", "tagged_frames"])
def loop_executor(request, monkeypatch):
    if request.param == "tagged_frames":
        monkeypatch.setattr(step_lib, "structured_loops", False)
    return request.param


def _failure(sess, fetches, feed_dict=None):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(fetches, feed_dict)
    return info.value


# --- the Assert op --------------------------------------------------------------------------------
def test_assert_passes_when_condition_holds(session):
    x = tf.placeholder(tf.int32, [3])
    check = tf.Assert(tf.reduce_all(x > 0), ["x must be positive", x])
    assert check.type == "Assert" and not check.outputs
    assert session.run(check, {x: [1, 2, 3]}) is None


def test_failing_assert_lists_data_and_names_the_node(session):
    x = tf.placeholder(tf.int32, [3])
    check = tf.Assert(tf.reduce_all(x > 0), ["x must be positive", f"x ({x.name}) = ", x])
    error = _failure(session, check, {x: [-1, 2, 3]})
    assert error.message.startswith(
        "assertion failed: [x must be positive] [x (Placeholder:0) = ] [-1 2 3]"
    )
    assert error.op is check and error.op.name == "Assert/Assert"


def test_session_stays_usable_after_a_failed_assert(session):
    x = tf.placeholder(tf.float32, [2])
    with tf.control_dependencies([tf.Assert(tf.reduce_all(x < 10.0), [x])]):
        y = x * 2.0
    _failure(session, y, {x: [1.0, 20.0]})
    np.testing.assert_allclose(session.run(y, {x: [1.0, 2.0]}), [2.0, 4.0])
    _failure(session, y, {x: [30.0, 2.0]})


@pytest.mark.parametrize(
    "summarize, expected",
    [(None, "[1 2 3...]"), (2, "[1 2...]"), (-1, "[1 2 3 4 5]"), (10, "[1 2 3 4 5]")],
)
def test_assert_summarizes_each_tensor_to_summarize_elements(summarize, expected):
    x = tf.placeholder(tf.int64, [5])
    check = tf.Assert(tf.constant(False), [x], summarize=summarize)
    with tf.Session() as sess:
        error = _failure(sess, check, {x: [1, 2, 3, 4, 5]})
    assert error.message.startswith(f"assertion failed: {expected} [[node")


def test_assert_prints_matrices_strings_floats_and_scalars_as_tf_print_does():
    m = tf.placeholder(tf.int32, [2, 3])
    data = ["text", tf.constant([b"a", b"b"]), tf.constant(0.5), tf.constant([1.5, -2.0]), m]
    check = tf.Assert(False, data, summarize=3, name="shapes")
    with tf.Session() as sess:
        error = _failure(sess, check, {m: [[1, 2, 3], [4, 5, 6]]})
    assert error.message.startswith("assertion failed: [text] [a b] [0.5] [1.5 -2] [[1 2 3]...]")
    assert error.op.name == "shapes/Assert"


def test_assert_with_no_data_fails_with_the_bare_prefix():
    with tf.Session() as sess:
        error = _failure(sess, tf.Assert(False, []))
    assert error.message.startswith("assertion failed:  [[node Assert/Assert (Assert)")


def test_assert_condition_must_be_bool():
    with pytest.raises(TypeError, match="does not match expected type of bool"):
        tf.Assert(tf.constant(1.0), ["x"])


def test_assert_condition_of_known_rank_must_be_a_scalar():
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.Assert(tf.placeholder(tf.bool, [2]), ["x"])


def test_assert_checks_a_condition_of_unknown_rank_when_run():
    c = tf.placeholder(tf.bool)
    check = tf.Assert(c, ["x"])
    with tf.Session() as sess:
        sess.run(check, {c: True})
        sess.run(check, {c: [True]})  # TensorFlow's "legacy scalar"
        error = _failure(sess, check, {c: [True, False]})
        assert "In[0] should be a scalar: [2]" in error.message
        assert "assertion failed: [x]" in _failure(sess, check, {c: [False]}).message


def test_assert_samples_run_in_a_session():
    cases = [case for case in all_samples() if case.opdef.type == "Assert"]
    assert len(cases) >= 2
    for case in cases:
        tf.reset_default_graph()
        condition, data = case.make_inputs(np.random.default_rng(0))
        assert case.opdef.compute(cpu_context(), condition, tuple(data), **case.attrs) == ()
        check = tf.Assert(condition, data, summarize=case.attrs["summarize"])
        with tf.Session() as sess:
            assert sess.run(check) is None


def test_assert_is_stateful_and_not_differentiable():
    opdef = get_op_def("Assert")
    assert opdef.stateful and not opdef.differentiable and opdef.num_outputs == 0


# --- comparisons ----------------------------------------------------------------------------------
BINARY = [
    # builder, symbol, passing (x, y), failing (x, y)
    (tf.assert_equal, "==", ([1, 2], [1, 2]), ([1, 2], [1, 3])),
    (tf.assert_none_equal, "!=", ([1, 2], [3, 4]), ([1, 2], [3, 2])),
    (tf.assert_less, "<", ([1, 2], [2, 3]), ([1, 2], [2, 2])),
    (tf.assert_less_equal, "<=", ([1, 2], [1, 2]), ([1, 3], [1, 2])),
    (tf.assert_greater, ">", ([2, 3], [1, 2]), ([2, 2], [1, 2])),
    (tf.assert_greater_equal, ">=", ([1, 2], [1, 2]), ([1, 1], [1, 2])),
]
BINARY_IDS = [b[0].__name__ for b in BINARY]


@pytest.mark.parametrize("builder, symbol, passing, failing", BINARY, ids=BINARY_IDS)
def test_comparison_checks_fed_values_when_run(session, builder, symbol, passing, failing):
    x = tf.placeholder(tf.int32, [2], name="x")
    y = tf.placeholder(tf.int32, [2], name="y")
    check = builder(x, y)
    assert check.type == "Assert"
    assert session.run(check, {x: passing[0], y: passing[1]}) is None
    error = _failure(session, check, {x: failing[0], y: failing[1]})
    holds = "for every single element" if symbol == "!=" else "element-wise"
    fx, fy = (" ".join(map(str, v)) for v in failing)
    assert error.message.startswith(
        f"assertion failed: [] [Condition x {symbol} y did not hold {holds}:] "
        f"[x (x:0) = ] [{fx}] [y (y:0) = ] [{fy}]"
    )
    assert error.op is check
    assert check.name.startswith(builder.__name__ + "/")


def test_comparison_prefixes_its_message_and_broadcasts():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    check = tf.assert_less(x, 10.0, message="x too big", summarize=2)
    with tf.Session() as sess:
        sess.run(check, {x: np.zeros((2, 3))})
        error = _failure(sess, check, {x: [[1, 2, 3], [4, 50, 6]]})
    assert error.message.startswith(
        "assertion failed: [x too big] [Condition x < y did not hold element-wise:] "
        "[x (x:0) = ] [[1 2...]...] [y (assert_less/y:0) = ] [10]"
    )


def test_comparison_with_data_prints_that_data():
    x = tf.placeholder(tf.int32, [], name="x")
    check = tf.assert_equal(x, 3, data=["x was", x, "not 3"])
    with tf.Session() as sess:
        error = _failure(sess, check, {x: 4})
    assert error.message.startswith("assertion failed: [x was] [4] [not 3]")


def test_comparison_of_empty_tensors_holds():
    x = tf.placeholder(tf.float32, [None])
    with tf.Session() as sess:
        sess.run(tf.assert_greater(x, 0.0), {x: np.zeros(0, np.float32)})


@pytest.mark.parametrize("builder, symbol, passing, failing", BINARY, ids=BINARY_IDS)
def test_comparison_of_constants_fails_at_construction(builder, symbol, passing, failing):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        builder(tf.constant(failing[0]), tf.constant(failing[1]), message="static")
    assert info.value.message.startswith(f"static\nCondition x {symbol} y did not hold")
    assert str(np.array(failing[1])) in info.value.message
    check = builder(tf.constant(passing[0]), tf.constant(passing[1]))
    with tf.Session() as sess:
        assert sess.run(check) is None


def test_comparison_of_incompatible_static_shapes_fails_at_construction():
    with pytest.raises(ValueError):
        tf.assert_equal(tf.placeholder(tf.int32, [2]), tf.placeholder(tf.int32, [3]))


# --- signs ----------------------------------------------------------------------------------------
SIGNS = [
    # builder, condition text, passing, failing
    (tf.assert_positive, "x > 0", [1.0, 2.0], [1.0, 0.0]),
    (tf.assert_negative, "x < 0", [-1.0, -2.0], [-1.0, 0.0]),
    (tf.assert_non_negative, "x >= 0", [0.0, 2.0], [0.0, -2.0]),
    (tf.assert_non_positive, "x <= 0", [0.0, -2.0], [0.0, 2.0]),
]


@pytest.mark.parametrize(
    "builder, text, passing, failing", SIGNS, ids=[s[0].__name__ for s in SIGNS]
)
def test_sign_checks_fed_values_when_run(session, builder, text, passing, failing):
    x = tf.placeholder(tf.float32, [2], name="x")
    check = builder(x)
    assert session.run(check, {x: passing}) is None
    error = _failure(session, check, {x: failing})
    shown = " ".join(f"{v:g}" for v in failing)
    assert error.message.startswith(
        f"assertion failed: [] [Condition {text} did not hold element-wise:] [x (x:0) = ] [{shown}]"
    )
    assert error.op is check


@pytest.mark.parametrize(
    "builder, text, passing, failing", SIGNS, ids=[s[0].__name__ for s in SIGNS]
)
def test_sign_of_constants_fails_at_construction(builder, text, passing, failing):
    with pytest.raises(tf.errors.InvalidArgumentError, match=f"Condition {text} did not hold"):
        builder(tf.constant(failing))
    with tf.Session() as sess:
        sess.run(builder(tf.constant(passing)))


def test_assert_positive_guards_an_identity_through_control_dependencies(session):
    x = tf.placeholder(tf.int32, [None], name="x")
    check = tf.assert_positive(x, message="x must be positive")
    with tf.control_dependencies([check]):
        y = tf.identity(x)
    assert session.run(y, {x: [1, 2]}).tolist() == [1, 2]
    error = _failure(session, y, {x: [-1, 2, 3, 4]})
    assert error.message.startswith(
        "assertion failed: [x must be positive] [Condition x > 0 did not hold element-wise:] "
        "[x (x:0) = ] [-1 2 3...]"
    )
    assert error.op.name == check.name
    assert session.run(y, {x: [5]}).tolist() == [5]


# --- ranks ----------------------------------------------------------------------------------------
def test_assert_rank_of_a_known_rank_is_decided_at_construction():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    assert tf.assert_rank(x, 2).type == "NoOp"
    assert tf.assert_rank_at_least(x, 1).type == "NoOp"
    with pytest.raises(ValueError, match=r"Tensor x:0 must have rank 3.  Received rank 2"):
        tf.assert_rank(x, 3, message="bad")
    with pytest.raises(ValueError, match=r"must have rank at least 3.  Received rank 2"):
        tf.assert_rank_at_least(x, 3)
    with pytest.raises(ValueError, match="Rank must be a scalar"):
        tf.assert_rank(x, [2])


def test_assert_rank_of_an_unknown_rank_checks_when_run(session):
    x = tf.placeholder(tf.float32, name="x")
    check = tf.assert_rank(x, 2)
    at_least = tf.assert_rank_at_least(x, 2)
    assert check.type == "Assert"
    session.run([check, at_least], {x: np.zeros((2, 3))})
    session.run(at_least, {x: np.zeros((2, 3, 4))})
    error = _failure(session, check, {x: np.zeros(3)})
    assert error.message.startswith(
        "assertion failed: [] [Tensor x:0 must have rank] [2] [Received shape: ] [3]"
    )
    assert error.op is check
    error = _failure(session, at_least, {x: np.zeros(3)})
    assert "[Tensor x:0 must have rank at least] [2]" in error.message


def test_assert_rank_with_a_fed_rank_checks_the_rank_is_a_scalar():
    x = tf.placeholder(tf.float32, [2, 3])
    r = tf.placeholder(tf.int32)
    check = tf.assert_rank(x, r)
    with tf.Session() as sess:
        sess.run(check, {r: 2})
        assert "must have rank" in _failure(sess, check, {r: 1}).message
        error = _failure(sess, check, {r: [2]})
        assert "Rank must be a scalar. Received rank: " in error.message


def test_assert_rank_needs_an_int32_rank():
    with pytest.raises(TypeError, match="must be of type"):
        tf.assert_rank(tf.placeholder(tf.float32), tf.constant(2, tf.int64))


# --- dtypes and static shapes ---------------------------------------------------------------------
def test_assert_integer_and_assert_type_are_static():
    i = tf.placeholder(tf.int64, name="i")
    f = tf.placeholder(tf.float32, name="f")
    assert tf.assert_integer(i).type == "NoOp"
    assert tf.assert_type(f, tf.float32).type == "NoOp"
    with pytest.raises(TypeError, match='Expected "x" to be integer type.  Found: f:0'):
        tf.assert_integer(f)
    with pytest.raises(TypeError, match="oops  i:0 must be of type"):
        tf.assert_type(i, tf.int32, message="oops")


def test_assert_scalar_returns_its_tensor_or_raises():
    s = tf.placeholder(tf.float32, [])
    assert tf.assert_scalar(s) is s
    with pytest.raises(ValueError, match="Expected scalar shape for .*, saw shape"):
        tf.assert_scalar(tf.placeholder(tf.float32, [2]))
    with pytest.raises(ValueError, match="Expected scalar shape"):
        tf.assert_scalar(tf.placeholder(tf.float32))


def test_assert_proper_iterable_rejects_tensors_arrays_and_strings():
    tf.assert_proper_iterable([1, 2])
    tf.assert_proper_iterable(iter(range(2)))
    for value in [tf.constant([1]), np.zeros(2), "ab", b"ab"]:
        with pytest.raises(TypeError, match="proper"):
            tf.assert_proper_iterable(value)
    with pytest.raises(TypeError, match="to be iterable"):
        tf.assert_proper_iterable(3)


# --- inside control flow --------------------------------------------------------------------------
def test_failing_assert_in_while_loop_body_names_the_node(loop_executor):
    limit = tf.placeholder(tf.int32, [], name="limit")
    checks = []

    def body(i, total):
        check = tf.assert_less(i, limit, message="i ran past limit")
        checks.append(check)
        with tf.control_dependencies([check]):
            return i + 1, total + i

    _, total = tf.while_loop(lambda i, t: i < 5, body, [0, 0])
    with tf.Session() as sess:
        assert sess.run(total, {limit: 10}) == 10
        error = _failure(sess, total, {limit: 3})
        assert error.message.startswith(
            "assertion failed: [i ran past limit] [Condition x < y did not hold element-wise:]"
        )
        assert "[3]" in error.message
        assert error.op.name == checks[0].name
        assert sess.run(total, {limit: 5}) == 10


def test_failing_assert_in_cond_branch_runs_only_when_taken(loop_executor):
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [2], name="x")
    checks = []

    def checked():
        check = tf.assert_non_negative(x, message="branch")
        checks.append(check)
        with tf.control_dependencies([check]):
            return tf.sqrt(x)

    y = tf.cond(p, checked, lambda: -x)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {p: False, x: [-4.0, 1.0]}), [4.0, -1.0])
        error = _failure(sess, y, {p: True, x: [-4.0, 1.0]})
        assert error.message.startswith("assertion failed: [branch]")
        assert error.op.name == checks[0].name
        np.testing.assert_allclose(sess.run(y, {p: True, x: [4.0, 1.0]}), [2.0, 1.0])


def test_graph_def_round_trip_keeps_the_assert():
    x = tf.placeholder(tf.int32, [2], name="x")
    tf.assert_equal(x, [1, 2], name="same")
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        check = graph.get_operation_by_name("same/Assert/Assert")
        with tf.Session(graph=graph) as sess:
            sess.run(check, {"x:0": [1, 2]})
            error = _failure(sess, check, {"x:0": [1, 3]})
    assert error.message.startswith("assertion failed: [] [Condition x == y")


# --- assert_near ----------------------------------------------------------------------------------
def test_assert_near_passes_within_default_tolerance_and_fails_outside(session):
    x = tf.placeholder(tf.float32, [2], name="x")
    check = tf.assert_near(x, [1.0, 2.0])
    assert check.type == "Assert"
    eps = np.finfo(np.float32).eps
    session.run(check, {x: [1.0, 2.0 + 2 * eps]})
    error = _failure(session, check, {x: [1.0, 2.001]})
    assert error.message.startswith("assertion failed: [] [x and y not equal to tolerance rtol = ")
    assert 'rtol = Tensor(\\"assert_near/rtol:0\\"' in error.message  # strings are C-escaped
    assert "[x (x:0) = ] [1 2.001] [y (assert_near/y:0) = ] [1 2]" in error.message
    assert error.op is check


def test_assert_near_default_tolerance_follows_the_dtype(session):
    x = tf.placeholder(tf.float64, [1])
    check = tf.assert_near(x, [1.0])
    session.run(check, {x: [1.0 + 5 * np.finfo(np.float64).eps]})
    _failure(session, check, {x: [1.0 + 1e-9]})  # far inside float32's tolerance


def test_assert_near_with_explicit_tolerances_is_strict(session):
    x = tf.placeholder(tf.float32, [3])
    loose = tf.assert_near(x, [10.0, 20.0, 30.0], rtol=0.1, atol=0.0, message="far")
    session.run(loose, {x: [10.9, 18.1, 30.0]})
    error = _failure(session, loose, {x: [10.9, 22.5, 30.0]})
    assert error.message.startswith("assertion failed: [far] [x and y not equal")
    absolute = tf.assert_near(x, [0.0, 0.0, 0.0], rtol=0.0, atol=0.5, data=["custom", x])
    session.run(absolute, {x: [0.25, -0.25, 0.0]})
    # |x - y| < atol + rtol * |y| is strict, as TensorFlow 1.x computes it: 0.5 is not near 0.
    error = _failure(session, absolute, {x: [0.5, 0.0, 0.0]})
    assert error.message.startswith("assertion failed: [custom] [0.5 0 0]")


def test_assert_near_checks_only_when_run_and_needs_floats():
    x, y = tf.constant([1.0, 2.0], name="a"), tf.constant([1.0, 3.0], name="b")
    check = tf.assert_near(x, y, summarize=1)
    with tf.Session() as sess:
        error = _failure(sess, check)
    assert "[x (a:0) = ] [1...] [y (b:0) = ] [1...]" in error.message
    with pytest.raises(ValueError):
        tf.assert_near(tf.constant([1, 2]), [1, 2])


# --- assert_rank_in -------------------------------------------------------------------------------
def test_assert_rank_in_is_static_when_the_rank_is_known():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    assert tf.assert_rank_in(x, [1, 2]).type == "NoOp"
    with pytest.raises(ValueError, match=r"bad.  Tensor x:0 must have rank in \(0, 1\).  "):
        tf.assert_rank_in(x, [0, 1], message="bad")
    with pytest.raises(ValueError, match="Rank must be a scalar"):
        tf.assert_rank_in(x, [[2]])
    with pytest.raises(TypeError, match="must be of type"):
        tf.assert_rank_in(x, [tf.constant(2, tf.int64)])


def test_assert_rank_in_of_an_unknown_rank_checks_when_run(session):
    x = tf.placeholder(tf.float32, name="x")
    check = tf.assert_rank_in(x, [0, 2])
    assert check.type == "Assert"
    session.run(check, {x: 1.0})
    session.run(check, {x: np.zeros((2, 3))})
    error = _failure(session, check, {x: np.zeros(3)})
    assert error.message.startswith(
        "assertion failed: [] [Tensor x:0 must have rank in] [0] [2] [Received shape: ] [3]"
    )
    assert error.op is check


def test_assert_rank_in_with_a_fed_rank():
    x = tf.placeholder(tf.float32, [2, 3])
    r = tf.placeholder(tf.int32)
    check = tf.assert_rank_in(x, [1, r])
    with tf.Session() as sess:
        sess.run(check, {r: 2})
        assert "must have rank in" in _failure(sess, check, {r: 3}).message
        assert "Rank must be a scalar" in _failure(sess, check, {r: [2]}).message


# --- assert_shapes --------------------------------------------------------------------------------
def test_assert_shapes_decided_statically():
    x, y = tf.zeros([2, 3], name="x"), tf.zeros([2, 4], name="y")
    ok = tf.assert_shapes([(x, ("N", "Q")), (y, ("N", 4)), (tf.zeros([]), ()), (x, None)])
    assert ok.type == "NoOp"
    assert tf.assert_shapes({tf.zeros([5, 2, 3]): ("*", "N", 3), x: (..., "N", ".")})
    with pytest.raises(
        ValueError,
        match=r"Specified by tensor x:0 dimension 0.  Tensor z:0 dimension 0 must have size 2."
        r"  Received size 3, shape \(3, 4\)",
    ):
        tf.assert_shapes([(x, ("N", "Q")), (tf.zeros([3, 4], name="z"), ("N", None))])
    with pytest.raises(ValueError, match="Specified explicitly.  Tensor x:0 dimension 1 must"):
        tf.assert_shapes({x: (2, 4)})
    with pytest.raises(ValueError, match="must have rank 3"):
        tf.assert_shapes({x: ("A", "B", "C")})
    with pytest.raises(ValueError, match="only allowed as the first entry"):
        tf.assert_shapes({x: ("N", ...)})
    with pytest.raises(ValueError, match="must be an iterable"):
        tf.assert_shapes({x: 3})


def test_assert_shapes_checks_unknown_sizes_when_run(session):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, name="y")
    check = tf.assert_shapes([(x, ("N", "Q")), (y, ("N", 3))])
    session.run(check, {x: np.zeros((2, 3)), y: np.zeros((2, 3))})
    error = _failure(session, check, {x: np.zeros((2, 3)), y: np.zeros((4, 3))})
    assert error.message.startswith(
        "assertion failed: [] [Specified by tensor x:0 dimension 0] [Tensor y:0 dimension] [0] "
        "[must have size] [2] [Received shape: ] [4 3]"
    )
    error = _failure(session, check, {x: np.zeros((2, 3)), y: np.zeros((2, 3, 1))})
    assert "[Tensor y:0 must have rank] [2]" in error.message


def test_assert_shapes_scalars_count_as_one_element_vectors(session):
    x = tf.placeholder(tf.float32, name="x")
    check = tf.assert_shapes({x: (1,)})
    session.run(check, {x: 3.0})
    session.run(check, {x: [3.0]})
    error = _failure(session, check, {x: [3.0, 4.0]})
    assert "[Specified explicitly] [Tensor x:0 dimension] [0] [must have size] [1]" in (
        error.message
    )


def test_assert_shapes_with_outer_dimensions_left_open(session):
    x = tf.placeholder(tf.float32, name="x")
    check = tf.assert_shapes([(x, (..., "B", 2)), (tf.zeros([7], name="b"), ("B",))])
    session.run(check, {x: np.zeros((3, 7, 2))})
    session.run(check, {x: np.zeros((7, 2))})
    error = _failure(session, check, {x: np.zeros((3, 6, 2))})
    assert "[Specified by tensor x:0 dimension -2] [Tensor b:0 dimension] [0]" in error.message
