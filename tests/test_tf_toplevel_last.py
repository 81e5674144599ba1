"""Top-level TF 1.15 names added last: tf.nest, tf.version, tf.debugging, tf.queue, tf.manip,
tf.resource_loader, tf.UnconnectedGradients, tf.NameAttrList, GRAPH_DEF_VERSION*."""

import collections
import json
import os

import numpy as np
import pytest

import nbflow as tf

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "tf", "train_protos.json")
Point = collections.namedtuple("Point", ["x", "y"])


def test_nest_flattens_and_packs_as_tensorflows_nest():
    structure = {"b": [1, (2, Point(3, 4))], "a": None, "c": "leaf"}
    # TensorFlow: dicts by sorted key; lists, tuples and namedtuples nested; None/str leaves.
    assert tf.nest.flatten(structure) == [None, 1, 2, 3, 4, "leaf"]
    packed = tf.nest.pack_sequence_as(structure, list(range(6)))
    assert packed == {"a": 0, "b": [1, (2, Point(3, 4))], "c": 5}
    assert isinstance(packed["b"][1][1], Point)
    assert tf.nest.map_structure(lambda a, b: a * b, [1, (2, 3)], [10, (20, 30)]) == [10, (40, 90)]
    assert tf.nest.is_nested([]) and not tf.nest.is_nested("ab")
    with pytest.raises(TypeError, match="sequence type"):
        tf.nest.assert_same_structure([1, 2], (1, 2))
    tf.nest.assert_same_structure([1, 2], (1, 2), check_types=False)
    with pytest.raises(ValueError, match="same number of elements"):
        tf.nest.assert_same_structure([1, 2], [1])
    with pytest.raises(ValueError, match="Structure had 2 elements"):
        tf.nest.pack_sequence_as([0, 0], [1, 2, 3])


def test_unconnected_gradients_zero_gives_zeros_of_the_xs_shape():
    x = tf.placeholder(tf.float32, [2, 3])
    w = tf.Variable(np.ones((4,), np.float32))
    y = tf.reduce_sum(x * 2.0)
    assert tf.gradients(y, [w]) == [None]
    gx, gw = tf.gradients(y, [x, w], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    gz = tf.gradients(y, w, unconnected_gradients="zero")[0]
    with tf.Session() as sess:
        sess.run(w.initializer)
        gx, gw, gz = sess.run([gx, gw, gz], {x: np.zeros((2, 3), np.float32)})
    np.testing.assert_array_equal(gx, np.full((2, 3), 2.0))
    np.testing.assert_array_equal(gw, np.zeros(4))
    np.testing.assert_array_equal(gz, np.zeros(4))
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tf.gradients(y, [x], unconnected_gradients="ones")


def test_name_attr_list_serializes_as_tensorflows():
    with open(FIXTURE) as f:
        expected = json.load(f)["attr_value_func"]
    func = tf.AttrValue(
        func=tf.NameAttrList(name="my_fn", attr={"T": tf.AttrValue(type=1), "n": tf.AttrValue(i=3)})
    )
    assert func.SerializeToString(deterministic=True).hex() == expected


def test_namespaces_hold_the_top_level_ops():
    assert tf.debugging.assert_equal is tf.assert_equal
    assert tf.debugging.assert_all_finite is tf.verify_tensor_all_finite
    assert tf.queue.FIFOQueue is tf.FIFOQueue
    assert tf.manip.roll is tf.roll and tf.manip.tile is tf.tile
    x = tf.constant([1.0, np.nan])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.debugging.is_nan(x)), [False, True])
        np.testing.assert_array_equal(sess.run(tf.manip.roll([1, 2, 3], 1, 0)), [3, 1, 2])
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(tf.debugging.check_numerics(x, "bad"))


def test_versions_and_resource_loader():
    assert tf.version.VERSION == tf.VERSION == "1.15.0"
    assert tf.GRAPH_DEF_VERSION == tf.version.GRAPH_DEF_VERSION
    assert tf.Graph().as_graph_def()["versions"]["producer"] == tf.GRAPH_DEF_VERSION
    assert tf.GRAPH_DEF_VERSION_MIN_CONSUMER == 0 == tf.GRAPH_DEF_VERSION_MIN_PRODUCER
    data = tf.resource_loader.load_resource("nbflow/api/tf1_names.json")
    assert json.loads(data)["namespaces"]["tf"]
    here = tf.resource_loader.get_path_to_datafile("x.txt")
    assert here == os.path.join(os.path.dirname(os.path.abspath(__file__)), "x.txt")
    assert os.path.isfile(os.path.join(tf.resource_loader.get_data_files_path(), "__init__.py"))


def _read_all(reader, items):
    queue = tf.FIFOQueue(10, [tf.string], shapes=[[]])
    enqueue = queue.enqueue_many([tf.constant(items)])
    close = queue.close()
    key, value = reader.read(queue)
    out = []
    with tf.Session() as sess:
        sess.run(enqueue)
        sess.run(close)
        try:
            while True:
                out.append(tuple(sess.run([key, value])))
        except tf.errors.OutOfRangeError:
            pass
    return out


def test_whole_file_reader_reads_each_file_whole_keyed_by_name(tmp_path):
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    a.write_bytes(b"\x00\x01line\nmore")
    b.write_bytes(b"")
    got = _read_all(tf.WholeFileReader(), [str(a).encode(), str(b).encode()])
    assert got == [(str(a).encode(), b"\x00\x01line\nmore"), (str(b).encode(), b"")]


def test_identity_reader_returns_each_work_item_as_key_and_value():
    got = _read_all(tf.IdentityReader(), [b"x", b"yz"])
    assert got == [(b"x", b"x"), (b"yz", b"yz")]


def test_py_function_passes_values_with_numpy_and_returns_tout():
    def scale_and_shout(x, words):
        assert isinstance(x.numpy(), np.ndarray) and not isinstance(x.numpy(), type(x))
        return x.numpy() * 2, np.array([w.upper() for w in words.numpy()], dtype=object)

    x = tf.constant([1.0, 2.5])
    y, w = tf.py_function(scale_and_shout, [x, tf.constant([b"ab", b"c"])], [tf.float32, tf.string])
    assert y.dtype == tf.float32 and w.dtype == tf.string
    got_y, got_w = tf.Session().run([y, w])
    np.testing.assert_array_equal(got_y, [2.0, 5.0])
    assert got_w.tolist() == [b"AB", b"C"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="ValueError: no"):
        tf.Session().run(
            tf.py_function(lambda v: (_ for _ in ()).throw(ValueError("no")), [x], tf.float32)
        )
