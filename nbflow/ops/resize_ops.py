"""Image resizing ops: ResizeBilinear and ResizeNearestNeighbor with their gradient ops.

Both resize NHWC batches ``[batch, height, width, channels]`` to ``size = [new_height,
new_width]``, as TensorFlow 1.15's kernels do. Output pixel ``i`` of an axis looks at input
position ``i * scale`` (``(i + 0.5) * scale - 0.5`` with ``half_pixel_centers``), where
``scale = in / out``, or ``(in - 1) / (out - 1)`` with ``align_corners`` (corner pixels line up).
Positions are computed in float32 as TensorFlow does, so the pixels picked agree with it.

Resizing is separable: each axis is an [out, in] matrix of interpolation weights (two taps per
row for bilinear, a one-hot row for nearest neighbor). The forward kernels gather the taps of
each axis (vectorised, no per-pixel loop) and interpolate with TensorFlow's arithmetic
(``top + (bottom - top) * lerp``); the gradient kernels apply the transposed matrices, which is
the exact adjoint and runs as two matrix products over ``ctx.xp``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape, as_dimension
from nbflow.ops.constant_ops import _create1, _value
from nbflow.ops.shape_ops import shape

Tensor = ops_lib.Tensor

_RESIZE_ATTRS = {"align_corners": False, "half_pixel_centers": False}


# --- where output pixels look -------------------------------------------------------------------
def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def _bilinear_taps(
    in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each output index along one axis: the lower and upper input index, and the weight
    of the upper one (TensorFlow's ``compute_interpolation_weights``)."""
    scale = _scale(in_size, out_size, align_corners)
    i = np.arange(out_size, dtype=np.float32)
    pos = (i + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel_centers else i * scale
    floor = np.floor(pos)
    lower = np.clip(floor, 0, in_size - 1).astype(np.int64)
    upper = np.minimum(np.ceil(pos), in_size - 1).astype(np.int64)
    return lower, upper, (pos - floor).astype(np.float32)


def _nearest_taps(
    in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool
) -> np.ndarray:
    """For each output index along one axis, the input index it copies."""
    scale = _scale(in_size, out_size, align_corners)
    i = np.arange(out_size, dtype=np.float32)
    pos = (i + np.float32(0.5)) * scale if half_pixel_centers else i * scale
    floor = np.floor(pos)
    # roundf rounds halves away from zero; positions are never negative here.
    index = np.where(pos - floor >= 0.5, floor + 1, floor) if align_corners else floor
    return np.clip(index, 0, in_size - 1).astype(np.int64)


def _bilinear_matrix(in_size: int, out_size: int, attrs: dict[str, bool], dtype: Any):
    lower, upper, lerp = _bilinear_taps(in_size, out_size, **attrs)
    matrix = np.zeros((out_size, in_size), dtype)
    rows = np.arange(out_size)
    np.add.at(matrix, (rows, lower), 1 - lerp)
    np.add.at(matrix, (rows, upper), lerp)
    return matrix


def _nearest_matrix(in_size: int, out_size: int, attrs: dict[str, bool], dtype: Any):
    matrix = np.zeros((out_size, in_size), dtype)
    matrix[np.arange(out_size), _nearest_taps(in_size, out_size, **attrs)] = 1
    return matrix


def _apply_transposed(xp: Any, rows: Any, columns: Any, grads: Any) -> Any:
    """``rows.T`` applied along axis 1 and ``columns.T`` along axis 2 of an NHWC batch."""
    out = xp.moveaxis(xp.tensordot(xp.asarray(rows), grads, axes=(0, 1)), 0, 1)
    return xp.moveaxis(xp.tensordot(xp.asarray(columns), out, axes=(0, 2)), 0, 2)


def _check_attrs(align_corners: bool, half_pixel_centers: bool) -> None:
    if align_corners and half_pixel_centers:
        raise ValueError("If half_pixel_centers is True, align_corners must be False.")


def _output_size(size: Any) -> tuple[int, int]:
    values = size.reshape(-1).tolist()  # tolist: NumPy or CuPy
    if len(values) != 2:
        raise ValueError(f"shape_t must have two elements, got {values}")
    height, width = values
    if height <= 0 or width <= 0:
        raise ValueError(f"output dimensions must be positive, got {[height, width]}")
    return int(height), int(width)


def _check_input(images: Any) -> None:
    if images.ndim != 4:
        raise ValueError(f"input must be 4-dimensional, got shape {list(images.shape)}")
    if images.shape[1] == 0 or images.shape[2] == 0:
        raise ValueError(f"input image must be of non-zero size, got {list(images.shape)}")


# --- shape functions ----------------------------------------------------------------------------
def _resized_spec(images: TensorSpec, size: TensorSpec, dtype: dtypes.DType) -> TensorSpec:
    batch, _, _, channels = images.shape.with_rank(4)
    n = as_dimension(size.shape.with_rank(1)[0])
    if not n.is_compatible_with(2):
        raise ValueError(f"Dimension must be 2 but is {n.value} (size: {size.shape})")
    if size.dtype.base_dtype is not dtypes.int32:
        raise TypeError(f"size must be int32, got {size.dtype.name}")
    value = _value(size)
    height = width = None
    if value is not None:
        height, width = (int(d) if d > 0 else None for d in value.reshape(-1).tolist())
    return TensorSpec(TensorShape([batch, height, width, channels]), dtype)


def _size_tensor(size: Any) -> Tensor:
    return ops_lib.convert_to_tensor(size, dtype=dtypes.int32, name="size")


def _spatial_size(images: Tensor) -> Any:
    """``images``'s [height, width]: static if known, else sliced from its dynamic shape."""
    known = images.shape[1:3]
    if known.is_fully_defined():
        return known.as_list()
    return shape(images)[1:3]


# --- bilinear -----------------------------------------------------------------------------------
class ResizeBilinear(OpDef):
    """``images`` resized to ``size`` by bilinear interpolation; the output is float32."""

    inputs = ("images", "size")
    attrs = dict(_RESIZE_ATTRS)
    # Integer images keep these samples out of the float64 finite-difference test: the float32
    # output is too coarse for it. tests/ops/test_image_ops.py checks the gradient instead.
    samples = [
        Sample(input_dtype=np.int32, images=(2, 3, 4, 2), size=np.array([5, 7], np.int32)),
        Sample(
            input_dtype=np.uint8,
            images=(1, 4, 6, 3),
            size=np.array([2, 3], np.int32),
            align_corners=True,
        ),
        Sample(
            input_dtype=np.int64,
            images=(1, 3, 3, 1),
            size=np.array([4, 2], np.int32),
            half_pixel_centers=True,
        ),
    ]

    def infer(self, images: TensorSpec, size: TensorSpec, **attrs: bool) -> TensorSpec:
        return _resized_spec(images, size, dtypes.float32)

    def compute(self, ctx: KernelContext, images: Any, size: Any, **attrs: bool) -> Any:
        _check_attrs(**attrs)
        _check_input(images)
        xp = ctx.xp
        _, in_h, in_w, _ = images.shape
        out_h, out_w = _output_size(size)
        y_lo, y_hi, y_lerp = map(xp.asarray, _bilinear_taps(in_h, out_h, **attrs))
        x_lo, x_hi, x_lerp = map(xp.asarray, _bilinear_taps(in_w, out_w, **attrs))
        x = images.astype(xp.float32, copy=False)
        left, right = x[:, :, x_lo], x[:, :, x_hi]
        rows = left + (right - left) * x_lerp[:, None]  # each input row, at the output columns
        top, bottom = rows[:, y_lo], rows[:, y_hi]
        return top + (bottom - top) * y_lerp[:, None, None]

    def gradient(self, op: Any, grad: Tensor) -> list[Any]:
        return image_gradient(op, grad, "ResizeBilinearGrad")


class _ResizeImageGrad(OpDef):
    """The gradient of an interpolating resize: each output's gradient spread over its taps,
    as the transposed interpolation matrices of the rows and the columns."""

    abstract = True
    inputs = ("grads", "original_image")
    attrs = dict(_RESIZE_ATTRS)
    differentiable = False  # as in TensorFlow
    samples = [
        Sample(
            grads=np.arange(2 * 5 * 7 * 2, dtype=np.float32).reshape(2, 5, 7, 2),
            original_image=(2, 3, 4, 2),
        ),
        Sample(
            input_dtype=np.float32,
            grads=np.ones((1, 2, 3, 3), np.float32),
            original_image=(1, 4, 6, 3),
            align_corners=True,
        ),
        Sample(
            grads=np.ones((1, 4, 2, 1), np.float32),
            original_image=(1, 3, 3, 1),
            half_pixel_centers=True,
        ),
    ]
    matrix = staticmethod(_bilinear_matrix)  # (in_size, out_size, attrs, dtype) -> [out, in]

    def infer(self, grads: TensorSpec, original_image: TensorSpec, **attrs: bool) -> TensorSpec:
        grads.shape.with_rank(4)
        shape = original_image.shape.with_rank(4)
        return TensorSpec(shape, original_image.dtype.base_dtype)

    def compute(self, ctx: KernelContext, grads: Any, original_image: Any, **attrs: bool) -> Any:
        _check_attrs(**attrs)
        _, in_h, in_w, _ = original_image.shape
        _, out_h, out_w, _ = grads.shape
        dtype = original_image.dtype
        work = np.float64 if dtype == np.float64 else np.float32
        rows = self.matrix(in_h, out_h, attrs, work)
        columns = self.matrix(in_w, out_w, attrs, work)
        out = _apply_transposed(ctx.xp, rows, columns, grads.astype(work, copy=False))
        return out.astype(dtype, copy=False)


def image_gradient(op: Any, grad: Tensor, grad_type: str) -> list[Any]:
    """An interpolating resize's gradient op, ``grad_type``, for a float image (none for
    integer images, as in TensorFlow)."""
    image = op.inputs[0]
    if not image.dtype.base_dtype.is_floating:
        return [None, None]
    attrs = {k: op.get_attr(k) for k in _RESIZE_ATTRS}
    return [_create1(grad_type, [grad, image], attrs), None]


class ResizeBilinearGrad(_ResizeImageGrad):
    """The gradient of ResizeBilinear: each output's gradient spread over its four taps."""


# --- nearest neighbor ---------------------------------------------------------------------------
class ResizeNearestNeighbor(OpDef):
    """``images`` resized to ``size``, each output pixel a copy of its nearest input pixel."""

    inputs = ("images", "size")
    attrs = dict(_RESIZE_ATTRS)
    samples = [
        Sample(images=(2, 3, 4, 2), size=np.array([5, 7], np.int32)),
        Sample(images=(1, 4, 6, 3), size=np.array([2, 3], np.int32), align_corners=True),
        Sample(images=(1, 3, 5, 1), size=np.array([4, 2], np.int32), half_pixel_centers=True),
        Sample(input_dtype=np.uint8, images=(1, 2, 2, 3), size=np.array([3, 3], np.int32)),
    ]

    def infer(self, images: TensorSpec, size: TensorSpec, **attrs: bool) -> TensorSpec:
        return _resized_spec(images, size, images.dtype.base_dtype)

    def compute(self, ctx: KernelContext, images: Any, size: Any, **attrs: bool) -> Any:
        _check_attrs(**attrs)
        _check_input(images)
        xp = ctx.xp
        _, in_h, in_w, _ = images.shape
        out_h, out_w = _output_size(size)
        rows = xp.asarray(_nearest_taps(in_h, out_h, **attrs))
        columns = xp.asarray(_nearest_taps(in_w, out_w, **attrs))
        return xp.take(xp.take(images, rows, axis=1), columns, axis=2)

    def gradient(self, op: Any, grad: Tensor) -> list[Any]:
        image = op.inputs[0]
        if not image.dtype.base_dtype.is_floating:
            return [None, None]
        attrs = {k: op.get_attr(k) for k in _RESIZE_ATTRS}
        size = _size_tensor(_spatial_size(image))
        return [_create1("ResizeNearestNeighborGrad", [grad, size], attrs), None]


class ResizeNearestNeighborGrad(OpDef):
    """The gradient of ResizeNearestNeighbor: sums each output's gradient into its source."""

    inputs = ("grads", "size")
    attrs = dict(_RESIZE_ATTRS)
    samples = [
        Sample(grads=(2, 5, 7, 2), size=np.array([3, 4], np.int32)),
        Sample(grads=(1, 2, 3, 3), size=np.array([4, 6], np.int32), align_corners=True),
        Sample(grads=(1, 4, 2, 1), size=np.array([3, 5], np.int32), half_pixel_centers=True),
    ]

    def infer(self, grads: TensorSpec, size: TensorSpec, **attrs: bool) -> TensorSpec:
        return _resized_spec(grads, size, grads.dtype.base_dtype)

    def compute(self, ctx: KernelContext, grads: Any, size: Any, **attrs: bool) -> Any:
        _check_attrs(**attrs)
        _, out_h, out_w, _ = grads.shape
        in_h, in_w = _output_size(size)
        rows = _nearest_matrix(in_h, out_h, attrs, grads.dtype)
        columns = _nearest_matrix(in_w, out_w, attrs, grads.dtype)
        return _apply_transposed(ctx.xp, rows, columns, grads)

    def gradient(self, op: Any, grad: Tensor) -> list[Any]:
        # The adjoint of the adjoint: resize the gradient back to the grads' size.
        attrs = {k: op.get_attr(k) for k in _RESIZE_ATTRS}
        size = _size_tensor(_spatial_size(op.inputs[0]))
        return [_create1("ResizeNearestNeighbor", [grad, size], attrs), None]


# --- builders -----------------------------------------------------------------------------------
def resize_bilinear(
    images: Any,
    size: Any,
    align_corners: bool = False,
    name: str | None = None,
    half_pixel_centers: bool = False,
) -> Tensor:
    """4-D ``images`` resized to ``size`` = [new_height, new_width] bilinearly, as float32.

    >>> import nbflow as tf
    >>> x = tf.constant([[[[0.0], [2.0]]]])  # 1x1x2x1
    >>> tf.Session().run(tf.image.resize_bilinear(x, [1, 4]))[0, 0, :, 0].tolist()
    [0.0, 1.0, 2.0, 2.0]
    """
    attrs = {"align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)}
    inputs = [ops_lib.convert_to_tensor(images, name="images"), _size_tensor(size)]
    return _create1("ResizeBilinear", inputs, attrs, name=name)


def resize_nearest_neighbor(
    images: Any,
    size: Any,
    align_corners: bool = False,
    name: str | None = None,
    half_pixel_centers: bool = False,
) -> Tensor:
    """4-D ``images`` resized to ``size`` = [new_height, new_width] by nearest neighbor.

    >>> import nbflow as tf
    >>> x = tf.constant([[[[1], [2]]]])  # 1x1x2x1
    >>> tf.Session().run(tf.image.resize_nearest_neighbor(x, [1, 4]))[0, 0, :, 0].tolist()
    [1, 1, 2, 2]
    """
    attrs = {"align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)}
    inputs = [ops_lib.convert_to_tensor(images, name="images"), _size_tensor(size)]
    return _create1("ResizeNearestNeighbor", inputs, attrs, name=name)
