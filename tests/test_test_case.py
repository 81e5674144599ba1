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
