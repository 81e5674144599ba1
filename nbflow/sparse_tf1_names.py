"""The rest of TensorFlow 1.15's ``tf.sparse`` (and its ``tf.sparse_*`` spellings), composed
from dense ops on a SparseTensor's three parts.

A SparseTensor is ``indices`` [N, rank] int64, ``values`` [N] and ``dense_shape`` [rank]; most
of these functions rewrite those tensors with gather, mask and concat (``transpose``,
``expand_dims``, ``slice``, ``split``, ``merge``, ``reset_shape``), so gradients to ``values``
come from those ops. Reductions that TensorFlow defines over the *present* entries only
(``reduce_max``: implicit zeros do not count, and an empty group gives 0) scatter the values
into a dense tensor filled with the dtype's lowest value and mask groups with no entry.

    >>> import nbflow as tf
    >>> st = tf.SparseTensor([[0, 1], [2, 0]], [1.0, 2.0], [3, 4])
    >>> tf.sparse.transpose(st).dense_shape.shape.as_list()
    [2]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.indexed_slices import IndexedSlices
from nbflow.framework.ops import Tensor
from nbflow.framework.sparse_tensor import SparseTensor
from nbflow.ops import array_ops, math_ops, sparse_ops
from nbflow.ops.gather_nd_ops import gather_nd
from nbflow.ops.rearrange_ops import setdiff1d
from nbflow.ops.segment_ops import segment_sum as dense_segment_sum
from nbflow.ops.sparse_math_ops import sparse_add

__all__ = [
    "expand_dims",
    "eye",
    "mask",
    "maximum",
    "merge",
    "minimum",
    "reduce_max",
    "reduce_max_sparse",
    "reset_shape",
    "segment_mean",
    "segment_sqrt_n",
    "segment_sum",
    "slice",
    "split",
    "to_indicator",
    "transpose",
]

_sparse = sparse_ops.sparse_input


def _int64(x: Any) -> Tensor:
    return ops_lib.convert_to_tensor(x, dtype=dtypes.int64)


def transpose(sp_input: Any, perm: Any = None, name: str | None = None) -> SparseTensor:
    """The sparse tensor with dimensions permuted by ``perm`` (reversed when None), reordered."""
    with ops_lib.name_scope(name, "SparseTranspose", [sp_input]):
        sp = _sparse(sp_input)
        if perm is None:
            rank = sp.indices.shape.as_list()[1]
            if rank is None:
                raise ValueError("transpose of a SparseTensor of unknown rank needs perm")
            perm = list(range(rank))[::-1]
        perm = ops_lib.convert_to_tensor(perm, dtype=dtypes.int32)
        indices = array_ops.gather(sp.indices, perm, axis=1)
        shape = array_ops.gather(sp.dense_shape, perm)
        return sparse_ops.sparse_reorder(SparseTensor(indices, sp.values, shape))


def expand_dims(sp_input: Any, axis: int = -1, name: str | None = None) -> SparseTensor:
    """A size-1 dimension inserted at ``axis`` (negative counts from the end, as TF)."""
    with ops_lib.name_scope(name, "expand_dims", [sp_input]):
        sp = _sparse(sp_input)
        rank = sp.indices.shape.as_list()[1]
        if rank is None:
            raise ValueError("expand_dims of a SparseTensor needs a known rank")
        axis = int(axis)
        if not -rank - 1 <= axis <= rank:
            raise ValueError(f"axis {axis} out of range for a rank-{rank} SparseTensor")
        axis = axis + rank + 1 if axis < 0 else axis
        zeros = array_ops.zeros_like(sp.indices[:, :1])
        indices = array_ops.concat([sp.indices[:, :axis], zeros, sp.indices[:, axis:]], 1)
        one = array_ops.constant([1], dtypes.int64)
        shape = array_ops.concat([sp.dense_shape[:axis], one, sp.dense_shape[axis:]], 0)
        return SparseTensor(indices, sp.values, shape)


def eye(
    num_rows: Any, num_columns: Any = None, dtype: Any = dtypes.float32, name: str | None = None
) -> SparseTensor:
    """A sparse [num_rows, num_columns] identity matrix."""
    with ops_lib.name_scope(name, "eye", [num_rows, num_columns]):
        rows = _int64(num_rows)
        columns = rows if num_columns is None else _int64(num_columns)
        diagonal = math_ops.range(math_ops.minimum(rows, columns))
        indices = array_ops.stack([diagonal, diagonal], axis=1)
        values = array_ops.ones(array_ops.shape(diagonal), dtype=dtype)
        return SparseTensor(indices, values, array_ops.stack([rows, columns]))


def slice(sp_input: Any, start: Any, size: Any, name: str | None = None) -> SparseTensor:  # noqa: A001
    """The entries inside the box [start, start + size), re-indexed from ``start``; the box is
    clipped to the dense shape."""
    with ops_lib.name_scope(name, "SparseSlice", [sp_input]):
        sp = _sparse(sp_input)
        start, size = _int64(start), _int64(size)
        end = math_ops.minimum(start + size, sp.dense_shape)
        inside = math_ops.logical_and(
            math_ops.greater_equal(sp.indices, start), math_ops.less(sp.indices, end)
        )
        kept = sparse_ops.sparse_retain(sp, math_ops.reduce_all(inside, axis=1))
        shape = math_ops.maximum(end - start, array_ops.zeros_like(start))
        return SparseTensor(kept.indices - start, kept.values, shape)


def split(
    keyword_required: Any = None,
    sp_input: Any = None,
    num_split: Any = None,
    axis: Any = None,
    name: str | None = None,
    split_dim: Any = None,
) -> list[SparseTensor]:
    """``num_split`` slices along ``axis``; the first ``size % num_split`` get one row more."""
    if keyword_required is not None:
        raise ValueError("Keyword arguments are required for this function.")
    axis = split_dim if axis is None else axis
    if sp_input is None or num_split is None or axis is None:
        raise ValueError("split needs sp_input, num_split and axis")
    with ops_lib.name_scope(name, "SparseSplit", [sp_input]):
        sp = _sparse(sp_input)
        rank = sp.indices.shape.as_list()[1]
        if rank is None:
            raise ValueError("split of a SparseTensor needs a known rank")
        axis = int(axis) % rank
        dim = sp.dense_shape[axis]
        base, extra = dim // num_split, math_ops.floormod(dim, num_split)
        pieces, offset = [], array_ops.constant(0, dtypes.int64)
        for i in range(int(num_split)):
            length = base + math_ops.cast(math_ops.less(np.int64(i), extra), dtypes.int64)
            one_hot = np.eye(rank, dtype=np.int64)[axis]
            start = offset * one_hot
            size = sp.dense_shape * (1 - one_hot) + length * one_hot
            pieces.append(slice(sp, start, size))
            offset = offset + length
        return pieces


def reset_shape(sp_input: Any, new_shape: Any = None) -> SparseTensor:
    """The same entries with dense shape ``new_shape`` (default: the tightest, max index + 1)."""
    sp = _sparse(sp_input)
    if new_shape is None:
        shape = math_ops.reduce_max(sp.indices, axis=0) + 1
        shape = math_ops.maximum(shape, array_ops.zeros_like(sp.dense_shape))
    else:
        shape = _int64(new_shape)
    return SparseTensor(sp.indices, sp.values, shape)


def merge(
    sp_ids: Any,
    sp_values: Any,
    vocab_size: Any,
    name: str | None = None,
    already_sorted: bool = False,
) -> SparseTensor:
    """Ids and values with the same indices merged into one tensor whose last dimension is the
    id: entry [..., k] -> [..., sp_ids[..., k]] of size ``vocab_size``."""
    with ops_lib.name_scope(name, "SparseMerge", [sp_ids, sp_values]):
        ids, values = _sparse(sp_ids), _sparse(sp_values)
        new_ids = array_ops.expand_dims(math_ops.cast(ids.values, dtypes.int64), 1)
        indices = array_ops.concat([ids.indices[:, :-1], new_ids], 1)
        vocab = array_ops.reshape(_int64(vocab_size), [1])
        shape = array_ops.concat([ids.dense_shape[:-1], vocab], 0)
        result = SparseTensor(indices, values.values, shape)
        return result if already_sorted else sparse_ops.sparse_reorder(result)


def to_indicator(sp_input: Any, vocab_size: Any, name: str | None = None) -> Tensor:
    """A dense bool [..., vocab_size] tensor, true at [..., id] for each id in a row."""
    with ops_lib.name_scope(name, "SparseToIndicator", [sp_input]):
        sp = _sparse(sp_input)
        trues = SparseTensor(
            sp.indices, array_ops.ones_like(sp.values, dtype=dtypes.int32), sp.dense_shape
        )
        merged = merge(sp, trues, vocab_size)
        dense = sparse_ops.sparse_to_dense(
            merged.indices, merged.dense_shape, merged.values, validate_indices=False
        )
        return math_ops.greater(dense, 0)


def _dense_at_union(a: SparseTensor, b: SparseTensor, combine: Any) -> SparseTensor:
    union = sparse_add(a, b)
    dense_a = sparse_ops.sparse_tensor_to_dense(a, validate_indices=False)
    dense_b = sparse_ops.sparse_tensor_to_dense(b, validate_indices=False)
    return SparseTensor(
        union.indices, gather_nd(combine(dense_a, dense_b), union.indices), union.dense_shape
    )


def maximum(sp_a: Any, sp_b: Any, name: str | None = None) -> SparseTensor:
    """Elementwise maximum of two same-shaped sparse tensors over the union of their entries
    (an absent entry counts as zero)."""
    with ops_lib.name_scope(name, "SparseSparseMaximum", [sp_a, sp_b]):
        return _dense_at_union(_sparse(sp_a), _sparse(sp_b), math_ops.maximum)


def minimum(sp_a: Any, sp_b: Any, name: str | None = None) -> SparseTensor:
    """Elementwise minimum over the union of entries (absent entries count as zero)."""
    with ops_lib.name_scope(name, "SparseSparseMinimum", [sp_a, sp_b]):
        return _dense_at_union(_sparse(sp_a), _sparse(sp_b), math_ops.minimum)


def _lowest(dtype: dtypes.DType) -> Any:
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    return np.finfo(np_dtype).min if np_dtype.kind == "f" else np.iinfo(np_dtype).min


def _max_and_presence(sp: SparseTensor, axis: Any, keepdims: bool) -> tuple[Tensor, Tensor]:
    dense = sparse_ops.sparse_to_dense(
        sp.indices, sp.dense_shape, sp.values, _lowest(sp.dtype), validate_indices=False
    )
    present = sparse_ops.sparse_to_dense(
        sp.indices,
        sp.dense_shape,
        array_ops.ones_like(sp.values, dtype=dtypes.int32),
        validate_indices=False,
    )
    largest = math_ops.reduce_max(dense, axis, keepdims=keepdims)
    has_entry = math_ops.greater(math_ops.reduce_max(present, axis, keepdims=keepdims), 0)
    return largest, has_entry


def reduce_max(
    sp_input: Any,
    axis: Any = None,
    keepdims: Any = None,
    reduction_axes: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    """The maximum of the present entries over ``axis`` (all when None), dense; 0 where a
    group has no entry (TensorFlow's SparseReduceMax)."""
    axis = reduction_axes if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with ops_lib.name_scope(None, "SparseReduceMax", [sp_input]):
        largest, has_entry = _max_and_presence(_sparse(sp_input), axis, keep)
        return array_ops.where(has_entry, largest, array_ops.zeros_like(largest))


def reduce_max_sparse(
    sp_input: Any,
    axis: Any = None,
    keepdims: Any = None,
    reduction_axes: Any = None,
    keep_dims: Any = None,
) -> SparseTensor:
    """``reduce_max`` as a SparseTensor holding only the groups that have an entry."""
    axis = reduction_axes if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with ops_lib.name_scope(None, "SparseReduceMaxSparse", [sp_input]):
        largest, has_entry = _max_and_presence(_sparse(sp_input), axis, keep)
        indices = array_ops.where(has_entry)
        shape = array_ops.shape(largest, out_type=dtypes.int64)
        return SparseTensor(indices, gather_nd(largest, indices), shape)


def mask(a: IndexedSlices, mask_indices: Any, name: str | None = None) -> IndexedSlices:
    """The IndexedSlices ``a`` without the slices whose index is in ``mask_indices``."""
    with ops_lib.name_scope(name, "sparse_mask", [a, mask_indices]):
        indices = a.indices
        kept, positions = setdiff1d(indices, mask_indices)
        return IndexedSlices(array_ops.gather(a.values, positions), kept, a.dense_shape)


def segment_sum(
    data: Any, indices: Any, segment_ids: Any, name: str | None = None, num_segments: Any = None
) -> Tensor:
    """``segment_sum`` of the rows ``data[indices]`` by sorted ``segment_ids``."""
    with ops_lib.name_scope(name, "SparseSegmentSum", [data, indices, segment_ids]):
        rows = array_ops.gather(data, indices)
        if num_segments is not None:
            return math_ops.unsorted_segment_sum(rows, segment_ids, num_segments)
        return dense_segment_sum(rows, segment_ids)


def _segment_counts(data: Tensor, indices: Any, segment_ids: Any, num_segments: Any) -> Tensor:
    ones = array_ops.ones_like(ops_lib.convert_to_tensor(indices), dtype=data.dtype.base_dtype)
    if num_segments is not None:
        counts = math_ops.unsorted_segment_sum(ones, segment_ids, num_segments)
    else:
        counts = dense_segment_sum(ones, segment_ids)
    counts = math_ops.maximum(counts, array_ops.ones_like(counts))
    rank = data.shape.ndims
    return array_ops.reshape(counts, [-1] + [1] * (rank - 1)) if rank else counts


def segment_mean(
    data: Any, indices: Any, segment_ids: Any, name: str | None = None, num_segments: Any = None
) -> Tensor:
    """The mean of the rows ``data[indices]`` per segment."""
    with ops_lib.name_scope(name, "SparseSegmentMean", [data, indices, segment_ids]):
        data = ops_lib.convert_to_tensor(data)
        total = segment_sum(data, indices, segment_ids, num_segments=num_segments)
        return total / _segment_counts(data, indices, segment_ids, num_segments)


def segment_sqrt_n(
    data: Any, indices: Any, segment_ids: Any, name: str | None = None, num_segments: Any = None
) -> Tensor:
    """The sum of the rows ``data[indices]`` per segment over sqrt(segment size)."""
    with ops_lib.name_scope(name, "SparseSegmentSqrtN", [data, indices, segment_ids]):
        data = ops_lib.convert_to_tensor(data)
        total = segment_sum(data, indices, segment_ids, num_segments=num_segments)
        return total / math_ops.sqrt(_segment_counts(data, indices, segment_ids, num_segments))
