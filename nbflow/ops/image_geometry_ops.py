"""Where pixels go: resizing, flips and rotations, crops and pads of ``tf.image``.

Images are ``[height, width, channels]`` or batches ``[batch, height, width, channels]``. These
builders follow TensorFlow 1.15's (names, argument order, dtypes, static errors): a 3-D image is
worked on as a batch of one, and everything except resizing (``ops/resize_ops.py``) is composed
of reverse, transpose, slice and pad, whose gradients come with them.

Sizes and offsets may be Python ints or scalar tensors. A Python value that cannot work raises
ValueError while building, as in TensorFlow; tensors are checked at run time by Assert ops
(``_assert``), made control dependencies of the image.
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.ops import array_ops, control_flow_ops, math_ops, random_ops
from nbflow.ops.check_ops import Assert
from nbflow.ops.resize_bicubic_area_ops import resize_area, resize_bicubic
from nbflow.ops.resize_ops import resize_bilinear, resize_nearest_neighbor

Tensor = ops_lib.Tensor


# --- checks shared by the builders ---------------------------------------------------------------
def _assert(condition: Any, message: str) -> list[ops_lib.Operation]:
    """A Python condition is checked now (ValueError); a tensor one by an Assert op at run time."""
    if ops_lib.is_tensor(condition):
        return [Assert(condition, [message])]
    if not condition:
        raise ValueError(message)
    return []


def _with_dependencies(checks: list[ops_lib.Operation], tensor: Tensor) -> Tensor:
    if not checks:
        return tensor
    with ops_lib.control_dependencies(checks):
        return array_ops.identity(tensor)


def _assert_at_least_3d(image: Tensor) -> Tensor:
    """``image`` after TensorFlow's ``_AssertAtLeast3DImage``: rank >= 3, inner dims > 0."""
    shape = image.shape
    if shape.ndims is not None and shape.ndims < 3:
        raise ValueError(f"'image' (shape {shape}) must be at least three-dimensional.")
    inner = shape[-3:] if shape.ndims is not None else None
    if inner is not None and any(d == 0 for d in inner.as_list()):
        raise ValueError(f"inner 3 dims of 'image.shape' must be > 0: {shape}")
    if inner is not None and inner.is_fully_defined():
        return image
    dims = array_ops.shape(image)[-3:]
    checks = _assert(math_ops.reduce_all(dims > 0), "inner 3 dims of 'image.shape' must be > 0.")
    return _with_dependencies(checks, image)


def _as_batch(image: Tensor) -> tuple[Tensor, bool]:
    """A 4-D batch of ``image`` and whether it already was one (3-D images gain a batch axis)."""
    ndims = image.shape.ndims
    if ndims == 4:
        return image, True
    if ndims == 3 or ndims is None:
        batch = array_ops.expand_dims(image, 0)
        batch.set_shape([None] * 4)
        return batch, False
    raise ValueError("'image' must have either 3 or 4 dimensions.")


def _unbatch(batch: Tensor, was_batch: bool) -> Tensor:
    return batch if was_batch else array_ops.squeeze(batch, axis=[0])


def _image_dimensions(image: Tensor, rank: int) -> list[Any]:
    """Each dimension of ``image``: a Python int where static, else a scalar tensor."""
    static = image.shape.with_rank(rank).as_list()
    if all(d is not None for d in static):
        return static
    dynamic = array_ops.unstack(array_ops.shape(image), rank)
    return [s if s is not None else d for s, d in zip(static, dynamic)]


def _pack(values: list[Any]) -> Any:
    """A 1-D int32 tensor of ``values``: a constant when none is a tensor (shapes stay static)."""
    if any(ops_lib.is_tensor(v) for v in values):
        return array_ops.stack(values)
    return [int(v) for v in values]


def _static(values: list[Any]) -> list[Any]:
    return [None if ops_lib.is_tensor(v) else v for v in values]


# --- resizing ------------------------------------------------------------------------------------
class ResizeMethod:
    """The ``method`` of ``resize_images`` (TensorFlow 1.x's ``ResizeMethod``)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _constant_size(size: Tensor) -> list[int | None]:
    value = ops_lib.constant_value(size)
    if value is not None:
        return [int(v) for v in value.reshape(-1).tolist()]
    if size.op.type == "Pack":
        values = [ops_lib.constant_value(t) for t in size.op.inputs]
        return [None if v is None else int(v) for v in values]
    return [None, None]


def _aspect_preserving_size(images: Tensor, size: Tensor) -> Tensor:
    """The largest [height, width] within ``size`` with ``images``'s aspect ratio."""
    _, height, width, _ = _image_dimensions(images, 4)
    height_f = math_ops.cast(height, dtypes.float32)
    width_f = math_ops.cast(width, dtypes.float32)
    scale = math_ops.minimum(
        math_ops.cast(size[0], dtypes.float32) / height_f,
        math_ops.cast(size[1], dtypes.float32) / width_f,
    )
    new = [math_ops.cast(math_ops.round(scale * d), dtypes.int32) for d in (height_f, width_f)]
    return array_ops.stack(new, name="size")


def resize_images(
    images: Any,
    size: Any,
    method: int = ResizeMethod.BILINEAR,
    align_corners: bool = False,
    preserve_aspect_ratio: bool = False,
    name: str | None = None,
) -> Tensor:
    """``images`` (3-D or 4-D) resized to ``size`` = [new_height, new_width].

    Bilinear, bicubic and area results are float32; nearest neighbor keeps the dtype. An image
    already of that size comes back unchanged.

    >>> import nbflow as tf
    >>> tf.image.resize_images(tf.zeros([4, 6, 3]), [2, 3]).shape
    TensorShape([2, 3, 3])
    """
    with ops_lib.name_scope(name, "resize", [images, size]):
        images = ops_lib.convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        batch, was_batch = _as_batch(images)
        _, height, width, _ = batch.shape.as_list()
        try:
            size = ops_lib.convert_to_tensor(size, dtype=dtypes.int32, name="size")
        except (TypeError, ValueError):
            raise ValueError("'size' must be a 1-D int32 Tensor") from None
        if not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        if preserve_aspect_ratio:
            size = _aspect_preserving_size(batch, size)
        new_height, new_width = _constant_size(size)
        if (height, width) == (new_height, new_width) and height is not None:
            return images
        if method == ResizeMethod.BILINEAR:
            resized = resize_bilinear(batch, size, align_corners=align_corners)
        elif method == ResizeMethod.NEAREST_NEIGHBOR:
            resized = resize_nearest_neighbor(batch, size, align_corners=align_corners)
        elif method == ResizeMethod.BICUBIC:
            resized = resize_bicubic(batch, size, align_corners=align_corners)
        elif method == ResizeMethod.AREA:
            resized = resize_area(batch, size, align_corners=align_corners)
        else:
            raise ValueError("Resize method is not implemented.")
        resized.set_shape([None, new_height, new_width, None])
        return _unbatch(resized, was_batch)


resize = resize_images


def resize_image_with_crop_or_pad(image: Any, target_height: Any, target_width: Any) -> Tensor:
    """``image`` centrally cropped and/or zero-padded to [target_height, target_width].

    >>> import nbflow as tf
    >>> tf.image.resize_image_with_crop_or_pad(tf.zeros([5, 2, 1]), 3, 4).shape
    TensorShape([3, 4, 1])
    """
    with ops_lib.name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image = ops_lib.convert_to_tensor(image, name="image")
        batch, was_batch = _as_batch(image)
        batch = _assert_at_least_3d(batch)
        checks = _assert(target_width > 0, "target_width must be > 0.")
        checks += _assert(target_height > 0, "target_height must be > 0.")
        batch = _with_dependencies(checks, batch)
        _, height, width, _ = _image_dimensions(batch, 4)

        def maximum(x: Any, y: Any) -> Any:
            return math_ops.maximum(x, y) if ops_lib.is_tensor(x) else max(x, y)

        def minimum(x: Any, y: Any) -> Any:
            both_static = not (ops_lib.is_tensor(x) or ops_lib.is_tensor(y))
            return min(x, y) if both_static else math_ops.minimum(x, y)

        width_diff = target_width - width
        height_diff = target_height - height
        cropped = crop_to_bounding_box(
            batch,
            maximum(-height_diff // 2, 0),
            maximum(-width_diff // 2, 0),
            minimum(target_height, height),
            minimum(target_width, width),
        )
        resized = pad_to_bounding_box(
            cropped,
            maximum(height_diff // 2, 0),
            maximum(width_diff // 2, 0),
            target_height,
            target_width,
        )
        return _unbatch(resized, was_batch)


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def resize_image_with_pad(
    image: Any,
    target_height: Any,
    target_width: Any,
    method: int = ResizeMethod.BILINEAR,
    align_corners: bool = False,
) -> Tensor:
    """``image`` resized to fit [target_height, target_width] keeping its aspect ratio, then
    zero-padded evenly (the odd pixel after) to exactly that size.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.image.resize_image_with_pad(tf.ones([2, 4, 1]), 4, 4))[:, 0, 0].tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    with ops_lib.name_scope(None, "resize_image_with_pad", [image]):
        image = ops_lib.convert_to_tensor(image, name="image")
        batch, was_batch = _as_batch(image)
        batch = _assert_at_least_3d(batch)
        checks = _assert(target_width > 0, "target_width must be > 0.")
        checks += _assert(target_height > 0, "target_height must be > 0.")
        batch = _with_dependencies(checks, batch)
        _, height, width, _ = _image_dimensions(batch, 4)
        # As TensorFlow: float32 arithmetic in the graph, the ratio the larger of the two.
        f_height, f_width, f_target_height, f_target_width = (
            math_ops.cast(d, dtypes.float32) for d in (height, width, target_height, target_width)
        )
        ratio = math_ops.maximum(f_width / f_target_width, f_height / f_target_height)
        resized_height_float, resized_width_float = f_height / ratio, f_width / ratio
        new_size = [
            math_ops.cast(math_ops.floor(d), dtypes.int32)
            for d in (resized_height_float, resized_width_float)
        ]
        pad_top, pad_left = (
            math_ops.maximum(0, math_ops.cast(math_ops.floor((t - d) / 2), dtypes.int32))
            for t, d in (
                (f_target_height, resized_height_float),
                (f_target_width, resized_width_float),
            )
        )
        resized = resize_images(
            batch, array_ops.stack(new_size), method, align_corners=align_corners
        )
        padded = pad_to_bounding_box(resized, pad_top, pad_left, target_height, target_width)
        return _unbatch(padded, was_batch)


# --- flips and rotations -------------------------------------------------------------------------
def _flip(image: Any, axis: int, scope: str) -> Tensor:
    with ops_lib.name_scope(None, scope, [image]):
        image = _assert_at_least_3d(ops_lib.convert_to_tensor(image, name="image"))
        ndims = image.shape.ndims
        if ndims == 3 or ndims is None:
            return array_ops.reverse(image, [axis])
        if ndims == 4:
            return array_ops.reverse(image, [axis + 1])
        raise ValueError("'image' must have either 3 or 4 dimensions.")


def flip_left_right(image: Any) -> Tensor:
    """``image`` mirrored horizontally (its width axis reversed).

    >>> import nbflow as tf
    >>> tf.Session().run(tf.image.flip_left_right([[[1], [2]]]))[0, :, 0].tolist()
    [2, 1]
    """
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image: Any) -> Tensor:
    """``image`` upside down (its height axis reversed)."""
    return _flip(image, 0, "flip_up_down")


def _random_flip(image: Any, axis: int, seed: int | None, scope: str) -> Tensor:
    """Flips a 3-D image with probability 1/2; each image of a batch on its own draw."""
    with ops_lib.name_scope(None, scope, [image]):
        image = _assert_at_least_3d(ops_lib.convert_to_tensor(image, name="image"))
        ndims = image.shape.ndims
        if ndims == 3 or ndims is None:
            draw = random_ops.random_uniform([], 0, 1.0, seed=seed)
            result = control_flow_ops.cond(
                math_ops.less(draw, 0.5),
                lambda: array_ops.reverse(image, [axis]),
                lambda: image,
            )
            result.set_shape(image.shape)
            return result
        if ndims == 4:
            batch_size = array_ops.shape(image)[0]
            draws = random_ops.random_uniform([batch_size], 0, 1.0, seed=seed)
            flips = math_ops.round(array_ops.reshape(draws, [batch_size, 1, 1, 1]))
            flips = math_ops.cast(flips, image.dtype)
            flipped = array_ops.reverse(image, [axis + 1])
            return flips * flipped + (1 - flips) * image
        raise ValueError("'image' must have either 3 or 4 dimensions.")


def random_flip_left_right(image: Any, seed: int | None = None) -> Tensor:
    """``image`` mirrored horizontally with probability 1/2 (per image of a batch)."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image: Any, seed: int | None = None) -> Tensor:
    """``image`` upside down with probability 1/2 (per image of a batch)."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def transpose_image(image: Any, name: str | None = None) -> Tensor:
    """``image`` with height and width swapped."""
    with ops_lib.name_scope(name, "transpose", [image]):
        image = _assert_at_least_3d(ops_lib.convert_to_tensor(image, name="image"))
        ndims = image.shape.ndims
        if ndims == 3 or ndims is None:
            return array_ops.transpose(image, [1, 0, 2])
        if ndims == 4:
            return array_ops.transpose(image, [0, 2, 1, 3])
        raise ValueError("'image' must have either 3 or 4 dimensions.")


transpose = transpose_image


def rot90(image: Any, k: Any = 1, name: str | None = None) -> Tensor:
    """``image`` rotated ``k`` quarter turns counter-clockwise.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.image.rot90([[[1], [2]], [[3], [4]]]))[:, :, 0].tolist()
    [[2, 4], [1, 3]]
    """
    with ops_lib.name_scope(name, "rot90", [image, k]):
        image = _assert_at_least_3d(ops_lib.convert_to_tensor(image, name="image"))
        ndims = image.shape.ndims
        if ndims not in (3, 4, None):
            raise ValueError("'image' must have either 3 or 4 dimensions.")
        h = 1 if ndims == 4 else 0  # the height axis; width is h + 1
        perm = [0, 2, 1, 3] if ndims == 4 else [1, 0, 2]
        turns = {
            1: lambda: array_ops.transpose(array_ops.reverse(image, [h + 1]), perm),
            2: lambda: array_ops.reverse(image, [h, h + 1]),
            3: lambda: array_ops.reverse(array_ops.transpose(image, perm), [h + 1]),
        }
        if isinstance(k, int):
            return turns[k % 4]() if k % 4 else image
        k = ops_lib.convert_to_tensor(k, dtype=dtypes.int32, name="k")
        k.shape.assert_has_rank(0)
        k = math_ops.floormod(k, 4)
        cases = [(math_ops.equal(k, n), fn) for n, fn in turns.items()]
        result = control_flow_ops.case(cases, default=lambda: image, exclusive=True)
        channels = image.shape[-1:] if ndims is not None else None
        if channels is not None:
            result.set_shape([None] * (ndims - 1) + channels.as_list())  # type: ignore[operator]
        return result


# --- crops and pads ------------------------------------------------------------------------------
def central_crop(image: Any, central_fraction: float) -> Tensor:
    """The central ``central_fraction`` (in (0, 1]) of ``image``'s height and width."""
    with ops_lib.name_scope(None, "central_crop", [image]):
        image = ops_lib.convert_to_tensor(image, name="image")
        if central_fraction <= 0.0 or central_fraction > 1.0:
            raise ValueError("central_fraction must be within (0, 1]")
        if central_fraction == 1.0:
            return image
        image = _assert_at_least_3d(image)
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError(
                f"`image` should either be a Tensor with rank = 3 or rank = 4. Had rank = {rank}."
            )
        h = rank - 3
        dims = _image_dimensions(image, rank)
        starts: list[Any] = []  # ints, or int32 tensors where the size is not static
        for d in dims[h : h + 2]:
            if ops_lib.is_tensor(d):
                d = math_ops.cast(d, dtypes.float64)
                starts.append(math_ops.cast((d - d * central_fraction) / 2, dtypes.int32))
            else:
                starts.append(int((float(d) - float(d) * central_fraction) / 2))
        sizes = [d - 2 * s for d, s in zip(dims[h : h + 2], starts)]
        begin = [0] * h + starts + [0]
        size = [-1] * h + sizes + [-1]
        cropped = array_ops.slice(image, _pack(begin), _pack(size))
        cropped.set_shape(_static(dims[:h] + sizes + dims[-1:]))
        return cropped


def crop_to_bounding_box(
    image: Any, offset_height: Any, offset_width: Any, target_height: Any, target_width: Any
) -> Tensor:
    """The [target_height, target_width] window of ``image`` at (offset_height, offset_width).

    >>> import nbflow as tf
    >>> tf.image.crop_to_bounding_box(tf.zeros([2, 5, 6, 3]), 1, 2, 3, 4).shape
    TensorShape([2, 3, 4, 3])
    """
    with ops_lib.name_scope(None, "crop_to_bounding_box", [image]):
        image = ops_lib.convert_to_tensor(image, name="image")
        batch, was_batch = _as_batch(image)
        batch = _assert_at_least_3d(batch)
        n, height, width, depth = _image_dimensions(batch, 4)
        checks = _assert(offset_width >= 0, "offset_width must be >= 0.")
        checks += _assert(offset_height >= 0, "offset_height must be >= 0.")
        checks += _assert(target_width > 0, "target_width must be > 0.")
        checks += _assert(target_height > 0, "target_height must be > 0.")
        checks += _assert(width >= target_width + offset_width, "width must be >= target + offset.")
        checks += _assert(
            height >= target_height + offset_height, "height must be >= target + offset."
        )
        batch = _with_dependencies(checks, batch)
        begin = _pack([0, offset_height, offset_width, 0])
        cropped = array_ops.slice(batch, begin, _pack([-1, target_height, target_width, -1]))
        cropped.set_shape(_static([n, target_height, target_width, depth]))
        return _unbatch(cropped, was_batch)


def pad_to_bounding_box(
    image: Any, offset_height: Any, offset_width: Any, target_height: Any, target_width: Any
) -> Tensor:
    """``image`` zero-padded to [target_height, target_width], placed at the offsets.

    >>> import nbflow as tf
    >>> tf.image.pad_to_bounding_box(tf.zeros([2, 3, 1]), 1, 1, 4, 5).shape
    TensorShape([4, 5, 1])
    """
    with ops_lib.name_scope(None, "pad_to_bounding_box", [image]):
        image = ops_lib.convert_to_tensor(image, name="image")
        batch, was_batch = _as_batch(image)
        batch = _assert_at_least_3d(batch)
        n, height, width, depth = _image_dimensions(batch, 4)
        after_width = target_width - offset_width - width
        after_height = target_height - offset_height - height
        checks = _assert(offset_height >= 0, "offset_height must be >= 0")
        checks += _assert(offset_width >= 0, "offset_width must be >= 0")
        checks += _assert(after_width >= 0, "width must be <= target - offset")
        checks += _assert(after_height >= 0, "height must be <= target - offset")
        batch = _with_dependencies(checks, batch)
        flat = [0, 0, offset_height, after_height, offset_width, after_width, 0, 0]
        if any(ops_lib.is_tensor(v) for v in flat):
            paddings: Any = array_ops.reshape(array_ops.stack(flat), [4, 2])
        else:
            paddings = [[int(a), int(b)] for a, b in zip(flat[::2], flat[1::2])]
        padded = array_ops.pad(batch, paddings)
        padded.set_shape(_static([n, target_height, target_width, depth]))
        return _unbatch(padded, was_batch)
