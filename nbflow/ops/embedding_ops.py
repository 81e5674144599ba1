"""``embedding_lookup``: rows of a (possibly sharded) parameter table, with sparse gradients.

OSDI §4.2, Figure 4: the ids are split by shard with DynamicPartition, each shard is read with a
Gather colocated with it, and DynamicStitch puts the rows back in order. Every step has a
gradient, so the table receives IndexedSlices (one per shard) touching only the looked-up rows.
``embedding_lookup_sparse`` combines the rows named by each row of a SparseTensor of ids.
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.ops import array_ops, math_ops
from nbflow.ops import clip_ops
from nbflow.framework.sparse_tensor import SparseTensor, convert_to_tensor_or_sparse_tensor
from nbflow.ops.segment_ops import segment_sum
from nbflow.ops.sort_ops import unique

Tensor = ops_lib.Tensor


def _tensor(x: Any, dtype: Any = None) -> Tensor:
    return ops_lib.convert_to_tensor(x, dtype=dtype)


# --- embeddings -----------------------------------------------------------------------------------
def embedding_lookup(
    params: Any,
    ids: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    validate_indices: bool = True,
    max_norm: Any = None,
) -> Tensor:
    """Rows ``ids`` of ``params`` (a variable or tensor, or a list of shards of one).

    With shards, id i lives in shard i % n ('mod') or in contiguous blocks ('div'); the ids
    are split with dynamic_partition, gathered next to each shard and put back in order with
    dynamic_stitch. The gradient reaching each shard is an IndexedSlices (sparse).
    """
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")
    is_sharded = isinstance(params, (list, tuple)) or hasattr(params, "_get_variable_list")
    shards = list(params) if is_sharded else [params]  # a PartitionedVariable: its shards
    if not shards:
        raise ValueError("Need at least one param")
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "embedding_lookup"):
        ids = _tensor(ids)
        if len(shards) == 1:
            with graph.colocate_with(_op_of(shards[0])):
                result = array_ops.gather(shards[0], ids)
            return _clip_rows(result, max_norm)
        return _clip_rows(_sharded_lookup(graph, shards, ids, partition_strategy), max_norm)


def _op_of(value: Any) -> Any:
    return value.op if hasattr(value, "op") else _tensor(value).op


def _sharded_lookup(graph: Any, shards: list[Any], ids: Tensor, strategy: str) -> Tensor:
    n = len(shards)
    flat_ids = array_ops.reshape(ids, [-1])
    original_indices = math_ops.range(array_ops.size(flat_ids))
    if strategy == "mod":
        assignments = flat_ids % n
        new_ids = flat_ids // n
    else:
        sizes = [s.shape[0] for s in shards]
        if any(s is None for s in sizes):
            raise ValueError("'div' partitioning needs shards with known first dimensions")
        total = sum(sizes)
        per, extras = total // n, total % n
        assignments = math_ops.maximum(flat_ids // (per + 1), (flat_ids - extras) // per)
        in_extras = math_ops.cast(assignments < extras, flat_ids.dtype)
        new_ids = in_extras * (flat_ids % (per + 1)) + (1 - in_extras) * ((flat_ids - extras) % per)
    assignments = math_ops.cast(assignments, dtypes.int32)
    gather_ids = array_ops.dynamic_partition(new_ids, assignments, n)
    positions = array_ops.dynamic_partition(original_indices, assignments, n)
    parts = []
    for shard, shard_ids in zip(shards, gather_ids):
        with graph.colocate_with(_op_of(shard)):
            parts.append(array_ops.gather(shard, shard_ids))
    stitched = array_ops.dynamic_stitch(positions, parts)
    row_shape = shards[0].shape[1:]
    if ids.shape.is_fully_defined() and row_shape.is_fully_defined():
        return array_ops.reshape(stitched, ids.shape.as_list() + row_shape.as_list())
    return array_ops.reshape(
        stitched, array_ops.concat([array_ops.shape(ids), array_ops.shape(stitched)[1:]], 0)
    )


def _clip_rows(result: Tensor, max_norm: Any) -> Tensor:
    if max_norm is None:
        return result

    axes = list(range(1, result.shape.ndims)) if result.shape.ndims else [-1]
    return clip_ops.clip_by_norm(result, max_norm, axes=axes)


def embedding_lookup_sparse(
    params: Any,
    sp_ids: Any,
    sp_weights: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    combiner: str | None = None,
    max_norm: Any = None,
) -> Tensor:
    """One combined embedding per row of the SparseTensor ``sp_ids`` (as TensorFlow 1.15).

    Row ``r`` of the result combines the embeddings of the ids in row r of ``sp_ids``, weighted
    by ``sp_weights`` (a SparseTensor with the same indices, or None for weight 1): "sum" adds
    them, "mean" divides by the sum of the weights, "sqrtn" by the root of the sum of their
    squares. The result has max(row) + 1 rows, as segment_sum gives: empty rows before the last
    are zeros, or NaN (0/0) for a weighted "mean" or "sqrtn", as in TensorFlow. The ids are
    looked up once each (``unique``), so the gradient reaching ``params`` is an IndexedSlices
    over the distinct ids.
    """
    combiner = "mean" if combiner is None else combiner
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    sp_ids = convert_to_tensor_or_sparse_tensor(sp_ids)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids).__name__}")
    if sp_weights is not None:
        sp_weights = convert_to_tensor_or_sparse_tensor(sp_weights)
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError(f"sp_weights must be either None or SparseTensor, got {sp_weights!r}")
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "embedding_lookup_sparse"):
        segment_ids = math_ops.cast(sp_ids.indices[:, 0], dtypes.int32)
        ids, idx = unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy, max_norm=max_norm)
        embeddings = array_ops.gather(embeddings, idx)
        if sp_weights is None:
            weights = array_ops.ones_like(segment_ids, dtype=embeddings.dtype)
        else:
            weights = math_ops.cast(sp_weights.values, embeddings.dtype)
        rank = embeddings.shape.ndims
        if rank is None:
            raise ValueError("embedding_lookup_sparse needs params of known rank")
        column = array_ops.reshape(weights, [-1] + [1] * (rank - 1))
        summed = segment_sum(embeddings * column, segment_ids)
        if combiner == "sum":
            return summed
        scale = weights if combiner == "mean" else weights * weights
        total = segment_sum(scale, segment_ids)
        if sp_weights is None:  # unweighted: empty rows stay zeros, as sparse_segment_mean
            total = math_ops.maximum(total, array_ops.ones_like(total))
        if combiner == "sqrtn":
            total = math_ops.sqrt(total)
        return summed / array_ops.reshape(total, [-1] + [1] * (rank - 1))
