"""Record how TensorFlow's session converts fed values: writes feed_conversion.json.

Run with the TensorFlow venv (never a dependency of nbflow):

    .benchvenv/bin/python tests/faults/make_feed_fixture.py

Each case feeds ``value`` (a Python expression over ``np``) to a placeholder of ``dtype`` and
``shape`` and fetches ``tf.identity`` of it: the fixture keeps the result's dtype, shape and
``repr(tolist())``, or the class and message of the error TensorFlow raised.
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
tf1.disable_eager_execution()

# (placeholder dtype, placeholder shape (None: unknown rank), value expression)
CASES: list[tuple[str, list | None, str]] = [
    # floats into integers
    ("int32", [2], "np.array([1.7, -2.5])"),
    ("int32", [2], "[1.7, -2.5]"),
    ("int32", [], "1.7"),
    ("int32", [], "-2.9"),
    ("int32", [2], "np.array([1.7, -2.5], np.float32)"),
    ("int64", [], "np.float64(3.99)"),
    ("uint8", [], "3.7"),
    # integers that do not fit
    ("int32", [], "2**40"),
    ("int32", [], "2**31"),
    ("int32", [], "-2**31"),
    ("int32", [], "2**31 - 1"),
    ("int32", [1], "[2**40]"),
    ("int32", [1], "np.array([2**40])"),
    ("int32", [], "np.int64(2**40)"),
    ("int64", [], "2**63"),
    ("int64", [], "2**40"),
    ("uint8", [], "-1"),
    ("uint8", [], "256"),
    ("uint8", [1], "[-1]"),
    ("uint8", [1], "np.array([-1])"),
    ("int8", [2], "np.array([127, 128], np.int16)"),
    ("int16", [], "40000"),
    # bools and integers
    ("int32", [], "True"),
    ("int32", [2], "np.array([True, False])"),
    ("float32", [2], "[True, False]"),
    ("bool", [], "1"),
    ("bool", [], "0"),
    ("bool", [], "2"),
    ("bool", [], "0.5"),
    ("bool", [2], "np.array([0, 3])"),
    ("bool", [2], "[0, 1]"),
    ("bool", [], "'abc'"),
    # floats: widening, narrowing, overflow
    ("float32", [], "2**40"),
    ("float32", [], "1e300"),
    ("float16", [], "70000.0"),
    ("float32", [2], "np.array([1, 2], np.int64)"),
    ("float64", [2], "np.array([0.1, 0.2], np.float32)"),
    ("float32", [], "None"),
    ("float32", [], "'1.5'"),
    ("float32", [], "'abc'"),
    ("float32", [], "b'1.5'"),
    ("float32", [1], "np.array([1 + 2j])"),
    ("float32", [], "1 + 2j"),
    ("complex64", [], "1.5"),
    # strings
    ("string", [], "5"),
    ("string", [], "1.5"),
    ("string", [], "True"),
    ("string", [2], "[1, 2]"),
    ("string", [], "'abc'"),
    ("string", [], "b'abc'"),
    ("string", [2], "['a', 'bc']"),
    ("string", [2], "np.array(['a', 'bc'])"),
    ("string", [2], "np.array([b'a', b'bc'])"),
    ("string", [], "'\u00e9'"),
    ("string", [], "None"),
    ("int32", [], "'3'"),
    ("int32", [], "'abc'"),
    ("int32", [], "None"),
    ("int32", [], "1 + 2j"),
    # structure and shape
    ("int32", [2], "[[1, 2], [3]]"),
    ("float32", [3], "[1.0, 2.0]"),
    ("float32", [], "[1.0]"),
    ("float32", [None, 2], "np.zeros((3, 2))"),
    ("float32", [None, 2], "np.zeros((3, 3))"),
    ("float32", None, "np.zeros((2, 3, 4))"),
    ("float32", [2], "np.zeros((2,), np.float32)"),
    ("float32", [0], "[]"),
    ("int32", [2], "(1, 2)"),
    ("int32", [], "2**70"),
    ("int32", [1], "[2**70]"),
    ("float32", [2], "[1, 'a']"),
    ("float32", [2], "[1, '2.5']"),
    ("string", [2], "np.array([1, 2])"),
    ("string", [3], "[b'a', 'b', 3]"),
    ("float32", [], "2**24 + 1"),
    ("float64", [], "np.float32(0.1)"),
    ("bfloat16", [2], "[1.0, 3.3]"),
    ("uint64", [], "2**64 - 1"),
    ("uint64", [], "-1"),
    ("int32", [3], "range(3)"),
]


def run_case(dtype: str, shape: list | None, expression: str) -> dict:
    value = eval(expression, {"np": np})  # noqa: S307 - the fixture's own expressions
    graph = tf1.Graph()
    with graph.as_default():
        placeholder = tf1.placeholder(getattr(tf, dtype), shape, name="p")
        out = tf1.identity(placeholder)
        with tf1.Session(graph=graph) as sess, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = np.asarray(sess.run(out, {placeholder: value}))
            except Exception as e:  # noqa: BLE001 - the error is what we record
                return {"error": type(e).__name__, "message": str(e).splitlines()[0][:300]}
    kind = "string" if result.dtype.kind in "OS" else result.dtype.name
    return {"dtype": kind, "shape": list(result.shape), "value": repr(result.tolist())}


def main() -> None:
    cases = []
    for dtype, shape, expression in CASES:
        case = {"dtype": dtype, "shape": shape, "value": expression}
        case["tensorflow"] = run_case(dtype, shape, expression)
        cases.append(case)
        print(dtype, shape, expression, "->", case["tensorflow"])
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "feed_conversion.json")
    with open(out, "w") as f:
        json.dump(
            {"tensorflow": tf.__version__, "numpy": np.__version__, "cases": cases},
            f,
            indent=1,
            allow_nan=False,
        )
        f.write("\n")


if __name__ == "__main__":
    main()
