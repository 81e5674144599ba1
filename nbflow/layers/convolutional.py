"""``tf.layers.Conv2D`` and ``tf.layers.conv2d``: a 2-D convolution with a bias and activation.

The kernel is ``[kernel_h, kernel_w, in_channels, filters]`` (``conv2d/kernel``) whatever the
``data_format``; 'channels_first' inputs run the NCHW form of the ops.

    h = tf.layers.conv2d(images, 32, 3, padding="same", activation=tf.nn.relu)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbflow import nn
from nbflow.framework import ops as ops_lib
from nbflow.framework.tensor_shape import TensorShape
from nbflow.layers.base import KernelLayer, normalize_padding, normalize_tuple, op_data_format

Tensor = ops_lib.Tensor


class Conv2D(KernelLayer):
    """``activation(conv2d(inputs, kernel) + bias)`` with ``filters`` output channels."""

    base_name = "conv2d"

    def __init__(
        self,
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
        self.kernel_size = normalize_tuple(kernel_size, 2, "kernel_size")
        self.strides = normalize_tuple(strides, 2, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = op_data_format(data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, 2, "dilation_rate")

    def build(self, input_shape: TensorShape) -> None:
        if input_shape.ndims is not None and input_shape.ndims != 4:
            raise ValueError(f"Conv2D expects inputs of rank 4, got shape {input_shape}")
        channel_axis = 1 if self.data_format == "NCHW" else -1
        channels = input_shape.with_rank(4).dims[channel_axis].value
        if channels is None:
            raise ValueError(
                f"The channel dimension of the inputs should be defined. Found `None` "
                f"(input shape {input_shape}, data format {self.data_format})."
            )
        self.add_kernel([*self.kernel_size, channels, self.filters], self.filters)

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
    layer = Conv2D(
        filters,
        kernel_size,
        strides=strides,
        padding=padding,
        data_format=data_format,
        dilation_rate=dilation_rate,
        activation=activation,
        use_bias=use_bias,
        kernel_initializer=kernel_initializer,
        bias_initializer=bias_initializer,
        kernel_regularizer=kernel_regularizer,
        bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer,
        kernel_constraint=kernel_constraint,
        bias_constraint=bias_constraint,
        trainable=trainable,
        name=name,
        _scope=name,
        _reuse=reuse,
    )
    return layer(inputs)
