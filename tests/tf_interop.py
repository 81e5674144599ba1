"""Running a snippet under real TensorFlow (the benchmark venv) to check it reads nbflow's files.

CI has no TensorFlow: ``run_tensorflow`` skips the calling test when no Python with
``tensorflow`` is found (this interpreter, ``$NBFLOW_TF_PYTHON``, or the repository's
``.benchvenv``).
"""

import os
import subprocess
import sys
import textwrap
from functools import cache

import pytest

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@cache
def tensorflow_python():
    """A Python that can import tensorflow, or None."""
    candidates = [
        sys.executable,
        os.environ.get("NBFLOW_TF_PYTHON", ""),
        os.path.join(_ROOT, ".benchvenv", "bin", "python"),
    ]
    for python in candidates:
        if python and os.path.exists(python):
            check = subprocess.run([python, "-c", "import tensorflow"], capture_output=True)
            if check.returncode == 0:
                return python
    return None


def run_tensorflow(script, *args, env=None):
    """Run ``script`` (``tf`` and ``tf1 = tf.compat.v1`` imported) with ``args``, and ``env``
    added to this process's environment; its stdout."""
    python = tensorflow_python()
    if python is None:
        pytest.skip("tensorflow is not importable here")
    code = "import tensorflow as tf\ntf1 = tf.compat.v1\n" + textwrap.dedent(script)
    result = subprocess.run(
        [python, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout
