"""TensorFlow's summary histogram (``core/lib/histogram``), counted in O(n) without sorting.

TensorFlow's default bucket limits are ``-DBL_MAX``, the negated positive limits, ``0``, the
positive limits ``1e-12·1.1^k`` below ``1e20``, and ``DBL_MAX``. A value ``v`` counts in bucket
``i = upper_bound(limits, v)``, the bucket of ``[limit[i-1], limit[i])``. The ``HistogramProto``
lists each bucket by its right limit, collapsing a run of empty buckets into one (TensorFlow's
``Histogram::EncodeToProto``), with ``min``/``max`` (the first occurrence, so a signed zero is the
first zero seen), ``num``, ``sum`` and ``sum_squares``. As in TensorFlow's CPU kernels, which run
with denormals flushed to zero, a subnormal value counts as a zero of its sign.

How a value finds its bucket. For finite floats of one dtype the bit pattern of ``|v|``, read as
an unsigned integer, grows with ``|v|``. So the number of limits at or below ``v`` is the number
of *thresholds* at or below those bits, where a threshold is a limit rounded into the value's own
dtype (up to the smallest value >= the limit for ``v >= 0``; to the smallest value > it for
``v < 0``, whose comparison ``-limit <= v`` flips). The bits split into a 16-bit *cell* (sign,
exponent, top mantissa bits) and the rest. A cell spans a ratio of at most ``1 + 2**-7``
(float32) or ``1 + 2**-4`` (float64), less than the ``1.1`` between limits, so at most one
threshold lies inside a cell. A 65536-entry table per dtype holds, per cell, the count of
thresholds below it and where inside it the next one lies, folded into one integer so that

    slot = (table[bits >> shift] + bits) >> shift        # shift = bits per value - 16

is that count (the addition carries into the count exactly when the value's low bits reach the
cell's threshold). One gather, one add and one shift per value, in a loop compiled by numba that
counts the slots as it goes; a slot maps to a TensorFlow bucket through a small array. A second
compiled loop takes the float64 sum and sum of squares in SIMD lanes, and NumPy the min and max.
The 78,400 weights of the Figure 1 MLP take ~110 µs in all (the NumPy passes this replaced,
shifts, ``take``, ``bincount`` and float64 dot products: ~450 µs), and the compiled loops release
the GIL, so a histogram counted on the summary thread does not hold up the step's thread.

Every dtype is read as TensorFlow's kernel reads it (``static_cast<double>``): float16, bfloat16,
small integers and bool are exact in float32 and counted there; larger integers go to float64.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import numpy as np

from nbflow import errors
from nbflow.framework import protos
from nbflow.framework.wire_format import double_field, varint

DBL_MAX = float(np.finfo(np.float64).max)


def _positive_limits() -> np.ndarray:
    """1e-12·1.1^k below 1e20, multiplied up in float64 exactly as TensorFlow does."""
    positive = []
    v = 1e-12
    while v < 1e20:
        positive.append(v)
        v *= 1.1
    return np.array(positive, dtype=np.float64)


POSITIVE_LIMITS = _positive_limits()
BUCKET_LIMITS = np.concatenate(
    [[-DBL_MAX], -POSITIVE_LIMITS[::-1], [0.0], POSITIVE_LIMITS, [DBL_MAX]]
)
_ZERO_BUCKET = len(POSITIVE_LIMITS) + 2  # [0, 1e-12): zeros and subnormals


@dataclass(frozen=True)
class _Bucketing:
    """The per-dtype tables that turn a value's bits into a slot, and a slot into a bucket."""

    bits: type[np.unsignedinteger]  # the unsigned integer type of the value's width
    # the arguments of ``count_buckets`` after the bits, in its order:
    table: np.ndarray  # [65536] uint64: sums with the value's bits wrap at its width
    shift: np.uint64  # bits below the 16-bit cell
    mask: np.uint64  # the value's width: all ones
    bucket_of_slot: np.ndarray  # intp; len(BUCKET_LIMITS) for a value of DBL_MAX, past the last
    subnormal_slots: np.ndarray  # intp [2]: the slots of positive and negative subnormals

    def kernel_args(self) -> tuple:
        return self.table, self.shift, self.mask, self.bucket_of_slot, self.subnormal_slots


@functools.cache
def _bucketing(dtype: type) -> _Bucketing:
    """The tables of float32 or float64. A value's slot: for ``v >= 0`` the number of positive
    thresholds at or below its bits; for ``v < 0``, past those slots, the number of negative
    thresholds at or below the bits of ``|v|``."""
    info = np.finfo(dtype)
    bits = np.uint32 if info.bits == 32 else np.uint64
    shift = info.bits - 16
    limits = POSITIVE_LIMITS
    rounded: np.ndarray = limits.astype(dtype)
    at_least = np.where(rounded < limits, np.nextafter(rounded, dtype(np.inf)), rounded)
    above = np.where(at_least > limits, at_least, np.nextafter(at_least, dtype(np.inf)))
    # the smallest subnormal and the smallest normal come first: slots 0, 1 and 2 are zero,
    # subnormal and [smallest normal, 1e-12), which all count in the zero bucket
    small: np.ndarray = np.array([info.smallest_subnormal, info.smallest_normal], dtype=dtype)
    positive = [small, at_least] + ([np.array([DBL_MAX])] if dtype is np.float64 else [])
    negative = [small, above]
    sides = [
        np.concatenate(side).astype(dtype).view(bits).astype(np.uint64)
        for side in (positive, negative)
    ]
    table = np.empty(1 << 16, dtype=np.uint64)
    width = np.uint64(1 << shift)
    starts = np.arange(1 << 15, dtype=np.uint64) << np.uint64(shift)  # cell starts, magnitude bits
    first_slot = 0
    for sign, thresholds in enumerate(sides):
        below = np.searchsorted(thresholds, starts, side="right")
        inside = np.searchsorted(thresholds, starts + width, side="left") - below
        assert inside.max() <= 1, "a cell holds at most one threshold"
        offset = thresholds[np.minimum(below, len(thresholds) - 1)] - starts
        carry = np.where(inside == 1, width - offset, np.uint64(0))
        cells = np.arange(1 << 15, dtype=np.uint64) | np.uint64(sign << 15)
        count = (np.uint64(first_slot) + below.astype(np.uint64)) << np.uint64(shift)
        table[sign << 15 : (sign + 1) << 15] = count + carry - (cells << np.uint64(shift))
        first_slot += len(thresholds) + 1
    positive_slots = np.arange(len(sides[0]) + 1)
    negative_slots = np.arange(len(sides[1]) + 1)
    bucket_of_slot = np.concatenate(
        [
            _ZERO_BUCKET + np.maximum(positive_slots - 2, 0),  # past DBL_MAX: one past the end
            _ZERO_BUCKET - np.maximum(negative_slots - 1, 0),
        ]
    ).astype(np.intp)
    return _Bucketing(
        bits=bits,
        table=table.astype(bits).astype(np.uint64),  # float32: the low 32 bits (sums wrap)
        shift=np.uint64(shift),
        mask=np.uint64(np.iinfo(bits).max),
        bucket_of_slot=bucket_of_slot,
        subnormal_slots=np.array([1, len(sides[0]) + 2], dtype=np.intp),
    )


@functools.cache
def _kernels() -> tuple[Callable, Callable]:
    """The two compiled passes, built on first use (importing numba takes ~0.5 s; compiled code
    is cached on disk, so only a machine's first histogram of each dtype compiles). Both release
    the GIL, so a histogram counted on the background worker runs beside the step's thread."""
    import numba

    @numba.njit(nogil=True, cache=True)
    def count_buckets(bits, table, shift, mask, bucket_of_slot, subnormal_slots, buckets, listed):
        # the slot of each value (module docstring), counted into four rows in turn so that
        # equal neighbours do not wait on each other's increment; then the slots' buckets,
        # which of them the proto lists, how many values were subnormal and how many lie in the
        # outermost buckets (beyond ±1e20, or inf and NaN)
        slots = np.zeros((4, bucket_of_slot.size), dtype=np.int64)
        n = bits.size
        whole = n - n % 4
        for i in range(0, whole, 4):
            for lane in range(4):
                b = np.uint64(bits[i + lane])
                slots[lane, ((table[b >> shift] + b) & mask) >> shift] += 1
        for i in range(whole, n):
            b = np.uint64(bits[i])
            slots[0, ((table[b >> shift] + b) & mask) >> shift] += 1
        for slot in range(bucket_of_slot.size):
            buckets[bucket_of_slot[slot]] += slots[0, slot] + slots[1, slot] + slots[2, slot]
            buckets[bucket_of_slot[slot]] += slots[3, slot]
        subnormal = 0
        for slot in subnormal_slots:
            subnormal += slots[0, slot] + slots[1, slot] + slots[2, slot] + slots[3, slot]
        last = listed.size - 1  # an empty bucket is listed only as the last of its empty run
        for k in range(last):
            listed[k] = buckets[k] > 0 or buckets[k + 1] > 0
        listed[last] = True
        outermost = buckets[0] + buckets[1] + buckets[last] + buckets[last + 1]
        return subnormal, outermost

    @numba.njit(nogil=True, cache=True, fastmath={"reassoc"})
    def sums(values):  # pragma: no cover - compiled
        # the float64 sum and sum of squares, in SIMD lanes like NumPy's pairwise sum
        # (TensorFlow adds in order: all orders agree to ulps of the sum of magnitudes)
        total = squares = 0.0
        for i in range(values.size):
            value = np.float64(values[i])
            total += value
            squares += value * value
        return total, squares

    return count_buckets, sums


def _not_finite(values: np.ndarray, name: str) -> errors.OpError:
    first = values[int(np.argmax(~np.isfinite(values)))]
    what = "Nan" if np.isnan(first) else "Infinity"
    return errors.InvalidArgumentError(None, None, f"{what} in summary histogram for: {name}")


def _counted_dtype(dtype: np.dtype) -> type:
    exact_in_float32 = (
        dtype == np.float32
        or dtype.kind in "bV"
        or (dtype.kind == "f" and dtype.itemsize <= 2)
        or (dtype.kind in "iu" and dtype.itemsize <= 2)
    )
    return np.float32 if exact_in_float32 else np.float64


def _as_counted(values: np.ndarray) -> np.ndarray:
    """``values`` flattened in row-major order as float32 where that is exact, else float64."""
    counted: np.ndarray = values.astype(_counted_dtype(values.dtype), copy=False)
    return np.ascontiguousarray(counted).reshape(-1)


def snapshot(values: np.ndarray) -> np.ndarray:
    """A private copy of ``values`` as ``histogram_proto`` counts them (flat, float32 or
    float64): one pass over the values, after which their owner may change them."""
    return np.array(values, dtype=_counted_dtype(values.dtype), order="C", copy=True).reshape(-1)


def _proto(stats: tuple, limits: np.ndarray, counts: np.ndarray) -> Any:  # HistogramProto
    lo, hi, num, total, squares = stats
    return protos.HistogramProto(
        min=lo,
        max=hi,
        num=num,
        sum=total,
        sum_squares=squares,
        bucket_limit=limits.tolist(),
        bucket=counts.tolist(),
    )


def histogram_proto(values: np.ndarray, name: str = "") -> Any:  # protos.HistogramProto
    """The ``HistogramProto`` of ``values``, as TensorFlow's HistogramSummary makes it.

    >>> h = histogram_proto(np.array([0.5, 2.0, 2.0]))
    >>> (h.min, h.max, h.num, h.sum), list(h.bucket)
    ((0.5, 2.0, 3.0, 4.5), [0.0, 1.0, 0.0, 2.0, 0.0])
    """
    return _proto(*_histogram(values, name))


def _histogram(values: np.ndarray, name: str) -> tuple[tuple, np.ndarray, np.ndarray]:
    """(min, max, num, sum, sum_squares), the listed buckets' limits and their counts."""
    x = _as_counted(np.asarray(values))
    if not x.size:
        return (DBL_MAX, -DBL_MAX, 0.0, 0.0, 0.0), BUCKET_LIMITS[-1:], np.zeros(1)
    bucketing = _bucketing(x.dtype.type)  # type: ignore[arg-type]  # mypy: a class is Hashable
    count_buckets, sums = _kernels()
    counts = np.zeros(len(BUCKET_LIMITS) + 1, dtype=np.int64)  # past the end: DBL_MAX, inf, nan
    listed = np.empty(len(BUCKET_LIMITS), dtype=np.bool_)
    subnormal, outermost = count_buckets(
        x.view(bucketing.bits), *bucketing.kernel_args(), counts, listed
    )
    # inf and NaN count in the outermost buckets, beside values beyond ±1e20: look only then
    if outermost and not np.isfinite(x).all():
        raise _not_finite(x, name)
    flushed = x
    if subnormal:  # rare: they count as zeros of their sign
        flushed = np.where(np.abs(x) < np.finfo(x.dtype).smallest_normal, x * 0, x)
    lo, hi = float(flushed.min()), float(flushed.max())
    total, squares = sums(flushed)
    if lo == 0 or hi == 0:  # which zero: the first seen; float32 -> double flushes subnormals
        shown = flushed if x.dtype == np.float32 else x
        first_zero = float(shown[int(np.argmax(flushed == 0))])
        lo, hi = (first_zero if lo == 0 else lo), (first_zero if hi == 0 else hi)
    stats = (lo, hi, float(x.size), 0.0 + total, squares)
    return stats, BUCKET_LIMITS[listed], counts[:-1][listed].astype(np.float64)


def _encode(stats: tuple, limits: np.ndarray, counts: np.ndarray) -> bytes:
    """``_proto(...).SerializeToString()`` written directly, with no Python list of the buckets:
    the five doubles are fields 1-5, the limits and counts fields 6 and 7, packed: the arrays'
    little-endian bytes."""
    parts = [double_field(key, value) for key, value in zip(b"\x09\x11\x19\x21\x29", stats)]
    for field, array in ((b"\x32", limits), (b"\x3a", counts)):
        data = np.ascontiguousarray(array, dtype="<f8").tobytes()
        parts.append(field + varint(len(data)) + data)
    return b"".join(parts)


def histogram_summary_bytes(values: np.ndarray, tag: str) -> bytes:
    """``Summary(value=[Value(tag=tag, histo=histogram_proto(values, tag))])`` serialized:
    field 1 (``value``) holding fields 1 (``tag``; none when empty) and 5 (``histo``)."""
    histo = histogram_bytes(values, tag)
    name = tag.encode()
    value = (b"\n" + varint(len(name)) + name if name else b"") + b"*" + varint(len(histo))
    return b"\n" + varint(len(value) + len(histo)) + value + histo


def histogram_bytes(values: np.ndarray, name: str = "") -> bytes:
    """``histogram_proto`` serialized."""
    return _encode(*_histogram(values, name))
