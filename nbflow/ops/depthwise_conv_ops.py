"""Depthwise convolution, with its backward passes as ops of their own (as in TensorFlow).

A depthwise convolution filters each input channel on its own: the filter is [KH, KW, C, M]
and output channel ``c * M + m`` is input channel ``c`` correlated with ``filter[:, :, c, m]``.
No product mixes channels, so im2col + BLAS does not fit; the kernels instead loop over the
filter's KH*KW taps (never over pixels), as ``pooling_ops`` does: each tap is one strided
[N, OH, OW, C] view of the padded input (``conv_ops._taps``), multiplied by that tap's [C, M]
weights with broadcasting and added up. The filter gradient sums each tap's view times the
output gradient over the pixels; the input gradient adds each tap's share of the output
gradient back at the pixels that tap read (col2im, one strided add per tap). Kernels work in
NHWC; NCHW is transposed on the way in and out. Padding, strides and dilations follow
``conv_ops._Geometry``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import Dimension
from nbflow.ops.conv_ops import (
    _create,
    _crop,
    _from_nhwc,
    _Geometry,
    _infer_spatial,
    _known_shape,
    _nhwc_dims,
    _nhwc_sizes,
    _pad,
    _shape_in_format,
    _spatial,
    _taps,
    _to_nhwc,
    shape_tensor,
)

Tensor = ops_lib.Tensor


def _geometry(x_nhwc_shape, filter_shape, strides, dilations, padding, data_format) -> _Geometry:
    _, h, w, _ = x_nhwc_shape
    kh, kw = int(filter_shape[0]), int(filter_shape[1])
    return _Geometry.of(
        h, w, kh, kw, _spatial(strides, data_format), _spatial(dilations, data_format), padding
    )


def _depthwise_forward(x: Any, f: Any, g: _Geometry) -> Any:
    """[N, OH, OW, C*M]: each tap's [N, OH, OW, C, 1] view times its [C, M] weights, summed."""
    n, c, m = x.shape[0], x.shape[3], f.shape[3]
    padded = _pad(x, g)
    out = np.zeros((n, g.oh, g.ow, c, m), dtype=np.result_type(x, f))
    for i, j, window in _taps(g):
        out += padded[window][..., None] * f[i, j]
    return out.reshape(n, g.oh, g.ow, c * m)


def _check_out_backprop(dy: Any, g: _Geometry, shape: tuple[int, ...]) -> None:
    if dy.shape[1:3] != (g.oh, g.ow):
        raise ValueError(
            f"out_backprop is {dy.shape[1]}x{dy.shape[2]} but a depthwise convolution of an "
            f"input of size {list(shape)} gives {g.oh}x{g.ow}"
        )


def _depthwise_input_grad(dy: Any, f: Any, g: _Geometry, shape: tuple[int, ...]) -> Any:
    """Each tap's ``sum_m dy[..., c, m] * f[i, j, c, m]`` added back where that tap read."""
    n, h, w, c = shape
    _check_out_backprop(dy, g, shape)
    m = f.shape[3]
    dy5 = dy.reshape(n, g.oh, g.ow, c, m)
    out = np.zeros((n, g.hp, g.wp, c), dtype=np.result_type(dy, f))
    for i, j, window in _taps(g):
        out[window] += np.einsum("nhwcm,cm->nhwc", dy5, f[i, j])
    return _crop(out, g, h, w)


def _depthwise_filter_grad(x: Any, dy: Any, g: _Geometry, filter_shape: tuple[int, ...]) -> Any:
    """Each tap's ``sum over pixels of x_view[..., c] * dy[..., c, m]``."""
    kh, kw, c, m = filter_shape
    _check_out_backprop(dy, g, x.shape)
    padded = _pad(x, g)
    rows = dy.reshape(-1, c, m)
    grad = np.empty((kh, kw, c, m), dtype=np.result_type(x, dy))
    for i, j, window in _taps(g):
        grad[i, j] = np.einsum("pc,pcm->cm", padded[window].reshape(-1, c), rows)
    return grad


class _DepthwiseOp(OpDef):
    """Base of DepthwiseConv2dNative and its two backward ops: their TensorFlow attrs."""

    abstract = True
    attrs = {
        "strides": REQUIRED,
        "padding": REQUIRED,
        "data_format": "NHWC",
        "dilations": [1, 1, 1, 1],
    }
    cost = "expensive"


def _attrs_of(op: Any) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in ("strides", "padding", "data_format", "dilations")}


class DepthwiseConv2dNative(_DepthwiseOp):
    """Each channel of ``input`` correlated with its own ``filter[:, :, c, :]`` [KH, KW, C, M]:
    C*M output channels, ``c * M + m`` from input channel ``c``."""

    inputs = ("input", "filter")
    type_attrs = {"T": 0}
    samples = [
        Sample(input=(2, 5, 5, 3), filter=(3, 3, 3, 2), strides=[1, 1, 1, 1], padding="SAME"),
        Sample(input=(1, 6, 7, 2), filter=(2, 3, 2, 1), strides=[1, 2, 2, 1], padding="VALID"),
        Sample(
            input=(1, 7, 6, 2),
            filter=(2, 2, 2, 3),
            strides=[1, 1, 1, 1],
            padding="SAME",
            dilations=[1, 2, 2, 1],
        ),
        Sample(
            input=(1, 2, 5, 4),
            filter=(3, 2, 2, 2),
            strides=[1, 1, 2, 1],
            padding="SAME",
            data_format="NCHW",
        ),
    ]

    def infer(
        self, input: TensorSpec, filter: TensorSpec, strides, padding, data_format, dilations
    ) -> TensorSpec:
        if input.dtype.base_dtype is not filter.dtype.base_dtype:
            raise TypeError(
                f"Input 'filter' of 'DepthwiseConv2dNative' Op has type "
                f"{filter.dtype.base_dtype.name} that does not match type "
                f"{input.dtype.base_dtype.name} of argument 'input'"
            )
        n, h, w, c = _nhwc_dims(input.shape, data_format)
        fd = filter.shape.with_rank(4).dims
        if fd is None:
            fd = [Dimension(None)] * 4
        if c.value is not None and fd[2].value is not None and c.value != fd[2].value:
            raise ValueError(f"input depth {c.value} must equal the filter's in_channels {fd[2]}")
        sh, sw = _spatial(strides, data_format)
        dh, dw = _spatial(dilations, data_format)
        oh = _infer_spatial(h, fd[0].value, sh, dh, padding)
        ow = _infer_spatial(w, fd[1].value, sw, dw, padding)
        depth = c.value if c.value is not None else fd[2].value
        out_c = None if depth is None or fd[3].value is None else depth * fd[3].value
        return TensorSpec(_shape_in_format([n, oh, ow, out_c], data_format), input.dtype.base_dtype)

    def compute(
        self, ctx: KernelContext, input, filter, strides, padding, data_format, dilations
    ) -> Any:
        x = _to_nhwc(input, data_format)
        if x.shape[3] != filter.shape[2]:
            raise ValueError(
                f"input depth {x.shape[3]} must equal the filter's in_channels {filter.shape[2]}"
            )
        g = _geometry(x.shape, filter.shape, strides, dilations, padding, data_format)
        return _from_nhwc(_depthwise_forward(x, filter, g), data_format)

    def gradient(self, op: Any, grad: Tensor) -> list[Any]:
        x, f = op.inputs
        attrs = _attrs_of(op)
        return [
            _create("DepthwiseConv2dNativeBackpropInput", [shape_tensor(x), f, grad], attrs),
            _create("DepthwiseConv2dNativeBackpropFilter", [x, shape_tensor(f), grad], attrs),
        ]


class DepthwiseConv2dNativeBackpropInput(_DepthwiseOp):
    """The gradient of DepthwiseConv2dNative with respect to its input."""

    inputs = ("input_sizes", "filter", "out_backprop")
    samples = [
        Sample(
            input_sizes=np.array([2, 5, 5, 3], np.int32),
            filter=(3, 3, 3, 2),
            out_backprop=(2, 5, 5, 6),
            strides=[1, 1, 1, 1],
            padding="SAME",
        ),
        Sample(
            input_sizes=np.array([1, 7, 7, 2], np.int32),
            filter=(2, 3, 2, 2),
            out_backprop=(1, 3, 3, 4),
            strides=[1, 2, 2, 1],
            padding="VALID",
        ),
    ]

    def infer(self, input_sizes, filter, out_backprop, **unused) -> TensorSpec:
        return TensorSpec(_known_shape(input_sizes, 4), filter.dtype.base_dtype)

    def compute(
        self,
        ctx: KernelContext,
        input_sizes,
        filter,
        out_backprop,
        strides,
        padding,
        data_format,
        dilations,
    ) -> Any:
        shape = _nhwc_sizes(input_sizes, data_format)
        dy = _to_nhwc(out_backprop, data_format)
        g = _geometry(shape, filter.shape, strides, dilations, padding, data_format)
        return _from_nhwc(_depthwise_input_grad(dy, filter, g, shape), data_format)

    def gradient(self, op: Any, grad: Tensor) -> list[Any]:
        _, f, dy = op.inputs
        attrs = _attrs_of(op)
        return [
            None,
            _create("DepthwiseConv2dNativeBackpropFilter", [grad, shape_tensor(f), dy], attrs),
            _create("DepthwiseConv2dNative", [grad, f], attrs),
        ]


class DepthwiseConv2dNativeBackpropFilter(_DepthwiseOp):
    """The gradient of DepthwiseConv2dNative with respect to its filter."""

    inputs = ("input", "filter_sizes", "out_backprop")
    samples = [
        Sample(
            input=(2, 5, 5, 3),
            filter_sizes=np.array([3, 3, 3, 2], np.int32),
            out_backprop=(2, 5, 5, 6),
            strides=[1, 1, 1, 1],
            padding="SAME",
        ),
        Sample(
            input=(1, 6, 7, 2),
            filter_sizes=np.array([2, 3, 2, 1], np.int32),
            out_backprop=(1, 3, 3, 2),
            strides=[1, 2, 2, 1],
            padding="VALID",
        ),
    ]

    def infer(self, input, filter_sizes, out_backprop, **unused) -> TensorSpec:
        return TensorSpec(_known_shape(filter_sizes, 4), input.dtype.base_dtype)

    def compute(
        self,
        ctx: KernelContext,
        input,
        filter_sizes,
        out_backprop,
        strides,
        padding,
        data_format,
        dilations,
    ) -> Any:
        x = _to_nhwc(input, data_format)
        dy = _to_nhwc(out_backprop, data_format)
        filter_shape = tuple(int(s) for s in filter_sizes)
        g = _geometry(x.shape, filter_shape, strides, dilations, padding, data_format)
        return _depthwise_filter_grad(x, dy, g, filter_shape)

    def gradient(self, op: Any, grad: Tensor) -> list[Any]:
        x, _, dy = op.inputs
        attrs = _attrs_of(op)
        return [
            _create("DepthwiseConv2dNativeBackpropInput", [shape_tensor(x), grad, dy], attrs),
            None,
            _create("DepthwiseConv2dNative", [x, grad], attrs),
        ]
