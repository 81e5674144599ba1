"""Parsing ``tf.train.Example`` and ``SequenceExample`` records into tensors.

A training set in TFRecord files holds one serialized ``Example`` per record (see
``framework/example_protos.py``). A feature spec says what to take from each: ``FixedLenFeature``
gives a dense tensor of a fixed shape (a default fills in a missing feature),
``FixedLenSequenceFeature`` a dense tensor whose first dimension varies (padded across the
batch), ``VarLenFeature`` a ``SparseTensor`` of the values as they come, and ``SparseFeature`` a
``SparseTensor`` whose indices are themselves features::

    features = tf.parse_example(serialized, {
        "label": tf.FixedLenFeature([], tf.int64),
        "pixels": tf.FixedLenFeature([28 * 28], tf.float32),
        "tags": tf.VarLenFeature(tf.string)})

Two ops do the work, as in TensorFlow: ``ParseExample`` for a batch of Examples and
``ParseSequenceExample`` for a batch of SequenceExamples (context features, plus feature lists
with one feature per time step). Their outputs follow TensorFlow's order: the sparse indices,
values and dense shapes of every sparse key, then one dense tensor per dense key (and, for
sequences, the lengths of the dense feature lists). Keys are attrs, sorted as TensorFlow sorts
them; a dense key's default is an input (empty when the feature is required). The
single-record builders parse a batch of one and drop the batch dimension. ``SparseFeature`` is
parsed as two variable-length features that ``MergeSparseFeature`` combines.
"""

from __future__ import annotations

import collections
import itertools
import math
from typing import Any
from collections.abc import Sequence

import numpy as np
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.example_protos import Example, SequenceExample
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.sparse_tensor import SparseTensor
from nbflow.framework.tensor_shape import TensorShape, as_shape
from nbflow.ops import array_ops

Tensor = ops_lib.Tensor

__all__ = [
    "decode_json_example",
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "SparseFeature",
    "VarLenFeature",
    "parse_example",
    "parse_sequence_example",
    "parse_single_example",
    "parse_single_sequence_example",
]


# --- feature specs (TensorFlow's namedtuples) ----------------------------------------------------
class FixedLenFeature(
    collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])
):
    """A dense feature of a fixed ``shape``; ``default_value`` fills in when it is missing."""

    def __new__(cls, shape: Any, dtype: Any, default_value: Any = None) -> FixedLenFeature:
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(
    collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"]
    )
):
    """A dense feature of rows of ``shape``; their number varies (padded with ``default_value``)."""

    def __new__(
        cls, shape: Any, dtype: Any, allow_missing: bool = False, default_value: Any = None
    ) -> FixedLenSequenceFeature:
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature with any number of values, parsed into a ``SparseTensor``."""


class SparseFeature(
    collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"]
    )
):
    """A ``SparseTensor`` whose values come from ``value_key`` and indices from ``index_key``."""

    def __new__(
        cls, index_key: Any, value_key: str, dtype: Any, size: Any, already_sorted: bool = False
    ) -> SparseFeature:
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


# --- reading features out of protos ---------------------------------------------------------------
_KIND = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
_KIND_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


def _parse_records(message: Any, serialized: Any) -> list[Any]:
    records = np.asarray(serialized, dtype=object)
    if records.ndim != 1:
        raise errors.InvalidArgumentError(
            None, None, f"Expected serialized to be a vector, got shape: {list(records.shape)}"
        )
    parse = message.FromString
    try:
        return [parse(r if isinstance(r, bytes) else bytes(r)) for r in records.tolist()]
    except DecodeError:
        for k, record in enumerate(records.tolist()):  # find the bad record for the message
            try:
                parse(bytes(record))
            except DecodeError:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Could not parse example input, value: {bytes(record)[:64]!r} (record {k} "
                    f"is not a serialized {message.DESCRIPTOR.name})",
                ) from None
        raise


def _values(feature: Any, dtype: dtypes.DType, key: str, index: int) -> Sequence[Any]:
    """The values of one ``Feature`` (a sequence of Python values); a kind mismatch is an
    error. Arrays are made once per batch, from all rows together, which is much faster."""
    kind = feature.WhichOneof("kind")
    if kind is None:
        return ()
    if kind != _KIND[dtype]:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Name: <unknown>, Key: {key}, Index: {index}.  Data types don't match. "
            f"Data type: {_KIND_NAME[kind]} but expected type: {dtype.name}",
        )
    return getattr(feature, kind).value


def _empty(dtype: dtypes.DType, shape: Sequence[int]) -> np.ndarray:
    if dtype == dtypes.string:
        return np.full(shape, b"", dtype=object)
    return np.zeros(shape, dtype=dtype.np)


def _array(values: list[Any], dtype: dtypes.DType) -> np.ndarray:
    """A flat array of ``dtype`` (strings: an object array of bytes) from a Python list."""
    if dtype == dtypes.string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.array(values, dtype=dtype.np)


def _sparse(rows: list[Sequence[Any]], dtype: dtypes.DType) -> list[np.ndarray]:
    """A ``VarLenFeature`` of a batch: indices [N, 2] (example, position), values, dense shape."""
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    total = int(lengths.sum())
    example = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
    position = np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)
    values = list(itertools.chain.from_iterable(rows))
    return [
        np.stack([example, position], axis=1),
        _array(values, dtype),
        np.asarray([len(rows), lengths.max(initial=0)], dtype=np.int64),
    ]


def _dense(
    rows: list[Sequence[Any] | None],
    dtype: dtypes.DType,
    shape: TensorShape,
    default: Any,
    key: str,
) -> np.ndarray:
    """A dense feature of a batch: [batch] + shape; a first dimension None is padded."""
    dims: list[Any] = shape.as_list()  # ints, but for a variable first dimension (None)
    variable = bool(dims) and dims[0] is None
    row_size = math.prod(dims[1:] if variable else dims)
    default = np.asarray(default)
    filled: list[Sequence[Any]] = []
    for b, row in enumerate(rows):
        if row is None:
            if variable:
                row = ()
            elif default.size == 0:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Name: <unknown>, Feature: {key} (data type: {dtype.name}) is required "
                    "but could not be found.",
                )
            else:
                row = np.broadcast_to(default, dims).reshape(-1).tolist()
        if (len(row) != row_size) if not variable else (row_size and len(row) % row_size):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Name: <unknown>, Key: {key}, Index: {b}.  Number of {dtype.name} values "
                f"{'is not a multiple of' if variable else '!='} expected.  Values size: "
                f"{len(row)} but output shape: {dims}",
            )
        filled.append(row)
    if not variable:
        flat = list(itertools.chain.from_iterable(filled))
        return _array(flat, dtype).reshape([len(filled), *dims])
    longest = max((len(r) // max(row_size, 1) for r in filled), default=0)
    pad = default.reshape(-1)[0] if default.size else _empty(dtype, [1])[0]
    out = np.full([len(filled), longest, *dims[1:]], pad, dtype=_empty(dtype, [0]).dtype)
    for b, row in enumerate(filled):
        n = len(row) // max(row_size, 1)
        if n:
            out[b, :n] = _array(list(row), dtype).reshape([n, *dims[1:]])
    return out


def _feature_rows(maps: list[Any], key: str, dtype: dtypes.DType) -> list[Sequence[Any] | None]:
    kind = _KIND[dtype]
    rows: list[Sequence[Any] | None] = []
    for b, m in enumerate(maps):
        feature = m.get(key)
        if feature is not None and feature.WhichOneof("kind") == kind:  # the common case
            rows.append(getattr(feature, kind).value)
        else:
            rows.append(None if feature is None else _values(feature, dtype, key, b))
    return rows


def _parse_features(
    maps: list[Any],
    dense_defaults: Sequence[Any],
    sparse_keys: list[str],
    sparse_types: list[dtypes.DType],
    dense_keys: list[str],
    dense_types: list[dtypes.DType],
    dense_shapes: list[Any],
) -> list[np.ndarray]:
    """The outputs of ``ParseExample`` for the feature maps of a batch, in its order."""
    sparse = [
        _sparse([r if r is not None else () for r in _feature_rows(maps, k, t)], t)
        for k, t in zip(sparse_keys, sparse_types)
    ]
    dense = [
        _dense(_feature_rows(maps, k, t), t, as_shape(s), d, k)
        for k, t, s, d in zip(dense_keys, dense_types, dense_shapes, dense_defaults)
    ]
    return [*(s[0] for s in sparse), *(s[1] for s in sparse), *(s[2] for s in sparse), *dense]


def _sparse_specs(keys: list[str]) -> list[TensorSpec]:
    return [TensorSpec([None, 2], dtypes.int64) for _ in keys]


class ParseExample(OpDef):
    """Parse a batch of serialized ``Example``s into sparse and dense tensors (see module doc)."""

    inputs = ("serialized", "dense_defaults*")
    attrs = {
        "sparse_keys": [],
        "sparse_types": [],
        "dense_keys": [],
        "dense_types": [],
        "dense_shapes": [],
    }
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    samples = [
        Sample(
            serialized=np.array(
                [
                    Example.FromString(
                        bytes.fromhex("0a0c0a0a0a017812051a030a0107")
                    ).SerializeToString(),
                    b"",
                ],
                dtype=object,
            ),
            dense_defaults=[np.array([0], np.int64)],
            sparse_keys=["x"],
            sparse_types=[dtypes.int64],
            dense_keys=["x"],
            dense_types=[dtypes.int64],
            dense_shapes=[TensorShape([1])],
        )
    ]

    def output_count(self, attrs: dict[str, Any]) -> int:
        return 3 * len(attrs["sparse_keys"]) + len(attrs["dense_keys"])

    def infer(self, serialized: TensorSpec, dense_defaults: list, **attrs: Any) -> list:
        batch = serialized.shape.with_rank(1)[0]
        types, keys = attrs["sparse_types"], attrs["sparse_keys"]
        return [
            *_sparse_specs(keys),
            *[TensorSpec([None], t) for t in types],
            *[TensorSpec([2], dtypes.int64) for _ in keys],
            *[
                TensorSpec(TensorShape([batch]).concatenate(as_shape(s)), t)
                for s, t in zip(attrs["dense_shapes"], attrs["dense_types"])
            ],
        ]

    def compute(self, ctx: KernelContext, serialized: Any, dense_defaults: Any, **attrs: Any):
        maps = [e.features.feature for e in _parse_records(Example, serialized)]
        out = _parse_features(maps, dense_defaults, **attrs)
        return out[0] if len(out) == 1 else out


class ParseSequenceExample(OpDef):
    """Parse a batch of ``SequenceExample``s: context features as ``ParseExample`` does, and
    feature lists with a time dimension after the batch one (dense lists padded, with lengths)."""

    inputs = ("serialized", "context_dense_defaults*")
    attrs = {
        "context_sparse_keys": [],
        "context_sparse_types": [],
        "context_dense_keys": [],
        "context_dense_types": [],
        "context_dense_shapes": [],
        "feature_list_sparse_keys": [],
        "feature_list_sparse_types": [],
        "feature_list_dense_keys": [],
        "feature_list_dense_types": [],
        "feature_list_dense_shapes": [],
        "feature_list_dense_missing_assumed_empty": [],
    }
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    samples = [
        Sample(
            serialized=np.array([b"", b""], dtype=object),
            context_dense_defaults=[np.array(3, np.int64)],
            context_dense_keys=["n"],
            context_dense_types=[dtypes.int64],
            context_dense_shapes=[TensorShape([])],
            feature_list_sparse_keys=["w"],
            feature_list_sparse_types=[dtypes.string],
            feature_list_dense_keys=["f"],
            feature_list_dense_types=[dtypes.float32],
            feature_list_dense_shapes=[TensorShape([2])],
            feature_list_dense_missing_assumed_empty=["f"],
        )
    ]

    def output_count(self, attrs: dict[str, Any]) -> int:
        return (
            3 * len(attrs["context_sparse_keys"])
            + len(attrs["context_dense_keys"])
            + 3 * len(attrs["feature_list_sparse_keys"])
            + 2 * len(attrs["feature_list_dense_keys"])
        )

    def infer(self, serialized: TensorSpec, context_dense_defaults: list, **attrs: Any) -> list:
        batch = TensorShape([serialized.shape.with_rank(1)[0]])
        ctx_keys, list_keys = attrs["context_sparse_keys"], attrs["feature_list_sparse_keys"]
        return [
            *_sparse_specs(ctx_keys),
            *[TensorSpec([None], t) for t in attrs["context_sparse_types"]],
            *[TensorSpec([2], dtypes.int64) for _ in ctx_keys],
            *[
                TensorSpec(batch.concatenate(as_shape(s)), t)
                for s, t in zip(attrs["context_dense_shapes"], attrs["context_dense_types"])
            ],
            *[TensorSpec([None, 3], dtypes.int64) for _ in list_keys],
            *[TensorSpec([None], t) for t in attrs["feature_list_sparse_types"]],
            *[TensorSpec([3], dtypes.int64) for _ in list_keys],
            *[
                TensorSpec(batch.concatenate([None]).concatenate(as_shape(s)), t)
                for s, t in zip(
                    attrs["feature_list_dense_shapes"], attrs["feature_list_dense_types"]
                )
            ],
            *[TensorSpec(batch, dtypes.int64) for _ in attrs["feature_list_dense_keys"]],
        ]

    def compute(self, ctx: KernelContext, serialized: Any, context_dense_defaults: Any, **attrs):
        protos = _parse_records(SequenceExample, serialized)
        context = _parse_features(
            [p.context.feature for p in protos],
            context_dense_defaults,
            sparse_keys=attrs["context_sparse_keys"],
            sparse_types=attrs["context_sparse_types"],
            dense_keys=attrs["context_dense_keys"],
            dense_types=attrs["context_dense_types"],
            dense_shapes=attrs["context_dense_shapes"],
        )
        lists = [p.feature_lists.feature_list for p in protos]
        sparse = [
            _sequence_sparse(lists, k, t)
            for k, t in zip(attrs["feature_list_sparse_keys"], attrs["feature_list_sparse_types"])
        ]
        dense, lengths = [], []
        optional = set(attrs["feature_list_dense_missing_assumed_empty"])
        for key, dtype, shape in zip(
            attrs["feature_list_dense_keys"],
            attrs["feature_list_dense_types"],
            attrs["feature_list_dense_shapes"],
        ):
            values, steps = _sequence_dense(lists, key, dtype, as_shape(shape), key in optional)
            dense.append(values)
            lengths.append(steps)
        out = [
            *context,
            *(s[0] for s in sparse),
            *(s[1] for s in sparse),
            *(s[2] for s in sparse),
            *dense,
            *lengths,
        ]
        return out[0] if len(out) == 1 else out


def _feature_list(lists: Any, key: str, b: int, required: bool) -> list[Any]:
    if key in lists:
        return list(lists[key].feature)
    if required:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Name: <unknown>, Feature list '{key}' is required but could not be found.  Did you "
            "mean to include it in feature_list_dense_missing_assumed_empty or "
            "feature_list_dense_defaults?",
        )
    return []


def _sequence_sparse(lists: list[Any], key: str, dtype: dtypes.DType) -> list[np.ndarray]:
    indices: list[tuple[int, int, int]] = []
    values: list[Any] = []
    steps = longest = 0
    for b, feature_lists in enumerate(lists):
        features = _feature_list(feature_lists, key, b, required=False)
        steps = max(steps, len(features))
        for t, feature in enumerate(features):
            row = _values(feature, dtype, key, b)
            longest = max(longest, len(row))
            indices.extend((b, t, j) for j in range(len(row)))
            values.extend(row)
    return [
        np.asarray(indices, dtype=np.int64).reshape(-1, 3),
        _array(values, dtype),
        np.asarray([len(lists), steps, longest], dtype=np.int64),
    ]


def _sequence_dense(
    lists: list[Any], key: str, dtype: dtypes.DType, shape: TensorShape, allow_missing: bool
) -> tuple[np.ndarray, np.ndarray]:
    dims: list[Any] = shape.as_list()  # ints: dense feature shapes are fully defined
    size = math.prod(dims)
    batch = []
    for b, feature_lists in enumerate(lists):
        steps = []
        for t, feature in enumerate(_feature_list(feature_lists, key, b, not allow_missing)):
            row = _values(feature, dtype, key, b)
            if len(row) != size:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Name: <unknown>, Key: {key}, Index: {t}.  Number of {dtype.name} values "
                    f"!= expected.  values size: {len(row)} but output shape: {dims}",
                )
            steps.append(_array(list(row), dtype).reshape(dims))
        batch.append(steps)
    longest = max((len(s) for s in batch), default=0)
    out = _empty(dtype, [len(batch), longest, *dims])
    for b, steps in enumerate(batch):
        if steps:
            out[b, : len(steps)] = np.stack(steps)
    return out, np.asarray([len(s) for s in batch], dtype=np.int64)


class MergeSparseFeature(OpDef):
    """A ``SparseFeature`` of a batch from its parsed value and index features: indices
    ``[example, index_0, ...]``, dense shape ``[batch, size_0, ...]``, sorted unless told not."""

    inputs = ("value_indices", "values", "value_shape", "index_values*")
    attrs = {"sizes": [], "already_sorted": False}
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    num_outputs = 3
    samples = [
        Sample(
            value_indices=np.array([[0, 0], [0, 1], [1, 0]], np.int64),
            values=np.array([0.5, 1.5, 2.5], np.float32),
            value_shape=np.array([2, 2], np.int64),
            index_values=[np.array([3, 1, 0], np.int64)],
            sizes=[4],
        )
    ]

    def infer(self, value_indices, values, value_shape, index_values, sizes, already_sorted):
        rank = 1 + len(index_values)
        return [
            TensorSpec([None, rank], dtypes.int64),
            TensorSpec([None], values.dtype),
            TensorSpec([rank], dtypes.int64),
        ]

    def compute(self, ctx, value_indices, values, value_shape, index_values, sizes, already_sorted):
        for k, index in enumerate(index_values):
            if len(index) != len(values):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"SparseFeature index {k} has {len(index)} values but its value feature "
                    f"has {len(values)}; each example must give as many indices as values",
                )
            bad = (index < 0) | (index >= sizes[k])
            if bad.any():
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"SparseFeature index {k} out of range: {index[bad][:5].tolist()} not in "
                    f"[0, {sizes[k]})",
                )
        indices = np.stack([value_indices[:, 0], *index_values], axis=1).astype(np.int64)
        values = np.asarray(values)
        if not already_sorted and len(indices):
            order = np.lexsort(indices.T[::-1])
            indices, values = indices[order], values[order]
        shape = np.asarray([value_shape[0], *sizes], dtype=np.int64)
        return [indices.reshape(-1, 1 + len(index_values)), values, shape]


class DecodeJSONExample(OpDef):
    """Each ``Example`` in protobuf's JSON form as its binary serialization."""

    inputs = ("json_examples",)
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    samples = [
        Sample(
            json_examples=np.array(
                [b'{"features": {"feature": {"x": {"int64List": {"value": ["7"]}}}}}'],
                dtype=object,
            )
        )
    ]

    def infer(self, json_examples: TensorSpec) -> TensorSpec:
        return json_examples

    def compute(self, ctx: KernelContext, json_examples: Any) -> np.ndarray:
        strings = np.asarray(json_examples, dtype=object)
        out = np.empty(strings.size, dtype=object)
        for k, text in enumerate(strings.reshape(-1)):
            try:
                out[k] = json_format.Parse(text, Example()).SerializeToString()
            except json_format.ParseError as e:
                raise errors.InvalidArgumentError(
                    None, None, f"Error while parsing JSON: {e} (in {bytes(text)[:64]!r})"
                ) from None
        return out.reshape(strings.shape)


# --- builders -----------------------------------------------------------------------------------
def decode_json_example(json_examples: Any, name: str | None = None) -> Tensor:
    """``Example``s written in protobuf's JSON form, as binary ``Example`` strings."""
    examples = ops_lib.convert_to_tensor(json_examples, dtype=dtypes.string)
    graph = ops_lib.get_default_graph()
    return graph.create_op("DecodeJSONExample", [examples], name=name).outputs[0]


def _default_tensor(value: Any, dtype: dtypes.DType, shape: Any, name: str) -> Tensor:
    if value is None:
        return array_ops.constant(_empty(dtype, [0]), dtype=dtype, name=name)
    if isinstance(value, Tensor):
        return value
    array = np.asarray(value, dtype=object if dtype == dtypes.string else dtype.np)
    if shape is not None and array.size not in (1, math.prod(shape)):
        raise ValueError(
            f"default_value of {name} has {array.size} values but shape {list(shape)} needs "
            f"{math.prod(shape)}"
        )
    if shape is not None and array.size == 1 and math.prod(shape) != 1:
        array = np.broadcast_to(array.reshape(-1)[0], shape)
    return array_ops.constant(array, dtype=dtype, name=name)


def _split(features: dict[str, Any], allow_sequence: bool) -> tuple[dict, dict, dict]:
    """(sparse keys -> dtype, dense keys -> spec, sparse features) of a feature dict."""
    sparse: dict[str, dtypes.DType] = {}
    dense: dict[str, Any] = {}
    merged: dict[str, SparseFeature] = {}
    if not features:
        raise ValueError("Missing: features was empty.")
    for key in sorted(features):
        spec = features[key]
        if isinstance(spec, VarLenFeature):
            sparse[key] = dtypes.as_dtype(spec.dtype)
        elif isinstance(spec, SparseFeature):
            keys = [spec.index_key] if isinstance(spec.index_key, str) else list(spec.index_key)
            for index_key in keys:
                sparse[index_key] = dtypes.int64
            sparse[spec.value_key] = dtypes.as_dtype(spec.dtype)
            merged[key] = spec
        elif isinstance(spec, FixedLenSequenceFeature):
            if not allow_sequence or not spec.allow_missing:
                raise ValueError(
                    f"Unsupported: FixedLenSequenceFeature requires allow_missing to be True "
                    f"(feature {key!r})."
                )
            dense[key] = spec
        elif isinstance(spec, FixedLenFeature):
            if spec.shape is None or None in list(spec.shape):
                raise ValueError(f"Missing shape for feature {key}.")
            dense[key] = spec
        else:
            raise ValueError(f"Invalid feature {key}:{spec}.")
    for key in sparse:
        if key in dense:
            raise ValueError(f"Feature {key!r} is asked for both as sparse and as dense")
    return sparse, dense, merged


def _dense_shape(spec: Any) -> TensorShape:
    shape = as_shape(list(spec.shape))
    if isinstance(spec, FixedLenSequenceFeature):
        return TensorShape([None]).concatenate(shape)
    return shape


def _merge_sparse_features(
    result: dict[str, Any], merged: dict[str, SparseFeature], features: dict[str, Any]
) -> dict[str, Any]:
    for key, spec in merged.items():
        keys = [spec.index_key] if isinstance(spec.index_key, str) else list(spec.index_key)
        sizes = [spec.size] if isinstance(spec.index_key, str) else list(spec.size)
        values = result[spec.value_key]
        op = ops_lib.get_default_graph().create_op(
            "MergeSparseFeature",
            [values.indices, values.values, values.dense_shape, [result[k].values for k in keys]],
            {"sizes": [int(s) for s in sizes], "already_sorted": bool(spec.already_sorted)},
            name="MergeSparseFeature",
        )
        result[key] = SparseTensor(*op.outputs)
    return {key: result[key] for key in features}


def parse_example(
    serialized: Any, features: dict[str, Any], name: str | None = None, example_names: Any = None
) -> dict[str, Any]:
    """A dict of the ``features`` of a batch of serialized ``Example``s (a string vector).

    Dense features get the batch as first dimension; ``VarLenFeature`` and ``SparseFeature``
    give ``SparseTensor``s whose first index is the example.

    >>> import nbflow as tf
    >>> ex = tf.train.Example(features=tf.train.Features(feature={
    ...     "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.5, 2.5]))}))
    >>> spec = {"x": tf.FixedLenFeature([2], tf.float32)}
    >>> parsed = tf.parse_example([ex.SerializeToString()], spec)
    >>> tf.Session().run(parsed["x"]).tolist()
    [[1.5, 2.5]]
    """
    sparse, dense, merged = _split(features, allow_sequence=True)
    with ops_lib.name_scope(name, "ParseExample", [serialized]) as scope:
        serialized = ops_lib.convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        defaults = [
            _default_tensor(
                s.default_value,
                dtypes.as_dtype(s.dtype),
                None if isinstance(s, FixedLenSequenceFeature) else list(s.shape),
                f"key_{k}",
            )
            for k, s in dense.items()
        ]
        attrs = {
            "sparse_keys": list(sparse),
            "sparse_types": list(sparse.values()),
            "dense_keys": list(dense),
            "dense_types": [dtypes.as_dtype(s.dtype) for s in dense.values()],
            "dense_shapes": [_dense_shape(s) for s in dense.values()],
        }
        op = ops_lib.get_default_graph().create_op(
            "ParseExample", [serialized, defaults], attrs, name=scope.rstrip("/") or None
        )
        outputs = list(op.outputs)
        n = len(sparse)
        result: dict[str, Any] = {
            key: SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
            for i, key in enumerate(sparse)
        }
        result.update(zip(dense, outputs[3 * n :]))
        return _merge_sparse_features(result, merged, features)


def _drop_batch(value: Any) -> Any:
    """The only example of a parsed batch of one (dense: index 0; sparse: drop the first index)."""
    if isinstance(value, SparseTensor):
        return SparseTensor(value.indices[:, 1:], value.values, value.dense_shape[1:])
    return array_ops.squeeze(value, [0])


def parse_single_example(
    serialized: Any, features: dict[str, Any], name: str | None = None, example_names: Any = None
) -> dict[str, Any]:
    """``parse_example`` of one serialized ``Example`` (a string scalar): no batch dimension."""
    with ops_lib.name_scope(name, "ParseSingleExample", [serialized]):
        serialized = ops_lib.convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        serialized.shape.assert_is_compatible_with(TensorShape([]))
        batch = parse_example(array_ops.reshape(serialized, [1]), features)
        return {key: _drop_batch(value) for key, value in batch.items()}


def parse_sequence_example(
    serialized: Any,
    context_features: dict[str, Any] | None = None,
    sequence_features: dict[str, Any] | None = None,
    example_names: Any = None,
    name: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(context, feature lists, lengths of the dense feature lists) of a batch of serialized
    ``SequenceExample``s. Dense feature lists are ``[batch, time] + shape``, padded; sparse ones
    have indices ``[example, time, position]``."""
    context_features = context_features or {}
    sequence_features = sequence_features or {}
    if not context_features and not sequence_features:
        raise ValueError("Missing features.")
    ctx_sparse, ctx_dense, ctx_merged = (
        _split(context_features, allow_sequence=False) if context_features else ({}, {}, {})
    )
    list_sparse: dict[str, dtypes.DType] = {}
    list_dense: dict[str, FixedLenSequenceFeature] = {}
    for key in sorted(sequence_features):
        spec = sequence_features[key]
        if isinstance(spec, VarLenFeature):
            list_sparse[key] = dtypes.as_dtype(spec.dtype)
        elif isinstance(spec, FixedLenSequenceFeature):
            if spec.default_value is not None:
                raise ValueError(
                    f"FixedLenSequenceFeature {key!r}: a default_value is not supported in "
                    "sequence_features; missing steps are not filled in"
                )
            list_dense[key] = spec
        else:
            raise ValueError(
                f"Invalid sequence feature {key}:{spec}; use VarLenFeature or "
                "FixedLenSequenceFeature"
            )
    with ops_lib.name_scope(name, "ParseSequenceExample", [serialized]) as scope:
        serialized = ops_lib.convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        defaults = [
            _default_tensor(s.default_value, dtypes.as_dtype(s.dtype), list(s.shape), f"key_{k}")
            for k, s in ctx_dense.items()
        ]
        attrs = {
            "context_sparse_keys": list(ctx_sparse),
            "context_sparse_types": list(ctx_sparse.values()),
            "context_dense_keys": list(ctx_dense),
            "context_dense_types": [dtypes.as_dtype(s.dtype) for s in ctx_dense.values()],
            "context_dense_shapes": [as_shape(list(s.shape)) for s in ctx_dense.values()],
            "feature_list_sparse_keys": list(list_sparse),
            "feature_list_sparse_types": list(list_sparse.values()),
            "feature_list_dense_keys": list(list_dense),
            "feature_list_dense_types": [dtypes.as_dtype(s.dtype) for s in list_dense.values()],
            "feature_list_dense_shapes": [as_shape(list(s.shape)) for s in list_dense.values()],
            "feature_list_dense_missing_assumed_empty": [
                k for k, s in list_dense.items() if s.allow_missing
            ],
        }
        op = ops_lib.get_default_graph().create_op(
            "ParseSequenceExample", [serialized, defaults], attrs, name=scope.rstrip("/") or None
        )
        out = list(op.outputs)
        n = len(ctx_sparse)
        context: dict[str, Any] = {
            k: SparseTensor(out[i], out[n + i], out[2 * n + i]) for i, k in enumerate(ctx_sparse)
        }
        context.update(zip(ctx_dense, out[3 * n : 3 * n + len(ctx_dense)]))
        out = out[3 * n + len(ctx_dense) :]
        m = len(list_sparse)
        lists: dict[str, Any] = {
            k: SparseTensor(out[i], out[m + i], out[2 * m + i]) for i, k in enumerate(list_sparse)
        }
        lists.update(zip(list_dense, out[3 * m : 3 * m + len(list_dense)]))
        lengths = dict(zip(list_dense, out[3 * m + len(list_dense) :]))
        if ctx_merged:
            context = _merge_sparse_features(context, ctx_merged, context_features)
        return context, {k: lists[k] for k in sequence_features}, lengths


def parse_single_sequence_example(
    serialized: Any,
    context_features: dict[str, Any] | None = None,
    sequence_features: dict[str, Any] | None = None,
    example_name: Any = None,
    name: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(context, feature lists) of one serialized ``SequenceExample``: dense feature lists are
    ``[time] + shape``, sparse ones have indices ``[time, position]``."""
    with ops_lib.name_scope(name, "ParseSingleSequenceExample", [serialized]):
        serialized = ops_lib.convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        serialized.shape.assert_is_compatible_with(TensorShape([]))
        context, lists, _ = parse_sequence_example(
            array_ops.reshape(serialized, [1]), context_features, sequence_features
        )
        return (
            {k: _drop_batch(v) for k, v in context.items()},
            {k: _drop_batch(v) for k, v in lists.items()},
        )
