"""``tf.edit_distance``: Levenshtein distance between sparse sequences, batch by batch.

Both arguments are SparseTensors of rank R whose last dimension indexes positions in a sequence;
the first R - 1 index a batch. The result, of the larger of the two dense shapes minus its last
dimension, holds per batch position the number of insertions, deletions and substitutions
turning the hypothesis into the truth, divided by the truth's length when ``normalize`` is set
(TensorFlow's conventions: an empty truth gives inf for a non-empty hypothesis, 1.0 for a
missing hypothesis, 0 where both are empty).

    >>> import nbflow as tf
    >>> h = tf.SparseTensor([[0, 0], [0, 1]], ["a", "b"], [1, 2])
    >>> t = tf.SparseTensor([[0, 0], [0, 1], [0, 2]], ["a", "c", "b"], [1, 3])
    >>> tf.Session().run(tf.edit_distance(h, t, normalize=False)).tolist()
    [1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.sparse_tensor import SparseTensor
from nbflow.framework.tensor_shape import TensorShape


def levenshtein(a: list[Any], b: list[Any]) -> int:
    """Insertions, deletions and substitutions turning ``a`` into ``b``."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, y in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
        previous = current
    return previous[-1]


def _sequences(indices: np.ndarray, values: np.ndarray) -> dict[tuple[int, ...], list[Any]]:
    """Values grouped by batch index (all but the last index), ordered by position."""
    order = np.lexsort(indices.T[::-1]) if len(indices) else np.zeros(0, dtype=np.int64)
    groups: dict[tuple[int, ...], list[Any]] = {}
    for k in order:
        groups.setdefault(tuple(int(i) for i in indices[k, :-1]), []).append(values[k])
    return groups


class EditDistance(OpDef):
    """Per batch position, the edit distance from the hypothesis to the truth sequence."""

    inputs = (
        "hypothesis_indices",
        "hypothesis_values",
        "hypothesis_shape",
        "truth_indices",
        "truth_values",
        "truth_shape",
    )
    attrs = {"normalize": True}
    differentiable = False  # a count of edits (TensorFlow has no gradient either)
    samples = [
        Sample(
            hypothesis_indices=np.array([[0, 0], [0, 1], [1, 0]], np.int64),
            hypothesis_values=np.array([1, 2, 3], np.int64),
            hypothesis_shape=np.array([2, 2], np.int64),
            truth_indices=np.array([[0, 0], [1, 0], [1, 1]], np.int64),
            truth_values=np.array([1, 3, 4], np.int64),
            truth_shape=np.array([3, 2], np.int64),
        ),
        Sample(
            hypothesis_indices=np.array([[0, 0, 0], [1, 1, 2]], np.int64),
            hypothesis_values=np.array([1.0, 2.0]),
            hypothesis_shape=np.array([2, 2, 3], np.int64),
            truth_indices=np.zeros((0, 3), np.int64),
            truth_values=np.zeros(0),
            truth_shape=np.array([2, 2, 1], np.int64),
            normalize=False,
        ),
    ]

    def infer(
        self,
        hypothesis_indices,
        hypothesis_values,
        hypothesis_shape,
        truth_indices,
        truth_values,
        truth_shape,
        normalize: bool,
    ) -> TensorSpec:
        if hypothesis_values.dtype.base_dtype != truth_values.dtype.base_dtype:
            raise TypeError(
                f"edit_distance: hypothesis values are {hypothesis_values.dtype.name} but truth "
                f"values are {truth_values.dtype.name}"
            )
        rank = TensorShape(hypothesis_shape.shape).as_list()
        if rank and rank[0] is not None:
            return TensorSpec(TensorShape([None] * (rank[0] - 1)), dtypes.float32)
        return TensorSpec(TensorShape(None), dtypes.float32)

    def compute(
        self,
        ctx: KernelContext,
        hypothesis_indices,
        hypothesis_values,
        hypothesis_shape,
        truth_indices,
        truth_values,
        truth_shape,
        normalize,
    ) -> Any:
        h_shape, t_shape = np.asarray(hypothesis_shape), np.asarray(truth_shape)
        if h_shape.shape != t_shape.shape:
            raise ValueError(
                f"edit_distance: hypothesis and truth must have the same rank, got shapes "
                f"{h_shape.tolist()} and {t_shape.tolist()}"
            )
        out = np.zeros(np.maximum(h_shape, t_shape)[:-1], dtype=np.float32)
        hyp = _sequences(np.asarray(hypothesis_indices), np.asarray(hypothesis_values))
        truth = _sequences(np.asarray(truth_indices), np.asarray(truth_values))
        for loc in set(hyp) | set(truth):
            h, t = hyp.get(loc, []), truth.get(loc, [])
            distance = float(levenshtein(h, t))
            if normalize:
                distance = distance / len(t) if t else np.inf
            out[loc] = distance
        return ctx.xp.asarray(out)


def edit_distance(
    hypothesis: SparseTensor,
    truth: SparseTensor,
    normalize: bool = True,
    name: str = "edit_distance",
) -> ops_lib.Tensor:
    """The Levenshtein distance between ``hypothesis`` and ``truth`` (SparseTensors) per batch
    position; see the module docstring."""
    for arg, what in ((hypothesis, "Hypothesis"), (truth, "Truth")):
        if not isinstance(arg, SparseTensor):
            raise TypeError(f"{what} must be a SparseTensor, got {type(arg).__name__}")
    inputs = [
        hypothesis.indices,
        hypothesis.values,
        hypothesis.dense_shape,
        truth.indices,
        truth.values,
        truth.dense_shape,
    ]
    op = ops_lib.get_default_graph().create_op(
        "EditDistance", inputs, {"normalize": bool(normalize)}, name=name
    )
    return op.outputs[0]
