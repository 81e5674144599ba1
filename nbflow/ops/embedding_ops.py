"""``embedding_lookup``: rows of a (possibly sharded) parameter table, with sparse gradients.

OSDI §4.2, Figure 4: the ids are split by shard with DynamicPartition, each shard is read with a
Gather colocated with it, and DynamicStitch puts the rows back in order. Every step has a
gradient, so the table receives IndexedSlices (one per shard) touching only the looked-up rows.
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.ops import array_ops, math_ops

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
    from nbflow.ops import clip_ops

    axes = list(range(1, result.shape.ndims)) if result.shape.ndims else [-1]
    return clip_ops.clip_by_norm(result, max_norm, axes=axes)
