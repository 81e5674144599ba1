"""tf.layers.InputSpec and the check a layer runs against it."""

import pytest

import nbflow as tf
from nbflow.layers.input_spec import assert_input_compatibility


def test_input_spec_accepts_matching_inputs_and_names_the_mismatch():
    with tf.Graph().as_default():
        spec = tf.layers.InputSpec(dtype=tf.float32, min_ndim=2, axes={-1: 3})
        assert_input_compatibility(spec, tf.zeros([4, 3]), "dense")
        assert_input_compatibility(spec, tf.placeholder(tf.float32), "dense")  # unknown rank
        with pytest.raises(ValueError, match="layer dense.*min_ndim=2, found ndim=1"):
            assert_input_compatibility(spec, tf.zeros([3]), "dense")
        with pytest.raises(ValueError, match="axis -1 of size 3"):
            assert_input_compatibility(spec, tf.zeros([4, 5]), "dense")
        with pytest.raises(ValueError, match="dtype=float32, found int32"):
            assert_input_compatibility(spec, tf.zeros([4, 3], tf.int32), "dense")
        assert tf.layers.InputSpec(shape=[None, 3]).ndim == 2
