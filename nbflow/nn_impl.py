"""``tf.nn``'s own builders: activations, losses, convolution and pooling, normalisation, dropout.

The namespace ``tf.nn`` (``nbflow/nn.py``) re-exports these with the modules built on them
(``nn_convolution``, ``sampled_losses``, ``nn_tf1_names``, the RNNs), which import this module.
Builders here wrap the ops of ``ops/nn_ops.py`` and ``ops/conv_ops.py`` and compose the rest
(moments, batch_normalization, dropout) from primitives, as TensorFlow does; embedding_lookup
lives in ``ops/embedding_ops.py``, the depthwise, separable, 1-D and atrous convolutions in
``nn_convolution.py``.

    logits = tf.nn.bias_add(tf.matmul(x, W), b)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.ops import array_ops, math_ops
from nbflow.ops import conv_ops, nn_ops, pooling_ops  # noqa: F401 - registers the ops
from nbflow.ops.conv_ops import shape_tensor
from nbflow.ops.nn_ops import l2_loss  # noqa: F401 - tf.nn.l2_loss, declared with its op
from nbflow.ops.embedding_ops import (  # noqa: F401 - tf.nn.embedding_lookup[_sparse]
    embedding_lookup,
    embedding_lookup_sparse,
)
from nbflow.ops import random_ops

Tensor = ops_lib.Tensor


def _create(op_type: str, inputs: list[Any], attrs: dict[str, Any] | None = None, name=None):
    op = ops_lib.get_default_graph().create_op(op_type, inputs, attrs, name=name)
    return op.outputs[0] if len(op.outputs) == 1 else op.outputs


def _tensor(x: Any, dtype: Any = None) -> Tensor:
    return ops_lib.convert_to_tensor(x, dtype=dtype)


def _activation(op_type: str, features: Any, name: str | None, **attrs: Any) -> Tensor:
    return _create(op_type, [_tensor(features)], attrs, name=name or op_type)


# --- activations ----------------------------------------------------------------------------------
def relu(features: Any, name: str | None = None) -> Tensor:
    """max(features, 0).

    >>> import nbflow as tf
    >>> tf.Session().run(tf.nn.relu([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return _activation("Relu", features, name)


def relu6(features: Any, name: str | None = None) -> Tensor:
    return _activation("Relu6", features, name)


def elu(features: Any, name: str | None = None) -> Tensor:
    return _activation("Elu", features, name)


def selu(features: Any, name: str | None = None) -> Tensor:
    return _activation("Selu", features, name)


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    return _activation("LeakyRelu", features, name, alpha=float(alpha))


def softplus(features: Any, name: str | None = None) -> Tensor:
    return _activation("Softplus", features, name)


def softsign(features: Any, name: str | None = None) -> Tensor:
    return _activation("Softsign", features, name)


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    return math_ops.sigmoid(x, name=name)


def tanh(x: Any, name: str | None = None) -> Tensor:
    return math_ops.tanh(x, name=name)


def crelu(features: Any, name: str | None = None, axis: int = -1) -> Tensor:
    features = _tensor(features)
    return relu(array_ops.concat([features, math_ops.negative(features)], axis), name=name)


def _axis(axis: Any, dim: Any) -> int:
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    chosen = axis if axis is not None else dim
    return -1 if chosen is None else int(chosen)


def softmax(logits: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Tensor:
    """exp(logits) / reduce_sum(exp(logits), axis), computed without overflow."""
    return _create("Softmax", [_tensor(logits)], {"axis": _axis(axis, dim)}, name=name)


def log_softmax(logits: Any, axis: Any = None, name: str | None = None, dim: Any = None):
    """logits - log(reduce_sum(exp(logits), axis)) (log-sum-exp)."""
    return _create("LogSoftmax", [_tensor(logits)], {"axis": _axis(axis, dim)}, name=name)


def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None):
    """value + bias along the channel axis (the last one, or 1 for NCHW)."""
    value = _tensor(value)
    bias = _tensor(bias, dtype=value.dtype.base_dtype)
    return _create("BiasAdd", [value, bias], {"data_format": data_format or "NHWC"}, name=name)


def xw_plus_b(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    return bias_add(math_ops.matmul(x, weights), biases, name=name or "xw_plus_b")


def relu_layer(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    return relu(xw_plus_b(x, weights, biases), name=name or "relu_layer")


# --- losses ---------------------------------------------------------------------------------------
def _labels_logits(sentinel: Any, labels: Any, logits: Any, fn: str) -> tuple[Any, Any]:
    # Before TensorFlow 1.0 the call was f(logits, labels) (the OSDI paper's Figure 1 does so).
    # The first positional argument lands in the sentinel and the second in ``labels``.
    if sentinel is not None:
        if logits is not None:
            raise ValueError(f"Only call `{fn}` with named arguments (labels=..., logits=...)")
        logits = sentinel
    if labels is None or logits is None:
        raise ValueError(f"Both labels and logits must be provided to {fn}.")
    return labels, logits


def _move_axis_last(t: Tensor, axis: int) -> Tensor:
    rank = t.shape.ndims
    if axis == -1 or (rank is not None and axis == rank - 1):
        return t
    if rank is None:
        raise ValueError("softmax cross-entropy over a non-last axis needs a known rank")
    axis %= rank
    perm = [i for i in range(rank) if i != axis] + [axis]
    return array_ops.transpose(t, perm)


def _flatten_to_rows(t: Tensor) -> Tensor:
    if t.shape.ndims == 2:
        return t
    return array_ops.reshape(t, [-1, _last_dim(t)])


def _last_dim(t: Tensor) -> Any:
    last = t.shape[-1] if t.shape.ndims else None
    return last if last is not None else array_ops.shape(t)[-1]


def softmax_cross_entropy_with_logits_v2(
    _sentinel: Any = None,
    labels: Any = None,
    logits: Any = None,
    dim: int = -1,
    name: str | None = None,
    axis: Any = None,
) -> Tensor:
    """Per-example -sum(labels * log_softmax(logits)); gradients reach labels too.

    One fused kernel computes the loss and its gradient (softmax - labels) together.
    """
    labels, logits = _labels_logits(_sentinel, labels, logits, "softmax_cross_entropy_with_logits")
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "softmax_cross_entropy_with_logits"):
        logits = _tensor(logits)
        labels = _tensor(labels, dtype=logits.dtype.base_dtype)
        axis = _axis(axis, dim if dim != -1 else None)
        logits = _move_axis_last(logits, axis)
        labels = _move_axis_last(labels, axis)
        if logits.shape.ndims == 2:
            loss, _ = _create("SoftmaxCrossEntropyWithLogits", [logits, labels])
            return loss
        loss, _ = _create(
            "SoftmaxCrossEntropyWithLogits", [_flatten_to_rows(logits), _flatten_to_rows(labels)]
        )
        if logits.shape[:-1].is_fully_defined():
            return array_ops.reshape(loss, logits.shape[:-1].as_list())
        return array_ops.reshape(loss, array_ops.shape(logits)[:-1])


def softmax_cross_entropy_with_logits(
    _sentinel: Any = None,
    labels: Any = None,
    logits: Any = None,
    dim: int = -1,
    name: str | None = None,
    axis: Any = None,
) -> Tensor:
    """Like the _v2 form, but no gradient flows into ``labels`` (TensorFlow 1.x behaviour)."""
    labels, logits = _labels_logits(_sentinel, labels, logits, "softmax_cross_entropy_with_logits")
    labels = array_ops.stop_gradient(_tensor(labels))
    return softmax_cross_entropy_with_logits_v2(
        labels=labels, logits=logits, dim=dim, name=name, axis=axis
    )


def sparse_softmax_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, name: str | None = None
) -> Tensor:
    """Per-example -log_softmax(logits)[label] for integer class labels (one fused kernel)."""
    labels, logits = _labels_logits(
        _sentinel, labels, logits, "sparse_softmax_cross_entropy_with_logits"
    )
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "SparseSoftmaxCrossEntropyWithLogits"):
        logits = _tensor(logits)
        labels = _tensor(labels)
        if labels.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"labels must be int32 or int64, got {labels.dtype.name}")
        if (
            logits.shape.ndims is not None
            and labels.shape.ndims is not None
            and labels.shape.ndims != logits.shape.ndims - 1
        ):
            raise ValueError(
                f"Rank mismatch: Rank of labels (received {labels.shape.ndims}) should equal "
                f"rank of logits minus 1 (received {logits.shape.ndims})."
            )
        if logits.shape.ndims == 2:
            loss, _ = _create("SparseSoftmaxCrossEntropyWithLogits", [logits, labels])
            return loss
        loss, _ = _create(
            "SparseSoftmaxCrossEntropyWithLogits",
            [_flatten_to_rows(logits), array_ops.reshape(labels, [-1])],
        )
        return array_ops.reshape(loss, array_ops.shape(labels))


def sigmoid_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, name: str | None = None
) -> Tensor:
    """max(x, 0) - x * z + log(1 + exp(-|x|)): the stable form of the logistic loss."""
    labels, logits = _labels_logits(_sentinel, labels, logits, "sigmoid_cross_entropy_with_logits")
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "logistic_loss"):
        logits = _tensor(logits)
        labels = _tensor(labels, dtype=logits.dtype.base_dtype)
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(
                f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})"
            )
        softplus_tail = math_ops.log1p(math_ops.exp(math_ops.negative(math_ops.abs(logits))))
        return relu(logits) - logits * labels + softplus_tail


def weighted_cross_entropy_with_logits(
    targets: Any = None,
    logits: Any = None,
    pos_weight: Any = None,
    name: str | None = None,
    labels: Any = None,
) -> Tensor:
    """Logistic loss with positives weighted by ``pos_weight`` (stable form)."""
    labels = labels if labels is not None else targets
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "logistic_loss"):
        logits = _tensor(logits)
        labels = _tensor(labels, dtype=logits.dtype.base_dtype)
        log_weight = 1 + (pos_weight - 1) * labels
        tail = math_ops.log1p(math_ops.exp(math_ops.negative(math_ops.abs(logits))))
        return (1 - labels) * logits + log_weight * (tail + relu(math_ops.negative(logits)))


def l2_normalize(
    x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None, dim: Any = None
) -> Tensor:
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    chosen = axis if axis is not None else dim
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "l2_normalize"):
        x = _tensor(x)
        square_sum = math_ops.reduce_sum(math_ops.square(x), chosen, keepdims=True)
        inv = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return x * inv


def log_sum_exp(x: Any, axis: Any = None, keepdims: bool = False, name: str | None = None):
    """log(sum(exp(x), axis)) computed as max + log(sum(exp(x - max)))."""
    return math_ops.reduce_logsumexp(x, axis, keepdims=keepdims, name=name)


# --- normalisation --------------------------------------------------------------------------------
def moments(
    x: Any,
    axes: Any,
    shift: Any = None,
    name: str | None = None,
    keep_dims: bool | None = None,
    keepdims: bool | None = None,
) -> tuple[Tensor, Tensor]:
    """Mean and variance of x over ``axes``."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "moments"):
        x = _tensor(x)
        axes = list(axes)
        mean = math_ops.reduce_mean(x, axes, keepdims=True, name="mean")
        variance = math_ops.reduce_mean(
            math_ops.squared_difference(x, array_ops.stop_gradient(mean)),
            axes,
            keepdims=True,
            name="variance",
        )
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        return mean, variance


def batch_normalization(
    x: Any,
    mean: Any,
    variance: Any,
    offset: Any,
    scale: Any,
    variance_epsilon: float,
    name: str | None = None,
) -> Tensor:
    """scale * (x - mean) / sqrt(variance + epsilon) + offset."""
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "batchnorm"):
        x = _tensor(x)
        inv = math_ops.rsqrt(_tensor(variance) + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = (offset - mean * inv) if offset is not None else math_ops.negative(mean * inv)
        return x * inv + shift


def fused_batch_norm(
    x: Any,
    scale: Any,
    offset: Any,
    mean: Any = None,
    variance: Any = None,
    epsilon: float = 0.001,
    data_format: str = "NHWC",
    is_training: bool = True,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Batch normalisation of a 4-D input over N, H, W; returns (y, batch mean, batch variance).

    In training the returned variance is the unbiased (Bessel-corrected) one, as TensorFlow's.
    """
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "FusedBatchNorm"):
        x = _tensor(x)
        axes = [0, 2, 3] if data_format == "NCHW" else [0, 1, 2]
        shape = [1, -1, 1, 1] if data_format == "NCHW" else [1, 1, 1, -1]
        if is_training:
            mean, variance = moments(x, axes)
            count = math_ops.cast(array_ops.size(x), x.dtype.base_dtype) / math_ops.cast(
                array_ops.size(mean), x.dtype.base_dtype
            )
            reported = variance * count / math_ops.maximum(count - 1, 1)
        else:
            if mean is None or variance is None:
                raise ValueError("mean and variance are required when is_training=False")
            mean, variance = _tensor(mean), _tensor(variance)
            reported = variance
        y = batch_normalization(
            x,
            array_ops.reshape(mean, shape),
            array_ops.reshape(variance, shape),
            array_ops.reshape(_tensor(offset), shape),
            array_ops.reshape(_tensor(scale), shape),
            epsilon,
        )
        return y, mean, reported


# --- dropout --------------------------------------------------------------------------------------
def dropout(
    x: Any,
    keep_prob: Any = None,
    noise_shape: Any = None,
    seed: int | None = None,
    name: str | None = None,
    rate: Any = None,
) -> Tensor:
    """Zero each element with probability ``rate`` (= 1 - keep_prob), scale the rest up."""
    if (keep_prob is None) == (rate is None):
        raise ValueError("Specify exactly one of keep_prob and rate")
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "dropout"):
        x = _tensor(x)
        if not x.dtype.base_dtype.is_floating:
            raise ValueError(f"x has to be a floating point tensor: {x.dtype.name}")
        if rate is not None:
            known_rate = _static(rate)
            if known_rate is not None and not 0 <= known_rate < 1:
                raise ValueError(f"rate must be a scalar tensor or a float in [0, 1), got {rate}")
            keep_prob = 1 - _tensor(rate, dtype=x.dtype.base_dtype)
        known = _static(keep_prob)
        if known is not None:
            if not 0 < known <= 1:
                raise ValueError(
                    f"keep_prob must be a scalar tensor or a float in (0, 1], got {known}"
                )
            if known == 1:
                return x
        keep_prob = _tensor(keep_prob, dtype=x.dtype.base_dtype)
        shape = noise_shape if noise_shape is not None else shape_tensor(x)
        random = keep_prob + random_ops.random_uniform(shape, seed=seed, dtype=x.dtype)
        return math_ops.divide(x, keep_prob) * math_ops.floor(random)


def _static(value: Any) -> float | None:
    if isinstance(value, Tensor):
        known = ops_lib.constant_value(value)
        return None if known is None else float(known)
    if hasattr(value, "_ref"):
        return None
    return float(value)


# --- convolution and pooling ----------------------------------------------------------------------
def _four(values: Any, data_format: str, name: str) -> list[int]:
    """A 4-vector of strides/ksize/dilations from an int, a 2-list or a 4-list."""
    if values is None:
        return [1, 1, 1, 1]
    if isinstance(values, int):
        values = [values, values]
    values = [int(v) for v in values]
    if len(values) == 1:
        values = values * 2
    if len(values) == 2:
        return [1, 1, *values] if data_format == "NCHW" else [1, *values, 1]
    if len(values) != 4:
        raise ValueError(f"{name} must have 1, 2 or 4 entries, got {values}")
    return values


def conv2d(
    input: Any,
    filter: Any = None,
    strides: Any = None,
    padding: Any = None,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """2-D convolution of a 4-D ``input`` with a [KH, KW, in, out] ``filter``."""
    filter = filters if filter is None else filter
    if filter is None or strides is None or padding is None:
        raise ValueError("conv2d needs filter, strides and padding")
    input = _tensor(input)
    filter = _tensor(filter, dtype=input.dtype.base_dtype)
    attrs = {
        "strides": _four(strides, data_format, "strides"),
        "padding": padding.upper() if isinstance(padding, str) else padding,
        "data_format": data_format or "NHWC",
        "dilations": _four(dilations, data_format, "dilations"),
        "use_cudnn_on_gpu": use_cudnn_on_gpu,
    }
    return _create("Conv2D", [input, filter], attrs, name=name)


def conv2d_transpose(
    value: Any,
    filter: Any = None,
    output_shape: Any = None,
    strides: Any = None,
    padding: str = "SAME",
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """The transpose (gradient) of conv2d: ``filter`` is [KH, KW, out_channels, in_channels]."""
    value = input if value is None else value
    filter = filters if filter is None else filter
    value = _tensor(value)
    filter = _tensor(filter, dtype=value.dtype.base_dtype)
    if not isinstance(output_shape, Tensor):
        output_shape = array_ops.constant(np.asarray(output_shape, dtype=np.int32))
    attrs = {
        "strides": _four(strides, data_format, "strides"),
        "padding": padding.upper(),
        "data_format": data_format,
        "dilations": _four(dilations, data_format, "dilations"),
    }
    return _create(
        "Conv2DBackpropInput", [output_shape, filter, value], attrs, name=name or "conv2d_transpose"
    )


def _pool(
    op_type: str,
    value: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str,
    name: str | None,
) -> Tensor:
    attrs = {
        "ksize": _four(ksize, data_format, "ksize"),
        "strides": _four(strides, data_format, "strides"),
        "padding": padding.upper(),
        "data_format": data_format,
    }
    return _create(op_type, [_tensor(value)], attrs, name=name or op_type)


def max_pool(
    value: Any = None,
    ksize: Any = None,
    strides: Any = None,
    padding: str = "VALID",
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
) -> Tensor:
    """The maximum over each ksize window."""
    value = input if value is None else value
    return _pool("MaxPool", value, ksize, strides, padding, data_format, name)


def avg_pool(
    value: Any = None,
    ksize: Any = None,
    strides: Any = None,
    padding: str = "VALID",
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
) -> Tensor:
    """The mean over each ksize window (padded positions not counted)."""
    value = input if value is None else value
    return _pool("AvgPool", value, ksize, strides, padding, data_format, name)


max_pool2d = max_pool
avg_pool2d = avg_pool


# --- top k ----------------------------------------------------------------------------------------
TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def top_k(input: Any, k: Any = 1, sorted: bool = True, name: str | None = None) -> TopKV2:
    """The k largest entries of the last axis (values, int32 indices), largest first."""
    k = _tensor(k, dtype=dtypes.int32)
    values, indices = _create("TopKV2", [_tensor(input), k], {"sorted": sorted}, name=name)
    return TopKV2(values, indices)


def in_top_k(predictions: Any, targets: Any, k: Any, name: str | None = None) -> Tensor:
    """Whether each target class is among the k highest predictions of its row."""
    predictions = _tensor(predictions)
    targets = _tensor(targets)
    k = _tensor(k, dtype=targets.dtype.base_dtype)
    return _create("InTopKV2", [predictions, targets, k], name=name)


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of zeros in ``value``."""
    value = _tensor(value)
    zero = math_ops.cast(math_ops.equal(value, 0), dtypes.float32)
    return math_ops.reduce_mean(zero, name=name or "zero_fraction")
