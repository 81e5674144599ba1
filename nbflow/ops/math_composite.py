"""``tf.math`` functions TensorFlow 1.15 builds from other ops, and TF1's renamed spellings.

Variance and standard deviation, the Euclidean norm, the cumulative log-sum-exp, polynomial
evaluation, the confusion matrix, monotonicity checks and saturating casts are graph code over
the declared ops, so they inherit those ops' kernels and gradients. ``arg_max``/``arg_min`` and
the ``to_*`` casts are TensorFlow 1.x's older names.
"""

from __future__ import annotations

from typing import Any


from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.ops.clip_ops import clip_by_value
from nbflow.ops.constant_ops import _int_tensor, ones_like, stop_gradient, zeros_like
from nbflow.ops.gather_ops import unsorted_segment_sum
from nbflow.ops.join_ops import concat, stack
from nbflow.ops.math_binary import add, greater, greater_equal, multiply
from nbflow.ops.math_binary import subtract
from nbflow.ops.math_reductions import argmax, argmin, reduce_all, reduce_max, reduce_mean
from nbflow.ops.math_reductions import reduce_sum
from nbflow.ops.math_unary import abs as abs_
from nbflow.ops.math_unary import cast, exp, log, sqrt, square
from nbflow.ops.scan_ops import cumsum
from nbflow.ops.shape_ops import reshape
from nbflow.ops.slicing_ops import strided_slice

Tensor = ops_lib.Tensor


# --- statistics -----------------------------------------------------------------------------------
def reduce_variance(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str = "reduce_variance"
) -> Tensor:
    """The mean squared deviation from the mean over ``axis``.

    >>> import nbflow as tf
    >>> float(tf.Session().run(tf.math.reduce_variance([1.0, 2.0, 3.0, 4.0])))
    1.25
    """
    with ops_lib.name_scope(name, values=[input_tensor]):
        x = ops_lib.convert_to_tensor(input_tensor)
        deviations = subtract(x, reduce_mean(x, axis, keepdims=True))
        squared = square(abs_(deviations)) if x.dtype.is_complex else square(deviations)
        return reduce_mean(squared, axis, keepdims=keepdims)


def reduce_std(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str = "reduce_std"
) -> Tensor:
    """The standard deviation over ``axis``: sqrt of ``reduce_variance``."""
    with ops_lib.name_scope(name, values=[input_tensor]):
        return sqrt(reduce_variance(input_tensor, axis, keepdims))


def reduce_euclidean_norm(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """sqrt(sum(x ** 2)) over ``axis``; integers are computed in float64 and truncated back."""
    with ops_lib.name_scope(name, "reduce_euclidean_norm", [input_tensor]):
        x = ops_lib.convert_to_tensor(input_tensor)
        dtype = x.dtype.base_dtype
        if dtype.is_integer:
            x = cast(x, dtypes.float64)
        norm = sqrt(reduce_sum(square(x), axis, keepdims=keepdims))
        return cast(norm, dtype) if dtype.is_integer else norm


def cumulative_logsumexp(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """log(cumsum(exp(x))) along ``axis``, shifted by the maximum so no exp overflows.

    >>> import nbflow as tf
    >>> x = tf.constant([0.0, 0.0], tf.float64)
    >>> tf.Session().run(tf.math.cumulative_logsumexp(x)).round(4).tolist()
    [0.0, 0.6931]
    """
    with ops_lib.name_scope(name, "cumulative_logsumexp", [x]):
        x = ops_lib.convert_to_tensor(x)
        shift = stop_gradient(reduce_max(x, axis, keepdims=True))
        summed = cumsum(exp(subtract(x, shift)), axis, exclusive=exclusive, reverse=reverse)
        return add(log(summed), shift)


def polyval(coeffs: list[Any], x: Any, name: str | None = None) -> Tensor:
    """coeffs[0] * x**(n-1) + ... + coeffs[n-1], by Horner's rule; 0 for no coefficients."""
    with ops_lib.name_scope(name, "polyval", [*coeffs, x]):
        x = ops_lib.convert_to_tensor(x)
        if not coeffs:
            return zeros_like(x)
        p = ops_lib.convert_to_tensor(coeffs[0], dtype=x.dtype.base_dtype)
        for c in coeffs[1:]:
            p = add(ops_lib.convert_to_tensor(c, dtype=x.dtype.base_dtype), multiply(p, x))
        return p


def confusion_matrix(
    labels: Any,
    predictions: Any,
    num_classes: Any = None,
    dtype: Any = dtypes.int32,
    name: str | None = None,
    weights: Any = None,
) -> Tensor:
    """The [num_classes, num_classes] matrix counting (or summing ``weights`` of) each
    (label, prediction) pair: rows are labels, columns predictions.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.confusion_matrix([0, 1, 1, 2], [0, 1, 2, 2])).tolist()
    [[1, 0, 0], [0, 1, 1], [0, 0, 1]]
    """
    with ops_lib.name_scope(name, "confusion_matrix", [labels, predictions, num_classes]):
        labels = cast(_int_tensor(labels), dtypes.int64)
        predictions = cast(_int_tensor(predictions), dtypes.int64)
        if num_classes is None:
            num_classes = add(reduce_max(_stack_max(labels, predictions)), 1)
        n = cast(ops_lib.convert_to_tensor(num_classes), dtypes.int64)
        dtype = dtypes.as_dtype(dtype)
        values = ones_like(labels, dtype=dtype) if weights is None else cast(weights, dtype)
        cells = unsorted_segment_sum(values, add(multiply(labels, n), predictions), n * n)
        return reshape(cells, stack([n, n]))


def _stack_max(a: Tensor, b: Tensor) -> Tensor:
    """Both label vectors and a -1, so the max of an empty pair is -1 (0 classes)."""
    minus_one = ops_lib.convert_to_tensor([-1], a.dtype)
    return concat([reshape(a, [-1]), reshape(b, [-1]), minus_one], 0)


def _consecutive_pairs(x: Any) -> tuple[Tensor, Tensor]:
    flat = reshape(ops_lib.convert_to_tensor(x), [-1])
    return strided_slice(flat, [1], [0], end_mask=1), strided_slice(flat, [0], [-1])


def is_non_decreasing(x: Any, name: str | None = None) -> Tensor:
    """Whether each element of ``x`` (flattened) is >= the one before; True for < 2 elements."""
    with ops_lib.name_scope(name, "is_non_decreasing", [x]):
        later, earlier = _consecutive_pairs(x)
        return reduce_all(greater_equal(later, earlier))


def is_strictly_increasing(x: Any, name: str | None = None) -> Tensor:
    """Whether each element of ``x`` (flattened) is > the one before; True for < 2 elements."""
    with ops_lib.name_scope(name, "is_strictly_increasing", [x]):
        later, earlier = _consecutive_pairs(x)
        return reduce_all(greater(later, earlier))


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Tensor:
    """``value`` cast to ``dtype``, clipped first to the range ``dtype`` can hold."""
    with ops_lib.name_scope(name, "saturate_cast", [value]):
        value = ops_lib.convert_to_tensor(value)
        dtype = dtypes.as_dtype(dtype).base_dtype
        source = value.dtype.base_dtype
        if not (source.is_complex or dtype.is_complex or dtype is dtypes.bool):
            low, high = max(source.min, dtype.min), min(source.max, dtype.max)
            if low > source.min or high < source.max:
                value = clip_by_value(value, cast(low, source), cast(high, source))
        return cast(value, dtype)


# --- TensorFlow 1.x's older names -----------------------------------------------------------------
def arg_max(
    input: Any,  # noqa: A002 - TensorFlow's name
    dimension: Any,
    output_type: Any = dtypes.int64,
    name: str | None = None,
) -> Tensor:
    """``tf.arg_max``: the index of the largest value along ``dimension`` (``tf.argmax``)."""
    return argmax(input, dimension, name=name, output_type=output_type)


def arg_min(
    input: Any,  # noqa: A002 - TensorFlow's name
    dimension: Any,
    output_type: Any = dtypes.int64,
    name: str | None = None,
) -> Tensor:
    """``tf.arg_min``: the index of the smallest value along ``dimension`` (``tf.argmin``)."""
    return argmin(input, dimension, name=name, output_type=output_type)


def to_bfloat16(x: Any, name: str = "ToBFloat16") -> Tensor:
    return cast(x, dtypes.bfloat16, name=name)


def to_complex64(x: Any, name: str = "ToComplex64") -> Tensor:
    return cast(x, dtypes.complex64, name=name)


def to_complex128(x: Any, name: str = "ToComplex128") -> Tensor:
    return cast(x, dtypes.complex128, name=name)
