"""``IndexedSlices``: a sparse gradient, the rows ``indices`` of a dense tensor given as ``values``.

The gradient of ``gather``/``embedding_lookup`` touches only the looked-up rows of its params.
Instead of a dense [vocab, dim] tensor it is an IndexedSlices whose ``values`` has one row per
index (duplicates allowed; they add up). It flows through ``gradients()`` and into an optimizer's
sparse apply without ever being densified; ``convert_to_tensor`` densifies it (an
UnsortedSegmentSum) only where an op needs a dense input.

    grad = tf.gradients(tf.reduce_sum(tf.gather(params, ids)), params)[0]   # an IndexedSlices
    sess.run(grad)   # an IndexedSlicesValue(values=..., indices=..., dense_shape=...)
"""

from __future__ import annotations

import collections
from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib


class ValuesComposite:
    """A composite tensor (IndexedSlices, SparseTensor) whose op, name, device, dtype and graph
    are those of its ``values`` tensor, as in TensorFlow."""

    _values: ops_lib.Tensor

    @property
    def name(self) -> str:
        return self._values.name

    @property
    def device(self) -> str:
        return self._values.device

    @property
    def op(self) -> ops_lib.Operation:
        return self._values.op

    @property
    def dtype(self) -> dtypes.DType:
        return self._values.dtype

    @property
    def graph(self) -> ops_lib.Graph:
        return self._values.graph


class IndexedSlices(ValuesComposite):
    """A sparse representation of a dense tensor: rows ``indices`` hold ``values``.

    >>> import nbflow as tf
    >>> s = tf.IndexedSlices(tf.ones([2, 3]), tf.constant([0, 4]), tf.constant([5, 3]))
    >>> s.dtype
    tf.float32
    """

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self) -> ops_lib.Tensor:
        return self._values

    @property
    def indices(self) -> ops_lib.Tensor:
        return self._indices

    @property
    def dense_shape(self) -> ops_lib.Tensor | None:
        return self._dense_shape

    def get_shape(self):
        """The dense tensor's static shape (rows from dense_shape when it is a constant)."""
        from nbflow.framework.tensor_shape import TensorShape

        if self._dense_shape is not None:
            known = ops_lib.constant_value(self._dense_shape)
            if known is not None:
                return TensorShape([int(d) for d in known])
        values_shape = self._values.shape
        if values_shape.ndims is None:
            return TensorShape(None)
        return TensorShape([None]).concatenate(values_shape[1:])

    @property
    def shape(self):
        return self.get_shape()

    def _nbflow_fetches(self):
        """Session.run fetches the parts and rebuilds an IndexedSlicesValue."""
        parts = [self._values, self._indices]
        if self._dense_shape is not None:
            parts.append(self._dense_shape)

        def rebuild(results: list[Any]) -> IndexedSlicesValue:
            return IndexedSlicesValue(
                results[0], results[1], results[2] if len(results) > 2 else None
            )

        return parts, rebuild

    def __repr__(self) -> str:
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"

    def __neg__(self) -> IndexedSlices:
        from nbflow.ops import math_ops

        return IndexedSlices(math_ops.negative(self._values), self._indices, self._dense_shape)


IndexedSlicesValue = collections.namedtuple(
    "IndexedSlicesValue", ["values", "indices", "dense_shape"]
)
IndexedSlicesValue.__doc__ = "A fetched IndexedSlices: NumPy values, indices and dense_shape."


def _dense_rows(dense_shape: ops_lib.Tensor) -> Any:
    """The number of rows of the dense tensor, as a scalar tensor (or a Python int if known)."""
    from nbflow.ops import array_ops

    known = ops_lib.constant_value(dense_shape)
    if known is not None:
        return int(known[0])
    return array_ops.gather(dense_shape, 0)


def densify(slices: IndexedSlices, name: str | None = None) -> ops_lib.Tensor:
    """The dense tensor an IndexedSlices stands for (duplicate indices add up)."""
    from nbflow.ops import math_ops

    if slices.dense_shape is None:
        raise ValueError(
            f"Tensor conversion requested for IndexedSlices without dense_shape: {slices!r}"
        )
    return math_ops.unsorted_segment_sum(
        slices.values,
        slices.indices,
        _dense_rows(slices.dense_shape),
        name=name or "IndexedSlicesToDense",
    )


def _convert_indexed_slices(
    value: IndexedSlices, dtype: Any = None, name: str | None = None, as_ref: bool = False
) -> ops_lib.Tensor:
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(
            f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for IndexedSlices "
            f"with dtype {value.dtype.name}: {value!r}"
        )
    return densify(value, name=name)


ops_lib.register_tensor_conversion_function(IndexedSlices, _convert_indexed_slices)
