"""Window ops written over the window's taps: grayscale morphology (``dilation2d``,
``erosion2d``), ``max_pool_with_argmax``, and CTC's ``collapse_repeated``.

A 2-D window op visits, for each output pixel, ``KH x KW`` input taps. With the input padded
once (by the dtype's lowest value, which never wins a max), tap (dy, dx) for all output pixels
at once is one strided slice, ``x[:, dy*rh :: sh, dx*rw :: sw, :]`` cut to the output size.
Stacking the taps on a new leading axis turns the op into a ``reduce_max`` (its gradient goes
to the winning tap) or an ``argmax`` (which tap won, turned into TensorFlow's flat index
``((b * H + y) * W + x) * C + c``).

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> tf.nn.dilation2d(x, tf.zeros([2, 2, 1]), [1, 1, 1, 1], [1, 1, 1, 1], "VALID").shape
    TensorShape([1, 3, 3, 1])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Tensor
from nbflow.ops import array_ops, math_ops
from nbflow.ops.gather_nd_ops import scatter_nd
from nbflow.ops.sequence_ops import sequence_mask

__all__ = ["collapse_repeated", "dilation2d", "erosion2d", "max_pool_with_argmax"]  # tf.nn


def _pair(values: Any, name: str) -> tuple[int, int]:
    values = [int(v) for v in np.asarray(values).reshape(-1)]
    if len(values) == 4:
        if values[0] != 1 or values[3] != 1:
            raise ValueError(f"{name} must be 1 on the batch and depth dimensions, got {values}")
        return values[1], values[2]
    if len(values) == 2:
        return values[0], values[1]
    if len(values) == 1:
        return values[0], values[0]
    raise ValueError(f"{name} must have 1, 2 or 4 entries, got {values}")


def _lowest(dtype: dtypes.DType) -> Any:
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    return np.finfo(np_dtype).min if np_dtype.kind == "f" else np.iinfo(np_dtype).min


def _geometry(size: int, window: int, stride: int, rate: int, padding: str) -> tuple[int, int]:
    """(output size, padding before) of one spatial dimension, as TensorFlow computes them."""
    effective = (window - 1) * rate + 1
    if padding == "VALID":
        return (size - effective) // stride + 1, 0
    if padding == "SAME":
        out = -(-size // stride)
        return out, max((out - 1) * stride + effective - size, 0) // 2
    raise ValueError(f"padding must be SAME or VALID, got {padding!r}")


def _taps(
    x: Tensor,
    window: tuple[int, int],
    strides: tuple[int, int],
    rates: tuple[int, int],
    padding: str,
    pad_value: Any = None,
) -> tuple[list[Tensor], tuple[int, int], tuple[int, int]]:
    """The window's taps of NHWC ``x``, each [N, out_h, out_w, C]; output size; top/left pad."""
    _, h, w, _ = x.shape.as_list()
    if h is None or w is None:
        raise ValueError(f"window ops need known spatial sizes, got input shape {x.shape}")
    (out_h, top), (out_w, left) = (
        _geometry(size, k, s, r, padding.upper())
        for size, k, s, r in zip((h, w), window, strides, rates, strict=True)
    )
    bottom = max((out_h - 1) * strides[0] + (window[0] - 1) * rates[0] + 1 - h - top, 0)
    right = max((out_w - 1) * strides[1] + (window[1] - 1) * rates[1] + 1 - w - left, 0)
    padded = array_ops.pad(
        x,
        [[0, 0], [top, bottom], [left, right], [0, 0]],
        constant_values=_lowest(x.dtype.base_dtype) if pad_value is None else pad_value,
    )
    taps = []
    for dy in range(window[0]):
        for dx in range(window[1]):
            y0, x0 = dy * rates[0], dx * rates[1]
            taps.append(
                padded[
                    :,
                    y0 : y0 + (out_h - 1) * strides[0] + 1 : strides[0],
                    x0 : x0 + (out_w - 1) * strides[1] + 1 : strides[1],
                    :,
                ]
            )
    return taps, (out_h, out_w), (top, left)


def dilation2d(
    input: Any,
    filter: Any = None,
    strides: Any = None,
    rates: Any = None,  # noqa: A002
    padding: str | None = None,
    name: str | None = None,
    filters: Any = None,
    dilations: Any = None,
    data_format: str = "NHWC",
) -> Tensor:
    """Grayscale dilation: ``out[b, y, x, c] = max over (dy, dx) of
    input[b, y*sh + dy*rh, x*sw + dx*rw, c] + filter[dy, dx, c]`` (padded taps never win)."""
    filter = filters if filter is None else filter
    rates = dilations if rates is None else rates
    if filter is None or strides is None or rates is None or padding is None:
        raise ValueError("dilation2d needs filter, strides, rates and padding")
    if data_format != "NHWC":
        raise ValueError(f'dilation2d supports data_format="NHWC" only, got {data_format!r}')
    with ops_lib.name_scope(name, "dilation2d", [input, filter]):
        x = ops_lib.convert_to_tensor(input)
        f = ops_lib.convert_to_tensor(filter, dtype=x.dtype.base_dtype)
        kh, kw, _ = f.shape.with_rank(3).as_list()
        if kh is None or kw is None:
            raise ValueError(f"dilation2d needs a filter of known height and width, got {f.shape}")
        taps, _, _ = _taps(x, (kh, kw), _pair(strides, "strides"), _pair(rates, "rates"), padding)
        shifted = [tap + f[dy, dx] for (dy, dx), tap in zip(np.ndindex(kh, kw), taps)]
        return math_ops.reduce_max(array_ops.stack(shifted), axis=0)


def erosion2d(
    value: Any, kernel: Any, strides: Any, rates: Any, padding: str, name: str | None = None
) -> Tensor:
    """Grayscale erosion: ``-dilation2d(-value, kernel reversed in both spatial axes)``, i.e.
    the min over the window of ``value - kernel``."""
    with ops_lib.name_scope(name, "erosion2d", [value, kernel]):
        value = ops_lib.convert_to_tensor(value)
        kernel = ops_lib.convert_to_tensor(kernel, dtype=value.dtype.base_dtype)
        flipped = kernel[::-1, ::-1, :]
        return math_ops.negative(
            dilation2d(math_ops.negative(value), flipped, strides, rates, padding)
        )


def max_pool_with_argmax(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",  # noqa: A002
    Targmax: Any = None,
    name: str | None = None,
    output_dtype: Any = None,  # noqa: N803
    include_batch_in_index: bool = False,
) -> tuple[Tensor, Tensor]:
    """(max_pool output, flat index of each maximum): ``(y * W + x) * C + c``, plus
    ``b * H * W * C`` when ``include_batch_in_index``; ties go to the first tap in row-major
    window order, as TensorFlow's CPU kernel."""
    if data_format != "NHWC":
        raise ValueError(
            f'max_pool_with_argmax supports data_format="NHWC" only, got {data_format!r}'
        )
    index_dtype = dtypes.as_dtype(output_dtype or Targmax or dtypes.int64)
    with ops_lib.name_scope(name, "MaxPoolWithArgmax", [input]):
        x = ops_lib.convert_to_tensor(input)
        _, h, w, c = x.shape.as_list()
        window, stride = _pair(ksize, "ksize"), _pair(strides, "strides")
        taps, (out_h, out_w), (top, left) = _taps(x, window, stride, (1, 1), padding)
        if h is None or w is None or c is None:  # _taps has checked H and W
            raise ValueError(f"max_pool_with_argmax needs known channels, got {x.shape}")
        stacked = array_ops.stack(taps)
        values = math_ops.reduce_max(stacked, axis=0)
        tap = math_ops.argmax(stacked, axis=0, output_type=dtypes.int64)
        dy, dx = tap // window[1], math_ops.floormod(tap, window[1])
        rows = (np.arange(out_h) * stride[0] - top).reshape(1, out_h, 1, 1)
        cols = (np.arange(out_w) * stride[1] - left).reshape(1, 1, out_w, 1)
        channel = np.arange(c).reshape(1, 1, 1, c)
        index = ((dy + rows) * w + (dx + cols)) * c + channel
        if include_batch_in_index:
            batch = math_ops.range(array_ops.shape(x, out_type=dtypes.int64)[0])
            index = index + array_ops.reshape(batch, [-1, 1, 1, 1]) * (h * w * c)
        return values, math_ops.cast(index, index_dtype)


def collapse_repeated(
    labels: Any, seq_length: Any, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """Each run of a repeated label merged into one, per row of [batch, max_len] ``labels``
    (only the first ``seq_length`` entries count): (collapsed labels left-aligned and
    zero-padded to the longest new row, new lengths)."""
    with ops_lib.name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        labels = ops_lib.convert_to_tensor(labels)
        seq_length = ops_lib.convert_to_tensor(seq_length)
        max_len = array_ops.shape(labels)[1]
        changed = math_ops.not_equal(labels[:, 1:], labels[:, :-1])
        first = array_ops.ones_like(labels[:, :1], dtype=dtypes.int32) > 0
        keep = math_ops.logical_and(
            array_ops.concat([first, changed], axis=1), sequence_mask(seq_length, max_len)
        )
        new_length = math_ops.reduce_sum(math_ops.cast(keep, dtypes.int32), axis=1)
        new_max = math_ops.reduce_max(new_length)
        slots = array_ops.reshape(sequence_mask(new_length, max_len), [-1])
        positions = array_ops.boolean_mask(math_ops.range(array_ops.size(slots)), slots)
        kept = array_ops.boolean_mask(
            array_ops.reshape(labels, [-1]), array_ops.reshape(keep, [-1])
        )
        flat = scatter_nd(array_ops.expand_dims(positions, 1), kept, array_ops.shape(slots))
        collapsed = array_ops.reshape(flat, array_ops.shape(labels))[:, :new_max]
        return collapsed, math_ops.cast(new_length, seq_length.dtype.base_dtype)
