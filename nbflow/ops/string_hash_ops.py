"""String hash ops: hash buckets and fingerprints with TensorFlow's exact values.

``StringToHashBucketFast`` (FarmHash ``Fingerprint64``), ``StringToHashBucketStrong`` (keyed
SipHash-2-4) and ``StringToHashBucket`` (TensorFlow's legacy ``Hash64``) map each string to its
hash modulo ``num_buckets``; ``Fingerprint`` gives the FarmHash fingerprint of each row of any
tensor as 8 bytes. The hash functions themselves are in ``string_hash``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops.string_hash import fingerprint64, murmur64, siphash24
from nbflow.ops.string_ops import (
    _WORDS,
    StringOp,
    _as_bytes,
    _check_string,
    _create,
    _ElementwiseString,
    _string,
    map_strings,
)

Tensor = ops_lib.Tensor

_builtin_len = len


class _HashBucket(_ElementwiseString):
    """Each string's hash modulo ``num_buckets``, as int64."""

    abstract = True
    out_dtype = dtypes.int64

    def buckets(self, input: Any, num_buckets: int, hash_fn: Callable[[bytes], int]) -> Any:
        if num_buckets < 1:
            raise ValueError(f"num_buckets must be >= 1, got {num_buckets}")
        return map_strings(lambda s: hash_fn(s) % num_buckets, input, np.int64)


class StringToHashBucketFast(_HashBucket):
    """FarmHash ``Fingerprint64`` of each string modulo ``num_buckets`` (TensorFlow's values)."""

    attrs = {"num_buckets": 1}
    samples = [Sample(input=_WORDS, num_buckets=10)]

    def compute(self, ctx: KernelContext, input: Any, num_buckets: int) -> Any:
        return self.buckets(input, num_buckets, fingerprint64)


class StringToHashBucketStrong(_HashBucket):
    """SipHash-2-4 under ``key`` (two integers) of each string modulo ``num_buckets``."""

    attrs = {"num_buckets": 1, "key": [0, 0]}
    samples = [Sample(input=_WORDS, num_buckets=10, key=[1, 2])]

    def compute(self, ctx: KernelContext, input: Any, num_buckets: int, key: Any) -> Any:
        if _builtin_len(key) != 2:
            raise ValueError(f"key must have 2 elements, got {key}")
        pair = (int(key[0]), int(key[1]))
        return self.buckets(input, num_buckets, lambda s: siphash24(pair, s))


class StringToHashBucket(_HashBucket):
    """TensorFlow's legacy ``Hash64`` of each string modulo ``num_buckets``."""

    inputs = ("string_tensor",)
    attrs = {"num_buckets": 1}
    samples = [Sample(string_tensor=_WORDS, num_buckets=10)]

    def infer(self, string_tensor: TensorSpec, num_buckets: int) -> TensorSpec:
        _check_string(self.type, string_tensor, "string_tensor")
        return TensorSpec(string_tensor.shape, dtypes.int64)

    def compute(self, ctx: KernelContext, string_tensor: Any, num_buckets: int) -> Any:
        return self.buckets(string_tensor, num_buckets, murmur64)


class Fingerprint(StringOp):
    """FarmHash ``Fingerprint64`` of each row of ``data`` (its bytes; for strings, each string's
    fingerprint, and for rows of several strings the fingerprint of those fingerprints), as 8
    little-endian bytes: uint8 ``[batch, 8]``, TensorFlow's values."""

    inputs = ("data", "method")
    samples = [
        Sample(data=_WORDS, method=np.array(b"farmhash64", object)),
        Sample(
            data=np.arange(6, dtype=np.int32).reshape(3, 2), method=np.array(b"farmhash64", object)
        ),
    ]

    def infer(self, data: TensorSpec, method: TensorSpec) -> TensorSpec:
        shape = data.shape.with_rank_at_least(1)
        method.shape.with_rank(0)
        batch = None if shape.dims is None else shape.dims[0]
        return TensorSpec(TensorShape([batch, 8]), dtypes.uint8)

    def compute(self, ctx: KernelContext, data: Any, method: Any) -> Any:
        if _as_bytes(method) != b"farmhash64":
            raise ValueError(f"Unsupported fingerprint method: {_as_bytes(method)!r}")
        array = np.asarray(data)
        rows = []
        for row in array:
            if array.dtype == object:
                if array.ndim == 1:
                    value = fingerprint64(row)
                else:
                    parts = (fingerprint64(s).to_bytes(8, "little") for s in np.ravel(row))
                    value = fingerprint64(b"".join(parts))
            else:
                value = fingerprint64(np.ascontiguousarray(row).tobytes())
            rows.append(np.frombuffer(value.to_bytes(8, "little"), np.uint8))
        return np.stack(rows) if rows else np.zeros((0, 8), np.uint8)


# --- builders -------------------------------------------------------------------------------------
def to_hash_bucket_fast(input: Any, num_buckets: int, name: str | None = None) -> Tensor:
    """Each string's FarmHash fingerprint modulo ``num_buckets``: TensorFlow's bucket ids.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.strings.to_hash_bucket_fast(["hello"], 1000)).tolist()
    [296]
    """
    attrs = {"num_buckets": int(num_buckets)}
    return _create("StringToHashBucketFast", [_string(input)], attrs, name)


def to_hash_bucket_strong(input: Any, num_buckets: int, key: Any, name: str | None = None):
    """Each string's keyed SipHash-2-4 modulo ``num_buckets``: TensorFlow's bucket ids."""
    attrs = {"num_buckets": int(num_buckets), "key": [int(k) for k in key]}
    return _create("StringToHashBucketStrong", [_string(input)], attrs, name)


def to_hash_bucket(string_tensor: Any, num_buckets: int, name: str | None = None) -> Tensor:
    """Each string's legacy TensorFlow ``Hash64`` modulo ``num_buckets`` (prefer ``_fast``)."""
    attrs = {"num_buckets": int(num_buckets)}
    return _create("StringToHashBucket", [_string(string_tensor, "string_tensor")], attrs, name)


def fingerprint(data: Any, method: str = "farmhash64", name: str | None = None) -> Tensor:
    """The FarmHash fingerprint of each row of ``data`` as uint8 ``[batch, 8]``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.fingerprint(["a"])).tolist()
    [[227, 117, 223, 182, 101, 66, 69, 179]]
    """
    x = ops_lib.convert_to_tensor(data, name="data")
    return _create("Fingerprint", [x, _string(method, "method")], {}, name)


__all__ = ["fingerprint", "to_hash_bucket", "to_hash_bucket_fast", "to_hash_bucket_strong"]
