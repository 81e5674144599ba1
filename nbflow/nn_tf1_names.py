"""The rest of TensorFlow 1.15's ``tf.nn``, composed from ops nbflow already has.

Each name here is either a second spelling TensorFlow kept for an op nbflow declares once
(``conv2d_backprop_input`` is the ``Conv2DBackpropInput`` that ``conv2d_transpose`` builds,
``max_pool_v2`` dispatches on rank to ``max_pool``/``max_pool1d``/``max_pool3d``), or a
composite TensorFlow itself writes in Python over other ops, with its gradient coming from
theirs: the statistics behind ``moments`` (``sufficient_statistics``, ``normalize_moments``,
``weighted_moments``), ``log_poisson_loss``, ``swish``, and ``space_to_batch_nd`` /
``batch_to_space_nd`` (pad, reshape and transpose), on which ``with_space_to_batch`` runs a
VALID op at a dilation rate, as TensorFlow's atrous ``pool`` and ``convolution`` do.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]]).shape.as_list()
    [4, 2, 2, 1]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nbflow import nn_convolution, nn_impl
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Tensor
from nbflow.framework.sparse_tensor import SparseTensor
from nbflow.ops import array_ops, embedding_ops, math_ops, sparse_ops
from nbflow.ops.candidate_sampling_ops import (  # noqa: F401 - tf.nn names
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    uniform_candidate_sampler,
)
from nbflow.ops.rearrange_ops import depth_to_space, space_to_depth  # noqa: F401 - tf.nn names

__all__ = [
    "all_candidate_sampler",
    "atrous_conv2d_transpose",
    "avg_pool1d",
    "avg_pool_v2",
    "batch_norm_with_global_normalization",
    "batch_to_space",
    "batch_to_space_nd",
    "compute_accidental_hits",
    "compute_average_loss",
    "conv1d_transpose",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv3d_backprop_filter",
    "conv3d_backprop_filter_v2",
    "conv_transpose",
    "convolution",
    "depth_to_space",
    "depthwise_conv2d_backprop_filter",
    "depthwise_conv2d_backprop_input",
    "depthwise_conv2d_native_backprop_filter",
    "depthwise_conv2d_native_backprop_input",
    "fixed_unigram_candidate_sampler",
    "learned_unigram_candidate_sampler",
    "log_poisson_loss",
    "max_pool1d",
    "max_pool_v2",
    "normalize_moments",
    "pool",
    "required_space_to_batch_paddings",
    "safe_embedding_lookup_sparse",
    "scale_regularization_loss",
    "space_to_batch",
    "space_to_batch_nd",
    "space_to_depth",
    "sufficient_statistics",
    "swish",
    "uniform_candidate_sampler",
    "weighted_moments",
    "with_space_to_batch",
]


def _tensor(x: Any, dtype: Any = None) -> Tensor:
    return ops_lib.convert_to_tensor(x, dtype=dtype)


# --- activations and losses -----------------------------------------------------------------------
def swish(features: Any, name: str | None = None) -> Tensor:
    """``features * sigmoid(features)`` (Ramachandran et al. 2017, "SiLU").

    >>> import nbflow as tf
    >>> with tf.Session() as s: print(round(float(s.run(tf.nn.swish(1.0))), 4))
    0.7311
    """
    with ops_lib.name_scope(name, "swish", [features]):
        features = _tensor(features)
        return math_ops.multiply(features, math_ops.sigmoid(features))


def log_poisson_loss(
    targets: Any, log_input: Any, compute_full_loss: bool = False, name: str | None = None
) -> Tensor:
    """Negative log likelihood of ``targets`` under Poisson(exp(log_input)), elementwise:
    ``exp(log_input) - log_input * targets``, plus Stirling's approximation of log(targets!)
    (for targets > 1) when ``compute_full_loss``."""
    with ops_lib.name_scope(name, "log_poisson_loss", [targets, log_input]):
        log_input = _tensor(log_input)
        targets = _tensor(targets, dtype=log_input.dtype.base_dtype)
        targets.shape.assert_is_compatible_with(log_input.shape)
        result = math_ops.subtract(math_ops.exp(log_input), math_ops.multiply(log_input, targets))
        if not compute_full_loss:
            return result
        safe = math_ops.maximum(targets, array_ops.ones_like(targets))
        stirling = safe * math_ops.log(safe) - safe + 0.5 * math_ops.log(2 * math.pi * safe)
        zeros = array_ops.zeros_like(targets)
        keep = math_ops.greater(targets, array_ops.ones_like(targets))
        return math_ops.add(result, array_ops.where(keep, stirling, zeros))


def compute_average_loss(
    per_example_loss: Any, sample_weight: Any = None, global_batch_size: Any = None
) -> Tensor:
    """The sum of (weighted) per-example losses over ``global_batch_size`` (default: the batch)."""
    loss = _tensor(per_example_loss)
    if sample_weight is not None:
        loss = math_ops.multiply(loss, _tensor(sample_weight, dtype=loss.dtype.base_dtype))
    if global_batch_size is None:
        global_batch_size = array_ops.shape(loss)[0]
    batch = math_ops.cast(global_batch_size, loss.dtype.base_dtype)
    return math_ops.divide(math_ops.reduce_sum(loss), batch)


def scale_regularization_loss(regularization_loss: Any) -> Tensor:
    """The summed regularization loss, divided by the number of replicas (1 in a TF1 graph)."""
    return math_ops.reduce_sum(_tensor(regularization_loss))


# --- moments --------------------------------------------------------------------------------------
def sufficient_statistics(
    x: Any,
    axes: Sequence[int],
    shift: Any = None,
    keep_dims: Any = None,
    name: str | None = None,
    keepdims: Any = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor | None]:
    """(count, sum of x - shift, sum of (x - shift)^2, shift) over ``axes``: what
    ``normalize_moments`` turns into mean and variance."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with ops_lib.name_scope(name, "sufficient_statistics", [x, shift]):
        x = _tensor(x)
        axes = [int(a) for a in axes]
        dims = array_ops.gather(array_ops.shape(x), axes)
        counts = math_ops.cast(math_ops.reduce_prod(dims), x.dtype.base_dtype, name="count")
        if shift is not None:
            shift = _tensor(shift, dtype=x.dtype.base_dtype)
            centered = math_ops.subtract(x, shift)
        else:
            centered = x
        mean_ss = math_ops.reduce_sum(centered, axes, keepdims=keep, name="mean_ss")
        var_ss = math_ops.reduce_sum(math_ops.square(centered), axes, keepdims=keep, name="var_ss")
        return counts, mean_ss, var_ss, shift


def normalize_moments(
    counts: Any, mean_ss: Any, variance_ss: Any, shift: Any, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """Mean and variance from ``sufficient_statistics``."""
    with ops_lib.name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        mean_ss = _tensor(mean_ss)
        divisor = math_ops.reciprocal(_tensor(counts, dtype=mean_ss.dtype.base_dtype))
        shifted_mean = math_ops.multiply(mean_ss, divisor)
        mean = shifted_mean if shift is None else math_ops.add(shifted_mean, shift, name="mean")
        variance = math_ops.subtract(
            math_ops.multiply(_tensor(variance_ss), divisor),
            math_ops.square(shifted_mean),
            name="variance",
        )
        return mean, variance


def weighted_moments(
    x: Any,
    axes: Sequence[int],
    frequency_weights: Any,
    name: str | None = None,
    keep_dims: Any = None,
    keepdims: Any = None,
) -> tuple[Tensor, Tensor]:
    """Mean and variance of ``x`` over ``axes`` with each element counted
    ``frequency_weights`` times (weights broadcast against x)."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with ops_lib.name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = _tensor(x)
        weights = _tensor(frequency_weights, dtype=x.dtype.base_dtype)
        axes = [int(a) for a in axes]
        weighted_sum = math_ops.reduce_sum(math_ops.multiply(weights, x), axes, keepdims=True)
        broadcast_weights = math_ops.add(weights, array_ops.zeros_like(x))
        divisor = math_ops.reciprocal(math_ops.reduce_sum(broadcast_weights, axes, keepdims=True))
        mean = math_ops.multiply(weighted_sum, divisor)
        squared = math_ops.squared_difference(x, mean)
        weighted_squared = math_ops.reduce_sum(
            math_ops.multiply(weights, squared), axes, keepdims=True
        )
        variance = math_ops.multiply(weighted_squared, divisor)
        if not keep:
            mean, variance = array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes)
        return mean, variance


def batch_norm_with_global_normalization(
    t: Any = None,
    m: Any = None,
    v: Any = None,
    beta: Any = None,
    gamma: Any = None,
    variance_epsilon: Any = None,
    scale_after_normalization: Any = None,
    name: str | None = None,
    input: Any = None,
    mean: Any = None,
    variance: Any = None,  # noqa: A002
) -> Tensor:
    """The deprecated spelling of ``batch_normalization`` (gamma applied only when
    ``scale_after_normalization``)."""
    t = input if t is None else t
    m = mean if m is None else m
    v = variance if v is None else v
    scale = gamma if scale_after_normalization else None
    return nn_impl.batch_normalization(t, m, v, beta, scale, variance_epsilon, name=name)


# --- convolution spellings ------------------------------------------------------------------------
def _conv2d_attrs(strides: Any, padding: Any, data_format: str, dilations: Any) -> dict[str, Any]:
    data_format = data_format or "NHWC"
    return {
        "strides": nn_impl._four(strides, data_format, "strides"),
        "padding": padding.upper() if isinstance(padding, str) else padding,
        "data_format": data_format,
        "dilations": nn_impl._four(dilations, data_format, "dilations"),
    }


def _sizes(value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    return array_ops.constant(np.asarray(value, dtype=np.int32))


def _backprop_input(
    op_type: str, input_sizes: Any, filter: Any, out_backprop: Any, attrs: dict, name: str | None
) -> Tensor:
    """A convolution's gradient op with respect to an input of shape ``input_sizes``."""
    out_backprop = _tensor(out_backprop)
    filter = _tensor(filter, dtype=out_backprop.dtype.base_dtype)
    return nn_impl._create(op_type, [_sizes(input_sizes), filter, out_backprop], attrs, name=name)


def _backprop_filter(
    op_type: str, input: Any, filter_sizes: Any, out_backprop: Any, attrs: dict, name: str | None
) -> Tensor:
    """A convolution's gradient op with respect to a filter of shape ``filter_sizes``."""
    input = _tensor(input)
    out_backprop = _tensor(out_backprop, dtype=input.dtype.base_dtype)
    return nn_impl._create(op_type, [input, _sizes(filter_sizes), out_backprop], attrs, name=name)


def conv2d_backprop_input(
    input_sizes: Any,
    filter: Any = None,
    out_backprop: Any = None,
    strides: Any = None,  # noqa: A002
    padding: Any = None,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """The gradient of ``conv2d`` with respect to an input of shape ``input_sizes``."""
    filter = filters if filter is None else filter
    attrs = _conv2d_attrs(strides, padding, data_format, dilations)
    return _backprop_input("Conv2DBackpropInput", input_sizes, filter, out_backprop, attrs, name)


def conv2d_backprop_filter(
    input: Any,
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any,
    padding: Any,  # noqa: A002
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The gradient of ``conv2d`` with respect to a filter of shape ``filter_sizes``."""
    attrs = _conv2d_attrs(strides, padding, data_format, dilations)
    return _backprop_filter("Conv2DBackpropFilter", input, filter_sizes, out_backprop, attrs, name)


def conv3d_backprop_filter_v2(
    input: Any,
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any,
    padding: Any,  # noqa: A002
    data_format: str = "NDHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The gradient of ``conv3d`` with respect to a filter of shape ``filter_sizes``."""
    data_format = data_format or "NDHWC"
    attrs = {
        "strides": nn_convolution._five(strides, data_format, "strides"),
        "padding": padding.upper(),
        "data_format": data_format,
        "dilations": nn_convolution._five(dilations, data_format, "dilations"),
    }
    return _backprop_filter(
        "Conv3DBackpropFilterV2", input, filter_sizes, out_backprop, attrs, name
    )


conv3d_backprop_filter = conv3d_backprop_filter_v2


def depthwise_conv2d_native_backprop_input(
    input_sizes: Any,
    filter: Any,
    out_backprop: Any,
    strides: Any,
    padding: Any,  # noqa: A002
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The gradient of ``depthwise_conv2d_native`` with respect to its input."""
    attrs = _conv2d_attrs(strides, padding, data_format, dilations)
    return _backprop_input(
        "DepthwiseConv2dNativeBackpropInput", input_sizes, filter, out_backprop, attrs, name
    )


def depthwise_conv2d_native_backprop_filter(
    input: Any,
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any,
    padding: Any,  # noqa: A002
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The gradient of ``depthwise_conv2d_native`` with respect to its filter."""
    attrs = _conv2d_attrs(strides, padding, data_format, dilations)
    return _backprop_filter(
        "DepthwiseConv2dNativeBackpropFilter", input, filter_sizes, out_backprop, attrs, name
    )


depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter


def conv1d_transpose(
    input: Any,
    filters: Any,
    output_shape: Any,
    strides: Any,
    padding: str = "SAME",  # noqa: A002
    data_format: str = "NWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The transpose of ``conv1d``: a ``conv2d_transpose`` over a height axis of size 1."""
    if data_format not in (None, "NWC"):
        raise ValueError(f'conv1d_transpose supports data_format="NWC" only, got {data_format!r}')
    with ops_lib.name_scope(name, "conv1d_transpose", [input, filters, output_shape]) as scope:
        value = array_ops.expand_dims(_tensor(input), 1)
        filters = array_ops.expand_dims(_tensor(filters, dtype=value.dtype.base_dtype), 0)
        shape = _sizes(output_shape)
        shape = array_ops.concat([shape[:1], array_ops.constant([1], dtypes.int32), shape[1:]], 0)
        stride = nn_convolution._with_unit_height(strides, "NHWC", "strides")
        dilation = nn_convolution._with_unit_height(dilations, "NHWC", "dilations")
        result = nn_impl.conv2d_transpose(
            value, filters, shape, strides=stride, padding=padding, dilations=dilation
        )
        return array_ops.squeeze(result, [1], name=scope)


def atrous_conv2d_transpose(
    value: Any, filters: Any, output_shape: Any, rate: int, padding: str, name: str | None = None
) -> Tensor:
    """The transpose of ``atrous_conv2d``: ``conv2d_transpose`` at dilation ``rate``."""
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return nn_impl.conv2d_transpose(
        value,
        filters,
        output_shape,
        [1, 1, 1, 1],
        padding,
        dilations=[1, rate, rate, 1],
        name=name or "atrous_conv2d_transpose",
    )


def conv_transpose(
    input: Any,
    filters: Any,
    output_shape: Any,
    strides: Any,
    padding: str = "SAME",  # noqa: A002
    data_format: str | None = None,
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """``conv1d_transpose``, ``conv2d_transpose`` or ``conv3d_transpose`` by the filter's rank."""
    rank = _tensor(filters).shape.ndims
    if rank == 3:
        return conv1d_transpose(
            input, filters, output_shape, strides, padding, data_format or "NWC", dilations, name
        )
    if rank == 4:
        return nn_impl.conv2d_transpose(
            input,
            filters,
            output_shape,
            strides,
            padding,
            data_format or "NHWC",
            name,
            dilations=dilations,
        )
    if rank == 5:
        return nn_convolution.conv3d_transpose(
            input,
            filters,
            output_shape,
            strides,
            padding,
            data_format or "NDHWC",
            name,
            dilations=dilations,
        )
    raise ValueError(f"conv_transpose needs a filter of rank 3, 4 or 5, got rank {rank}")


def convolution(
    input: Any,
    filter: Any = None,
    padding: Any = None,
    strides: Any = None,  # noqa: A002
    dilation_rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """N-D convolution: ``conv1d``, ``conv2d`` or ``conv3d`` by the filter's rank."""
    filter = filters if filter is None else filter
    dilations = dilation_rate if dilations is None else dilations
    rank = _tensor(filter).shape.ndims
    if rank == 3:
        return nn_convolution.conv1d(
            input,
            filter,
            strides or 1,
            padding,
            data_format=data_format,
            dilations=dilations,
            name=name,
        )
    if rank == 4:
        return nn_impl.conv2d(
            input,
            filter,
            strides or 1,
            padding,
            data_format=data_format or "NHWC",
            dilations=dilations,
            name=name,
        )
    if rank == 5:
        return nn_convolution.conv3d(
            input,
            filter,
            strides or 1,
            padding,
            data_format=data_format or "NDHWC",
            dilations=dilations,
            name=name,
        )
    raise ValueError(f"convolution needs a filter of rank 3, 4 or 5, got rank {rank}")


# --- pooling spellings ----------------------------------------------------------------------------
def _pool1d(
    pool: Callable[..., Tensor],
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,  # noqa: A002
    data_format: str,
    name: str | None,
    scope_name: str,
) -> Tensor:
    if data_format not in (None, "NWC"):
        raise ValueError(f'{scope_name} supports data_format="NWC" only, got {data_format!r}')
    with ops_lib.name_scope(name, scope_name, [input]) as scope:
        value = array_ops.expand_dims(_tensor(input), 1)
        ksize = nn_convolution._with_unit_height(ksize, "NHWC", "ksize")
        strides = nn_convolution._with_unit_height(strides, "NHWC", "strides")
        return array_ops.squeeze(pool(value, ksize, strides, padding), [1], name=scope)


def max_pool1d(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NWC",  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """The maximum over each window of a [N, W, C] input."""
    return _pool1d(nn_impl.max_pool, input, ksize, strides, padding, data_format, name, "MaxPool1d")


def avg_pool1d(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NWC",  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """The mean over each window of a [N, W, C] input."""
    return _pool1d(nn_impl.avg_pool, input, ksize, strides, padding, data_format, name, "AvgPool1d")


def _pool_by_rank(
    kind: str,
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,  # noqa: A002
    data_format: str | None,
    name: str | None,
) -> Tensor:
    rank = _tensor(input).shape.ndims
    if rank == 3:
        pool1d = max_pool1d if kind == "MAX" else avg_pool1d
        return pool1d(input, ksize, strides, padding, data_format or "NWC", name)
    if rank == 4:
        pool2d = nn_impl.max_pool if kind == "MAX" else nn_impl.avg_pool
        return pool2d(input, ksize, strides, padding, data_format or "NHWC", name)
    if rank == 5:
        pool3d = nn_convolution.max_pool3d if kind == "MAX" else nn_convolution.avg_pool3d
        return pool3d(input, ksize, strides, padding, data_format or "NDHWC", name)
    raise ValueError(f"pooling needs an input of rank 3, 4 or 5, got rank {rank}")


def max_pool_v2(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,  # noqa: A002
    data_format: str | None = None,
    name: str | None = None,
) -> Tensor:
    """``max_pool1d``, ``max_pool`` or ``max_pool3d`` by the input's rank."""
    return _pool_by_rank("MAX", input, ksize, strides, padding, data_format, name)


def avg_pool_v2(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,  # noqa: A002
    data_format: str | None = None,
    name: str | None = None,
) -> Tensor:
    """``avg_pool1d``, ``avg_pool`` or ``avg_pool3d`` by the input's rank."""
    return _pool_by_rank("AVG", input, ksize, strides, padding, data_format, name)


def pool(
    input: Any,
    window_shape: Sequence[int],
    pooling_type: str,
    padding: str,  # noqa: A002
    dilation_rate: Any = None,
    strides: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Tensor:
    """N-D max or average pooling; a dilated window runs through ``with_space_to_batch``."""
    dilations = dilation_rate if dilations is None else dilations
    window = [int(w) for w in window_shape]
    dilations = [1] * len(window) if dilations is None else [int(d) for d in dilations]
    strides = [1] * len(window) if strides is None else [int(s) for s in strides]
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"pooling_type must be MAX or AVG, got {pooling_type!r}")
    if data_format not in (None, "NWC", "NHWC", "NDHWC"):
        raise ValueError(f"pool supports channels-last data formats only, got {data_format!r}")
    if padding == "SAME" and any(d != 1 for d in dilations):
        raise ValueError("pooling with SAME padding is not implemented for dilation_rate > 1")
    if any(d != 1 for d in dilations) and any(s != 1 for s in strides):
        raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")

    def windowed(x: Tensor, num_spatial_dims: int, padding: str) -> Tensor:
        return _pool_by_rank(pooling_type, x, window, strides, padding, None, None)

    with ops_lib.name_scope(name, f"{pooling_type.lower()}_pool", [input]):
        return with_space_to_batch(input, dilations, padding, windowed, filter_shape=window)


# --- space to batch -------------------------------------------------------------------------------
def _int_list(value: Any, what: str) -> list[int]:
    if isinstance(value, Tensor):
        known = ops_lib.constant_value(value)
        if known is None:
            raise ValueError(f"{what} must be known when the graph is built, got {value}")
        value = known
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _dims(x: Tensor) -> list[Any]:
    """x's dimensions: Python ints where known at graph construction, scalar tensors elsewhere."""
    dims = x.shape.as_list()
    if x.shape.is_fully_defined():
        return dims
    dynamic = array_ops.shape(x)
    return [d if d is not None else dynamic[i] for i, d in enumerate(dims)]


def _shape_vector(parts: list[Any]) -> Any:
    if all(isinstance(p, (int, np.integer)) for p in parts):
        return [int(p) for p in parts]
    return array_ops.stack([_tensor(p, dtype=dtypes.int32) for p in parts])


def space_to_batch_nd(
    input: Any,
    block_shape: Any,
    paddings: Any,
    name: str | None = None,  # noqa: A002
) -> Tensor:
    """Zero-pads the M spatial dims after the batch by ``paddings`` ([M, 2]) and moves each
    ``block_shape`` block into the batch: [B, *spatial, *rest] -> [B * prod(block),
    *(padded / block), *rest], batch index ``(offset in the block) * B + b``."""
    block = _int_list(block_shape, "block_shape")
    pads = np.asarray(_int_list(paddings, "paddings")).reshape(len(block), 2)
    with ops_lib.name_scope(name, "SpaceToBatchND", [input]):
        x = _tensor(input)
        m = len(block)
        rest_rank = len(x.shape) - 1 - m
        x = array_ops.pad(x, [[0, 0], *pads.tolist()] + [[0, 0]] * rest_rank)
        dims = _dims(x)
        split = [dims[0]]
        for i, b in enumerate(block):
            split += [dims[1 + i] // b, b]
        rest = dims[1 + m :]
        x = array_ops.reshape(x, _shape_vector(split + rest))
        perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
        perm += list(range(1 + 2 * m, 1 + 2 * m + rest_rank))
        x = array_ops.transpose(x, perm)
        outer = [dims[0] * int(np.prod(block))] + [dims[1 + i] // b for i, b in enumerate(block)]
        return array_ops.reshape(x, _shape_vector(outer + rest))


def batch_to_space_nd(
    input: Any,
    block_shape: Any,
    crops: Any,
    name: str | None = None,  # noqa: A002
) -> Tensor:
    """The inverse of ``space_to_batch_nd``: batch blocks back into space, then ``crops``."""
    block = _int_list(block_shape, "block_shape")
    crop = np.asarray(_int_list(crops, "crops")).reshape(len(block), 2)
    with ops_lib.name_scope(name, "BatchToSpaceND", [input]):
        x = _tensor(input)
        m = len(block)
        rest_rank = len(x.shape) - 1 - m
        dims = _dims(x)
        batch = dims[0] // int(np.prod(block))
        rest = dims[1 + m :]
        x = array_ops.reshape(x, _shape_vector([*block, batch, *dims[1 : 1 + m], *rest]))
        perm = [m]
        for i in range(m):
            perm += [m + 1 + i, i]
        perm += list(range(1 + 2 * m, 1 + 2 * m + rest_rank))
        x = array_ops.transpose(x, perm)
        merged = [batch, *(dims[1 + i] * b for i, b in enumerate(block))]
        x = array_ops.reshape(x, _shape_vector(merged + rest))
        begin = [0, *crop[:, 0].tolist()] + [0] * rest_rank
        size = [-1] + [merged[1 + i] - int(crop[i].sum()) for i in range(m)] + [-1] * rest_rank
        return array_ops.slice(x, begin, _shape_vector(size))


def _square_block(block_size: Any, block_shape: Any) -> Any:
    """The 2-D block of ``space_to_batch``/``batch_to_space``: ``block_shape``, else a square
    ``block_size`` one."""
    block = block_shape if block_shape is not None else [block_size, block_size]
    return [block, block] if isinstance(block, int) else block


def space_to_batch(
    input: Any,
    paddings: Any,
    block_size: Any = None,
    name: str | None = None,  # noqa: A002
    block_shape: Any = None,
) -> Tensor:
    """``space_to_batch_nd`` of a 4-D input with a square ``block_size`` block."""
    block = _square_block(block_size, block_shape)
    return space_to_batch_nd(input, block, paddings, name=name or "SpaceToBatch")


def batch_to_space(
    input: Any,
    crops: Any,
    block_size: Any = None,
    name: str | None = None,  # noqa: A002
    block_shape: Any = None,
) -> Tensor:
    """``batch_to_space_nd`` of a 4-D input with a square ``block_size`` block."""
    block = _square_block(block_size, block_shape)
    return batch_to_space_nd(input, block, crops, name=name or "BatchToSpace")


def required_space_to_batch_paddings(
    input_shape: Any, block_shape: Any, base_paddings: Any = None, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """(paddings, crops) that make each padded spatial size a multiple of ``block_shape``
    after ``base_paddings``; crops undo the extra padding at the end."""
    with ops_lib.name_scope(name, "required_space_to_batch_paddings", [input_shape, block_shape]):
        shape = _tensor(input_shape, dtype=dtypes.int32)
        block = _tensor(block_shape, dtype=dtypes.int32)
        m = block.shape.num_elements()
        if base_paddings is None:
            base = array_ops.zeros([m, 2], dtypes.int32)
        else:
            base = _tensor(base_paddings, dtype=dtypes.int32)
        start, end = base[:, 0], base[:, 1]
        full = shape + start + end
        extra = math_ops.floormod(block - math_ops.floormod(full, block), block)
        paddings = array_ops.stack([start, end + extra], axis=1, name="paddings")
        crops = array_ops.stack([array_ops.zeros_like(extra), extra], axis=1, name="crops")
        return paddings, crops


def with_space_to_batch(
    input: Any,
    dilation_rate: Any,
    padding: str,
    op: Callable[[Tensor, int, str], Tensor],  # noqa: A002
    filter_shape: Any = None,
    spatial_dims: Any = None,
    data_format: str | None = None,
) -> Tensor:
    """``op(input, num_spatial_dims, padding)`` at ``dilation_rate``: space-to-batch by the
    rate, the op on VALID padding, batch-to-space and crop (TensorFlow's atrous trick)."""
    rate = [int(r) for r in np.asarray(dilation_rate).reshape(-1)]
    x = _tensor(input)
    if spatial_dims not in (None, list(range(1, len(rate) + 1))):
        raise ValueError(f"with_space_to_batch supports spatial_dims 1..M only, got {spatial_dims}")
    if all(r == 1 for r in rate):
        return op(x, len(rate), padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("filter_shape must be specified for SAME padding")
        extra = [(int(f) - 1) * r for f, r in zip(filter_shape, rate, strict=True)]
        base = [[e // 2, e - e // 2] for e in extra]
    elif padding == "VALID":
        base = [[0, 0] for _ in rate]
    else:
        raise ValueError(f"Invalid padding method {padding!r}")
    spatial = x.shape.as_list()[1 : 1 + len(rate)]
    if any(d is None for d in spatial):
        raise ValueError(f"with_space_to_batch needs known spatial sizes, got {x.shape}")
    base_arr = np.asarray(base)
    full = np.asarray(spatial) + base_arr.sum(axis=1)
    extra_end = (np.asarray(rate) - full % np.asarray(rate)) % np.asarray(rate)
    paddings = np.stack([base_arr[:, 0], base_arr[:, 1] + extra_end], axis=1)
    crops = np.stack([np.zeros_like(extra_end), extra_end], axis=1)
    converted = space_to_batch_nd(x, rate, paddings)
    result = op(converted, len(rate), "VALID")
    return batch_to_space_nd(result, rate, crops)


# --- sampled losses and embeddings ----------------------------------------------------------------
def compute_accidental_hits(
    true_classes: Any,
    sampled_candidates: Any,
    num_true: int,
    seed: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """(row indices, sampled positions, -FLT_MAX weights) of every sampled candidate that
    equals one of its row's true classes, ordered by row then sampled position: added to the
    sampled logits, they remove accidental hits."""
    with ops_lib.name_scope(name, "ComputeAccidentalHits", [true_classes, sampled_candidates]):
        true_classes = _tensor(true_classes, dtype=dtypes.int64)
        sampled = _tensor(sampled_candidates, dtype=dtypes.int64)
        hits = math_ops.equal(
            array_ops.expand_dims(true_classes, 2), array_ops.reshape(sampled, [1, 1, -1])
        )
        where = array_ops.where(math_ops.reduce_any(hits, axis=1))
        indices = math_ops.cast(where[:, 0], dtypes.int32, name="indices")
        ids = math_ops.cast(where[:, 1], dtypes.int64, name="ids")
        weights = array_ops.fill(array_ops.shape(indices), np.float32(-np.finfo(np.float32).max))
        return indices, ids, weights


def safe_embedding_lookup_sparse(
    embedding_weights: Any,
    sparse_ids: SparseTensor,
    sparse_weights: Any = None,
    combiner: str = "mean",
    default_id: Any = None,
    name: str | None = None,
    partition_strategy: str = "div",
    max_norm: Any = None,
) -> Tensor:
    """``embedding_lookup_sparse`` that drops invalid (negative) ids and non-positive weights
    and gives empty rows the embedding of ``default_id`` (zeros when None)."""
    with ops_lib.name_scope(name, "embedding_lookup", [sparse_ids]):
        ids = sparse_ops.sparse_input(sparse_ids, "sparse_ids")
        keep = math_ops.greater_equal(ids.values, 0)
        if sparse_weights is not None:
            sparse_weights = sparse_ops.sparse_input(sparse_weights, "sparse_weights")
            keep = math_ops.logical_and(keep, math_ops.greater(sparse_weights.values, 0))
            sparse_weights = sparse_ops.sparse_retain(sparse_weights, keep)
        ids = sparse_ops.sparse_retain(ids, keep)
        ids, empty_rows = sparse_ops.sparse_fill_empty_rows(ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse_ops.sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_ops.embedding_lookup_sparse(
            embedding_weights,
            ids,
            sparse_weights,
            partition_strategy=partition_strategy,
            combiner=combiner,
            max_norm=max_norm,
        )
        if default_id is None:
            filled = math_ops.cast(math_ops.logical_not(empty_rows), result.dtype.base_dtype)
            result = math_ops.multiply(result, array_ops.reshape(filled, [-1, 1]))
        return result
