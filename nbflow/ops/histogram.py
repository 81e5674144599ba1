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
cell's threshold). One gather, one add and one shift per value, then ``np.bincount`` over the
slots; a slot maps to a TensorFlow bucket through a small array. Values go through in chunks
into reused scratch buffers, so no large temporary array is allocated per call.

Every dtype is read as TensorFlow's kernel reads it (``static_cast<double>``): float16, bfloat16,
small integers and bool are exact in float32 and counted there; larger integers go to float64.
"""

from __future__ import annotations

import contextlib
import functools
import math
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from nbflow import errors
from nbflow.framework import protos

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
_CHUNK = 1 << 17  # values per pass: two scratch buffers of 1 MiB
_ROW = 1 << 13  # values per dot product of the sum of squares


@dataclass(frozen=True)
class _Bucketing:
    """The per-dtype tables that turn a value's bits into a slot, and a slot into a bucket."""

    bits: type[np.unsignedinteger]  # the unsigned integer type of the value's width
    shift: int  # bits below the 16-bit cell
    table: np.ndarray  # [65536] of ``bits``: sums with the value's bits wrap around
    bucket_of_slot: np.ndarray  # intp; len(BUCKET_LIMITS) for a value of DBL_MAX, past the last
    subnormal_slots: tuple[int, int]  # the slots of positive and negative subnormals


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
        shift=shift,
        table=table.astype(bits),  # float32: the low 32 bits, as the sums wrap at 2**32
        bucket_of_slot=bucket_of_slot,
        subnormal_slots=(1, len(sides[0]) + 2),
    )


_scratch_pool: list[np.ndarray] = []  # spare [2, _CHUNK] intp buffers (list.pop is atomic)


def _counts_and_sums(values: np.ndarray, bucketing: _Bucketing) -> tuple[np.ndarray, float, float]:
    """Slot counts, sum and sum of squares (float64) of finite, contiguous, 1-D ``values``."""
    bits: np.ndarray = values.view(bucketing.bits)
    shift, table = bucketing.shift, bucketing.table
    counts = np.zeros(len(bucketing.bucket_of_slot), dtype=np.intp)
    total = squares = 0.0
    try:
        scratch = _scratch_pool.pop()
    except IndexError:
        scratch = np.empty((2, _CHUNK), dtype=np.intp)
    try:
        for start in range(0, values.size, _CHUNK):
            chunk, chunk_bits = values[start : start + _CHUNK], bits[start : start + _CHUNK]
            n = chunk.size
            # float64 sums; the squares as dot products of rows short enough that BLAS keeps
            # them on this thread (OpenBLAS splits a dot product only past 10,000 elements)
            wide = scratch[0, : -(-n // _ROW) * _ROW].view(np.float64)
            np.copyto(wide[:n], chunk)
            wide[n:] = 0.0
            total += float(wide.sum())
            rows = wide.reshape(-1, _ROW)
            squares += float(np.matmul(rows[:, None, :], rows[:, :, None]).sum())
            cells, slots = scratch[0, :n], scratch[1, :n].view(bucketing.bits)[:n]
            np.right_shift(chunk_bits, shift, out=cells, casting="unsafe")
            table.take(cells, out=slots, mode="clip")
            np.add(slots, chunk_bits, out=slots)  # wraps around, by design of the table
            np.right_shift(slots, shift, out=cells, casting="unsafe")
            counts += np.bincount(cells, minlength=len(counts))
    finally:
        _scratch_pool.append(scratch)
    return counts, total, squares


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
    lo, hi = float(x.min()), float(x.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise _not_finite(x, name)
    bucketing = _bucketing(x.dtype.type)  # type: ignore[arg-type]  # mypy: a class is Hashable
    with np.errstate(over="ignore") if max(-lo, hi) > 1e154 else contextlib.nullcontext():
        slot_counts, total, squares = _counts_and_sums(x, bucketing)  # squares may be inf
    flushed = x
    positive_subnormal, negative_subnormal = bucketing.subnormal_slots
    if slot_counts[positive_subnormal] or slot_counts[negative_subnormal]:  # rare: signed zeros
        flushed = np.where(np.abs(x) < np.finfo(x.dtype).smallest_normal, x * 0, x)
        lo, hi = float(flushed.min()), float(flushed.max())
        total = float(flushed.sum(dtype=np.float64))
        with np.errstate(over="ignore"):
            squares = float(np.square(flushed, dtype=np.float64).sum())
    if lo == 0 or hi == 0:  # which zero: the first seen; float32 -> double flushes subnormals
        shown = flushed if x.dtype == np.float32 else x
        first_zero = float(shown[int(np.argmax(flushed == 0))])
        lo, hi = (first_zero if lo == 0 else lo), (first_zero if hi == 0 else hi)
    counts = np.bincount(
        bucketing.bucket_of_slot, weights=slot_counts, minlength=len(BUCKET_LIMITS) + 1
    )[: len(BUCKET_LIMITS)]
    # An empty bucket is listed only as the last of its run of empty buckets.
    listed = counts > 0
    listed[:-1] |= listed[1:]
    listed[-1] = True
    stats = (lo, hi, float(x.size), 0.0 + total, squares)
    return stats, BUCKET_LIMITS[listed], counts[listed]


def varint(n: int) -> bytes:
    """A protobuf varint (a field's length), for messages written directly."""
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_DOUBLE = struct.Struct("<d")
_NO_BITS = bytes(8)


def _encode(stats: tuple, limits: np.ndarray, counts: np.ndarray) -> bytes:
    """``_proto(...).SerializeToString()`` written directly, with no Python list of the buckets:
    the five doubles are fields 1-5 (left out where all their bits are zero, as proto3 does;
    a -0.0 stays), the limits and counts fields 6 and 7, packed: the arrays' little-endian
    bytes."""
    parts = []
    for number, value in zip(b"\x09\x11\x19\x21\x29", stats):
        packed = _DOUBLE.pack(value)
        if packed != _NO_BITS:
            parts.append(bytes((number,)) + packed)
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
