"""Colour spaces of ``tf.image``: RGBToHSV, HSVToRGB, AdjustHue and AdjustSaturation.

The four kernels follow TensorFlow 1.15's element-wise formulas, vectorised over pixels (the
last axis holds the three channels). Hue, saturation and value are in [0, 1]; hue 0 is red,
1/3 green, 2/3 blue.

``AdjustHue`` never goes through HSV: TensorFlow sorts each pixel's channels into max, mid and
min, turns their order into a hue sector (0..5) plus the mid channel's place between min and
max, rotates that hue by ``6 * delta`` sectors and rebuilds the pixel from the same max and min.
``AdjustSaturation`` converts to HSV with TensorFlow's float32 arithmetic, scales and clips the
saturation, and converts back. Both work on float images; the builders ``adjust_hue`` and
``adjust_saturation`` convert other dtypes to float32 and back. As in TensorFlow 1.15, none of
the four ops has a gradient. ``convert_image_dtype`` (rescaling between integer and float
images) lives here too, below every image module that converts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import as_dimension
from nbflow.ops import array_ops, math_ops, random_ops
from nbflow.ops.constant_ops import _create1

Tensor = ops_lib.Tensor

_RGB = np.array([[0.2, 0.5, 0.9], [0.7, 0.7, 0.1], [0.3, 0.3, 0.3], [0.0, 0.0, 0.0]])


def _rgb_spec(images: TensorSpec, min_rank: int, types: tuple[dtypes.DType, ...]) -> TensorSpec:
    shape = images.shape.with_rank_at_least(min_rank)
    channels = as_dimension(shape[-1])
    if not channels.is_compatible_with(3):
        raise ValueError(f"Dimension must be 3 but is {channels.value} (images: {shape})")
    if images.dtype.base_dtype not in types:
        names = ", ".join(t.name for t in types)
        raise TypeError(f"images must be one of {names}, got {images.dtype.name}")
    return TensorSpec(shape, images.dtype.base_dtype)


def _check_channels(images: Any, min_rank: int) -> None:
    if images.ndim < min_rank:
        raise ValueError(f"input must be at least {min_rank}-D, got shape {list(images.shape)}")
    if images.shape[-1] != 3:
        raise ValueError(f"input must have 3 channels but has {images.shape[-1]} channels")


def _pick(xp: Any, levels: Any, table: list[list[int]], category: Any) -> Any:
    """Pixels whose channel ``c`` is ``levels[..., table[c][category]]``."""
    index = xp.asarray(np.array(table).T)[category]  # [..., 3]: which level each channel takes
    return xp.take_along_axis(levels, index, axis=-1)


# --- RGB <-> HSV ---------------------------------------------------------------------------------
_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)


class RGBToHSV(OpDef):
    """RGB pixels [..., 3] as hue, saturation, value [..., 3]."""

    inputs = ("images",)
    differentiable = False  # TensorFlow 1.15 registers no gradient
    samples = [Sample(images=_RGB), Sample(input_dtype=np.float32, images=(2, 4, 3))]

    def infer(self, images: TensorSpec) -> TensorSpec:
        return _rgb_spec(images, 1, _FLOATS)

    def compute(self, ctx: KernelContext, images: Any) -> Any:
        _check_channels(images, 1)
        xp, t = ctx.xp, images.dtype.type
        r, g, b = images[..., 0], images[..., 1], images[..., 2]
        value = images.max(axis=-1)
        chroma = value - images.min(axis=-1)
        saturation = xp.where(value > 0, chroma / xp.where(value > 0, value, t(1)), t(0))
        norm = t(1) / xp.where(chroma > 0, chroma, t(1)) * (t(1) / t(6))
        hue = xp.where(
            r == value,
            norm * (g - b),
            xp.where(g == value, norm * (b - r) + t(2) / t(6), norm * (r - g) + t(4) / t(6)),
        )
        hue = xp.where(chroma > 0, hue, t(0))
        hue = xp.where(hue < 0, hue + t(1), hue)
        return xp.stack([hue, saturation, value], axis=-1).astype(images.dtype, copy=False)


class HSVToRGB(OpDef):
    """Hue, saturation, value pixels [..., 3] as RGB [..., 3]."""

    inputs = ("images",)
    differentiable = False  # TensorFlow 1.15 registers no gradient
    samples = [Sample(images=_RGB), Sample(input_dtype=np.float32, images=(2, 4, 3))]

    def infer(self, images: TensorSpec) -> TensorSpec:
        return _rgb_spec(images, 1, _FLOATS)

    def compute(self, ctx: KernelContext, images: Any) -> Any:
        _check_channels(images, 1)
        xp, t = ctx.xp, images.dtype.type
        h, s, v = images[..., 0], images[..., 1], images[..., 2]
        dh = h * t(6)
        # Each channel's share as a piecewise-linear function of the hue sector dh.
        dr = xp.clip(xp.abs(dh - t(3)) - t(1), t(0), t(1))
        dg = xp.clip(-xp.abs(dh - t(2)) + t(2), t(0), t(1))
        db = xp.clip(-xp.abs(dh - t(4)) + t(2), t(0), t(1))
        one_s = -s + t(1)
        rgb = [(one_s + s * d) * v for d in (dr, dg, db)]
        return xp.stack(rgb, axis=-1).astype(images.dtype, copy=False)


# --- hue and saturation --------------------------------------------------------------------------
_HALF_OR_FLOAT = (dtypes.float16, dtypes.float32)
# Sector k of the hue circle: which channel holds the max, mid and min level (0, 1, 2).
_SECTOR_LEVELS = [[0, 1, 2, 2, 1, 0], [1, 0, 0, 1, 2, 2], [2, 2, 1, 0, 0, 1]]


def _scalar_spec(spec: TensorSpec, name: str) -> None:
    spec.shape.with_rank(0)
    if spec.dtype.base_dtype is not dtypes.float32:
        raise TypeError(f"{name} must be float32, got {spec.dtype.name}")


class AdjustHue(OpDef):
    """RGB images [..., 3] with their hue turned by ``delta`` (a fraction of the circle)."""

    inputs = ("images", "delta")
    differentiable = False  # TensorFlow 1.15 registers no gradient
    samples = [
        Sample(input_dtype=np.float32, images=(2, 3, 3), delta=np.float32(0.2)),
        Sample(images=_RGB[None].astype(np.float32), delta=np.float32(-0.7)),
    ]

    def infer(self, images: TensorSpec, delta: TensorSpec) -> TensorSpec:
        _scalar_spec(delta, "delta")
        return _rgb_spec(images, 3, _HALF_OR_FLOAT)

    def compute(self, ctx: KernelContext, images: Any, delta: Any) -> Any:
        _check_channels(images, 3)
        xp, f = ctx.xp, np.float32
        rgb = images.astype(f, copy=False)
        r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
        # TensorFlow's rgb_to_hv_range: the sector from the channels' order (ties either way).
        sector = xp.where(
            r < g,
            xp.where(b < r, 1, xp.where(b > g, 3, 2)),
            xp.where(b < g, 0, xp.where(b > r, 4, 5)),
        )
        order = [[0, 1, 1, 2, 2, 0], [1, 0, 2, 1, 0, 2], [2, 2, 0, 0, 1, 1]]  # max, mid, min
        top, mid, low = (_pick(xp, rgb, [row], sector)[..., 0] for row in order)
        spread = top - low
        ratio = (mid - low) / xp.where(spread != 0, spread, f(1))
        rising = sector % 2 == 0
        hue = xp.where(spread != 0, sector.astype(f) + xp.where(rising, ratio, f(1) - ratio), f(0))
        hue = hue + f(float(delta)) * f(6)
        hue = hue - f(6) * xp.floor(hue / f(6))  # into [0, 6), as TensorFlow's while loops
        hue = xp.where(hue < 0, hue + f(6), hue)
        hue = xp.where(hue >= 6, hue - f(6), hue)
        # hv_range_to_rgb: rebuild the pixel from the same max and min.
        sector = hue.astype(np.int64)
        ratio = hue - sector
        ratio = xp.where(sector % 2 == 0, ratio, f(1) - ratio)
        mid = low + ratio * spread
        levels = xp.stack([top, mid, low], axis=-1)
        out = _pick(xp, levels, _SECTOR_LEVELS, xp.minimum(sector, 5))
        return out.astype(images.dtype, copy=False)


def _hsv_float32(xp: Any, r: Any, g: Any, b: Any) -> tuple[Any, Any, Any]:
    """TensorFlow's float32 ``internal::rgb_to_hsv`` of AdjustSaturation (not RGBToHSV's)."""
    f = np.float32
    value = xp.maximum(r, xp.maximum(g, b))
    spread = value - xp.minimum(r, xp.minimum(g, b))
    saturation = xp.where(value > 0, spread / xp.where(value > 0, value, f(1)), f(0))
    norm = f(1) / (f(6) * xp.where(spread > 0, spread, f(1)))
    # ``+ 2.0 / 6.0`` is a double in TensorFlow's kernel: add in float64, store as float32.
    hue = xp.where(
        r == value,
        norm * (g - b),
        xp.where(
            g == value,
            ((norm * (b - r)).astype(np.float64) + 2.0 / 6.0).astype(f),
            ((norm * (r - g)).astype(np.float64) + 4.0 / 6.0).astype(f),
        ),
    )
    hue = xp.where(spread > 0, hue, f(0))
    return xp.where(hue < 0, hue + f(1), hue), saturation, value


def _rgb_float32(xp: Any, h: Any, s: Any, v: Any) -> Any:
    """TensorFlow's float32 ``internal::hsv_to_rgb`` of AdjustSaturation."""
    f = np.float32
    chroma = s * v
    dh = h * f(6)
    sector = dh.astype(np.int64)
    within = xp.where(dh <= 0, f(2), dh - xp.where(dh > 4, f(4), xp.where(dh > 2, f(2), f(0))))
    x = chroma * (f(1) - xp.abs(within - f(1)))
    levels = xp.stack([chroma, x, xp.zeros_like(x)], axis=-1)
    # Sector 6 (hue rounded up to 1) picks zeros for every channel, as the kernel's default.
    table = [row + [2] for row in _SECTOR_LEVELS]
    return _pick(xp, levels, table, xp.clip(sector, 0, 6)) + (v - chroma)[..., None]


class AdjustSaturation(OpDef):
    """RGB images [..., 3] with their HSV saturation scaled by ``scale`` (clipped to [0, 1])."""

    inputs = ("images", "scale")
    differentiable = False  # TensorFlow 1.15 registers no gradient
    samples = [
        Sample(input_dtype=np.float32, images=(2, 3, 3), scale=np.float32(1.7)),
        Sample(images=_RGB[None].astype(np.float32), scale=np.float32(0.4)),
    ]

    def infer(self, images: TensorSpec, scale: TensorSpec) -> TensorSpec:
        _scalar_spec(scale, "scale")
        return _rgb_spec(images, 3, _HALF_OR_FLOAT)

    def compute(self, ctx: KernelContext, images: Any, scale: Any) -> Any:
        _check_channels(images, 3)
        xp = ctx.xp
        rgb = images.astype(np.float32, copy=False)
        h, s, v = _hsv_float32(xp, rgb[..., 0], rgb[..., 1], rgb[..., 2])
        s = xp.minimum(np.float32(1), xp.maximum(np.float32(0), s * np.float32(float(scale))))
        return _rgb_float32(xp, h, s, v).astype(images.dtype, copy=False)


# --- builders ------------------------------------------------------------------------------------
def rgb_to_hsv(images: Any, name: str | None = None) -> Tensor:
    """RGB ``images`` [..., 3] (float, in [0, 1]) as hue, saturation and value.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.image.rgb_to_hsv([0.0, 0.5, 1.0])).tolist()
    [0.5833333730697632, 1.0, 1.0]
    """
    images = ops_lib.convert_to_tensor(images, name="images")
    return _create1("RGBToHSV", [images], name=name)


def hsv_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """Hue, saturation, value ``images`` [..., 3] (float, in [0, 1]) as RGB.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.image.hsv_to_rgb([0.5, 1.0, 1.0])).tolist()
    [0.0, 1.0, 1.0]
    """
    images = ops_lib.convert_to_tensor(images, name="images")
    return _create1("HSVToRGB", [images], name=name)


def _adjust_in_float(op_type: str, image: Any, factor: Any, scope: str, name: str | None):
    """``op_type`` on ``image`` in float32 (float16 kept), converted back to its dtype."""
    with ops_lib.name_scope(name, scope, [image, factor]):
        image = ops_lib.convert_to_tensor(image, name="image")
        dtype = image.dtype.base_dtype
        flt = image if dtype in _HALF_OR_FLOAT else convert_image_dtype(image, dtypes.float32)
        factor = ops_lib.convert_to_tensor(factor, dtype=dtypes.float32)
        return convert_image_dtype(_create1(op_type, [flt, factor]), dtype)


def adjust_hue(image: Any, delta: Any, name: str | None = None) -> Tensor:
    """RGB ``image`` with its hue rotated by ``delta`` (in [-1, 1]; 1 is the full circle).

    >>> import nbflow as tf
    >>> tf.Session().run(tf.image.adjust_hue([[[1.0, 0.0, 0.0]]], 1 / 3))[0, 0].tolist()
    [0.0, 1.0, 0.0]
    """
    return _adjust_in_float("AdjustHue", image, delta, "adjust_hue", name)


def adjust_saturation(image: Any, saturation_factor: Any, name: str | None = None) -> Tensor:
    """RGB ``image`` with its HSV saturation multiplied by ``saturation_factor``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.image.adjust_saturation([[[1.0, 0.5, 0.5]]], 0.0))[0, 0].tolist()
    [1.0, 1.0, 1.0]
    """
    return _adjust_in_float("AdjustSaturation", image, saturation_factor, "adjust_saturation", name)


def random_hue(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """``adjust_hue`` by a delta drawn uniformly from [-max_delta, max_delta); max_delta <= 0.5."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_hue(image, delta)


def random_saturation(image: Any, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """``adjust_saturation`` by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    factor = random_ops.random_uniform([], lower, upper, seed=seed)
    return adjust_saturation(image, factor)


# --- dtype conversion ----------------------------------------------------------------------------
def _saturate_cast(value: Tensor, dtype: dtypes.DType, name: str | None = None) -> Tensor:
    """``value`` clamped to ``dtype``'s range, then cast (TensorFlow's ``saturate_cast``)."""
    if value.dtype.min < dtype.min:
        value = math_ops.maximum(value, ops_lib.convert_to_tensor(dtype.min, dtype=value.dtype))
    if value.dtype.max > dtype.max:
        value = math_ops.minimum(value, ops_lib.convert_to_tensor(dtype.max, dtype=value.dtype))
    return math_ops.cast(value, dtype, name=name)


def convert_image_dtype(
    image: Any, dtype: Any, saturate: bool = False, name: str | None = None
) -> Tensor:
    """``image`` in ``dtype``, rescaled: floats span [0, 1), integers [0, dtype.max].

    >>> import nbflow as tf
    >>> tf.Session().run(tf.image.convert_image_dtype(tf.constant([0, 255], tf.uint8), tf.float32))
    array([0., 1.], dtype=float32)
    """
    image = ops_lib.convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype).base_dtype
    if not dtype.is_floating and not dtype.is_integer:
        raise AttributeError("dtype must be either floating point or integer")
    source = image.dtype.base_dtype
    if dtype == source:
        return array_ops.identity(image, name=name)
    cast = _saturate_cast if saturate else math_ops.cast
    with ops_lib.name_scope(name, "convert_image", [image]) as scope:
        if source.is_integer and dtype.is_integer:
            scale_in, scale_out = int(source.max), int(dtype.max)
            if scale_in > scale_out:  # scale first: in.max lands just below out.max + 1
                scaled = math_ops.floordiv(image, (scale_in + 1) // (scale_out + 1))
                return cast(scaled, dtype, name=scope)
            return math_ops.multiply(cast(image, dtype), (scale_out + 1) // (scale_in + 1), scope)
        if source.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype, name=scope)
        if source.is_integer:  # to float: cast, then scale; nothing can saturate
            return math_ops.multiply(math_ops.cast(image, dtype), 1.0 / source.max, name=scope)
        scaled = math_ops.multiply(image, dtype.max + 0.5)  # + 0.5: the cast truncates
        return cast(scaled, dtype, name=scope)
