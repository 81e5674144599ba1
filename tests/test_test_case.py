"""tf.test.TestCase runs a TensorFlow 1.x-style test suite: sessions, evaluate, assertions."""

import unittest

import numpy as np

import nbflow as tf


class _UserSuite(tf.test.TestCase):
    """A test class as users write them for TensorFlow 1.x."""

    def test_cached_session_and_eval(self):
        with self.cached_session() as sess:
            x = tf.constant([2.0, 3.0])
            self.assertAllClose(tf.square(x).eval(), [4.0, 9.0])
            self.assertIs(sess, tf.get_default_session())
        with self.test_session() as again:
            self.assertIs(again, sess)

    def test_evaluate_nested_and_tensors_in_assertions(self):
        a = tf.constant([1, 2])
        out = self.evaluate({"a": a, "pair": (a * 2, tf.constant(1.5))})
        self.assertAllEqual(out["a"], [1, 2])
        self.assertAllClose({"x": [a, 1.0]}, {"x": [np.array([1.0, 2.0]), 1.0]})
        self.assertAllEqual(a, [1, 2])
        self.assertShapeEqual(np.zeros([2]), a)
        self.assertAllInRange(a, 1, 2)
        self.assertNear(1.0, 1.05, 0.1)

    def test_op_errors(self):
        with self.session():
            with self.assertRaisesOpError("Incompatible|must be|assert"):
                tf.Assert(tf.constant(False), ["bad"]).run()

    def test_gradient_error_is_small(self):
        x = tf.placeholder(tf.float64, [3])
        y = tf.reduce_sum(tf.sin(x) * x)
        with self.session():
            err = tf.test.compute_gradient_error(x, [3], y, [], x_init_value=[0.1, 0.5, 2.0])
        self.assertLess(err, 1e-6)

    def test_proto_equals_text(self):
        node = tf.constant(1.0, name="c").op.node_def
        self.assertProtoEquals(node, node)
        example = tf.train.Example()
        example.features.feature["x"].int64_list.value.append(3)
        self.assertProtoEquals(
            'features { feature { key: "x" value { int64_list { value: 3 } } } }', example
        )

    def test_temp_dir(self):
        import os

        self.assertTrue(os.path.isdir(self.get_temp_dir()))

    def test_graph_is_fresh(self):
        self.assertEqual(tf.get_default_graph().get_operations(), [])


def test_a_user_suite_passes_and_failures_are_reported():
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(_UserSuite).run(result)
    assert result.testsRun >= 7  # plain unittest also calls the helper test_session, harmlessly
    assert not result.failures and not result.errors, result.failures + result.errors

    class Failing(tf.test.TestCase):
        def test_wrong(self):
            self.assertAllClose([1.0, 2.0], [1.0, 2.5])

        def test_not_raised(self):
            with self.assertRaisesOpError("x"):
                pass

    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(Failing).run(result)
    assert len(result.failures) == 2


def test_module_helpers():
    assert tf.test.is_built_with_rocm() is False
    assert tf.test.is_built_with_gpu_support() in (True, False)
    assert tf.test.test_src_dir_path("ops").endswith("nbflow/ops")
    assert isinstance(tf.test.benchmark_config(), tf.ConfigProto)
    assert tf.test.mock.MagicMock()(1) is not None


def test_assert_equal_graph_def_compares_nodes():
    with tf.Graph().as_default() as a:
        tf.constant(1.0, name="c") + 1.0
    with tf.Graph().as_default() as b:
        tf.constant(1.0, name="c") + 1.0
    with tf.Graph().as_default() as c:
        tf.constant(2.0, name="c") + 1.0
    tf.test.assert_equal_graph_def(a.as_graph_def(), b.as_graph_def())
    try:
        tf.test.assert_equal_graph_def(a.as_graph_def(), c.as_graph_def())
    except AssertionError as e:
        assert "'c'" in str(e)
    else:
        raise AssertionError("different constants compared equal")


def test_stub_out_and_benchmark(capsys):
    import math

    with tf.test.StubOutForTesting() as stubs:
        stubs.Set(math, "pi", 3.0)
        assert math.pi == 3.0
    assert math.pi != 3.0
    with tf.Session() as sess:
        result = tf.test.Benchmark().run_op_benchmark(sess, tf.constant(1.0) * 2.0, min_iters=3)
    assert result["iters"] == 3 and result["wall_time"] > 0
    assert "benchmark" in capsys.readouterr().out
