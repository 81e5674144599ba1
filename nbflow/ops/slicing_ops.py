"""Slicing and its adjoint, padding: Slice, StridedSlice (``Tensor.__getitem__``) with
StridedSliceGrad; Pad, PadV2, MirrorPad with MirrorPadGrad.

``tensor[...]`` accepts ints, slices, ``...``, ``tf.newaxis`` and scalar int tensors and builds a
StridedSlice whose bit masks (``begin_mask`` ...) say which bounds to ignore, where the ellipsis
is, which axes to add and which to take one index of. The index is worked out once when begin,
end and strides are constants (``StridedSlice.bind``). Slice and Pad are each other's gradient.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import Dimension, TensorShape
from nbflow.ops.constant_ops import (
    _INDEX_DTYPES,
    _create1,
    _int_tensor,
    _range,
    _shape_from_spec,
    _slice,
    _value,
    constant,
    ones_like,
)
from nbflow.ops.join_ops import stack
from nbflow.ops.shape_ops import rank, reshape, shape

Tensor = ops_lib.Tensor


# --- slicing ------------------------------------------------------------------------------------
class Slice(OpDef):
    """The block of ``input`` starting at ``begin`` with extent ``size`` (-1: to the end)."""

    inputs = ("input", "begin", "size")
    type_attrs = {"T": 0, "Index": 1}
    samples = [
        Sample(input=(3, 4), begin=np.array([1, 0], np.int32), size=np.array([2, 3], np.int32)),
        Sample(input=(3, 4), begin=np.array([1, 2], np.int32), size=np.array([-1, -1], np.int32)),
        Sample(input=(3, 4), begin=np.array([1, 1], np.int32), size=np.array([0, 2], np.int32)),
    ]

    def infer(self, input: TensorSpec, begin: TensorSpec, size: TensorSpec) -> TensorSpec:
        b, s, dims = _value(begin), _value(size), input.shape.dims
        dtype = input.dtype.base_dtype
        if dims is None or b is None or s is None:
            rank = input.shape.ndims
            if s is not None:
                known = [None if int(k) < 0 else int(k) for k in s]
                if rank is None or len(known) == rank:
                    return TensorSpec(TensorShape(known), dtype)
            return TensorSpec(TensorShape(None if rank is None else [None] * rank), dtype)
        if len(b) != len(dims) or len(s) != len(dims):
            raise ValueError(
                f"Expected begin and size arguments to be 1-D tensors of size {len(dims)}, "
                f"but got shapes {list(b.shape)} and {list(s.shape)} instead."
            )
        out = []
        for d, start, n in zip(dims, b.tolist(), s.tolist()):
            if d.value is not None and (
                start < 0 or start > d.value or start + max(n, 0) > d.value
            ):
                raise ValueError(
                    f"Expected begin[i] in [0, {d.value}] and size[i] in [-1, {d.value - start}], "
                    f"got begin {start} and size {n}"
                )
            out.append(d - start if n == -1 else Dimension(n))
        return TensorSpec(TensorShape(out), dtype)

    def compute(self, ctx: KernelContext, input: Any, begin: Any, size: Any) -> Any:
        index = []
        for start, n, d in zip(begin.tolist(), size.tolist(), input.shape):
            end = d if n == -1 else start + n
            if start < 0 or end > d or end < start:
                raise ValueError(
                    f"Expected begin[i] in [0, {d}] and size[i] in [-1, {d - start}], "
                    f"got begin {start} and size {n}"
                )
            index.append(_slice(start, end))
        return input[tuple(index)]

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        x, begin, _ = op.inputs
        begin = _cast(begin, dtypes.int32)
        after = shape(x) - begin - shape(grad)
        return [pad(grad, stack([begin, after], axis=1)), None, None]


def _cast(x: Tensor, dtype: dtypes.DType) -> Tensor:
    return math_ops.cast(x, dtype)


def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """The block of ``input_`` at ``begin`` of extent ``size`` (-1 means all remaining)."""
    inputs = [ops_lib.convert_to_tensor(input_), _int_tensor(begin), _int_tensor(size)]
    return _create1("Slice", inputs, name=name)


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _strided_index(begin: Any, end: Any, strides: Any, masks: tuple[int, ...]) -> tuple:
    """The NumPy index that a StridedSlice's begin/end/strides and masks spell."""
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask = masks
    index: list[Any] = []
    for i, (b, e, s) in enumerate(zip(begin.tolist(), end.tolist(), strides.tolist())):
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
        elif new_axis_mask & bit:
            index.append(None)
        elif shrink_axis_mask & bit:
            index.append(b)
        else:
            if s == 0:
                raise ValueError(f"strides[{i}] must be non-zero")
            index.append(_slice(None if begin_mask & bit else b, None if end_mask & bit else e, s))
    return tuple(index)


class _Unknown:
    """An index entry whose bounds are not known at graph construction."""


def _indexed_shape(shape_: TensorShape, index: tuple) -> TensorShape:
    """The static shape of ``x[index]`` for a NumPy basic index (entries may be _Unknown)."""
    dims = shape_.dims
    if dims is None:
        return TensorShape(None)
    consumed = sum(1 for item in index if item is not None and item is not Ellipsis)
    if consumed > len(dims):
        raise ValueError(
            f"Index out of range using input dim {len(dims)}; input has only {len(dims)} dims"
        )
    out: list[Any] = []
    d = 0
    for item in index:
        if item is Ellipsis:
            n = len(dims) - consumed
            out.extend(dims[d : d + n])
            d += n
            consumed = len(dims)  # a second ellipsis is empty
        elif item is None:
            out.append(1)
        elif isinstance(item, int):
            size_ = dims[d].value
            if size_ is not None and not -size_ <= item < size_:
                raise ValueError(f"slice index {item} of dimension {d} out of bounds.")
            d += 1
        elif isinstance(item, _slice):
            size_ = dims[d].value
            if size_ is not None:
                out.append(len(_range(*item.indices(size_))))
            elif item.start is None and item.stop is None and item.step in (None, 1, -1):
                out.append(None)
            else:
                out.append(None)
            d += 1
        else:  # _Unknown: a slice with bounds unknown, or a shrunk dimension
            if item is not _SHRINK:
                out.append(None)
            d += 1
    return TensorShape(out + dims[d:])


_UNKNOWN_SLICE, _SHRINK = _Unknown(), _Unknown()


class StridedSlice(OpDef):
    """``input[begin:end:strides]`` per dimension, NumPy-style, with TF's bit masks:
    ``begin_mask``/``end_mask`` ignore a bound, ``ellipsis_mask`` marks ``...``,
    ``new_axis_mask`` inserts a dimension, ``shrink_axis_mask`` takes one index."""

    inputs = ("input", "begin", "end", "strides")
    attrs = {m: 0 for m in _MASKS}
    type_attrs = {"T": 0, "Index": 1}
    samples = [
        Sample(
            input=(4, 5),
            begin=np.array([1, 0], np.int32),
            end=np.array([3, 5], np.int32),
            strides=np.array([1, 2], np.int32),
        ),
        Sample(
            input=(4, 5, 3),
            begin=np.array([-1, 0, 0], np.int32),
            end=np.array([0, 0, 2], np.int32),
            strides=np.array([1, 1, 1], np.int32),
            shrink_axis_mask=1,
            ellipsis_mask=2,
        ),
        Sample(
            input=(4, 5),
            begin=np.array([0, 3, 0], np.int32),
            end=np.array([0, 0, 0], np.int32),
            strides=np.array([1, -1, 1], np.int32),
            new_axis_mask=1,
            end_mask=6,
            begin_mask=4,
        ),
        Sample(
            input=(0, 3),
            input_dtype=np.int32,
            begin=np.array([0], np.int32),
            end=np.array([2], np.int32),
            strides=np.array([1], np.int32),
        ),
    ]

    def infer(
        self,
        input: TensorSpec,
        begin: TensorSpec,
        end: TensorSpec,
        strides: TensorSpec,
        **masks: int,
    ):
        return TensorSpec(
            _strided_shape(input.shape, begin, end, strides, masks), input.dtype.base_dtype
        )

    def compute(
        self, ctx: KernelContext, input: Any, begin: Any, end: Any, strides: Any, **masks: int
    ):
        return input[_strided_index(begin, end, strides, tuple(masks[m] for m in _MASKS))]

    def scalar_index(self, op: Any) -> Any:
        """``i`` when this node is ``x[i]`` for a scalar integer tensor ``i``: ``x[i]`` builds
        ``StridedSlice(x, stack([i]), stack([i + 1]), [1], shrink_axis_mask=1)``, whose end is
        unused once the one dimension is shrunk."""
        masks = [op._attrs.get(m, 0) for m in ("begin_mask", "ellipsis_mask", "new_axis_mask")]
        if any(masks) or op._attrs.get("shrink_axis_mask") != 1:
            return None
        x, begin, _, strides = op._inputs
        stride = strides.op._attrs["value"] if strides.op.op_def.holds_constant else None
        if begin.op.type != "Pack" or stride is None or np.shape(stride) != (1,) or stride[0] != 1:
            return None
        if len(begin.op._inputs) != 1 or x.dtype.is_ref_dtype:
            return None
        index = begin.op._inputs[0]
        if index.shape.ndims != 0 or not index.dtype.base_dtype.is_integer:
            return None
        return index

    def bind(self, op: Any, device_type: str = "CPU"):
        known = [ops_lib.constant_value(t) for t in op.inputs[1:]]
        masks = tuple(op.get_attr(m) for m in _MASKS)
        if any(k is None for k in known):
            n = op.inputs[1].shape.num_elements()
            if n and not masks[2] and not masks[3] and masks[4] == (1 << n) - 1:
                # every dimension indexed by a scalar (``x[i]`` with a tensor ``i``)

                def strided_slice_at(ctx: KernelContext, input: Any, begin: Any, *_: Any):
                    return input[tuple(begin.tolist())]

                return strided_slice_at

            def strided_slice(ctx: KernelContext, input: Any, begin: Any, end: Any, strides: Any):
                return input[_strided_index(begin, end, strides, masks)]

            return strided_slice
        index = _strided_index(known[0], known[1], known[2], masks)

        def strided_slice_const(ctx: KernelContext, input: Any, begin: Any, end: Any, strides: Any):
            return input[index]

        return strided_slice_const

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        x, begin, end, strides = op.inputs
        attrs = {m: op.get_attr(m) for m in _MASKS}
        dx = _create1(
            "StridedSliceGrad", [shape(x, out_type=begin.dtype), begin, end, strides, grad], attrs
        )
        return [dx, None, None, None]


class IndexAt(OpDef):
    """``input[index]`` for a scalar integer ``index``, a view. The master rewrites ``x[i]``
    with a tensor ``i`` (a StridedSlice of ``stack([i])``) into it, which saves packing ``[i]``
    and ``[i + 1]`` and decoding the slice on every loop iteration
    (runtime/graph_optimizer.py: ``simplify_indexing``). It is made after gradients are built,
    so it needs none."""

    type = "_IndexAt"
    inputs = ("input", "index")
    differentiable = False
    expression = "input[index]"
    samples = [
        Sample(input=(4, 3), index=np.array(2, np.int32)),
        Sample(input=(4, 3, 2), index=np.array(-1, np.int64)),
    ]

    def compute_gpu(self, ctx: KernelContext, input: Any, index: Any) -> Any:
        return input[int(index)]  # a CuPy index array would gather (a copy) instead of a view

    def infer(self, input: TensorSpec, index: TensorSpec) -> TensorSpec:
        index.shape.assert_is_compatible_with(TensorShape([]))
        if not index.dtype.base_dtype.is_integer:
            raise TypeError(f"_IndexAt index must be an integer, not {index.dtype.name}")
        dims = input.shape.with_rank_at_least(1).dims
        return TensorSpec(TensorShape(None if dims is None else dims[1:]), input.dtype.base_dtype)


def _strided_shape(
    input_shape: TensorShape, begin: TensorSpec, end: TensorSpec, strides: TensorSpec, masks: dict
) -> TensorShape:
    values = [_value(begin), _value(end), _value(strides)]
    mask_values = tuple(masks[m] for m in _MASKS)
    if all(v is not None for v in values):
        return _indexed_shape(
            input_shape, _strided_index(values[0], values[1], values[2], mask_values)
        )
    n = begin.shape.with_rank(1)[0]
    if n is None:
        return TensorShape(None)
    index: list[Any] = []
    for i in _range(n):
        bit = 1 << i
        if mask_values[2] & bit:
            index.append(Ellipsis)
        elif mask_values[3] & bit:
            index.append(None)
        elif mask_values[4] & bit:
            index.append(_SHRINK)
        elif (
            mask_values[0] & mask_values[1] & bit
            and values[2] is not None
            and abs(int(values[2][i])) == 1
        ):
            index.append(_slice(None))
        else:
            index.append(_UNKNOWN_SLICE)
    return _indexed_shape(input_shape, tuple(index))


class StridedSliceGrad(OpDef):
    """The gradient of StridedSlice: ``dy`` scattered into zeros of the input's ``shape``."""

    inputs = ("shape", "begin", "end", "strides", "dy")
    attrs = {m: 0 for m in _MASKS}
    samples = [
        Sample(
            shape=np.array([4, 5], np.int32),
            begin=np.array([1, 0], np.int32),
            end=np.array([3, 5], np.int32),
            strides=np.array([1, 2], np.int32),
            dy=(2, 3),
        ),
        Sample(
            shape=np.array([4, 5], np.int32),
            begin=np.array([0, 2], np.int32),
            end=np.array([0, 0], np.int32),
            strides=np.array([1, -1], np.int32),
            dy=(1, 3, 5),
            new_axis_mask=1,
            end_mask=2,
        ),
    ]

    def infer(self, shape: TensorSpec, begin, end, strides, dy: TensorSpec, **masks: int):
        return TensorSpec(_shape_from_spec(shape), dy.dtype.base_dtype)

    def compute(
        self,
        ctx: KernelContext,
        shape: Any,
        begin: Any,
        end: Any,
        strides: Any,
        dy: Any,
        **masks: int,
    ):
        out = ctx.xp.zeros(shape.tolist(), dtype=dy.dtype)
        out[_strided_index(begin, end, strides, tuple(masks[m] for m in _MASKS))] = dy
        return out

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        _, begin, end, strides, _ = op.inputs
        attrs = {m: op.get_attr(m) for m in _MASKS}
        return [
            None,
            None,
            None,
            None,
            _create1("StridedSlice", [grad, begin, end, strides], attrs),
        ]


def strided_slice(
    input_: Any,
    begin: Any,
    end: Any,
    strides: Any = None,
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
    var: Any = None,
    name: str | None = None,
) -> Tensor:
    """``input_[begin:end:strides]`` with TensorFlow's bit masks (see StridedSlice)."""
    begin, end = _int_tensor(begin), _int_tensor(end)
    if strides is None:
        strides = ones_like(begin)
    attrs = dict(
        zip(_MASKS, (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask))
    )
    inputs = [ops_lib.convert_to_tensor(input_), begin, end, _int_tensor(strides)]
    return _create1("StridedSlice", inputs, attrs, name=name)


def _is_index_tensor(s: Any) -> bool:
    return (
        isinstance(s, Tensor) and s.dtype.base_dtype in _INDEX_DTYPES and s.shape.ndims in (0, None)
    )


def _slice_helper(tensor: Any, slice_spec: Any, var: Any = None) -> Tensor:
    """``tensor[slice_spec]``: ints, slices, ``...``, ``tf.newaxis`` and scalar int tensors."""
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin: list[Any] = []
    end: list[Any] = []
    strides: list[Any] = []
    masks = dict.fromkeys(_MASKS, 0)
    for i, s in enumerate(slice_spec):
        bit = 1 << i
        if isinstance(s, _slice):
            for bound, key, out in ((s.start, "begin_mask", begin), (s.stop, "end_mask", end)):
                if bound is None:
                    out.append(0)
                    masks[key] |= bit
                else:
                    out.append(_check_index(bound))
            strides.append(1 if s.step is None else _check_index(s.step))
        elif s is Ellipsis:
            if masks["ellipsis_mask"]:
                raise ValueError("Multiple ellipses in slice spec not allowed")
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["ellipsis_mask"] |= bit
        elif s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["new_axis_mask"] |= bit
        else:
            s = _check_index(s)
            begin.append(s)
            end.append(s + 1)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    with ops_lib.name_scope(None, "strided_slice", [tensor]) as name:
        if begin:
            packed = [stack(begin), stack(end), stack(strides)]
            if any(p.dtype.base_dtype is dtypes.int64 for p in packed):
                packed = [_cast(p, dtypes.int64) for p in packed]
        else:
            packed = [constant([], dtype=dtypes.int32)] * 3
        return strided_slice(
            tensor,
            packed[0],
            packed[1],
            packed[2],
            begin_mask=masks["begin_mask"],
            end_mask=masks["end_mask"],
            ellipsis_mask=masks["ellipsis_mask"],
            new_axis_mask=masks["new_axis_mask"],
            shrink_axis_mask=masks["shrink_axis_mask"],
            var=var,
            name=name,
        )


def _check_index(s: Any) -> Any:
    if _is_index_tensor(s):
        return s
    if isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)):
        return int(s)
    raise TypeError(
        "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
        f"tf.int32/tf.int64 tensors are valid indices, got {s!r}"
    )


Tensor._override_operator("__getitem__", _slice_helper)


# --- padding, the adjoint of slicing --------------------------------------------------------------
class Pad(OpDef):
    """``input`` padded with zeros: ``paddings[i] = [before, after]`` for dimension i."""

    inputs: ClassVar[tuple[str, ...]] = ("input", "paddings")
    type_attrs = {"T": 0, "Tpaddings": 1}
    samples = [
        Sample(input=(2, 3), paddings=np.array([[1, 0], [2, 1]], np.int32)),
        Sample(input=(0, 2), paddings=np.array([[1, 1], [0, 0]], np.int32), input_dtype=np.int32),
    ]

    def infer(self, input: TensorSpec, paddings: TensorSpec) -> TensorSpec:
        return TensorSpec(_padded_shape(input, paddings), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, paddings: Any) -> Any:
        return ctx.xp.pad(input, paddings.tolist())

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        x, paddings = op.inputs[:2]
        begin = reshape(slice(paddings, [0, 0], stack([rank(x), 1])), [-1])
        return [slice(grad, begin, shape(x)), None]


class PadV2(Pad):
    """``input`` padded with ``constant_values``."""

    inputs = ("input", "paddings", "constant_values")
    samples = [
        Sample(
            input=(2, 3),
            paddings=np.array([[1, 0], [0, 2]], np.int32),
            constant_values=np.float64(2.5),
        )
    ]

    def infer(self, input: TensorSpec, paddings: TensorSpec, constant_values: TensorSpec):
        return TensorSpec(_padded_shape(input, paddings), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, paddings: Any, constant_values: Any) -> Any:
        return ctx.xp.pad(input, paddings.tolist(), constant_values=constant_values)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [*Pad.gradient(self, op, grad), None]


def _padded_shape(input: TensorSpec, paddings: TensorSpec) -> TensorShape:
    p = _value(paddings)
    if p is None or input.shape.dims is None:
        rank = input.shape.ndims
        if rank is None and paddings.shape.ndims is not None:
            rank = paddings.shape.with_rank(2)[0]
        return TensorShape(None if rank is None else [None] * rank)
    if p.shape != (len(input.shape.dims), 2):
        raise ValueError(
            f"paddings must be a matrix with 2 columns and a row per input dimension, got {p.shape}"
        )
    if (p < 0).any():
        raise ValueError(f"paddings must be non-negative: {p.tolist()}")
    return TensorShape([d + int(a) + int(b) for d, (a, b) in zip(input.shape.dims, p)])


class MirrorPad(OpDef):
    """``input`` padded with its own mirror image (``mode`` REFLECT or SYMMETRIC)."""

    inputs = ("input", "paddings")
    attrs = {"mode": REQUIRED}
    samples = [
        Sample(input=(3, 4), paddings=np.array([[1, 2], [2, 1]], np.int32), mode="REFLECT"),
        Sample(input=(3, 4), paddings=np.array([[2, 3], [0, 1]], np.int32), mode="SYMMETRIC"),
    ]

    def infer(self, input: TensorSpec, paddings: TensorSpec, mode: str) -> TensorSpec:
        p, dims = _value(paddings), input.shape.dims
        if p is not None and dims is not None:
            limit = 1 if mode == "REFLECT" else 0
            for d, (a, b) in zip(dims, p):
                if d.value is not None and max(a, b) > d.value - limit:
                    raise ValueError(
                        f"paddings must be no greater than the dimension size minus {limit}: "
                        f"{int(a)}, {int(b)} greater than {d.value - limit}"
                    )
        return TensorSpec(_padded_shape(input, paddings), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, paddings: Any, mode: str) -> Any:
        return ctx.xp.pad(input, paddings.tolist(), mode=mode.lower())

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        attrs = {"mode": op.get_attr("mode")}
        return [_create1("MirrorPadGrad", [grad, op.inputs[1]], attrs), None]


class MirrorPadGrad(OpDef):
    """The gradient of MirrorPad: the padded regions folded back onto the input."""

    inputs = ("input", "paddings")
    attrs = {"mode": REQUIRED}
    samples = [
        Sample(input=(6, 7), paddings=np.array([[1, 2], [2, 1]], np.int32), mode="REFLECT"),
        Sample(input=(8, 5), paddings=np.array([[2, 3], [0, 1]], np.int32), mode="SYMMETRIC"),
    ]

    def infer(self, input: TensorSpec, paddings: TensorSpec, mode: str) -> TensorSpec:
        p, dims = _value(paddings), input.shape.dims
        if p is None or dims is None:
            return TensorSpec(TensorShape(None), input.dtype.base_dtype)
        return TensorSpec(
            TensorShape([d - int(a) - int(b) for d, (a, b) in zip(dims, p)]), input.dtype.base_dtype
        )

    def compute(self, ctx: KernelContext, input: Any, paddings: Any, mode: str) -> Any:
        xp, offset = ctx.xp, 1 if mode == "REFLECT" else 0
        out = input
        for axis, (before, after) in enumerate(paddings.tolist()):
            n = out.shape[axis] - before - after
            index = [_slice(None)] * out.ndim
            index[axis] = _slice(before, before + n)
            core = out[tuple(index)].copy()
            if before:
                index[axis] = _slice(0, before)
                core_index = list(index)
                core_index[axis] = _slice(offset, offset + before)
                core[tuple(core_index)] += xp.flip(out[tuple(index)], axis)
            if after:
                index[axis] = _slice(before + n, None)
                core_index = list(index)
                core_index[axis] = _slice(n - after - offset, n - offset)
                core[tuple(core_index)] += xp.flip(out[tuple(index)], axis)
            out = core
        return out

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        attrs = {"mode": op.get_attr("mode")}
        return [_create1("MirrorPad", [grad, op.inputs[1]], attrs), None]


def pad(
    tensor: Any, paddings: Any, mode: str = "CONSTANT", name: str | None = None, constant_values=0
) -> Tensor:
    """``tensor`` padded by ``paddings`` ([rank, 2]); ``mode`` CONSTANT, REFLECT or SYMMETRIC."""
    tensor = ops_lib.convert_to_tensor(tensor)
    paddings = _int_tensor(paddings)
    mode = mode.upper()
    if mode == "CONSTANT":
        if not isinstance(constant_values, Tensor) and np.all(np.asarray(constant_values) == 0):
            return _create1("Pad", [tensor, paddings], name=name)
        value = ops_lib.convert_to_tensor(constant_values, dtype=tensor.dtype.base_dtype)
        return _create1("PadV2", [tensor, paddings, value], name=name)
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"Unknown padding mode: {mode}")
    return _create1("MirrorPad", [tensor, paddings], {"mode": mode}, name=name)


# Modules that import this one, bound once its definitions exist (the gradients and
# composites above call into them).
from nbflow.ops import math_ops  # noqa: E402
