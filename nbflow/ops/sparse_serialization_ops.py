"""``SparseTensor``s as strings, so they can pass through queues of dense tensors.

``serialize_sparse`` writes a SparseTensor as 3 strings, the ``TensorProto`` bytes of its
indices, values and dense shape (what TensorFlow's ``SerializeSparse`` writes).
``serialize_many_sparse`` writes each entry of the first (minibatch) dimension as such a triple,
``[N, 3]``; ``deserialize_many_sparse`` reads ``[N, 3]`` triples back into one SparseTensor with
the minibatch dimension first and each other dimension the largest of the entries'::

    serialized = tf.io.serialize_many_sparse(sparse_batch)      # [N, 3] strings
    queue.enqueue_many([serialized]) ... rows = queue.dequeue_many(32)
    batch = tf.io.deserialize_many_sparse(rows, tf.int64)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow import errors
from nbflow.framework import dtypes, protos
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.sparse_tensor import SparseTensor

__all__ = ["deserialize_many_sparse", "serialize_many_sparse", "serialize_sparse"]

_SAMPLE = {
    "sparse_indices": np.array([[0, 1], [1, 0], [1, 2]], np.int64),
    "sparse_values": np.array([1.5, -2.0, 3.0], np.float32),
    "sparse_shape": np.array([2, 3], np.int64),
}


def _triple(indices: np.ndarray, values: np.ndarray, shape: np.ndarray) -> list[bytes]:
    return [
        protos.make_tensor_proto(np.asarray(a)).SerializeToString()
        for a in (indices.astype(np.int64), values, shape.astype(np.int64))
    ]


def _strings(rows: list[list[bytes]]) -> np.ndarray:
    out = np.empty((len(rows), 3), dtype=object)
    for k, row in enumerate(rows):
        out[k, :] = row
    return out


class SerializeSparse(OpDef):
    """A SparseTensor as 3 strings: the TensorProtos of indices, values and dense shape."""

    inputs = ("sparse_indices", "sparse_values", "sparse_shape")
    attrs = {"out_type": dtypes.string}
    differentiable = False
    cpu_only = True  # protobuf on the host
    samples = [Sample(**_SAMPLE)]

    def infer(self, sparse_indices, sparse_values, sparse_shape, out_type) -> TensorSpec:
        return TensorSpec([3], dtypes.string)

    def compute(self, ctx: KernelContext, indices, values, shape, out_type) -> np.ndarray:
        return _strings([_triple(np.asarray(indices), np.asarray(values), np.asarray(shape))])[0]


class SerializeManySparse(OpDef):
    """Each entry of a SparseTensor's first dimension as a serialized triple: [N, 3]."""

    inputs = ("sparse_indices", "sparse_values", "sparse_shape")
    attrs = {"out_type": dtypes.string}
    differentiable = False
    cpu_only = True  # protobuf on the host
    samples = [Sample(**_SAMPLE)]

    def infer(self, sparse_indices, sparse_values, sparse_shape, out_type) -> TensorSpec:
        return TensorSpec([None, 3], dtypes.string)

    def compute(self, ctx: KernelContext, indices, values, shape, out_type) -> np.ndarray:
        indices, values, shape = np.asarray(indices), np.asarray(values), np.asarray(shape)
        if shape.size < 2:
            raise errors.InvalidArgumentError(
                None, None, f"SparseTensor must have rank at least 2, got shape {shape.tolist()}"
            )
        rows = []
        for n in range(int(shape[0])):
            mine = indices[:, 0] == n
            rows.append(_triple(indices[mine, 1:], values[mine], shape[1:]))
        return _strings(rows)


class DeserializeManySparse(OpDef):
    """[N, 3] serialized SparseTensors as one with the minibatch dimension N first."""

    inputs = ("serialized_sparse",)
    attrs = {"dtype": dtypes.float32}
    differentiable = False
    cpu_only = True  # protobuf on the host
    num_outputs = 3
    samples = [
        Sample(
            serialized_sparse=SerializeManySparse().compute(
                KernelContext(),
                _SAMPLE["sparse_indices"],
                _SAMPLE["sparse_values"],
                _SAMPLE["sparse_shape"],
                None,
            ),
            dtype=dtypes.float32,
        )
    ]

    def infer(self, serialized_sparse: TensorSpec, dtype: dtypes.DType) -> list[TensorSpec]:
        return [
            TensorSpec([None, None], dtypes.int64),
            TensorSpec([None], dtype),
            TensorSpec([None], dtypes.int64),
        ]

    def compute(self, ctx: KernelContext, serialized: Any, dtype: dtypes.DType) -> list:
        rows = np.asarray(serialized, dtype=object)
        if rows.ndim != 2 or rows.shape[1] != 3:
            raise errors.InvalidArgumentError(
                None, None, f"Serialized sparse should be [N, 3], got {list(rows.shape)}"
            )
        parts = [[protos.make_ndarray(protos.TensorProto.FromString(s)) for s in r] for r in rows]
        for _, row_values, _ in parts:
            if dtypes.as_dtype(row_values.dtype) != dtype:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Requested SparseTensor of type {dtype.name} but SparseTensor[0].dtype() == "
                    f"{dtypes.as_dtype(row_values.dtype).name}",
                )
        ranks = {len(shape) for _, _, shape in parts}
        if len(ranks) > 1:
            raise errors.InvalidArgumentError(
                None, None, f"Inconsistent ranks of the serialized SparseTensors: {sorted(ranks)}"
            )
        rank = ranks.pop() if ranks else 0
        indices = [
            np.concatenate([np.full((len(i), 1), n, np.int64), i.reshape(len(i), rank)], 1)
            for n, (i, _, _) in enumerate(parts)
        ]
        shapes = np.array([s for _, _, s in parts], np.int64).reshape(len(parts), rank)
        values = [v for _, v, _ in parts]
        return [
            np.concatenate(indices) if indices else np.zeros((0, rank + 1), np.int64),
            np.concatenate(values) if values else np.zeros([0], dtype.np),
            np.concatenate([[len(parts)], shapes.max(0, initial=0)]).astype(np.int64),
        ]


# --- builders -----------------------------------------------------------------------------------
def _sparse_op(op_type: str, sp_input: SparseTensor, out_type: Any, name: str | None):
    inputs = [sp_input.indices, sp_input.values, sp_input.dense_shape]
    attrs = {"out_type": dtypes.as_dtype(out_type)}
    graph = ops_lib.get_default_graph()
    return graph.create_op(op_type, inputs, attrs, name=name or op_type).outputs[0]


def serialize_sparse(sp_input: SparseTensor, name: str | None = None, out_type=dtypes.string):
    """``sp_input`` as a [3] string tensor (indices, values, dense shape as TensorProtos)."""
    return _sparse_op("SerializeSparse", sp_input, out_type, name)


def serialize_many_sparse(sp_input: SparseTensor, name=None, out_type=dtypes.string):
    """Each minibatch entry (first dimension) of ``sp_input`` as a serialized triple: [N, 3].

    >>> import nbflow as tf
    >>> sp = tf.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
    >>> back = tf.io.deserialize_many_sparse(tf.io.serialize_many_sparse(sp), tf.float32)
    >>> tf.Session().run(back.indices).tolist()
    [[0, 1], [1, 0]]
    """
    return _sparse_op("SerializeManySparse", sp_input, out_type, name)


def deserialize_many_sparse(
    serialized_sparse: Any, dtype: Any, rank: int | None = None, name: str | None = None
) -> SparseTensor:
    """One SparseTensor from [N, 3] serialized ones, the minibatch dimension N first."""
    serialized = ops_lib.convert_to_tensor(serialized_sparse, dtype=dtypes.string)
    op = ops_lib.get_default_graph().create_op(
        "DeserializeManySparse",
        [serialized],
        {"dtype": dtypes.as_dtype(dtype)},
        name=name or "DeserializeManySparse",
    )
    indices, values, shape = op.outputs
    if rank is not None:
        indices.set_shape([None, rank])
        shape.set_shape([rank])
    return SparseTensor(indices, values, shape)
