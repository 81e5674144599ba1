"""``tf.image``'s colour spaces YIQ/YUV, image gradients and Sobel edges, and the quality
measures PSNR and SSIM, composed from slicing, matrix products and reductions.

A colour conversion is a 3x3 matrix applied to the last axis (a matmul of the pixels). Filters are
written as weighted sums of shifted slices (one slice per filter tap), so gradients come from
slicing and their cost is ``taps`` elementwise ops; SSIM's 11x11 Gaussian is separable and
costs 22. SSIM follows Wang et al. 2004 as TensorFlow computes it: VALID Gaussian windows,
``c1 = (k1 * max_val)^2``, ``c2 = (k2 * max_val)^2``, averaged over space and channels.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> noisy = tf.image.psnr(tf.zeros([4, 4, 1]), tf.fill([4, 4, 1], 0.1), 1.0)
    >>> with tf.Session() as s: print(s.run(noisy))
    20.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Tensor
from nbflow.ops import array_ops, math_ops
from nbflow.ops.linalg_ops import matmul

__all__ = [
    "image_gradients",
    "psnr",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "sobel_edges",
    "ssim",
    "yiq_to_rgb",
    "yuv_to_rgb",
]

# Columns are the output channels: yiq = rgb @ _RGB_TO_YIQ.
_RGB_TO_YIQ = [
    [0.299, 0.59590059, 0.2115],
    [0.587, -0.27455667, -0.52273617],
    [0.114, -0.32134392, 0.31119955],
]
_RGB_TO_YUV = [
    [0.299, -0.14714119, 0.61497538],
    [0.587, -0.28886916, -0.51496512],
    [0.114, 0.43601035, -0.10001026],
]


def _colour(images: Any, matrix: np.ndarray, name: str) -> Tensor:
    with ops_lib.name_scope(None, name, [images]):
        images = ops_lib.convert_to_tensor(images)
        kernel = array_ops.constant(matrix, dtype=images.dtype.base_dtype)
        flat = matmul(array_ops.reshape(images, [-1, 3]), kernel)
        return array_ops.reshape(flat, array_ops.shape(images))


def rgb_to_yiq(images: Any) -> Tensor:
    """RGB to YIQ (NTSC): luma Y and the chroma pair I, Q; images in [0, 1], last axis RGB."""
    return _colour(images, np.array(_RGB_TO_YIQ), "rgb_to_yiq")


def yiq_to_rgb(images: Any) -> Tensor:
    """The inverse of ``rgb_to_yiq``."""
    return _colour(images, np.linalg.inv(np.array(_RGB_TO_YIQ)), "yiq_to_rgb")


def rgb_to_yuv(images: Any) -> Tensor:
    """RGB to YUV (BT.601 analogue): luma Y and chroma U, V; last axis RGB."""
    return _colour(images, np.array(_RGB_TO_YUV), "rgb_to_yuv")


def yuv_to_rgb(images: Any) -> Tensor:
    """The inverse of ``rgb_to_yuv``."""
    return _colour(images, np.linalg.inv(np.array(_RGB_TO_YUV)), "yuv_to_rgb")


def image_gradients(image: Any) -> tuple[Tensor, Tensor]:
    """(dy, dx) of NHWC ``image``: forward differences, zero in the last row / column."""
    with ops_lib.name_scope(None, "image_gradients", [image]):
        image = ops_lib.convert_to_tensor(image)
        image.shape.with_rank(4)
        dy = image[:, 1:, :, :] - image[:, :-1, :, :]
        dx = image[:, :, 1:, :] - image[:, :, :-1, :]
        dy = array_ops.pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]])
        dx = array_ops.pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]])
        return dy, dx


def _correlate(image: Tensor, kernel: np.ndarray) -> Tensor:
    """VALID 2-D correlation of every channel of NHWC ``image`` with ``kernel`` [KH, KW]."""
    kh, kw = kernel.shape
    height, width = (array_ops.shape(image)[i] for i in (1, 2))
    total = None
    for dy in range(kh):
        for dx in range(kw):
            if kernel[dy, dx] == 0:
                continue
            tap = image[:, dy : height - kh + 1 + dy, dx : width - kw + 1 + dx, :]
            term = tap * float(kernel[dy, dx])
            total = term if total is None else total + term
    assert total is not None, "kernel of zeros"
    return total


def sobel_edges(image: Any) -> Tensor:
    """Sobel responses [N, H, W, C, 2] (d/dy, d/dx) of NHWC ``image``, reflect-padded."""
    with ops_lib.name_scope(None, "sobel_edges", [image]):
        image = ops_lib.convert_to_tensor(image)
        image.shape.with_rank(4)
        padded = array_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
        ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
        return array_ops.stack([_correlate(padded, ky), _correlate(padded, ky.T)], axis=-1)


def _as_float(images: Any) -> Tensor:
    images = ops_lib.convert_to_tensor(images)
    if images.dtype.is_floating:
        return images
    return math_ops.cast(images, dtypes.float32)


def psnr(a: Any, b: Any, max_val: Any, name: str | None = None) -> Tensor:
    """Peak signal-to-noise ratio in dB of images ``a`` and ``b`` (last three axes H, W, C):
    ``10 * log10(max_val^2 / mse)``."""
    with ops_lib.name_scope(name, "PSNR", [a, b]):
        a, b = _as_float(a), _as_float(b)
        max_val = math_ops.cast(max_val, a.dtype.base_dtype)
        mse = math_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        ten = 10 / math.log(10)
        return 2 * ten * math_ops.log(max_val) - ten * math_ops.log(mse)


def _gaussian(size: int, sigma: float) -> np.ndarray:
    coords = np.arange(size, dtype=np.float64) - (size - 1) / 2
    g = np.exp(-(coords**2) / (2 * sigma**2))
    return g / g.sum()


def ssim(
    img1: Any,
    img2: Any,
    max_val: Any,
    filter_size: int = 11,
    filter_sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
) -> Tensor:
    """Structural similarity of images (..., H, W, C), one value per image."""
    with ops_lib.name_scope(None, "SSIM", [img1, img2]):
        x, y = _as_float(img1), _as_float(img2)
        dtype = x.dtype.base_dtype
        max_val = math_ops.cast(max_val, dtype)
        rank = x.shape.ndims
        if rank is None or rank < 3:
            raise ValueError(f"ssim needs images of rank >= 3, got shape {x.shape}")
        batch_shape = array_ops.shape(x)[:-3]
        flat = array_ops.concat([[-1], array_ops.shape(x)[-3:]], 0)
        x, y = array_ops.reshape(x, flat), array_ops.reshape(y, flat)
        g = _gaussian(filter_size, filter_sigma)

        def blur(t: Tensor) -> Tensor:
            return _correlate(_correlate(t, g.reshape(-1, 1)), g.reshape(1, -1))

        c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
        mu_x, mu_y = blur(x), blur(y)
        luminance = (2 * mu_x * mu_y + c1) / (mu_x * mu_x + mu_y * mu_y + c1)
        cross = blur(x * y) - mu_x * mu_y
        var_sum = blur(x * x) + blur(y * y) - mu_x * mu_x - mu_y * mu_y
        contrast_structure = (2 * cross + c2) / (var_sum + c2)
        per_image = math_ops.reduce_mean(luminance * contrast_structure, [-3, -2, -1])
        return array_ops.reshape(per_image, batch_shape)
