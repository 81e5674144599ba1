"""``tf.nn.sampled_softmax_loss`` and ``tf.nn.nce_loss``: training over a huge output vocabulary
by scoring the true classes and a small random sample of the others (OSDI §4.2, §6.4).

Both build the same logits (``_compute_sampled_logits``): the true and sampled class ids are
looked up in the (possibly sharded) weights and biases with ``embedding_lookup`` — so the
reads, and the sparse gradient updates, happen next to each shard on its parameter server —
multiplied with the inputs, and corrected by ``log Q`` (the sampler's expected counts). Sampled
classes that equal a true class of the row ("accidental hits") are masked out. Sampled softmax
then takes a softmax cross-entropy over [true | sampled]; NCE a logistic loss per class.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow import nn_impl
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.ops import array_ops, math_ops
from nbflow.ops.candidate_sampling_ops import log_uniform_candidate_sampler
from nbflow.ops.embedding_ops import embedding_lookup

Tensor = ops_lib.Tensor
_FLOAT32_MIN = float(np.finfo(np.float32).min)


def _compute_sampled_logits(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int,
    sampled_values: Any,
    subtract_log_q: bool,
    remove_accidental_hits: bool,
    partition_strategy: str,
    seed: int | None,
) -> tuple[Tensor, Tensor]:
    """(logits [batch, num_true + num_sampled], labels of the same shape)."""
    inputs = ops_lib.convert_to_tensor(inputs)
    labels = math_ops.cast(ops_lib.convert_to_tensor(labels), dtypes.int64)
    if labels.shape.ndims == 1:
        labels = array_ops.expand_dims(labels, -1)
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(
            labels, num_true, num_sampled, True, num_classes, seed=seed
        )
    sampled, true_expected, sampled_expected = (
        array_ops.stop_gradient(ops_lib.convert_to_tensor(v)) for v in sampled_values
    )
    sampled = math_ops.cast(sampled, dtypes.int64)
    labels_flat = array_ops.reshape(labels, [-1])
    all_ids = array_ops.concat([labels_flat, sampled], 0)
    all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
    all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
    n_true = array_ops.size(labels_flat)
    dim = array_ops.shape(all_w)[1:2]
    n_true_1 = array_ops.reshape(n_true, [1])
    true_w = array_ops.slice(all_w, [0, 0], array_ops.concat([n_true_1, dim], 0))
    sampled_w = array_ops.slice(all_w, array_ops.concat([n_true_1, [0]], 0), [-1, -1])
    sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True)
    true_b = array_ops.slice(all_b, [0], n_true_1)
    sampled_b = array_ops.slice(all_b, n_true_1, [-1])
    # true logits: each row's input dotted with its num_true true-class weights
    true_w = array_ops.reshape(true_w, array_ops.concat([[-1, num_true], dim], 0))
    row_dots = array_ops.expand_dims(inputs, 1) * true_w
    true_logits = math_ops.reduce_sum(row_dots, -1) + array_ops.reshape(true_b, [-1, num_true])
    sampled_logits = sampled_logits + sampled_b
    if remove_accidental_hits:
        hits = math_ops.equal(
            array_ops.expand_dims(labels, 2), array_ops.reshape(sampled, [1, 1, -1])
        )
        hit = math_ops.reduce_any(hits, axis=1)
        sampled_logits = sampled_logits + math_ops.cast(hit, sampled_logits.dtype) * _FLOAT32_MIN
    if subtract_log_q:
        true_logits = true_logits - math_ops.log(math_ops.cast(true_expected, true_logits.dtype))
        sampled_logits = sampled_logits - math_ops.log(
            math_ops.cast(sampled_expected, sampled_logits.dtype)
        )
    logits = array_ops.concat([true_logits, sampled_logits], 1)
    out_labels = array_ops.concat(
        [array_ops.ones_like(true_logits) / num_true, array_ops.zeros_like(sampled_logits)], 1
    )
    return logits, out_labels


def sampled_softmax_loss(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = True,
    partition_strategy: str = "mod",
    name: str = "sampled_softmax_loss",
    seed: int | None = None,
) -> Tensor:
    """Per-example softmax loss over the true classes and ``num_sampled`` sampled ones.

    ``weights`` [num_classes, dim] (a variable, a list of shards or a PartitionedVariable),
    ``biases`` [num_classes], ``labels`` int [batch, num_true], ``inputs`` [batch, dim].
    """
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name):
        logits, labels_ = _compute_sampled_logits(
            weights, biases, labels, inputs, num_sampled, num_classes, num_true,
            sampled_values, True, remove_accidental_hits, partition_strategy, seed,
        )  # fmt: skip
        return nn_impl.softmax_cross_entropy_with_logits_v2(
            labels=array_ops.stop_gradient(labels_), logits=logits
        )


def nce_loss(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = False,
    partition_strategy: str = "mod",
    name: str = "nce_loss",
    seed: int | None = None,
) -> Tensor:
    """Per-example noise-contrastive estimation loss (logistic loss per true/sampled class)."""
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name):
        logits, labels_ = _compute_sampled_logits(
            weights, biases, labels, inputs, num_sampled, num_classes, num_true,
            sampled_values, True, remove_accidental_hits, partition_strategy, seed,
        )  # fmt: skip
        losses = nn_impl.sigmoid_cross_entropy_with_logits(labels=labels_, logits=logits)
        return math_ops.reduce_sum(losses, 1)
