"""Candidate samplers: random classes for sampled softmax and NCE (OSDI §4.2, §6.4).

``log_uniform_candidate_sampler`` draws class ids from the Zipfian (log-uniform) distribution
``P(k) = (log(k + 2) - log(k + 1)) / log(range_max + 1)`` — frequent words have small ids —
and returns, with the samples, the expected count of each true and each sampled class: the
``Q(y|x)`` that sampled softmax subtracts in log space. With ``unique=True`` it draws until it
has ``num_sampled`` distinct classes and the expected count of a class is the probability it
appears in that many tries, ``1 - (1 - P(k)) ** tries``, as in TensorFlow.

>>> classes = tf.constant([[1], [7]], dtype=tf.int64)  # doctest: +SKIP
>>> sampled, true_count, sampled_count = log_uniform_candidate_sampler(
...     classes, 1, num_sampled=5, unique=True, range_max=1000)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops.random_ops import _RandomOp, get_seed, new_generator


def log_uniform_probability(classes: np.ndarray, range_max: int) -> np.ndarray:
    """P(k) of the log-uniform distribution over [0, range_max)."""
    k = np.asarray(classes, dtype=np.float64)
    return (np.log(k + 2.0) - np.log(k + 1.0)) / np.log(range_max + 1.0)


def _expected_count(p: np.ndarray, num_sampled: int, tries: int) -> np.ndarray:
    if tries == num_sampled:
        return p * num_sampled
    return -np.expm1(tries * np.log1p(-p))


class LogUniformCandidateSampler(_RandomOp):
    """``num_sampled`` classes from the log-uniform distribution, with expected counts."""

    inputs = ("true_classes",)
    attrs = {
        "num_true": REQUIRED,
        "num_sampled": REQUIRED,
        "unique": REQUIRED,
        "range_max": REQUIRED,
        "seed": 0,
        "seed2": 0,
    }
    samples = [
        Sample(true_classes=np.array([[1], [5]], np.int64), num_true=1, num_sampled=4,
               unique=True, range_max=20, seed=1),
        Sample(true_classes=np.array([[0, 3]], np.int64), num_true=2, num_sampled=3,
               unique=False, range_max=10, seed=2),
    ]  # fmt: skip

    def output_count(self, attrs: dict) -> int:
        return 3

    def infer(self, true_classes: TensorSpec, num_true: int, num_sampled: int, unique: bool,
              range_max: int, seed: int, seed2: int) -> list[TensorSpec]:  # fmt: skip
        batch = true_classes.shape.with_rank(2)[0]
        return [
            TensorSpec(TensorShape([num_sampled]), dtypes.int64),
            TensorSpec(TensorShape([batch, num_true]), dtypes.float32),
            TensorSpec(TensorShape([num_sampled]), dtypes.float32),
        ]

    def compute(self, ctx: KernelContext, true_classes: Any, num_true: int, num_sampled: int,
                unique: bool, range_max: int, seed: int, seed2: int, rng=None):  # fmt: skip
        if unique and num_sampled > range_max:
            raise ValueError(
                f"Cannot sample {num_sampled} unique classes out of range_max {range_max}"
            )
        rng = rng or new_generator(seed, seed2)
        log_range = np.log(range_max + 1.0)

        def draw(n: int) -> np.ndarray:
            values = np.exp(rng.random(n) * log_range).astype(np.int64) - 1
            return np.clip(values, 0, range_max - 1)

        if unique:
            chosen: dict[int, None] = {}
            tries = 0
            while len(chosen) < num_sampled:
                for value in draw(2 * (num_sampled - len(chosen)) + 8).tolist():
                    tries += 1
                    chosen.setdefault(value, None)
                    if len(chosen) == num_sampled:
                        break
            sampled = np.fromiter(chosen, dtype=np.int64, count=num_sampled)
        else:
            sampled = draw(num_sampled)
            tries = num_sampled
        true_p = log_uniform_probability(np.asarray(true_classes), range_max)
        sampled_p = log_uniform_probability(sampled, range_max)
        xp = ctx.xp
        return (
            xp.asarray(sampled),
            xp.asarray(_expected_count(true_p, num_sampled, tries).astype(np.float32)),
            xp.asarray(_expected_count(sampled_p, num_sampled, tries).astype(np.float32)),
        )


def log_uniform_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None = None,
    name: str | None = None,
) -> tuple[ops_lib.Tensor, ops_lib.Tensor, ops_lib.Tensor]:
    """(sampled_candidates, true_expected_count, sampled_expected_count); see the module."""
    seed1, seed2 = get_seed(seed)
    true_classes = ops_lib.convert_to_tensor(true_classes, dtype=dtypes.int64)
    op = ops_lib.get_default_graph().create_op(
        "LogUniformCandidateSampler",
        [true_classes],
        {
            "num_true": int(num_true),
            "num_sampled": int(num_sampled),
            "unique": bool(unique),
            "range_max": int(range_max),
            "seed": seed1 or 0,
            "seed2": seed2 or 0,
        },
        name=name or "LogUniformCandidateSampler",
    )
    return op.outputs[0], op.outputs[1], op.outputs[2]
