"""The bad-input sweep: nbflow raises TensorFlow's error class, names what failed, and keeps the
session and its variables usable.

The cases live in ``bad_inputs.py``, written once over a TF1 module; ``bad_inputs.json`` holds
what TensorFlow 2.21 (``tf.compat.v1``, v1 behaviour) raised for each, recorded by
``make_bad_inputs_fixture.py``. For every case this test checks:

- the error class is TensorFlow's (by name: ``nbflow.errors.X`` for ``tf.errors.X``), or the
  clearer one listed in ``CLEARER``; where TensorFlow runs the code, nbflow must too;
- the message contains what the case names (the node, the key or the file);
- afterwards the same session (or, when the case closed it, a new one) still updates and reads a
  variable.

A case where nbflow differs today and the fix belongs to work in progress elsewhere is marked
``xfail`` with what is missing (``KNOWN``).
"""

from __future__ import annotations

import json
import os

import pytest

import nbflow as tf
from tests.faults.bad_inputs import CASES, run_case

_FIXTURE = os.path.join(os.path.dirname(__file__), "bad_inputs.json")
with open(_FIXTURE) as f:
    TENSORFLOW = json.load(f)["cases"]

# Where TensorFlow's class is an accident of where it notices, nbflow raises a clearer one.
CLEARER = {
    # TensorFlow's C++ feed conversion: "InternalError: Unsupported object type float".
    "feed_float_into_string": "TypeError",
}

# Cases nbflow does not match yet, each with what is missing (run as xfail): none today.
KNOWN: dict[str, str] = {}


def _is(error: BaseException, class_name: str) -> bool:
    return any(k.__name__ == class_name for k in type(error).__mro__)


def _params():
    for name in CASES:
        marks = [pytest.mark.xfail(strict=False, reason=KNOWN[name])] if name in KNOWN else []
        yield pytest.param(name, marks=marks, id=name)


def test_the_sweep_covers_at_least_fifty_bad_inputs_that_tensorflow_refuses():
    assert set(CASES) == set(TENSORFLOW), "regenerate bad_inputs.json after changing the cases"
    assert sum(1 for c in TENSORFLOW.values() if c["error"]) >= 50


@pytest.mark.parametrize("name", list(_params()))
def test_bad_input_raises_as_tensorflow_and_leaves_the_session_usable(name, tmp_path):
    case, expected = CASES[name], TENSORFLOW[name]
    outcome = run_case(tf, case, str(tmp_path))
    error = outcome.error
    if expected["error"] is None:
        assert error is None, f"TensorFlow runs this; nbflow raised {error!r}"
    else:
        want = CLEARER.get(name, expected["error"])
        assert error is not None, f"TensorFlow raises {want}; nbflow raised nothing"
        assert _is(error, want), f"TensorFlow raises {want}; nbflow {type(error).__name__}: {error}"
        message = getattr(error, "message", None) or str(error)
        assert case.names in message, f"the message should name {case.names!r}: {message}"
    assert outcome.usable, "the session and its variables stay usable after the error"
