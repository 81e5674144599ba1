"""TensorFlow 1.x's small framework helpers, one-liners over nbflow's own framework.

Shape arithmetic without a session (``broadcast_static_shape``, ``dimension_value``), the static
value of a tensor when it has one (``get_static_value``), dtype checks and the deprecated
``op_scope``. They exist so TF1 programs that call them run unchanged.

    >>> import nbflow as tf
    >>> tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3])).as_list()
    [2, 3]
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.indexed_slices import IndexedSlices
from nbflow.framework.tensor_shape import TensorShape, as_dimension, as_shape, broadcast_shapes

Tensor = ops_lib.Tensor

_NUMERIC_KINDS = frozenset("iufcb")


def dimension_at_index(shape: Any, index: int) -> Any:
    """The ``Dimension`` of ``shape`` at ``index`` (unknown when the rank is)."""
    shape = as_shape(shape)
    if shape.ndims is None:
        return as_dimension(None)
    return shape.dims[index]


def broadcast_static_shape(shape_x: TensorShape, shape_y: TensorShape) -> TensorShape:
    """The shape two operands of these shapes broadcast to; ValueError if they cannot."""
    return broadcast_shapes(as_shape(shape_x), as_shape(shape_y))


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """The NumPy value of ``tensor`` known when the graph is built, or None."""
    if not isinstance(tensor, Tensor):
        return tensor
    return ops_lib.constant_value(tensor)


def is_numeric_tensor(tensor: Any) -> bool:
    """Whether ``tensor`` is a Tensor of a numeric (or bool) dtype."""
    return isinstance(tensor, Tensor) and tensor.dtype.base_dtype.np.kind in _NUMERIC_KINDS


def assert_same_float_dtype(tensors: Any = None, dtype: Any = None) -> dtypes.DType:
    """The one float dtype of ``tensors`` (and ``dtype``); ValueError if they differ or are not
    floating. With neither, float32."""
    found = [t.dtype.base_dtype for t in tensors or () if t is not None]
    if dtype is not None:
        found.append(dtypes.as_dtype(dtype).base_dtype)
    if not found:
        return dtypes.float32
    if any(d is not found[0] for d in found):
        raise ValueError(f"Tensors have different dtypes: {sorted({d.name for d in found})}")
    if not found[0].is_floating:
        raise ValueError(f"Expected floating point type, got {found[0].name}")
    return found[0]


def no_regularizer(_: Any) -> None:
    """A regularizer that adds nothing (``get_variable(..., regularizer=tf.no_regularizer)``)."""
    return None


@contextmanager
def op_scope(values: Any, name: str | None, default_name: str | None = None) -> Iterator[str]:
    """The deprecated ``tf.op_scope(values, name, default_name)``: ``tf.name_scope`` reordered."""
    with ops_lib.name_scope(name, default_name, values) as scope:
        yield scope


def convert_to_tensor_or_indexed_slices(value: Any, dtype: Any = None, name: str | None = None):
    """``value`` itself when it is an IndexedSlices, else ``convert_to_tensor(value)``."""
    if isinstance(value, IndexedSlices):
        return value
    return ops_lib.convert_to_tensor(value, dtype=dtype, name=name)


class VariableSynchronization(enum.Enum):
    """When a distributed variable's replicas are synchronized (accepted, as in TF 1.15)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How updates to a distributed variable's replicas combine (accepted, as in TF 1.15)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
