"""``tf.nn``'s convolutions beyond conv2d: depthwise, separable, 1-D, atrous and 3-D.

They are TensorFlow 1.15's compositions: ``depthwise_conv2d`` is the DepthwiseConv2dNative op
(``ops/depthwise_conv_ops.py``) with its ``rate`` as dilations; ``separable_conv2d`` is that op
followed by a 1x1 ``conv2d``; ``conv1d`` is ``conv2d`` on an input and filter expanded by a
spatial axis of size 1, squeezed away afterwards; ``atrous_conv2d`` is a dilated ``conv2d``.
``conv3d``, ``conv3d_transpose``, ``max_pool3d`` and ``avg_pool3d`` build the 3-D ops of
``ops/conv3d_ops.py`` and ``ops/pooling3d_ops.py``.
``nn.py`` re-exports them, so they are reached as ``tf.nn.separable_conv2d`` and so on.

    h = tf.nn.separable_conv2d(x, depthwise, pointwise, strides=[1, 1, 1, 1], padding="SAME")
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow import nn_impl
from nbflow.framework import ops as ops_lib
from nbflow.ops import array_ops, conv3d_ops, depthwise_conv_ops, pooling3d_ops  # noqa: F401

Tensor = ops_lib.Tensor


def _padding(padding: Any) -> Any:
    return padding.upper() if isinstance(padding, str) else padding


def depthwise_conv2d_native(
    input: Any,
    filter: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """Each channel of ``input`` correlated with its own slice of ``filter`` [KH, KW, C, M].

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> x, f = tf.zeros([1, 5, 5, 3]), tf.zeros([3, 3, 3, 2])
    >>> tf.nn.depthwise_conv2d_native(x, f, [1, 1, 1, 1], "SAME").shape.as_list()
    [1, 5, 5, 6]
    """
    data_format = data_format or "NHWC"
    input = ops_lib.convert_to_tensor(input)
    filter = ops_lib.convert_to_tensor(filter, dtype=input.dtype.base_dtype)
    attrs = {
        "strides": nn_impl._four(strides, data_format, "strides"),
        "padding": _padding(padding),
        "data_format": data_format,
        "dilations": nn_impl._four(dilations, data_format, "dilations"),
    }
    graph = ops_lib.get_default_graph()
    op = graph.create_op("DepthwiseConv2dNative", [input, filter], attrs, name=name)
    return op.outputs[0]


def _rate_dilations(rate: Any, strides: Any, dilations: Any, data_format: str) -> Any:
    """Dilations from ``rate`` (TF1) or ``dilations``; TF refuses strides and rate both > 1."""
    if rate is None:
        return dilations
    rate = [int(rate)] * 2 if isinstance(rate, int) else [int(r) for r in rate]
    if len(rate) != 2:
        raise ValueError(f"rate must have 2 entries (height, width), got {rate}")
    stride_hw = nn_impl._four(strides, data_format, "strides")
    stride_hw = stride_hw[2:] if data_format == "NCHW" else stride_hw[1:3]
    if max(rate) > 1 and max(stride_hw) > 1:
        raise ValueError("strides > 1 not supported in conjunction with rate > 1")
    return rate


def depthwise_conv2d(
    input: Any,
    filter: Any,
    strides: Any,
    padding: str,
    rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Tensor:
    """Depthwise 2-D convolution: C*M output channels from a [KH, KW, C, M] ``filter``, with
    ``rate`` [rh, rw] the dilation (atrous) rate.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> x, f = tf.zeros([2, 8, 8, 3]), tf.zeros([3, 3, 3, 2])
    >>> tf.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME").shape.as_list()
    [2, 4, 4, 6]
    """
    data_format = data_format or "NHWC"
    dilations = _rate_dilations(rate, strides, dilations, data_format)
    return depthwise_conv2d_native(
        input, filter, strides, padding, data_format, dilations, name=name or "depthwise"
    )


def separable_conv2d(
    input: Any,
    depthwise_filter: Any,
    pointwise_filter: Any,
    strides: Any,
    padding: str,
    rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Tensor:
    """A depthwise convolution with ``depthwise_filter`` [KH, KW, C, M], then a 1x1 convolution
    with ``pointwise_filter`` [1, 1, C*M, O] mixing the channels.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> x = tf.zeros([1, 6, 6, 3])
    >>> d, p = tf.zeros([3, 3, 3, 2]), tf.zeros([1, 1, 6, 4])
    >>> tf.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "VALID").shape.as_list()
    [1, 4, 4, 4]
    """
    data_format = data_format or "NHWC"
    with ops_lib.name_scope(name, "separable_conv2d", [input]) as scope:
        input = ops_lib.convert_to_tensor(input, name="input")
        depthwise_filter = ops_lib.convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pointwise_filter = ops_lib.convert_to_tensor(pointwise_filter, name="pointwise_filter")
        pointwise_shape = pointwise_filter.shape.with_rank(4)
        if pointwise_shape.dims is not None:
            height, width = pointwise_shape.dims[0].value, pointwise_shape.dims[1].value
            if (height, width) != (1, 1) and None not in (height, width):
                raise ValueError(
                    f"pointwise_filter must be [1, 1, in, out], got {pointwise_shape.as_list()}"
                )
        depthwise = depthwise_conv2d(
            input, depthwise_filter, strides, padding, rate, "depthwise", data_format, dilations
        )
        return nn_impl.conv2d(
            depthwise, pointwise_filter, [1, 1, 1, 1], "VALID", data_format=data_format, name=scope
        )


def conv1d(
    value: Any = None,
    filters: Any = None,
    stride: Any = None,
    padding: str | None = None,
    use_cudnn_on_gpu: Any = None,
    data_format: str | None = None,
    name: str | None = None,
    input: Any = None,
    dilations: Any = None,
) -> Tensor:
    """1-D convolution of a [N, W, C] ``value`` ("NWC"; [N, C, W] for "NCW") with ``filters``
    [K, C, O]: a conv2d on a height axis of size 1, as TensorFlow computes it.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> tf.nn.conv1d(tf.zeros([2, 10, 3]), tf.zeros([3, 3, 4]), 2, "SAME").shape.as_list()
    [2, 5, 4]
    """
    value = input if value is None else value
    if value is None or filters is None or stride is None or padding is None:
        raise ValueError("conv1d needs value, filters, stride and padding")
    if data_format in (None, "NWC", "NHWC"):
        data_format, spatial_axis = "NHWC", 1
    elif data_format in ("NCW", "NCHW"):
        data_format, spatial_axis = "NCHW", 2
    else:
        raise ValueError(f'data_format must be "NWC" or "NCW", got {data_format!r}')
    with ops_lib.name_scope(name, "conv1d", [value, filters]) as scope:
        value = array_ops.expand_dims(value, spatial_axis)
        filters = array_ops.expand_dims(filters, 0)
        result = nn_impl.conv2d(
            value,
            filters,
            strides=_with_unit_height(stride, data_format, "stride"),
            padding=_padding(padding),
            use_cudnn_on_gpu=True if use_cudnn_on_gpu is None else use_cudnn_on_gpu,
            data_format=data_format,
            dilations=_with_unit_height(dilations, data_format, "dilations"),
        )
        return array_ops.squeeze(result, [spatial_axis], name=scope)


def _with_unit_height(values: Any, data_format: str, name: str) -> list[int]:
    """A 1-D stride or dilation (an int, or 1 or 3 entries) as conv2d's [1, W] pair."""
    if values is None:
        return [1, 1]
    if isinstance(values, int):
        return [1, values]
    values = [int(v) for v in values]
    if len(values) == 1:
        return [1, values[0]]
    if len(values) == 3:  # [1, W, 1] in NWC, [1, 1, W] in NCW
        return [1, values[2] if data_format == "NCHW" else values[1]]
    raise ValueError(f"{name} must be an int or have 1 or 3 entries, got {values}")


def atrous_conv2d(
    value: Any, filters: Any, rate: int, padding: str, name: str | None = None
) -> Tensor:
    """A conv2d of NHWC ``value`` whose ``filters`` taps are ``rate`` pixels apart.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> x, f = tf.zeros([1, 9, 9, 1]), tf.zeros([3, 3, 1, 2])
    >>> tf.nn.atrous_conv2d(x, f, 2, "VALID").shape.as_list()
    [1, 5, 5, 2]
    """
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return nn_impl.conv2d(
        value,
        filters,
        strides=[1, 1, 1, 1],
        padding=_padding(padding),
        dilations=[1, int(rate), int(rate), 1],
        name=name or "atrous_conv2d",
    )


# --- 3-D ------------------------------------------------------------------------------------------
def _five(values: Any, data_format: str, name: str) -> list[int]:
    """A 5-vector of strides/ksize/dilations from an int, a 3-list or a 5-list."""
    if values is None:
        return [1] * 5
    if isinstance(values, int):
        values = [values] * 3
    values = [int(v) for v in values]
    if len(values) == 1:
        values = values * 3
    if len(values) == 3:
        return [1, 1, *values] if data_format == "NCDHW" else [1, *values, 1]
    if len(values) != 5:
        raise ValueError(f"{name} must have 1, 3 or 5 entries, got {values}")
    return values


def conv3d(
    input: Any,
    filter: Any = None,
    strides: Any = None,
    padding: Any = None,
    data_format: str = "NDHWC",
    dilations: Any = None,
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """3-D convolution of a 5-D ``input`` (NDHWC or NCDHW) with a [KD, KH, KW, in, out]
    ``filter``.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> x, f = tf.zeros([1, 4, 6, 6, 2]), tf.zeros([3, 3, 3, 2, 5])
    >>> tf.nn.conv3d(x, f, [1, 1, 2, 2, 1], "SAME").shape.as_list()
    [1, 4, 3, 3, 5]
    """
    filter = filters if filter is None else filter
    if filter is None or strides is None or padding is None:
        raise ValueError("conv3d needs filter, strides and padding")
    data_format = data_format or "NDHWC"
    input = ops_lib.convert_to_tensor(input)
    filter = ops_lib.convert_to_tensor(filter, dtype=input.dtype.base_dtype)
    attrs = {
        "strides": _five(strides, data_format, "strides"),
        "padding": _padding(padding),
        "data_format": data_format,
        "dilations": _five(dilations, data_format, "dilations"),
    }
    graph = ops_lib.get_default_graph()
    return graph.create_op("Conv3D", [input, filter], attrs, name=name).outputs[0]


def conv3d_transpose(
    value: Any,
    filter: Any = None,
    output_shape: Any = None,
    strides: Any = None,
    padding: str = "SAME",
    data_format: str = "NDHWC",
    name: str | None = None,
    input: Any = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """The transpose (gradient) of conv3d: ``filter`` is [KD, KH, KW, out, in] and the result
    has ``output_shape``.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> x, f = tf.zeros([1, 2, 3, 3, 4]), tf.zeros([3, 3, 3, 2, 4])
    >>> tf.nn.conv3d_transpose(x, f, [1, 4, 6, 6, 2], [1, 2, 2, 2, 1]).shape.as_list()
    [1, 4, 6, 6, 2]
    """
    value = input if value is None else value
    filter = filters if filter is None else filter
    if filter is None or output_shape is None or strides is None:
        raise ValueError("conv3d_transpose needs filter, output_shape and strides")
    data_format = data_format or "NDHWC"
    value = ops_lib.convert_to_tensor(value)
    filter = ops_lib.convert_to_tensor(filter, dtype=value.dtype.base_dtype)
    if not isinstance(output_shape, Tensor):
        output_shape = array_ops.constant(np.asarray(output_shape, dtype=np.int32))
    attrs = {
        "strides": _five(strides, data_format, "strides"),
        "padding": _padding(padding),
        "data_format": data_format,
        "dilations": _five(dilations, data_format, "dilations"),
    }
    graph = ops_lib.get_default_graph()
    inputs = [output_shape, filter, value]
    op = graph.create_op("Conv3DBackpropInputV2", inputs, attrs, name=name or "conv3d_transpose")
    return op.outputs[0]


def _pool3d(op_type, input, ksize, strides, padding, data_format, name) -> Tensor:
    data_format = data_format or "NDHWC"
    attrs = {
        "ksize": _five(ksize, data_format, "ksize"),
        "strides": _five(strides, data_format, "strides"),
        "padding": _padding(padding),
        "data_format": data_format,
    }
    graph = ops_lib.get_default_graph()
    return graph.create_op(op_type, [ops_lib.convert_to_tensor(input)], attrs, name=name).outputs[0]


def max_pool3d(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NDHWC",
    name: str | None = None,
) -> Tensor:
    """The maximum over each ksize window of a 5-D ``input``.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> x = tf.zeros([1, 4, 4, 4, 3])
    >>> tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID").shape.as_list()
    [1, 2, 2, 2, 3]
    """
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format, name)


def avg_pool3d(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NDHWC",
    name: str | None = None,
) -> Tensor:
    """The mean over each ksize window of a 5-D ``input`` (padded positions not counted).

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> x = tf.zeros([1, 5, 5, 5, 3])
    >>> tf.nn.avg_pool3d(x, [1, 3, 3, 3, 1], [1, 2, 2, 2, 1], "SAME").shape.as_list()
    [1, 3, 3, 3, 3]
    """
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format, name)
