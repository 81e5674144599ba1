"""tf.data.Options: typed, None-by-default options; with_options/options() merge them upstream."""

import numpy as np
import pytest

import nbflow as tf


def test_options_default_to_none_and_check_types():
    options = tf.data.Options()
    assert options.experimental_deterministic is None
    assert options.experimental_threading.private_threadpool_size is None
    options.experimental_threading.private_threadpool_size = 4
    with pytest.raises(TypeError, match="private_threadpool_size"):
        options.experimental_threading.private_threadpool_size = "4"
    with pytest.raises(TypeError, match="experimental_deterministic"):
        options.experimental_deterministic = 1
    with pytest.raises(AttributeError, match="no option 'deterministic'"):
        options.deterministic = True


def test_with_options_merges_upstream_options_and_keeps_elements():
    a = tf.data.Options()
    a.experimental_deterministic = False
    b = tf.data.Options()
    b.experimental_optimization.map_fusion = True
    dataset = tf.data.Dataset.range(5).with_options(a).map(lambda x: x * 2).with_options(b)
    merged = dataset.options()
    assert merged.experimental_deterministic is False
    assert merged.experimental_optimization.map_fusion is True
    assert tf.data.Dataset.range(3).options() == tf.data.Options()
    next_element = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert [sess.run(next_element) for _ in range(5)] == list(np.arange(5) * 2)


def test_conflicting_options_do_not_merge():
    a, b = tf.data.Options(), tf.data.Options()
    a.experimental_threading.max_intra_op_parallelism = 1
    b.experimental_threading.max_intra_op_parallelism = 2
    with pytest.raises(ValueError, match="experimental_threading.max_intra_op_parallelism"):
        a.merge(b)
    with pytest.raises(TypeError):
        tf.data.Dataset.range(2).with_options({"experimental_deterministic": True})
