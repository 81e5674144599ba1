"""Fed values convert as TensorFlow's session converts them (``runtime/feeds.py``).

``feed_conversion.json`` was written by TensorFlow 2.21 itself (``make_feed_fixture.py``): for
each placeholder dtype, shape and fed value, the array TensorFlow's session produced, or the
class of the error it raised. ``convert_feed`` must agree, and name the placeholder in every
error.
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import nbflow as tf
from nbflow.framework import dtypes
from nbflow.runtime.feeds import convert_feed

_FIXTURE = os.path.join(os.path.dirname(__file__), "feed_conversion.json")
with open(_FIXTURE) as f:
    CASES = json.load(f)["cases"]

# Where TensorFlow's class is an accident of where it notices, nbflow raises a clearer one:
# a float or None fed to a string placeholder is an ``InternalError`` ("Unsupported object
# type float") from TensorFlow's C++ conversion, and a TypeError here.
_CLEARER = {"InternalError": "TypeError"}


def _case_id(case: dict) -> str:
    return f"{case['dtype']}{case['shape']}<-{case['value']}"


def _value(case: dict):
    return eval(case["value"], {"np": np})  # noqa: S307 - the fixture's own expressions


def _check_against_tensorflow(case: dict, convert) -> None:
    expected = case["tensorflow"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ComplexWarning, overflow to inf: as TensorFlow
        if "error" in expected:
            error_class = _CLEARER.get(expected["error"], expected["error"])
            with pytest.raises(Exception) as info:
                convert(_value(case))
            assert type(info.value).__name__ == error_class or any(
                k.__name__ == error_class for k in type(info.value).__mro__
            ), f"TensorFlow raises {expected['error']}, nbflow {info.value!r}"
            assert "p:0" in str(info.value), f"the message names the placeholder: {info.value}"
            return
        result = np.asarray(convert(_value(case)))
    kind = "string" if result.dtype.kind in "OS" else result.dtype.name
    assert kind == expected["dtype"]
    assert list(result.shape) == expected["shape"]
    assert repr(result.tolist()) == expected["value"]


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_convert_feed_agrees_with_tensorflow(case):
    def convert(value):
        return convert_feed(value, dtypes.as_dtype(case["dtype"]), case["shape"], "p:0")

    _check_against_tensorflow(case, convert)


def test_convert_feed_keeps_a_matching_array_without_copying():
    value = np.zeros((2, 3), np.float32)
    assert convert_feed(value, dtypes.float32, [None, 3], "p:0") is value


def test_convert_feed_never_changes_the_callers_string_array():
    value = np.array(["a", "b"], dtype=object)
    result = convert_feed(value, dtypes.string, [2], "p:0")
    assert result.tolist() == [b"a", b"b"]
    assert value.tolist() == ["a", "b"]


def test_convert_feed_refuses_a_tensor_naming_the_placeholder():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="cannot be a tf.Tensor.*'p:0'"):
            convert_feed(tf.constant(1.0), dtypes.float32, [], "p:0")


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_session_run_converts_feeds_as_tensorflow(case):
    with tf.Graph().as_default() as graph:
        placeholder = tf.placeholder(dtypes.as_dtype(case["dtype"]), case["shape"], name="p")
        out = tf.identity(placeholder)
        with tf.Session(graph=graph) as sess:

            def convert(value):
                return sess.run(out, {placeholder: value})

            _check_against_tensorflow(case, convert)
