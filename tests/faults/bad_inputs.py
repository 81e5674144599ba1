"""The bad-input sweep's cases, written once for TensorFlow and for nbflow.

Each case is a function ``case(tf, sess, tmp)`` over a TF1 module (``tf.compat.v1`` or
``nbflow``): it builds a little graph in the default graph, whose session ``sess`` is open, and
does one wrong thing. ``run_case`` runs it between a variable's initialization and an update of
that variable, and reports the error raised and whether the session and its variables were
still usable afterwards. ``make_bad_inputs_fixture.py`` records TensorFlow's errors;
``test_bad_inputs.py`` checks nbflow's against them.

``names``: what the message must name (a node, a key, a file), so the user can find what failed.
This module imports neither TensorFlow nor nbflow: both pass themselves in.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[Any, Any, str], Any]
    names: str  # text the error message must contain
    closes: bool = False  # the case closes its session: usability is checked on a new one


CASES: dict[str, Case] = {}


def case(names: str, closes: bool = False) -> Callable:
    def register(fn: Callable) -> Callable:
        CASES[fn.__name__] = Case(fn.__name__, fn, names, closes)
        return fn

    return register


@dataclass
class Outcome:
    error: BaseException | None
    usable: bool  # the health variable could still be updated and read afterwards


def run_case(tf: Any, c: Case, tmp: str) -> Outcome:
    """Run one case in a fresh graph and session; then check the session (or, for cases that
    close it, a new one) still updates and reads a variable."""
    graph = tf.Graph()
    with graph.as_default():
        health = tf.Variable(3.0, name="health")
        bump = tf.assign_add(health, 1.0)
        sess = tf.Session(graph=graph)
        sess.run(health.initializer)
        error = None
        try:
            c.run(tf, sess, tmp)
        except Exception as e:  # noqa: BLE001 - the error is the outcome
            error = e
        if c.closes:
            sess = tf.Session(graph=graph)
            sess.run(health.initializer)
        try:
            usable = float(sess.run(bump)) == 4.0 and float(sess.run(health)) == 4.0
        except Exception:  # noqa: BLE001 - not usable
            usable = False
        sess.close()
    return Outcome(error, usable)


# --- feeds -----------------------------------------------------------------------------------
@case("p:0")
def feed_wrong_length(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [3], name="p")
    sess.run(p * 2.0, {p: [1.0, 2.0]})


@case("p:0")
def feed_wrong_rank(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [2, 2], name="p")
    sess.run(p * 2.0, {p: [1.0, 2.0, 3.0, 4.0]})


@case("p:0")
def feed_scalar_for_vector(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [3], name="p")
    sess.run(p * 2.0, {p: 1.0})


@case("p:0")
def feed_wrong_partial_shape(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [None, 2], name="p")
    sess.run(p * 2.0, {p: np.zeros((3, 3))})


@case("p:0")
def feed_string_into_float(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [], name="p")
    sess.run(p * 2.0, {p: "abc"})


@case("p:0")
def feed_ragged_list(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [None, None], name="p")
    sess.run(p * 2.0, {p: [[1.0, 2.0], [3.0]]})


@case("p:0")
def feed_int_too_large_for_int32(tf, sess, tmp):
    p = tf.placeholder(tf.int32, [], name="p")
    sess.run(p + 1, {p: 2**40})


@case("p:0")
def feed_negative_into_uint8(tf, sess, tmp):
    p = tf.placeholder(tf.uint8, [], name="p")
    sess.run(tf.identity(p), {p: -1})


@case("p:0")
def feed_int_into_string(tf, sess, tmp):
    p = tf.placeholder(tf.string, [], name="p")
    sess.run(tf.identity(p), {p: 5})


@case("p:0")
def feed_float_into_string(tf, sess, tmp):
    p = tf.placeholder(tf.string, [], name="p")
    sess.run(tf.identity(p), {p: 1.5})


@case("p:0")
def feed_none_into_int(tf, sess, tmp):
    p = tf.placeholder(tf.int32, [], name="p")
    sess.run(p + 1, {p: None})


@case("feed")
def feed_a_tensor_as_value(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [], name="p")
    sess.run(p * 2.0, {p: tf.constant(1.0)})


@case("nope:0")
def feed_unknown_tensor_name(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [], name="p")
    sess.run(p * 2.0, {"nope:0": 1.0})


@case("p")
def feed_an_operation_name(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [], name="p")
    sess.run(p * 2.0, {"p": 1.0})


@case("feed_dict key")
def feed_a_number_key(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [], name="p")
    sess.run(p * 2.0, {1: 2.0})


@case("other")
def feed_a_tensor_of_another_graph(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [], name="p")
    with tf.Graph().as_default():
        other = tf.placeholder(tf.float32, [], name="other")
    sess.run(p * 2.0, {p: 1.0, other: 2.0})


@case("p")
def placeholder_not_fed(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [], name="p")
    sess.run(p * 2.0)


# --- fetches ---------------------------------------------------------------------------------
@case("nope:0")
def fetch_unknown_tensor_name(tf, sess, tmp):
    sess.run("nope:0")


@case("nope")
def fetch_unknown_operation_name(tf, sess, tmp):
    sess.run("nope")


@case("c:3")
def fetch_output_index_out_of_range(tf, sess, tmp):
    tf.constant(1.0, name="c")
    sess.run("c:3")


@case("other")
def fetch_a_tensor_of_another_graph(tf, sess, tmp):
    with tf.Graph().as_default():
        other = tf.constant(1.0, name="other")
    sess.run(other)


@case("other")
def run_an_operation_of_another_graph(tf, sess, tmp):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="other")
    sess.run(v.initializer)


@case("None")
def fetch_none(tf, sess, tmp):
    sess.run(None)


@case("int")
def fetch_a_number(tf, sess, tmp):
    sess.run(5)


@case("object")
def fetch_an_object(tf, sess, tmp):
    sess.run([[object()]])


# --- variables -------------------------------------------------------------------------------
@case("v")
def read_an_uninitialized_variable(tf, sess, tmp):
    v = tf.Variable(1.0, name="v")
    sess.run(v + 1.0)


@case("v")
def update_an_uninitialized_variable(tf, sess, tmp):
    v = tf.Variable(1.0, name="v")
    sess.run(tf.assign_add(v, 1.0))


@case("v")
def assign_a_value_of_the_wrong_shape_at_run_time(tf, sess, tmp):
    v = tf.Variable(np.zeros(2, np.float32), name="v")
    p = tf.placeholder(tf.float32, None, name="p")
    sess.run(v.initializer)
    sess.run(tf.assign(v, p), {p: [1.0, 2.0, 3.0]})


@case("shape")
def assign_a_constant_of_the_wrong_shape(tf, sess, tmp):
    v = tf.Variable(np.zeros(2, np.float32), name="v")
    tf.assign(v, [1.0, 2.0, 3.0])


@case("int32")
def assign_a_value_of_the_wrong_dtype(tf, sess, tmp):
    v = tf.Variable(np.zeros(2, np.float32), name="v")
    tf.assign(v, np.array([1, 2], np.int32))


# --- numerics --------------------------------------------------------------------------------
@case("checked")
def check_numerics_sees_nan(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [2], name="p")
    sess.run(tf.check_numerics(p, "checked"), {p: [1.0, np.nan]})


@case("checked")
def check_numerics_sees_inf(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [2], name="p")
    sess.run(tf.check_numerics(p, "checked"), {p: [1.0, np.inf]})


@case("checked")
def check_numerics_sees_log_of_negative(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [2], name="p")
    sess.run(tf.check_numerics(tf.log(p), "checked"), {p: [1.0, -1.0]})


@case("must be positive")
def assert_positive_fails(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [2], name="p")
    with tf.control_dependencies([tf.assert_positive(p, message="must be positive")]):
        out = tf.identity(p)
    sess.run(out, {p: [1.0, -1.0]})


@case("custom assertion")
def assert_op_fails(tf, sess, tmp):
    p = tf.placeholder(tf.bool, [], name="p")
    sess.run(tf.Assert(p, ["custom assertion"]), {p: False})


@case("div")
def integer_division_by_zero(tf, sess, tmp):
    p = tf.placeholder(tf.int32, [2], name="p")
    sess.run(tf.floordiv(tf.constant([4, 2]), p, name="div"), {p: [2, 0]})


@case("mod")
def integer_modulo_by_zero(tf, sess, tmp):
    p = tf.placeholder(tf.int64, [2], name="p")
    sess.run(tf.floormod(tf.constant([4, 2], tf.int64), p, name="mod"), {p: [0, 1]})


@case("inv")
def invert_a_singular_matrix(tf, sess, tmp):
    p = tf.placeholder(tf.float64, [2, 2], name="p")
    sess.run(tf.matrix_inverse(p, name="inv"), {p: [[1.0, 2.0], [2.0, 4.0]]})


@case("zeros")
def allocate_a_huge_tensor(tf, sess, tmp):
    p = tf.placeholder(tf.int32, [3], name="p")
    sess.run(tf.reduce_sum(tf.zeros(p, name="zeros")), {p: [2**20, 2**20, 2**12]})


# --- shapes and indices at run time ----------------------------------------------------------
@case("reshaped")
def reshape_to_a_wrong_size(tf, sess, tmp):
    p = tf.placeholder(tf.float32, None, name="p")
    sess.run(tf.reshape(p, [4], name="reshaped"), {p: [1.0, 2.0, 3.0]})


@case("reshaped")
def reshape_with_two_unknown_dimensions(tf, sess, tmp):
    p = tf.placeholder(tf.float32, None, name="p")
    s = tf.placeholder(tf.int32, [2], name="s")
    sess.run(tf.reshape(p, s, name="reshaped"), {p: [1.0, 2.0], s: [-1, -1]})


@case("picked")
def gather_an_index_out_of_range(tf, sess, tmp):
    i = tf.placeholder(tf.int32, [2], name="i")
    sess.run(tf.gather(tf.constant([1.0, 2.0, 3.0]), i, name="picked"), {i: [0, 5]})


@case("picked")
def gather_a_negative_index(tf, sess, tmp):
    i = tf.placeholder(tf.int32, [1], name="i")
    sess.run(tf.gather(tf.constant([1.0, 2.0, 3.0]), i, name="picked"), {i: [-1]})


@case("embedding_lookup")
def embedding_lookup_out_of_range(tf, sess, tmp):
    i = tf.placeholder(tf.int32, [1], name="i")
    table = tf.constant(np.ones((3, 2), np.float32))
    sess.run(tf.identity(tf.nn.embedding_lookup(table, i), name="looked_up"), {i: [7]})


@case("product")
def matmul_mismatch_at_run_time(tf, sess, tmp):
    a = tf.placeholder(tf.float32, [None, None], name="a")
    b = tf.placeholder(tf.float32, [None, None], name="b")
    sess.run(tf.matmul(a, b, name="product"), {a: np.ones((2, 3)), b: np.ones((4, 5))})


@case("3")
def matmul_mismatch_at_build_time(tf, sess, tmp):
    tf.matmul(tf.ones([2, 3]), tf.ones([4, 5]))


@case("total")
def add_incompatible_shapes_at_run_time(tf, sess, tmp):
    a = tf.placeholder(tf.float32, [None], name="a")
    b = tf.placeholder(tf.float32, [None], name="b")
    sess.run(tf.add(a, b, name="total"), {a: [1.0, 2.0, 3.0], b: [1.0, 2.0]})


@case("joined")
def concat_mismatched_shapes_at_run_time(tf, sess, tmp):
    a = tf.placeholder(tf.float32, [None, None], name="a")
    b = tf.placeholder(tf.float32, [None, None], name="b")
    sess.run(tf.concat([a, b], 0, name="joined"), {a: np.ones((2, 3)), b: np.ones((2, 4))})


@case("sliced")
def slice_out_of_bounds(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [None], name="p")
    sess.run(tf.slice(p, [2], [5], name="sliced"), {p: [1.0, 2.0, 3.0]})


@case("strided_slice")
def index_out_of_bounds(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [None], name="p")
    sess.run(tf.identity(p[5], name="indexed"), {p: [1.0, 2.0, 3.0]})


@case("transposed")
def transpose_with_a_bad_permutation(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [2, 3], name="p")
    perm = tf.placeholder(tf.int32, [2], name="perm")
    sess.run(tf.transpose(p, perm, name="transposed"), {p: np.ones((2, 3)), perm: [0, 0]})


@case("tiled")
def tile_with_wrong_multiples(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [None], name="p")
    m = tf.placeholder(tf.int32, [None], name="m")
    sess.run(tf.tile(p, m, name="tiled"), {p: [1.0, 2.0], m: [2, 2]})


@case("halves")
def split_into_unequal_parts(tf, sess, tmp):
    p = tf.placeholder(tf.float32, [None], name="p")
    sess.run(tf.split(p, 2, name="halves"), {p: [1.0, 2.0, 3.0]})


@case("xent")
def sparse_softmax_label_out_of_range(tf, sess, tmp):
    labels = tf.placeholder(tf.int32, [2], name="labels")
    logits = tf.constant(np.zeros((2, 3), np.float32))
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xent")
    sess.run(loss, {labels: [1, 5]})


@case("hot")
def one_hot_of_a_negative_depth(tf, sess, tmp):
    d = tf.placeholder(tf.int32, [], name="d")
    sess.run(tf.one_hot([0, 1], d, name="hot"), {d: -1})


# --- queues ----------------------------------------------------------------------------------
@case("q")
def dequeue_from_a_closed_empty_queue(tf, sess, tmp):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]], name="q")
    sess.run(q.close())
    sess.run(q.dequeue())


@case("q")
def enqueue_to_a_closed_queue(tf, sess, tmp):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]], name="q")
    sess.run(q.close())
    sess.run(q.enqueue(1.0))


@case("q")
def dequeue_many_more_than_a_closed_queue_holds(tf, sess, tmp):
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]], name="q")
    sess.run(q.enqueue_many([[1.0, 2.0]]))
    sess.run(q.close())
    sess.run(q.dequeue_many(3))


@case("q")
def dequeue_from_an_empty_queue_times_out(tf, sess, tmp):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]], name="q")
    sess.run(q.dequeue(), options=tf.RunOptions(timeout_in_ms=200))


@case("q")
def enqueue_to_a_full_queue_times_out(tf, sess, tmp):
    q = tf.FIFOQueue(1, tf.float32, shapes=[[]], name="q")
    sess.run(q.enqueue(1.0))
    sess.run(q.enqueue(2.0), options=tf.RunOptions(timeout_in_ms=200))


@case("q")
def enqueue_a_value_of_the_wrong_shape(tf, sess, tmp):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[2]], name="q")
    p = tf.placeholder(tf.float32, [None], name="p")
    sess.run(q.enqueue(p), {p: [1.0, 2.0, 3.0]})


@case("int32")
def enqueue_a_value_of_the_wrong_dtype(tf, sess, tmp):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]], name="q")
    q.enqueue(tf.constant(1, tf.int32))


# --- sessions --------------------------------------------------------------------------------
@case("closed", closes=True)
def run_on_a_closed_session(tf, sess, tmp):
    c = tf.constant(1.0, name="c")
    sess.close()
    sess.run(c)


@case("closed", closes=True)
def run_on_a_session_closed_by_its_context_manager(tf, sess, tmp):
    c = tf.constant(1.0, name="c")
    with tf.Session() as other:
        other.run(c)
    other.run(c)


# --- graphs ----------------------------------------------------------------------------------
def _graph_def(tf):
    """A small GraphDef (a proto in TensorFlow, a dict in nbflow) and its node list."""
    with tf.Graph().as_default() as g:
        a = tf.constant(1.0, name="a")
        tf.identity(a, name="b")
    gd = g.as_graph_def()
    return gd, gd.node if not isinstance(gd, dict) else gd["node"]


def _set(node, key, value):
    if isinstance(node, dict):
        node[key] = value
    else:
        setattr(node, key, value)


def _inputs(node):
    return node["input"] if isinstance(node, dict) else node.input


@case("graph_def")
def import_a_graph_def_that_is_not_one(tf, sess, tmp):
    tf.import_graph_def("not a graph def", name="imported")


@case("Bogus")
def import_a_graph_def_with_an_unknown_op(tf, sess, tmp):
    gd, nodes = _graph_def(tf)
    _set(nodes[1], "op", "Bogus")
    tf.import_graph_def(gd, name="imported")


@case("missing")
def import_a_graph_def_with_a_missing_input(tf, sess, tmp):
    gd, nodes = _graph_def(tf)
    _inputs(nodes[1])[0] = "missing"
    tf.import_graph_def(gd, name="imported")


@case("b")
def run_an_imported_cycle(tf, sess, tmp):
    gd, nodes = _graph_def(tf)
    _set(nodes[0], "op", "Identity")
    _inputs(nodes[0]).append("b")
    if isinstance(nodes[0], dict):
        nodes[0]["attr"] = {"T": {"type": "float32"}}
    else:
        nodes[0].attr.clear()
        nodes[0].attr["T"].type = 1  # DT_FLOAT
    tf.import_graph_def(gd, name="imported")
    sess.run("imported/b:0")


@case("x:0")
def import_with_an_input_map_of_unknown_names(tf, sess, tmp):
    gd, _ = _graph_def(tf)
    tf.import_graph_def(gd, input_map={"x:0": tf.constant(2.0)}, name="imported")


@case("nope")
def get_an_unknown_tensor_by_name(tf, sess, tmp):
    tf.get_default_graph().get_tensor_by_name("nope:0")


@case("nope")
def get_an_unknown_operation_by_name(tf, sess, tmp):
    tf.get_default_graph().get_operation_by_name("nope")


@case("finalized")
def add_an_op_to_a_finalized_graph(tf, sess, tmp):
    g = tf.Graph()
    g.finalize()
    with g.as_default():
        tf.constant(1.0)


# --- checkpoints -----------------------------------------------------------------------------
@case("nope")
def restore_a_missing_checkpoint(tf, sess, tmp):
    v = tf.Variable(1.0, name="v")
    tf.train.Saver([v]).restore(sess, os.path.join(tmp, "nope"))


@case("w")
def restore_a_variable_the_checkpoint_lacks(tf, sess, tmp):
    v = tf.Variable(1.0, name="v")
    sess.run(v.initializer)
    path = tf.train.Saver([v]).save(sess, os.path.join(tmp, "ckpt"))
    w = tf.Variable(2.0, name="w")
    tf.train.Saver([w]).restore(sess, path)


@case("v")
def restore_a_variable_of_another_shape(tf, sess, tmp):
    v = tf.Variable(np.zeros(2, np.float32), name="v")
    sess.run(v.initializer)
    path = tf.train.Saver([v]).save(sess, os.path.join(tmp, "ckpt"))
    with tf.Graph().as_default() as g:
        v3 = tf.Variable(np.zeros(3, np.float32), name="v")
        saver = tf.train.Saver([v3])
        with tf.Session(graph=g) as other:
            saver.restore(other, path)


@case("ckpt")
def restore_a_corrupt_checkpoint(tf, sess, tmp):
    v = tf.Variable(1.0, name="v")
    sess.run(v.initializer)
    path = tf.train.Saver([v]).save(sess, os.path.join(tmp, "ckpt"))
    for name in os.listdir(tmp):
        if name.startswith("ckpt.data"):
            with open(os.path.join(tmp, name), "r+b") as f:
                data = f.read()
                f.seek(0)
                f.write(bytes(b ^ 0xFF for b in data))
    tf.train.Saver([v]).restore(sess, path)


@case("variables to save")
def save_with_no_variables(tf, sess, tmp):
    with tf.Graph().as_default():
        tf.train.Saver()
