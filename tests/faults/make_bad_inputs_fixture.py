"""Record TensorFlow's errors for the bad-input sweep: writes bad_inputs.json.

Run with the TensorFlow venv (never a dependency of nbflow):

    .benchvenv/bin/python tests/faults/make_bad_inputs_fixture.py

Runs every case of ``bad_inputs.py`` under ``tf.compat.v1`` graph mode and keeps, per case, the
class of the error TensorFlow raised (None: it ran), the start of its message, whether the
message names what the case says it should, and whether the session stayed usable.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bad_inputs import CASES, run_case  # noqa: E402 - the sibling module, by path

tf1 = tf.compat.v1
tf1.disable_v2_behavior()  # TF1 graph mode: reference variables, as TensorFlow 1.x


def main() -> None:
    out = {}
    for name, c in CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            outcome = run_case(tf1, c, tmp)
        e = outcome.error
        message = "" if e is None else (getattr(e, "message", None) or str(e))
        # "Graph execution error: Detected at node 'x' defined at ... Node: 'x' <the message>"
        message = "Node: " + message.split("\nNode: ", 1)[1] if "\nNode: " in message else message
        out[name] = {
            "error": None if e is None else type(e).__name__,
            "message": " ".join(message.split())[:400],
            "names": c.names in message,
            "usable": outcome.usable,
        }
        print(name, out[name]["error"], out[name]["usable"], out[name]["message"][:120])
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad_inputs.json")
    with open(path, "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": out}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
