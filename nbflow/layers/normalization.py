"""``tf.layers.BatchNormalization`` and ``tf.layers.batch_normalization``.

Training normalises with the batch's mean and variance over every axis but ``axis``, then
scales by ``gamma`` and shifts by ``beta``; inference uses ``moving_mean`` and
``moving_variance`` instead. Those two are non-trainable variables that the layer does not update
by itself: each training call adds ``var -= (var - batch_value) * (1 - momentum)`` ops to the
UPDATE_OPS collection, which the training step must run, as in TensorFlow 1.x:

    h = tf.layers.batch_normalization(h, training=is_training)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = optimizer.minimize(loss)

Like TensorFlow, a rank-4 input normalised over its channels (axis 1 or 3) takes the fused path
unless ``fused=False``: the moving variance then averages the unbiased (Bessel-corrected) batch
variance; every other case averages the biased one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbflow import nn
from nbflow.framework import ops as ops_lib
from nbflow.framework.tensor_shape import TensorShape
from nbflow.layers.base import Layer, smart_cond, static_bool
from nbflow.ops import array_ops, init_ops, math_ops, state_ops

Tensor = ops_lib.Tensor


class BatchNormalization(Layer):
    """Normalise over the batch, keep moving averages for inference (Ioffe & Szegedy, 2015)."""

    base_name = "batch_normalization"

    def __init__(
        self,
        axis: Any = -1,
        momentum: float = 0.99,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = None,
        gamma_initializer: Any = None,
        moving_mean_initializer: Any = None,
        moving_variance_initializer: Any = None,
        beta_regularizer: Callable[[Any], Any] | None = None,
        gamma_regularizer: Callable[[Any], Any] | None = None,
        beta_constraint: Callable[[Any], Any] | None = None,
        gamma_constraint: Callable[[Any], Any] | None = None,
        renorm: bool = False,
        renorm_clipping: Any = None,
        renorm_momentum: float = 0.99,
        fused: bool | None = None,
        trainable: bool = True,
        virtual_batch_size: int | None = None,
        adjustment: Any = None,
        name: str | None = None,
        **kwargs: Any,
    ):
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError(
                "BatchNormalization: renorm, virtual_batch_size and adjustment are not supported"
            )
        super().__init__(trainable, name, **kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else [int(axis)]
        self.momentum = momentum
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer or init_ops.zeros_initializer()
        self.gamma_initializer = gamma_initializer or init_ops.ones_initializer()
        self.moving_mean_initializer = moving_mean_initializer or init_ops.zeros_initializer()
        self.moving_variance_initializer = (
            moving_variance_initializer or init_ops.ones_initializer()
        )
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        self.fused = fused
        self.gamma: Any = None
        self.beta: Any = None
        self.moving_mean: Any = None
        self.moving_variance: Any = None

    def build(self, input_shape: TensorShape) -> None:
        rank = input_shape.ndims
        if rank is None:
            raise ValueError(f"BatchNormalization needs inputs of known rank, got {input_shape}")
        axes = sorted({a % rank if -rank <= a < rank else a for a in self.axis})
        if any(not 0 <= a < rank for a in axes):
            raise ValueError(f"Invalid axis {self.axis} for inputs of rank {rank}")
        self.axis = axes
        sizes = [input_shape[a] for a in axes]
        if None in sizes:
            raise ValueError(
                f"Axis {axes} of input tensor should have a defined dimension: {sizes}"
            )
        param_shape = sizes if len(sizes) > 1 else sizes[:1]
        # Where the parameters broadcast against the inputs: [1, C, 1, 1] for NCHW, etc.
        self._broadcast_shape = [input_shape[i] if i in axes else 1 for i in range(rank)]
        self._reduction_axes = [i for i in range(rank) if i not in axes]
        self.fused = self.fused is not False and rank == 4 and axes in ([1], [3])
        if self.scale:
            self.gamma = self.add_weight(
                "gamma",
                param_shape,
                initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer,
                constraint=self.gamma_constraint,
            )
        if self.center:
            self.beta = self.add_weight(
                "beta",
                param_shape,
                initializer=self.beta_initializer,
                regularizer=self.beta_regularizer,
                constraint=self.beta_constraint,
            )
        self.moving_mean = self.add_weight(
            "moving_mean", param_shape, initializer=self.moving_mean_initializer, trainable=False
        )
        self.moving_variance = self.add_weight(
            "moving_variance",
            param_shape,
            initializer=self.moving_variance_initializer,
            trainable=False,
        )

    def _as_broadcast(self, t: Any) -> Any:
        if t is None or self.axis == [len(self._broadcast_shape) - 1]:
            return t
        return array_ops.reshape(t, self._broadcast_shape)

    def call(self, inputs: Tensor, training: Any = False) -> Tensor:  # type: ignore[override]
        moving_mean = ops_lib.convert_to_tensor(self.moving_mean)
        moving_variance = ops_lib.convert_to_tensor(self.moving_variance)
        if static_bool(training) is False:
            mean, variance = moving_mean, moving_variance
        else:
            batch_mean, batch_variance = nn.moments(inputs, self._reduction_axes)
            averaged_variance = batch_variance
            if self.fused:  # the fused kernel reports the unbiased variance
                count = math_ops.cast(array_ops.size(inputs), inputs.dtype.base_dtype)
                count = count / math_ops.cast(array_ops.size(batch_variance), count.dtype)
                averaged_variance = batch_variance * count / math_ops.maximum(count - 1, 1)
            mean = smart_cond(training, lambda: batch_mean, lambda: moving_mean)
            variance = smart_cond(training, lambda: batch_variance, lambda: moving_variance)
            new_variance = smart_cond(training, lambda: averaged_variance, lambda: moving_variance)
            decay = smart_cond(
                training,
                lambda: array_ops.constant(1.0 - self.momentum, inputs.dtype.base_dtype),
                lambda: array_ops.constant(0.0, inputs.dtype.base_dtype),
            )
            self.add_update(_assign_moving_average(self.moving_mean, mean, decay))
            self.add_update(_assign_moving_average(self.moving_variance, new_variance, decay))
        return nn.batch_normalization(
            inputs,
            self._as_broadcast(mean),
            self._as_broadcast(variance),
            self._as_broadcast(self.beta),
            self._as_broadcast(self.gamma),
            self.epsilon,
        )


def _assign_moving_average(variable: Any, value: Tensor, decay: Tensor) -> Tensor:
    """``variable -= (variable - value) * decay``, colocated with the variable."""
    graph = ops_lib.get_default_graph()
    with graph.name_scope("AssignMovingAvg") as scope, graph.colocate_with(variable.op):
        delta = (variable - value) * decay
        return state_ops.assign_sub(variable, delta, name=scope)


def batch_normalization(
    inputs: Any,
    axis: Any = -1,
    momentum: float = 0.99,
    epsilon: float = 1e-3,
    center: bool = True,
    scale: bool = True,
    beta_initializer: Any = None,
    gamma_initializer: Any = None,
    moving_mean_initializer: Any = None,
    moving_variance_initializer: Any = None,
    beta_regularizer: Callable[[Any], Any] | None = None,
    gamma_regularizer: Callable[[Any], Any] | None = None,
    beta_constraint: Callable[[Any], Any] | None = None,
    gamma_constraint: Callable[[Any], Any] | None = None,
    training: Any = False,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
    renorm: bool = False,
    renorm_clipping: Any = None,
    renorm_momentum: float = 0.99,
    fused: bool | None = None,
    virtual_batch_size: int | None = None,
    adjustment: Any = None,
) -> Tensor:
    """Batch normalization; with ``training`` true, moving-average updates go to UPDATE_OPS.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> y = tf.layers.batch_normalization(tf.zeros([4, 3]), training=True)
    >>> [v.name for v in tf.global_variables()]  # doctest: +NORMALIZE_WHITESPACE
    ['batch_normalization/gamma:0', 'batch_normalization/beta:0',
     'batch_normalization/moving_mean:0', 'batch_normalization/moving_variance:0']
    """
    layer = BatchNormalization(
        axis=axis,
        momentum=momentum,
        epsilon=epsilon,
        center=center,
        scale=scale,
        beta_initializer=beta_initializer,
        gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer,
        gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint,
        gamma_constraint=gamma_constraint,
        renorm=renorm,
        renorm_clipping=renorm_clipping,
        renorm_momentum=renorm_momentum,
        fused=fused,
        trainable=trainable,
        virtual_batch_size=virtual_batch_size,
        adjustment=adjustment,
        name=name,
        _scope=name,
        _reuse=reuse,
    )
    return layer(inputs, training=training)
