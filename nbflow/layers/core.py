"""``tf.layers.Dense``, ``Dropout`` and ``Flatten``, and their functional forms.

Dense multiplies the last axis by ``kernel`` and adds ``bias``; Dropout is active only when
``training`` is true (a Python bool, or a bool tensor that picks the branch when the graph runs);
Flatten keeps the batch axis and folds the rest.

    h = tf.layers.dense(x, 128, activation=tf.nn.relu)  # dense/kernel, dense/bias
    h = tf.layers.dropout(h, rate=0.5, training=is_training)
    logits = tf.layers.dense(tf.layers.flatten(h), 10)  # dense_1/kernel, dense_1/bias
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from nbflow import nn
from nbflow.framework import ops as ops_lib
from nbflow.framework.tensor_shape import TensorShape
from nbflow.layers.base import KernelLayer, Layer, op_data_format, smart_cond
from nbflow.ops import array_ops, math_ops

Tensor = ops_lib.Tensor


class Dense(KernelLayer):
    """``activation(inputs @ kernel + bias)``; inputs of rank > 2 use their last axis."""

    base_name = "dense"

    def __init__(
        self,
        units: int,
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
        self.units = int(units)

    def build(self, input_shape: TensorShape) -> None:
        depth = input_shape.with_rank_at_least(2)[-1]
        if depth is None:
            raise ValueError(
                f"The last dimension of the inputs to `Dense` should be defined. Found `None` "
                f"(input shape {input_shape})."
            )
        self.add_kernel([depth, self.units], self.units)

    def call(self, inputs: Tensor) -> Tensor:  # type: ignore[override]
        if inputs.shape.ndims == 2:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:  # the last axis against the kernel: [..., depth] -> [..., units]
            flat = array_ops.reshape(inputs, [-1, self.kernel.shape.dims[0].value])
            outputs = math_ops.matmul(flat, self.kernel)
            leading = inputs.shape[:-1]
            if leading.is_fully_defined():
                shape: Any = leading.as_list() + [self.units]
            else:
                shape = array_ops.concat([array_ops.shape(inputs)[:-1], [self.units]], 0)
            outputs = array_ops.reshape(outputs, shape)
            outputs.set_shape(leading.concatenate([self.units]))
        return self.bias_and_activation(outputs)


def dense(
    inputs: Any,
    units: int,
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
    """A fully connected layer: ``activation(inputs @ kernel + bias)``.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> y = tf.layers.dense(tf.zeros([2, 3]), 4)
    >>> [v.name for v in tf.trainable_variables()]
    ['dense/kernel:0', 'dense/bias:0']
    """
    layer = Dense(
        units,
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


class Dropout(Layer):
    """While training, zero a ``rate`` fraction of the inputs and scale the rest up."""

    base_name = "dropout"

    def __init__(
        self,
        rate: float = 0.5,
        noise_shape: Any = None,
        seed: int | None = None,
        name: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(name=name, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs: Tensor, training: Any = False) -> Tensor:  # type: ignore[override]
        return smart_cond(
            training,
            lambda: nn.dropout(
                inputs, rate=self.rate, noise_shape=self.noise_shape, seed=self.seed
            ),
            lambda: array_ops.identity(inputs),
        )


def dropout(
    inputs: Any,
    rate: float = 0.5,
    noise_shape: Any = None,
    seed: int | None = None,
    training: Any = False,
    name: str | None = None,
) -> Tensor:
    """Dropout when ``training`` (a Python bool or a bool tensor), the identity otherwise."""
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)(inputs, training=training)


class Flatten(Layer):
    """``[batch, d1, d2, ...]`` -> ``[batch, d1 * d2 * ...]`` (channels last first)."""

    base_name = "flatten"

    def __init__(self, data_format: str = "channels_last", name: str | None = None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.data_format = op_data_format(data_format)

    def call(self, inputs: Tensor) -> Tensor:  # type: ignore[override]
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError(f"Flatten needs inputs of known rank, got {inputs.shape}")
        if self.data_format == "NCHW" and rank >= 3:  # flatten in channels-last order, as TF
            inputs = array_ops.transpose(inputs, [0, *range(2, rank), 1])
        if rank == 1:
            return array_ops.expand_dims(inputs, 1)
        batch, inner = inputs.shape[0], inputs.shape[1:]
        if inner.is_fully_defined():
            features = int(np.prod(inner.as_list()))
            return array_ops.reshape(inputs, [-1 if batch is None else batch, features])
        return array_ops.reshape(inputs, array_ops.stack([array_ops.shape(inputs)[0], -1]))


def flatten(inputs: Any, name: str | None = None, data_format: str = "channels_last") -> Tensor:
    """The inputs as a ``[batch, features]`` matrix.

    >>> import nbflow as tf
    >>> tf.layers.flatten(tf.zeros([2, 3, 4])).shape.as_list()
    [2, 12]
    """
    return Flatten(data_format=data_format, name=name)(inputs)
