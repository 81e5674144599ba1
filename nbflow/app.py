"""``tf.app``: the entry point of TensorFlow 1.x scripts, ``tf.app.run()``, and ``tf.app.flags``.

``run`` is ``absl.app.run`` as TensorFlow 1.x called it: parse ``sys.argv`` (or ``argv``) into
``tf.flags.FLAGS``, keeping the arguments no flag claims, call ``main(remaining_argv)`` and exit
the process with its return value (``SystemExit``, as in TensorFlow, also inside a notebook).

    import nbflow as tf
    tf.app.flags.DEFINE_integer("steps", 100, "training steps")

    def main(argv):
        print(tf.app.flags.FLAGS.steps)

    if __name__ == "__main__":
        tf.app.run()
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn

import absl.app

from nbflow import flags


def _parse_known_flags(argv: list[str]) -> list[str]:
    """Parse the flags in ``argv`` that are defined; return the rest (absl would exit on them)."""
    return flags.FLAGS(argv, known_only=True)


def run(main: Callable[[list[str]], Any] | None = None, argv: list[str] | None = None) -> NoReturn:
    """Parse flags, call ``main(argv)`` (default: ``__main__.main``), exit with what it returns."""
    main = main or sys.modules["__main__"].main
    absl.app.run(main=main, argv=argv, flags_parser=_parse_known_flags)
    raise AssertionError("absl.app.run returned without exiting")  # it always exits
