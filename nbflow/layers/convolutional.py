"""``tf.layers.Conv1D``, ``Conv2D`` and ``Conv2DTranspose``, and their functional forms.

Each is ``activation(conv(inputs, kernel) + bias)``. The kernel is ``[*kernel_size, in_channels,
filters]`` (``conv2d/kernel``) whatever the ``data_format``, and ``[*kernel_size, filters,
in_channels]`` for the transpose, as in TensorFlow; 'channels_first' inputs run the NCHW (NCW)
form of the ops. Conv1D is ``tf.nn.conv1d``, a conv2d on an extra axis of size 1.

    h = tf.layers.conv2d(images, 32, 3, padding="same", activation=tf.nn.relu)
    up = tf.layers.conv2d_transpose(h, 16, 3, strides=2, padding="same")  # twice the size
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from nbflow import nn
from nbflow.framework import ops as ops_lib
from nbflow.framework.tensor_shape import TensorShape
from nbflow.layers.base import KernelLayer, normalize_padding, normalize_tuple, op_data_format
from nbflow.ops import array_ops

Tensor = ops_lib.Tensor


class _Conv(KernelLayer):
    """A ``rank``-D convolution layer: the arguments, the checks on the inputs and the kernel."""

    rank = 2

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str = "channels_last",
        dilation_rate: Any = 1,
        activation: Callable[[Tensor], Tensor] | None = None,
        use_bias: bool = True,
        kernel_initializer: Any = None,
        bias_initializer: Any = None,
        kernel_regularizer: Callable[[Any], Any] | None = None,
        bias_regularizer: Callable[[Any], Any] | None = None,
        activity_regularizer: Callable[[Tensor], Any] | None = None,
        kernel_constraint: Callable[[Any], Any] | None = None,
        bias_constraint: Callable[[Any], Any] | None = None,
        trainable: bool = True,
        name: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(
            activation,
            use_bias,
            kernel_initializer,
            bias_initializer,
            kernel_regularizer,
            bias_regularizer,
            activity_regularizer,
            kernel_constraint,
            bias_constraint,
            trainable,
            name,
            **kwargs,
        )
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, self.rank, "kernel_size")
        self.strides = normalize_tuple(strides, self.rank, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = op_data_format(data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, self.rank, "dilation_rate")

    def input_channels(self, input_shape: TensorShape) -> int:
        """The inputs' channel count, checking their rank; it must be known to size the kernel."""
        rank = self.rank + 2
        if input_shape.ndims is not None and input_shape.ndims != rank:
            raise ValueError(
                f"{type(self).__name__} expects inputs of rank {rank}, got shape {input_shape}"
            )
        channel_axis = 1 if self.data_format == "NCHW" else -1
        channels = input_shape.with_rank(rank)[channel_axis]
        if channels is None:
            raise ValueError(
                f"The channel dimension of the inputs should be defined. Found `None` "
                f"(input shape {input_shape}, data format {self.data_format})."
            )
        return channels

    def build(self, input_shape: TensorShape) -> None:
        channels = self.input_channels(input_shape)
        self.add_kernel([*self.kernel_size, channels, self.filters], self.filters)


class Conv1D(_Conv):
    """``activation(conv1d(inputs, kernel) + bias)`` on [N, W, C] inputs ([N, C, W] for
    'channels_first'); the kernel is [kernel_size, C, filters]."""

    base_name = "conv1d"
    rank = 1

    def call(self, inputs: Tensor) -> Tensor:  # type: ignore[override]
        outputs = nn.conv1d(
            inputs,
            self.kernel,
            stride=self.strides[0],
            padding=self.padding,
            data_format=self.data_format,
            dilations=self.dilation_rate[0],
        )
        return self.bias_and_activation(outputs, self.data_format)


class Conv2D(_Conv):
    """``activation(conv2d(inputs, kernel) + bias)`` with ``filters`` output channels."""

    base_name = "conv2d"

    def call(self, inputs: Tensor) -> Tensor:  # type: ignore[override]
        outputs = nn.conv2d(
            inputs,
            self.kernel,
            strides=list(self.strides),
            padding=self.padding,
            data_format=self.data_format,
            dilations=list(self.dilation_rate),
            name="Conv2D",
        )
        return self.bias_and_activation(outputs, self.data_format)


def _deconv_length(size: Any, kernel: int, stride: int, padding: str) -> Any:
    """The output length of a transposed convolution along one axis (TF's rule)."""
    if size is None:
        return None
    return size * stride + (max(kernel - stride, 0) if padding == "VALID" else 0)


class Conv2DTranspose(_Conv):
    """``activation(conv2d_transpose(inputs, kernel) + bias)``: the gradient of a Conv2D with
    these strides and padding, H*stride (+ kernel - stride for 'valid') pixels high. The kernel
    is [kh, kw, filters, in_channels]."""

    base_name = "conv2d_transpose"

    def build(self, input_shape: TensorShape) -> None:
        channels = self.input_channels(input_shape)
        self.add_kernel([*self.kernel_size, self.filters, channels], self.filters)

    def call(self, inputs: Tensor) -> Tensor:  # type: ignore[override]
        h_axis, w_axis = (2, 3) if self.data_format == "NCHW" else (1, 2)
        dims = inputs.shape.as_list()
        out_h, out_w = (
            _deconv_length(dims[axis], k, s, self.padding)
            for axis, k, s in zip((h_axis, w_axis), self.kernel_size, self.strides)
        )
        sizes = [dims[0], self.filters, out_h, out_w]
        if self.data_format != "NCHW":
            sizes = [dims[0], out_h, out_w, self.filters]
        output_shape: Any
        if None not in sizes:
            output_shape = np.array(sizes, np.int32)
        else:
            dynamic = array_ops.shape(inputs)
            batch = dynamic[0]
            height = dynamic[h_axis] * self.strides[0]
            width = dynamic[w_axis] * self.strides[1]
            if self.padding == "VALID":
                height += max(self.kernel_size[0] - self.strides[0], 0)
                width += max(self.kernel_size[1] - self.strides[1], 0)
            parts: list[Any] = [batch, self.filters, height, width]
            if self.data_format != "NCHW":
                parts = [batch, height, width, self.filters]
            output_shape = array_ops.stack(parts)
        outputs = nn.conv2d_transpose(
            inputs,
            self.kernel,
            output_shape,
            strides=list(self.strides),
            padding=self.padding,
            data_format=self.data_format,
        )
        outputs.set_shape(TensorShape(sizes))
        return self.bias_and_activation(outputs, self.data_format)


def _functional(layer_class: type[_Conv], inputs: Any, reuse: Any, **kwargs: Any) -> Tensor:
    return layer_class(**kwargs, _scope=kwargs.get("name"), _reuse=reuse)(inputs)


def conv1d(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = 1,
    padding: str = "valid",
    data_format: str = "channels_last",
    dilation_rate: Any = 1,
    activation: Callable[[Tensor], Tensor] | None = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = None,
    kernel_regularizer: Callable[[Any], Any] | None = None,
    bias_regularizer: Callable[[Any], Any] | None = None,
    activity_regularizer: Callable[[Tensor], Any] | None = None,
    kernel_constraint: Callable[[Any], Any] | None = None,
    bias_constraint: Callable[[Any], Any] | None = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> Tensor:
    """A 1-D convolution layer.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> tf.layers.conv1d(tf.zeros([2, 10, 3]), 8, 3, padding="same").shape.as_list()
    [2, 10, 8]
    """
    return _functional(Conv1D, inputs, reuse, **_conv_kwargs(locals()))


def conv2d(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
    dilation_rate: Any = (1, 1),
    activation: Callable[[Tensor], Tensor] | None = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = None,
    kernel_regularizer: Callable[[Any], Any] | None = None,
    bias_regularizer: Callable[[Any], Any] | None = None,
    activity_regularizer: Callable[[Tensor], Any] | None = None,
    kernel_constraint: Callable[[Any], Any] | None = None,
    bias_constraint: Callable[[Any], Any] | None = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> Tensor:
    """A 2-D convolution layer.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> tf.layers.conv2d(tf.zeros([1, 8, 8, 3]), 16, 3, padding="same").shape.as_list()
    [1, 8, 8, 16]
    """
    return _functional(Conv2D, inputs, reuse, **_conv_kwargs(locals()))


def conv2d_transpose(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
    activation: Callable[[Tensor], Tensor] | None = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = None,
    kernel_regularizer: Callable[[Any], Any] | None = None,
    bias_regularizer: Callable[[Any], Any] | None = None,
    activity_regularizer: Callable[[Tensor], Any] | None = None,
    kernel_constraint: Callable[[Any], Any] | None = None,
    bias_constraint: Callable[[Any], Any] | None = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> Tensor:
    """A transposed 2-D convolution layer (a "deconvolution").

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> x = tf.zeros([1, 4, 4, 3])
    >>> tf.layers.conv2d_transpose(x, 8, 3, strides=2, padding="same").shape.as_list()
    [1, 8, 8, 8]
    """
    return _functional(Conv2DTranspose, inputs, reuse, **_conv_kwargs(locals()))


def _conv_kwargs(arguments: dict[str, Any]) -> dict[str, Any]:
    """A functional form's arguments, less the inputs and reuse, for its layer class."""
    return {k: v for k, v in arguments.items() if k not in ("inputs", "reuse")}
