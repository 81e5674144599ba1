"""Sparse structure ops: building, densifying and re-indexing a ``SparseTensor``.

SparseToDense (``tf.sparse_to_dense``, ``tf.sparse.to_dense``), SparseReorder, SparseReshape,
SparseConcat and SparseFillEmptyRows; and the composed builders ``sparse_retain``,
``from_dense`` and ``sparse_placeholder``. Each op takes a SparseTensor as its three parts
(indices, values, dense_shape) and returns new parts, which the builder wraps in a SparseTensor
again. The arithmetic on sparse tensors (matmul, reductions, add, softmax) is in
``sparse_math_ops.py``.

Most sparse ops expect indices in row-major (lexicographic) order, as ``tf.sparse.reorder``
leaves them. The kernels share ``check_indices``: an index outside ``dense_shape`` is always an
error; an unordered or repeated one is where the op validates order (SparseToDense's
``validate_indices``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.sparse_tensor import (
    SparseTensor,
    SparseTensorValue,
    convert_to_tensor_or_sparse_tensor,
)
from nbflow.framework.tensor_shape import TensorShape, as_shape
from nbflow.ops import array_ops, math_ops
from nbflow.ops.constant_ops import _create, _shape_from_spec, _value
from nbflow.ops.gather_nd_ops import gather_nd

Tensor = ops_lib.Tensor

_I64 = np.int64


# --- shared by the sparse kernels -----------------------------------------------------------------
def check_indices(indices: Any, shape: Any, ordered: bool = False) -> None:
    """Raise ValueError (InvalidArgumentError at run time) for an index outside ``shape`` and,
    with ``ordered``, for an index not after its predecessor in row-major order."""
    shape = [int(d) for d in shape]
    if indices.shape[1:] != (len(shape),):
        raise ValueError(
            f"indices must be [N, {len(shape)}] for a dense shape of rank {len(shape)}, "
            f"got {list(indices.shape)}"
        )
    if not indices.size:
        return
    bad = ((indices < 0) | (indices >= np.asarray(shape, _I64))).any(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"indices[{i}] = {indices[i].tolist()} is out of bounds: need 0 <= index < {shape}"
        )
    if ordered and len(indices) > 1:
        steps = np.diff(np.ravel_multi_index(tuple(indices.T), shape))
        if (steps <= 0).any():
            i = int(np.argmax(steps <= 0)) + 1
            problem = "is repeated" if steps[i - 1] == 0 else "is out of order"
            raise ValueError(
                f"indices[{i}] = {indices[i].tolist()} {problem}. Many sparse ops require sorted "
                "indices; use tf.sparse.reorder to create a correctly ordered copy"
            )


class SparseOp(OpDef):
    """Base of the sparse ops: NumPy kernels (index bookkeeping), so they are placed on CPU."""

    abstract = True
    cpu_only = True


def lexicographic_order(indices: Any) -> Any:
    """The stable permutation that sorts the rows of ``indices`` in row-major order."""
    if indices.shape[1] == 0:
        return np.arange(len(indices))
    return np.lexsort(indices.T[::-1])


def _rank_of(spec: TensorSpec) -> int | None:
    return spec.shape.with_rank(1)[0] if spec.shape.ndims is not None else None


def _entries(spec: TensorSpec) -> TensorShape:
    """[N] for the values of a SparseTensor whose indices have this spec."""
    return TensorShape([spec.shape.with_rank(2)[0] if spec.shape.ndims is not None else None])


def sparse_input(sp_input: Any, what: str = "sp_input") -> SparseTensor:
    """``sp_input`` as a SparseTensor (a SparseTensorValue becomes constants); else TypeError."""
    value = convert_to_tensor_or_sparse_tensor(sp_input)
    if not isinstance(value, SparseTensor):
        raise TypeError(f"Input {what} must be a SparseTensor, got {sp_input!r}")
    return value


# --- SparseToDense --------------------------------------------------------------------------------
class SparseToDense(SparseOp):
    """A dense ``output_shape`` tensor of ``default_value`` with ``sparse_values`` at
    ``sparse_indices`` (2-D [N, rank], or 1-D/0-D for a 1-D output); values may be a scalar."""

    inputs = ("sparse_indices", "output_shape", "sparse_values", "default_value")
    attrs = {"validate_indices": True}
    samples = [
        Sample(
            sparse_indices=np.array([[0, 1], [1, 0], [2, 3]], _I64),
            output_shape=np.array([3, 4], _I64),
            sparse_values=(3,),
            default_value=(),
        ),
        Sample(
            sparse_indices=np.array([4, 1], np.int32),
            output_shape=np.array([6], np.int32),
            sparse_values=(),
            default_value=(),
            validate_indices=False,
        ),
        Sample(
            sparse_indices=np.zeros((0, 2), _I64),
            output_shape=np.array([2, 2], _I64),
            sparse_values=(0,),
            default_value=(),
            input_dtype=np.int32,
        ),
    ]

    def infer(self, sparse_indices, output_shape, sparse_values, default_value, validate_indices):
        if sparse_indices.shape.ndims is not None and sparse_indices.shape.ndims > 2:
            raise ValueError(
                f"sparse_indices should be a scalar, vector, or matrix, got "
                f"shape {sparse_indices.shape}"
            )
        default_value.shape.with_rank(0)
        return TensorSpec(_shape_from_spec(output_shape), sparse_values.dtype.base_dtype)

    def compute(
        self,
        ctx: KernelContext,
        sparse_indices,
        output_shape,
        sparse_values,
        default_value,
        validate_indices: bool,
    ):
        xp = ctx.xp
        shape = [int(d) for d in output_shape.reshape(-1)]
        indices = sparse_indices.reshape(-1, 1) if sparse_indices.ndim < 2 else sparse_indices
        if np.ndim(default_value) != 0:
            raise ValueError(f"default_value should be a scalar, got shape {default_value.shape}")
        if sparse_values.ndim != 0 and sparse_values.shape != indices.shape[:1]:
            raise ValueError(
                f"sparse_values has incorrect shape {list(sparse_values.shape)}, should be [] "
                f"or [{len(indices)}]"
            )
        check_indices(indices, shape, ordered=validate_indices)
        out = xp.full(shape, default_value, dtype=sparse_values.dtype)
        out[tuple(indices.T)] = sparse_values
        return out

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        sparse_indices, _, sparse_values, _ = op.inputs
        indices = sparse_indices
        if sparse_indices.shape.ndims != 2:
            indices = array_ops.reshape(sparse_indices, [-1, 1])
        values_grad = gather_nd(grad, indices)
        default_grad = math_ops.reduce_sum(grad) - math_ops.reduce_sum(values_grad)
        if sparse_values.shape.ndims == 0:
            values_grad = math_ops.reduce_sum(values_grad)
        return [None, None, values_grad, default_grad]


def sparse_to_dense(
    sparse_indices: Any,
    output_shape: Any,
    sparse_values: Any,
    default_value: Any = 0,
    validate_indices: bool = True,
    name: str | None = None,
) -> Tensor:
    """A dense tensor holding ``sparse_values`` at ``sparse_indices``, ``default_value`` elsewhere.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.sparse_to_dense([[0, 1], [1, 0]], [2, 2], [5, 6])).tolist()
    [[0, 5], [6, 0]]
    """
    with ops_lib.name_scope(name, "SparseToDense"):
        values = ops_lib.convert_to_tensor(sparse_values, name="sparse_values")
        inputs = [
            _index_tensor(sparse_indices, "sparse_indices"),
            _index_tensor(output_shape, "output_shape"),
            values,
            ops_lib.convert_to_tensor(default_value, dtype=values.dtype, name="default_value"),
        ]
        attrs = {"validate_indices": bool(validate_indices)}
        return _create("SparseToDense", inputs, attrs).outputs[0]


def _index_tensor(value: Any, name: str) -> Tensor:
    if isinstance(value, Tensor):
        return value
    array = np.asarray(value)
    return ops_lib.convert_to_tensor(
        array.astype(_I64) if array.dtype.kind in "iu" or not array.size else array, name=name
    )


def sparse_tensor_to_dense(
    sp_input: Any, default_value: Any = 0, validate_indices: bool = True, name: str | None = None
) -> Tensor:
    """The dense tensor ``sp_input`` stands for (``tf.sparse.to_dense``).

    >>> import nbflow as tf
    >>> st = tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [2, 3])
    >>> tf.Session().run(tf.sparse.to_dense(st)).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]
    """
    sp_input = sparse_input(sp_input)
    return sparse_to_dense(
        sp_input.indices,
        sp_input.dense_shape,
        sp_input.values,
        default_value=default_value,
        validate_indices=validate_indices,
        name=name or "SparseToDense",
    )


# --- SparseReorder --------------------------------------------------------------------------------
class SparseReorder(SparseOp):
    """The same sparse tensor with its entries in row-major order (stable)."""

    inputs = ("input_indices", "input_values", "input_shape")
    num_outputs = 2
    samples = [
        Sample(
            input_indices=np.array([[1, 0], [0, 2], [0, 1], [1, 0]], _I64),
            input_values=(4,),
            input_shape=np.array([2, 3], _I64),
        ),
        Sample(
            input_indices=np.zeros((0, 3), _I64),
            input_values=(0,),
            input_shape=np.array([2, 3, 4], _I64),
        ),
    ]

    def infer(self, input_indices, input_values, input_shape):
        return [
            TensorSpec(input_indices.shape, dtypes.int64),
            TensorSpec(input_values.shape, input_values.dtype.base_dtype),
        ]

    def compute(self, ctx: KernelContext, input_indices, input_values, input_shape):
        check_indices(input_indices, input_shape)
        order = lexicographic_order(input_indices)
        return input_indices[order], input_values[order]

    def gradient(self, op: Any, _: Any, values_grad: Any) -> list[Any]:
        if values_grad is None:
            return [None, None, None]
        indices, _, shape = op.inputs
        positions = math_ops.range(array_ops.shape(indices, out_type=dtypes.int64)[0])
        _, order = _create("SparseReorder", [indices, positions, shape]).outputs
        inverse = array_ops.invert_permutation(order)
        return [None, array_ops.gather(values_grad, inverse), None]


def sparse_reorder(sp_input: Any, name: str | None = None) -> SparseTensor:
    """``sp_input`` with its entries in row-major order, as most sparse ops expect."""
    sp_input = sparse_input(sp_input)
    inputs = [sp_input.indices, sp_input.values, sp_input.dense_shape]
    indices, values = _create("SparseReorder", inputs, name=name or "SparseReorder").outputs
    return _with_static_shape(SparseTensor(indices, values, sp_input.dense_shape), sp_input)


def _with_static_shape(result: SparseTensor, like: SparseTensor) -> SparseTensor:
    result._shape_hint = like.shape
    return result


# --- SparseReshape --------------------------------------------------------------------------------
class SparseReshape(SparseOp):
    """The indices of a sparse tensor in a new dense shape (one dimension may be -1)."""

    inputs = ("input_indices", "input_shape", "new_shape")
    num_outputs = 2
    differentiable = False  # indices only; the values pass through unchanged
    samples = [
        Sample(
            input_indices=np.array([[0, 1], [1, 2], [2, 0]], _I64),
            input_shape=np.array([3, 4], _I64),
            new_shape=np.array([2, -1, 2], _I64),
        ),
        Sample(
            input_indices=np.array([[5]], _I64),
            input_shape=np.array([6], _I64),
            new_shape=np.array([3, 2], _I64),
        ),
    ]

    def infer(self, input_indices, input_shape, new_shape):
        out = _shape_from_spec(new_shape)
        wanted = _value(new_shape)
        old = _value(input_shape)
        if wanted is not None and old is not None and (wanted < 0).sum() == 1:
            out = as_shape(_resolve_shape(old.tolist(), wanted.tolist()))
        return [
            TensorSpec(TensorShape([_entries(input_indices)[0], out.ndims]), dtypes.int64),
            TensorSpec(TensorShape([out.ndims]), dtypes.int64),
        ]

    def compute(self, ctx: KernelContext, input_indices, input_shape, new_shape):
        old = [int(d) for d in input_shape]
        shape = _resolve_shape(old, [int(d) for d in new_shape])
        check_indices(input_indices, old)
        if input_indices.shape[1] == 0:
            flat = np.zeros(len(input_indices), _I64)
        else:
            flat = np.ravel_multi_index(tuple(input_indices.T), old)
        if not shape:
            out = np.zeros((len(flat), 0), _I64)
        else:
            out = np.stack(np.unravel_index(flat, shape), axis=1).astype(_I64)
        return out.reshape(len(flat), len(shape)), np.asarray(shape, _I64)


def _resolve_shape(old: list[int], new: list[int]) -> list[int]:
    size = int(np.prod(old, dtype=_I64))
    unknown = [i for i, d in enumerate(new) if d < 0]
    if len(unknown) > 1:
        raise ValueError(
            f"only one output dimension may be -1, not both {unknown[0]} and {unknown[1]}"
        )
    known = int(np.prod([d for d in new if d >= 0], dtype=_I64))
    if unknown:
        if known == 0 or size % known:
            raise ValueError(
                f"Input to reshape is a SparseTensor with {size} dense values, but the "
                f"requested shape requires a multiple of {known}"
            )
        new = list(new)
        new[unknown[0]] = size // known
    elif known != size:
        raise ValueError(
            f"Input to reshape is a SparseTensor with {size} dense values, but the requested "
            f"shape has {known}"
        )
    return new


def sparse_reshape(sp_input: Any, shape: Any, name: str | None = None) -> SparseTensor:
    """``sp_input`` as a sparse tensor of dense shape ``shape`` (row-major, as tf.reshape)."""
    sp_input = sparse_input(sp_input)
    with ops_lib.name_scope(name, "SparseReshape"):
        new_shape = _index_tensor(shape, "shape")
        if new_shape.dtype != dtypes.int64:
            new_shape = math_ops.cast(new_shape, dtypes.int64)
        inputs = [sp_input.indices, sp_input.dense_shape, new_shape]
        indices, dense_shape = _create("SparseReshape", inputs).outputs
        result = SparseTensor(indices, sp_input.values, dense_shape)
    wanted = ops_lib.constant_value(new_shape)
    if wanted is not None and sp_input.shape.is_fully_defined():
        shape_ = _resolve_shape(sp_input.shape.as_list(), [int(d) for d in wanted])
        result._shape_hint = TensorShape(shape_)
    return result


# --- SparseConcat ---------------------------------------------------------------------------------
class SparseConcat(SparseOp):
    """N sparse tensors joined along ``concat_dim``; the result is in row-major order."""

    inputs = ("indices*", "values*", "shapes*")
    attrs = {"concat_dim": 0}
    num_outputs = 3
    differentiable = False  # as in TensorFlow
    samples = [
        Sample(
            indices=[np.array([[0, 2], [1, 0], [1, 1]], _I64), np.array([[0, 1], [0, 2]], _I64)],
            values=[(3,), (2,)],
            shapes=[np.array([2, 3], _I64), np.array([2, 4], _I64)],
            concat_dim=1,
        ),
        Sample(
            indices=[np.array([[0]], _I64), np.zeros((0, 1), _I64), np.array([[1]], _I64)],
            values=[(1,), (0,), (1,)],
            shapes=[np.array([1], _I64), np.array([3], _I64), np.array([2], _I64)],
            concat_dim=0,
        ),
    ]

    def infer(self, indices, values, shapes, concat_dim: int):
        rank = next((_rank_of(s) for s in shapes if _rank_of(s) is not None), None)
        known = [_value(s) for s in shapes]
        shape_value = None
        if rank is not None and all(k is not None for k in known):
            total = np.array(known[0], _I64)
            total[concat_dim % rank] = sum(
                int(k[concat_dim % rank]) for k in known if k is not None
            )
            shape_value = total
        return [
            TensorSpec(TensorShape([None, rank]), dtypes.int64),
            TensorSpec(TensorShape([None]), values[0].dtype.base_dtype),
            TensorSpec(TensorShape([rank]), dtypes.int64, shape_value),
        ]

    def compute(self, ctx: KernelContext, indices, values, shapes, concat_dim: int):
        rank = len(shapes[0])
        if not -rank <= concat_dim < rank:
            raise ValueError(f"concat_dim {concat_dim} is out of range for rank {rank}")
        axis = concat_dim % rank
        offset, parts = 0, []
        for k, (idx, shape) in enumerate(zip(indices, shapes)):
            if len(shape) != rank or any(
                int(a) != int(b) for d, (a, b) in enumerate(zip(shape, shapes[0])) if d != axis
            ):
                raise ValueError(
                    f"Input shapes must match except along concat_dim {axis}: shapes[0] = "
                    f"{shapes[0].tolist()}, shapes[{k}] = {shape.tolist()}"
                )
            check_indices(idx, shape)
            moved = idx.copy()
            moved[:, axis] += offset
            parts.append(moved)
            offset += int(shape[axis])
        all_indices = np.concatenate(parts).astype(_I64)
        all_values = np.concatenate(values)
        order = lexicographic_order(all_indices)
        out_shape = np.array(shapes[0], _I64)
        out_shape[axis] = offset
        return all_indices[order], all_values[order], out_shape


def sparse_concat(
    axis: int,
    sp_inputs: list[Any],
    name: str | None = None,
    expand_nonconcat_dim: bool = False,
    concat_dim: int | None = None,
) -> SparseTensor:
    """The sparse tensors ``sp_inputs`` joined along ``axis``; with ``expand_nonconcat_dim`` the
    other dimensions grow to the largest input's."""
    if concat_dim is not None:
        axis = concat_dim
    inputs = [sparse_input(s, "sp_inputs") for s in sp_inputs]
    with ops_lib.name_scope(name, "SparseConcat"):
        shapes = [s.dense_shape for s in inputs]
        if expand_nonconcat_dim:
            largest = math_ops.reduce_max(array_ops.stack(shapes), axis=0)
            rank = array_ops.size(shapes[0], out_type=dtypes.int64)
            along = math_ops.cast(
                math_ops.equal(math_ops.range(rank), axis % rank if axis < 0 else axis),
                dtypes.int64,
            )
            shapes = [s * along + largest * (1 - along) for s in shapes]
        op = _create(
            "SparseConcat",
            [[s.indices for s in inputs], [s.values for s in inputs], shapes],
            {"concat_dim": int(axis)},
        )
        return SparseTensor(*op.outputs)


# --- SparseFillEmptyRows --------------------------------------------------------------------------
class SparseFillEmptyRows(SparseOp):
    """Adds ``[row, 0, ...] = default_value`` for every empty row; also returns which rows were
    empty and where each input entry went (``reverse_index_map``, for the gradient)."""

    inputs = ("indices", "values", "dense_shape", "default_value")
    num_outputs = 4
    samples = [
        Sample(
            indices=np.array([[1, 0], [3, 2], [1, 1]], _I64),
            values=(3,),
            dense_shape=np.array([5, 4], _I64),
            default_value=(),
        ),
        Sample(
            indices=np.zeros((0, 2), _I64),
            values=(0,),
            dense_shape=np.array([2, 3], _I64),
            default_value=(),
        ),
    ]

    def infer(self, indices, values, dense_shape, default_value):
        default_value.shape.with_rank(0)
        rank = _rank_of(dense_shape)
        return [
            TensorSpec(TensorShape([None, rank]), dtypes.int64),
            TensorSpec(TensorShape([None]), values.dtype.base_dtype),
            TensorSpec(TensorShape([None]), dtypes.bool),
            TensorSpec(_entries(indices), dtypes.int64),
        ]

    def compute(self, ctx: KernelContext, indices, values, dense_shape, default_value):
        check_indices(indices, dense_shape)
        rank = len(dense_shape)
        if rank == 0:
            raise ValueError("dense_shape must have rank >= 1")
        rows = indices[:, 0]
        counts = np.bincount(rows, minlength=int(dense_shape[0]))
        empty = counts == 0
        out_counts = np.where(empty, 1, counts)
        offsets = np.cumsum(out_counts) - out_counts
        total = int(out_counts.sum())
        out_indices = np.zeros((total, rank), _I64)
        out_values = np.full(total, default_value, dtype=values.dtype)
        empty_rows = np.flatnonzero(empty)
        out_indices[offsets[empty_rows], 0] = empty_rows
        order = np.argsort(rows, kind="stable")
        sorted_rows = rows[order]
        first = np.searchsorted(sorted_rows, sorted_rows, side="left")
        reverse = np.empty(len(rows), _I64)
        reverse[order] = offsets[sorted_rows] + np.arange(len(rows)) - first
        out_indices[reverse] = indices
        out_values[reverse] = values
        return out_indices, out_values, empty, reverse

    def gradient(self, op: Any, *grads: Any) -> list[Any]:
        values_grad = grads[1]
        if values_grad is None:
            return [None, None, None, None]
        reverse = op.outputs[3]
        d_values = array_ops.gather(values_grad, reverse)
        d_default = math_ops.reduce_sum(values_grad) - math_ops.reduce_sum(d_values)
        return [None, d_values, None, d_default]


def sparse_fill_empty_rows(
    sp_input: Any, default_value: Any, name: str | None = None
) -> tuple[SparseTensor, Tensor]:
    """``sp_input`` with ``default_value`` at ``[row, 0, ...]`` of each empty row, and a bool
    vector saying which rows were empty."""
    sp_input = sparse_input(sp_input)
    with ops_lib.name_scope(name, "SparseFillEmptyRows"):
        default = ops_lib.convert_to_tensor(default_value, dtype=sp_input.dtype)
        inputs = [sp_input.indices, sp_input.values, sp_input.dense_shape, default]
        indices, values, empty, _ = _create("SparseFillEmptyRows", inputs).outputs
        result = SparseTensor(indices, values, sp_input.dense_shape)
    return _with_static_shape(result, sp_input), empty


# --- composed builders ----------------------------------------------------------------------------
def sparse_retain(sp_input: Any, to_retain: Any) -> SparseTensor:
    """The entries of ``sp_input`` where the bool vector ``to_retain`` is true."""
    sp_input = sparse_input(sp_input)
    to_retain = ops_lib.convert_to_tensor(to_retain, dtype=dtypes.bool)
    to_retain.shape.with_rank(1).dims[0].merge_with(sp_input.values.shape[0])
    where_true = array_ops.reshape(array_ops.where(to_retain), [-1])
    result = SparseTensor(
        array_ops.gather(sp_input.indices, where_true),
        array_ops.gather(sp_input.values, where_true),
        array_ops.identity(sp_input.dense_shape),
    )
    return _with_static_shape(result, sp_input)


def from_dense(tensor: Any, name: str | None = None) -> SparseTensor:
    """The non-zero entries of a dense tensor as a SparseTensor (``tf.sparse.from_dense``)."""
    with ops_lib.name_scope(name, "dense_to_sparse"):
        tensor = ops_lib.convert_to_tensor(tensor)
        zero = array_ops.zeros([], dtype=tensor.dtype)
        indices = array_ops.where(math_ops.not_equal(tensor, zero))
        values = gather_nd(tensor, indices)
        shape = array_ops.shape(tensor, out_type=dtypes.int64)
        result = SparseTensor(indices, values, shape)
    result._shape_hint = tensor.shape
    return result


def sparse_placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> SparseTensor:
    """A SparseTensor to feed with a SparseTensorValue (or an (indices, values, shape) triple).

    A fully known ``shape`` becomes a constant dense_shape, as in TensorFlow; otherwise the
    dense_shape is fed too and ``shape`` only says what is known of it statically.

    >>> import nbflow as tf
    >>> sp = tf.sparse_placeholder(tf.float32, [2, 3])
    >>> tf.Session().run(tf.sparse.to_dense(sp), {sp: ([[1, 2]], [5.0], [2, 3])}).tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 5.0]]
    """
    static = as_shape(shape)
    rank = static.ndims
    with ops_lib.name_scope(name, "SparsePlaceholder"):
        values = array_ops.placeholder(dtype, [None], name="values")
        indices = array_ops.placeholder(dtypes.int64, [None, rank], name="indices")
        if static.is_fully_defined():
            known = np.array(static.as_list(), _I64)
            dense_shape = ops_lib.convert_to_tensor(known, name="shape")
        else:
            dense_shape = array_ops.placeholder(dtypes.int64, [rank], name="shape")
        result = SparseTensor(indices, values, dense_shape)
    result._shape_hint = static
    return result


__all__ = [
    "SparseTensor",
    "SparseTensorValue",
    "check_indices",
    "from_dense",
    "sparse_concat",
    "sparse_fill_empty_rows",
    "sparse_placeholder",
    "sparse_reorder",
    "sparse_reshape",
    "sparse_retain",
    "sparse_tensor_to_dense",
    "sparse_to_dense",
]
