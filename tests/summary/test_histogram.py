"""The O(n) histogram agrees with a literal sort-free reference of TensorFlow's Histogram class."""

import math

import ml_dtypes
import numpy as np
import pytest

import nbflow as tf
from nbflow import errors
from nbflow.framework import protos
from nbflow.ops import histogram

LIMITS = histogram.BUCKET_LIMITS
DBL_MAX = np.finfo(np.float64).max


def reference_histogram(values):
    """TensorFlow's Histogram::Add over the values in order, then EncodeToProto, written plainly:
    values are read as double with subnormals flushed to zero (TensorFlow's CPU kernels run
    with denormals-are-zero: a float32 subnormal converts to a zero; a float64 one keeps its bits
    but compares and adds as zero)."""
    raw = np.asarray(values)
    if raw.dtype == np.float32 or raw.dtype.kind in "bV" or raw.dtype.itemsize <= 2:
        single = raw.astype(np.float32).ravel()
        tiny = np.finfo(np.float32).smallest_normal
        doubles = np.where(np.abs(single) < tiny, single * 0, single).astype(np.float64)
        shown = doubles
    else:
        shown = raw.astype(np.float64).ravel()
        doubles = shown
    seen = np.where(np.abs(doubles) < np.finfo(np.float64).smallest_normal, doubles * 0, doubles)
    h = protos.HistogramProto(min=DBL_MAX, max=-DBL_MAX)
    counts = np.zeros(len(LIMITS))
    if seen.size:
        bucket = np.searchsorted(LIMITS, seen, side="right")  # std::upper_bound
        kept = bucket < len(LIMITS)  # DBL_MAX falls past the last bucket
        counts = np.bincount(bucket[kept], minlength=len(LIMITS)).astype(np.float64)
        h.min = shown[np.flatnonzero(seen == seen.min())[0]]  # the first of equal values
        h.max = shown[np.flatnonzero(seen == seen.max())[0]]
        h.num = seen.size
        h.sum = 0.0 + seen.sum()
        with np.errstate(over="ignore"):
            h.sum_squares = (seen * seen).sum()
    i = 0
    while i < len(counts):
        end, count, j = LIMITS[i], counts[i], i + 1
        while count <= 0 and j < len(counts) and counts[j] <= 0:
            end, count, j = LIMITS[j], counts[j], j + 1
        h.bucket_limit.append(end)
        h.bucket.append(count)
        i = j
    return h


def assert_same_histogram(values):
    actual = protos.HistogramProto.FromString(histogram.histogram_bytes(values))
    expected = reference_histogram(values)
    # TensorFlow adds in order, the reference pairwise and nbflow in SIMD lanes: sums in any
    # order agree to within a few ulps of the sum of magnitudes (which cancellation can leave
    # far above the sum itself); the squares are all positive, so relatively
    with np.errstate(over="ignore"):
        magnitudes = np.abs(np.asarray(values, dtype=np.float64)).sum()
    assert abs(actual.sum - expected.sum) <= 1e-12 * magnitudes or actual.sum == expected.sum
    np.testing.assert_allclose(actual.sum_squares, expected.sum_squares, rtol=1e-12)
    actual.sum, actual.sum_squares = expected.sum, expected.sum_squares
    assert actual.SerializeToString() == expected.SerializeToString(), (actual, expected)


def _limits_and_neighbours(dtype):
    with np.errstate(over="ignore"):
        limits = LIMITS[1:-1].astype(dtype)
    finite = limits[np.isfinite(limits)]
    up, down = np.nextafter(finite, dtype(np.inf)), np.nextafter(finite, dtype(-np.inf))
    return np.concatenate([finite, up, down, -finite])


TRICKY = {
    "float64 limits and neighbours": _limits_and_neighbours(np.float64),
    "float32 limits and neighbours": _limits_and_neighbours(np.float32),
    "float16 limits and neighbours": _limits_and_neighbours(np.float16),
    "signed zeros, negative first": np.array([-0.0, 0.0, 0.0], np.float32),
    "signed zeros, positive first": np.array([0.0, -0.0, -1.0, 2.0], np.float64),
    "only negative zeros": np.array([-0.0, -0.0], np.float32),
    "huge and tiny magnitudes": np.array(
        [1e300, -1e300, 1e-300, -1e-300, 1e20, -1e20, 1e-12, -1e-12, 9.9e19, -9.9e19]
    ),
    "float32 extremes": np.array(
        [3.4028235e38, -3.4028235e38, 1.1754944e-38, -1.1754944e-38], np.float32
    ),
    "plus and minus DBL_MAX": np.array([DBL_MAX, -DBL_MAX, 1.0, DBL_MAX]),
    "float32 subnormals": np.array([1e-40, -1e-45, 2.0, -1e-41], np.float32),
    "float64 subnormals": np.array([-5e-324, 2e-310, 3.0, 1e-310]),
    "only subnormals": np.array([2e-308, 1e-310]),
    "int8": np.arange(-128, 128, dtype=np.int8),
    "uint8": np.arange(256, dtype=np.uint8),
    "int32": np.random.default_rng(1).integers(-(2**31), 2**31 - 1, 500).astype(np.int32),
    "int64 beyond 2**53": np.array([2**62 + 1, -(2**63), 2**63 - 1, 0, 3], np.int64),
    "uint64": np.array([2**64 - 1, 0, 12345], np.uint64),
    "bool": np.array([True, False, True]),
    "bfloat16": np.random.default_rng(2).standard_normal(300).astype(ml_dtypes.bfloat16),
    "float16 random": np.random.default_rng(3).standard_normal(3000).astype(np.float16),
    "log-uniform magnitudes, float32": (
        np.exp(np.random.default_rng(4).uniform(-60, 60, 20000))
        * np.random.default_rng(5).choice([-1, 1], 20000)
    ).astype(np.float32),
    "log-uniform magnitudes, float64": np.exp(np.random.default_rng(6).uniform(-700, 700, 20000))
    * np.random.default_rng(7).choice([-1, 1], 20000),
    "one value": np.array([0.5], np.float32),
    "empty": np.zeros((0, 3), np.float32),
    "transposed matrix": (np.random.default_rng(8).standard_normal((40, 30)) * 5).T,
    "big-endian float32": np.array([1.5, -2.5, 0.0, 1e-12], dtype=">f4"),
    "more values than one chunk": np.random.default_rng(9)
    .standard_normal(300_001)
    .astype(np.float32),
}


@pytest.mark.parametrize("name", list(TRICKY))
def test_histogram_matches_the_reference(name):
    assert_same_histogram(TRICKY[name])


def test_every_bucket_boundary_of_both_signs_in_both_widths():
    for dtype in (np.float32, np.float64):
        edges = _limits_and_neighbours(dtype)
        for value in edges[:: max(1, len(edges) // 400)]:
            assert_same_histogram(np.array([value, -value], dtype))


def test_weights_of_the_figure_1_mlp_give_the_reference_histogram():
    weights = (np.random.default_rng(0).standard_normal((784, 100)) * 0.05).astype(np.float32)
    assert_same_histogram(weights)
    h = protos.HistogramProto.FromString(histogram.histogram_bytes(weights))
    assert h.num == weights.size and sum(h.bucket) == weights.size


def test_empty_histogram_is_tensorflows():
    h = histogram.histogram_proto(np.array([], np.float32))
    assert (h.min, h.max, h.num) == (DBL_MAX, -DBL_MAX, 0)
    assert list(h.bucket_limit) == [DBL_MAX] and list(h.bucket) == [0.0]


def test_bucket_limits_are_tensorflows_default_limits():
    assert LIMITS[0] == -DBL_MAX and LIMITS[-1] == DBL_MAX and len(LIMITS) % 2 == 1
    middle = len(LIMITS) // 2
    assert LIMITS[middle] == 0.0 and LIMITS[middle + 1] == 1e-12
    np.testing.assert_array_equal(LIMITS[:middle], -LIMITS[middle + 1 :][::-1])
    assert LIMITS[-2] < 1e20 <= LIMITS[-2] * 1.1


@pytest.mark.parametrize(
    "values, message",
    [
        ([1.0, np.nan, np.inf], "Nan in summary histogram for: w"),
        ([1.0, -np.inf, np.nan], "Infinity in summary histogram for: w"),
    ],
)
def test_non_finite_values_fail_like_tensorflow(values, message):
    for dtype in (np.float32, np.float64):
        with pytest.raises(errors.InvalidArgumentError, match=message):
            histogram.histogram_bytes(np.array(values, dtype), "w")


def test_histogram_summary_op_gives_the_same_bytes_for_a_variable():
    weights = (np.random.default_rng(1).standard_normal((20, 30)) * 0.1).astype(np.float32)
    w = tf.Variable(weights, name="w")
    s = tf.summary.histogram("weights", w)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        (value,) = protos.Summary.FromString(sess.run(s)).value
    assert value.tag == "weights"
    assert value.histo.SerializeToString() == histogram.histogram_bytes(weights)
    assert math.isclose(value.histo.sum, float(weights.astype(np.float64).sum()), rel_tol=1e-12)


@pytest.mark.parametrize(
    "values",
    [
        [],
        [-0.0, 0.0, 1.0],
        [0.0, 0.0],
        [0.5, 2.0, 2.0],
        np.random.default_rng(5).standard_normal(5000) * 1e3,
        [DBL_MAX, -DBL_MAX, 1e-300],
    ],
    ids=["empty", "negative_zero_first", "zeros", "doc", "normal", "extremes"],
)
@pytest.mark.parametrize("tag", ["w", "", "layer1/é"])
def test_summary_bytes_written_directly_are_protobufs_serialization(values, tag):
    values = np.asarray(values, dtype=np.float64)
    proto = histogram.histogram_proto(values, tag)
    expected = protos.Summary(value=[protos.Summary.Value(tag=tag, histo=proto)])
    assert histogram.histogram_bytes(values, tag) == proto.SerializeToString()
    assert histogram.histogram_summary_bytes(values, tag) == expected.SerializeToString()
