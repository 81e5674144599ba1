"""``tf.compat``: TensorFlow's compatibility namespace. ``tf.compat.v1`` is nbflow itself, so
TensorFlow 2 style imports of the 1.x API (``tf = nbflow.compat.v1``) work unchanged; nbflow
always builds graphs, so switching eager execution or 2.x behaviour off is already done.

>>> import nbflow
>>> nbflow.compat.v1 is nbflow
True
"""

from __future__ import annotations

from typing import Any

import nbflow as v1  # the package itself (import cycle by design: it is already in sys.modules)


def disable_eager_execution() -> None:
    """Nothing to do: nbflow always runs TensorFlow 1.x graph mode."""
    return None


def disable_v2_behavior() -> None:
    """Nothing to do: nbflow always behaves as TensorFlow 1.x."""
    return None


def executing_eagerly() -> bool:
    """Always False: ops build graph nodes that run in a Session."""
    return False


def as_bytes(bytes_or_text: Any, encoding: str = "utf-8") -> bytes:
    """``bytes_or_text`` as bytes (text encoded with ``encoding``)."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: Any, encoding: str = "utf-8") -> str:
    """``bytes_or_text`` as str (bytes decoded with ``encoding``)."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, (bytes, bytearray)):
        return bytes(bytes_or_text).decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text
as_str_any = str

__all__ = [
    "as_bytes",
    "as_str",
    "as_str_any",
    "as_text",
    "disable_eager_execution",
    "disable_v2_behavior",
    "executing_eagerly",
    "v1",
]


# TensorFlow 1.15's switches between 1.x and 2.x behaviours: nbflow is always 1.x graph mode
# with reference variables, v1 control flow and Dimension-valued shapes.
def disable_v2_tensorshape() -> None:
    """Nothing to do: shapes hold ``Dimension`` objects, as in TensorFlow 1.x."""


def disable_control_flow_v2() -> None:
    """Nothing to do: cond and while_loop build Switch/Merge dataflow, as in TensorFlow 1.x."""


def control_flow_v2_enabled() -> bool:
    """Always False: control flow is TensorFlow 1.x's."""
    return False


def disable_tensor_equality() -> None:
    """Nothing to do: ``==`` on tensors compares identity, as in TensorFlow 1.x."""


def enable_resource_variables() -> None:
    """Nothing to do: nbflow's variables are resources held by their device already."""


def disable_resource_variables() -> None:
    """Nothing to do: the variable API is TensorFlow 1.x's either way."""


def resource_variables_enabled() -> bool:
    """False: ``tf.Variable`` has TensorFlow 1.x's reference semantics."""
    return False
