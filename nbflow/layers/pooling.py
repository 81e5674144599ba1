"""``tf.layers.MaxPooling1D``/``2D``/``3D`` and ``AveragePooling1D``/``2D``/``3D``, and their
functional forms.

Pooling layers own no variables; they wrap ``tf.nn.max_pool``/``avg_pool`` with the layers'
argument conventions (``pool_size``, lower-case padding, ``data_format='channels_last'``). The
1-D forms pool [N, W, C] inputs as TensorFlow does: a 2-D pool over an extra axis of size 1.
The 3-D forms wrap ``tf.nn.max_pool3d``/``avg_pool3d``.

    h = tf.layers.max_pooling2d(h, pool_size=2, strides=2)  # [N, H/2, W/2, C]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbflow import nn
from nbflow.framework import ops as ops_lib
from nbflow.layers.base import Layer, normalize_padding, normalize_tuple, op_data_format
from nbflow.ops import array_ops

Tensor = ops_lib.Tensor


class _Pooling(Layer):
    """A pooling window of ``pool_size`` moved by ``strides`` over the ``rank`` spatial axes."""

    rank = 2
    # the nn pooling function, called with keywords (ksize, strides, padding, data_format)
    pool: Callable[..., Tensor] = staticmethod(nn.max_pool)

    def __init__(
        self,
        pool_size: Any,
        strides: Any,
        padding: str = "valid",
        data_format: str = "channels_last",
        name: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(name=name, **kwargs)
        self.pool_size = normalize_tuple(pool_size, self.rank, "pool_size")
        self.strides = normalize_tuple(strides, self.rank, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = op_data_format(data_format)

    def call(self, inputs: Tensor) -> Tensor:  # type: ignore[override]
        rank = self.rank + 2
        if inputs.shape.ndims is not None and inputs.shape.ndims != rank:
            raise ValueError(
                f"{type(self).__name__} expects inputs of rank {rank}, got {inputs.shape}"
            )
        return self._pool(inputs)

    def _pool(self, inputs: Tensor) -> Tensor:
        return self.pool(
            inputs,
            ksize=list(self.pool_size),
            strides=list(self.strides),
            padding=self.padding,
            data_format=self._pool_format(),
        )

    def _pool_format(self) -> str:
        return self.data_format


class _Pooling2D(_Pooling):
    """Over H and W of [N, H, W, C] inputs ([N, C, H, W] for 'channels_first')."""


class MaxPooling2D(_Pooling2D):
    """The maximum of each window."""

    base_name = "max_pooling2d"
    pool = staticmethod(nn.max_pool)


class AveragePooling2D(_Pooling2D):
    """The mean of each window (padded positions not counted)."""

    base_name = "average_pooling2d"
    pool = staticmethod(nn.avg_pool)


def max_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """Max pooling over 2-D windows.

    >>> import nbflow as tf
    >>> tf.layers.max_pooling2d(tf.zeros([1, 4, 4, 3]), 2, 2).shape.as_list()
    [1, 2, 2, 3]
    """
    return MaxPooling2D(pool_size, strides, padding, data_format, name=name)(inputs)


def average_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """Average pooling over 2-D windows."""
    return AveragePooling2D(pool_size, strides, padding, data_format, name=name)(inputs)


class _Pooling1D(_Pooling):
    """Along W of [N, W, C] inputs ([N, C, W] for 'channels_first')."""

    rank = 1

    def _pool(self, inputs: Tensor) -> Tensor:
        # An H axis of size 1 before W: [N, 1, W, C], or [N, C, 1, W] for NCHW.
        axis = 2 if self.data_format == "NCHW" else 1
        pooled = self.pool(
            array_ops.expand_dims(inputs, axis),
            ksize=[1, self.pool_size[0]],
            strides=[1, self.strides[0]],
            padding=self.padding,
            data_format=self.data_format,
        )
        return array_ops.squeeze(pooled, [axis])


class MaxPooling1D(_Pooling1D):
    """The maximum of each window."""

    base_name = "max_pooling1d"
    pool = staticmethod(nn.max_pool)


class AveragePooling1D(_Pooling1D):
    """The mean of each window (padded positions not counted)."""

    base_name = "average_pooling1d"
    pool = staticmethod(nn.avg_pool)


def max_pooling1d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """Max pooling over 1-D windows.

    >>> import nbflow as tf
    >>> tf.layers.max_pooling1d(tf.zeros([2, 9, 3]), 3, 2).shape.as_list()
    [2, 4, 3]
    """
    return MaxPooling1D(pool_size, strides, padding, data_format, name=name)(inputs)


def average_pooling1d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """Average pooling over 1-D windows."""
    return AveragePooling1D(pool_size, strides, padding, data_format, name=name)(inputs)


MaxPool1D = MaxPooling1D
AveragePool1D = AveragePooling1D
MaxPool2D = MaxPooling2D
AveragePool2D = AveragePooling2D


class _Pooling3D(_Pooling):
    """Over D, H and W of [N, D, H, W, C] inputs ([N, C, D, H, W] for 'channels_first')."""

    rank = 3
    pool = staticmethod(nn.max_pool3d)

    def _pool_format(self) -> str:
        return "NCDHW" if self.data_format == "NCHW" else "NDHWC"


class MaxPooling3D(_Pooling3D):
    """The maximum of each window."""

    base_name = "max_pooling3d"
    pool = staticmethod(nn.max_pool3d)


class AveragePooling3D(_Pooling3D):
    """The mean of each window (padded positions not counted)."""

    base_name = "average_pooling3d"
    pool = staticmethod(nn.avg_pool3d)


def max_pooling3d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """Max pooling over 3-D windows.

    >>> import nbflow as tf
    >>> tf.layers.max_pooling3d(tf.zeros([1, 4, 4, 4, 3]), 2, 2).shape.as_list()
    [1, 2, 2, 2, 3]
    """
    return MaxPooling3D(pool_size, strides, padding, data_format, name=name)(inputs)


def average_pooling3d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """Average pooling over 3-D windows."""
    return AveragePooling3D(pool_size, strides, padding, data_format, name=name)(inputs)


MaxPool3D = MaxPooling3D
AveragePool3D = AveragePooling3D
