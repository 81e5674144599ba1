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


class _CandidateSampler(_RandomOp):
    """Base of the candidate samplers: ``num_sampled`` classes from a distribution over
    ``[0, range_max)`` given by ``probability`` (the subclass), with expected counts."""

    abstract = True
    inputs = ("true_classes",)
    attrs = {
        "num_true": REQUIRED,
        "num_sampled": REQUIRED,
        "unique": REQUIRED,
        "range_max": REQUIRED,
        "seed": 0,
        "seed2": 0,
    }

    def output_count(self, attrs: dict) -> int:
        return 3

    def infer(
        self,
        true_classes: TensorSpec,
        num_true: int,
        num_sampled: int,
        unique: bool,
        range_max: int,
        seed: int,
        seed2: int,
        **attrs: Any,
    ) -> list[TensorSpec]:
        batch = true_classes.shape.with_rank(2)[0]
        return [
            TensorSpec(TensorShape([num_sampled]), dtypes.int64),
            TensorSpec(TensorShape([batch, num_true]), dtypes.float32),
            TensorSpec(TensorShape([num_sampled]), dtypes.float32),
        ]

    def probability(self, ctx: KernelContext, true_classes: Any, attrs: dict) -> np.ndarray:
        """P(k) for every class k in [0, range_max)."""
        raise NotImplementedError

    def compute(
        self,
        ctx: KernelContext,
        true_classes: Any,
        num_true: int,
        num_sampled: int,
        unique: bool,
        range_max: int,
        seed: int,
        seed2: int,
        rng=None,
        **attrs: Any,
    ):
        if unique and num_sampled > range_max:
            raise ValueError(
                f"Cannot sample {num_sampled} unique classes out of range_max {range_max}"
            )
        rng = rng or new_generator(seed, seed2)
        p = self.probability(ctx, np.asarray(true_classes), {"range_max": range_max, **attrs})
        sampled, tries = self.draw(rng, p, num_sampled, unique)
        true_p = p[np.clip(np.asarray(true_classes), 0, range_max - 1)]
        xp = ctx.xp
        return (
            xp.asarray(sampled),
            xp.asarray(_expected_count(true_p, num_sampled, tries).astype(np.float32)),
            xp.asarray(_expected_count(p[sampled], num_sampled, tries).astype(np.float32)),
        )

    def draw(self, rng: np.random.Generator, p: np.ndarray, num_sampled: int, unique: bool):
        """``num_sampled`` classes (distinct with ``unique``) and how many draws it took."""
        cumulative = np.cumsum(p)

        def draw(n: int) -> np.ndarray:
            values = np.searchsorted(cumulative, rng.random(n) * cumulative[-1], side="right")
            return np.minimum(values, len(p) - 1).astype(np.int64)

        if not unique:
            return draw(num_sampled), num_sampled
        chosen: dict[int, None] = {}
        tries = 0
        while len(chosen) < num_sampled:
            for value in draw(2 * (num_sampled - len(chosen)) + 8).tolist():
                tries += 1
                chosen.setdefault(value, None)
                if len(chosen) == num_sampled:
                    break
        return np.fromiter(chosen, dtype=np.int64, count=num_sampled), tries


_SAMPLES = [
    Sample(
        true_classes=np.array([[1], [5]], np.int64),
        num_true=1,
        num_sampled=4,
        unique=True,
        range_max=20,
        seed=1,
    ),
    Sample(
        true_classes=np.array([[0, 3]], np.int64),
        num_true=2,
        num_sampled=3,
        unique=False,
        range_max=10,
        seed=2,
    ),
]


class LogUniformCandidateSampler(_CandidateSampler):
    """``num_sampled`` classes from the log-uniform distribution, with expected counts."""

    samples = _SAMPLES

    def probability(self, ctx: KernelContext, true_classes: Any, attrs: dict) -> np.ndarray:
        return log_uniform_probability(np.arange(attrs["range_max"]), attrs["range_max"])


class UniformCandidateSampler(_CandidateSampler):
    """``num_sampled`` classes drawn uniformly from ``[0, range_max)``."""

    samples = _SAMPLES

    def probability(self, ctx: KernelContext, true_classes: Any, attrs: dict) -> np.ndarray:
        return np.full(attrs["range_max"], 1.0 / attrs["range_max"])


class ThreadUnsafeUnigramCandidateSampler(_CandidateSampler):
    """Classes drawn from a unigram distribution learned from the true classes seen so far
    (each class starts with a count of one); the counts live in the session's resources."""

    samples = _SAMPLES

    def session_state(self, ctx: KernelContext, key: str, attrs: dict[str, Any]) -> dict:
        range_max = attrs["range_max"]
        counts = ctx.resources.lookup_or_create(
            "__candidate_counts__", key, lambda: np.ones(range_max)
        )
        return {"counts": counts}

    def probability(self, ctx: KernelContext, true_classes: Any, attrs: dict) -> np.ndarray:
        range_max = attrs["range_max"]
        counts = attrs.get("counts")
        if counts is None:  # called outside a session: no history
            counts = np.ones(range_max)
        np.add.at(counts, np.clip(true_classes.reshape(-1), 0, range_max - 1), 1.0)
        return counts / counts.sum()


class FixedUnigramCandidateSampler(_CandidateSampler):
    """Classes drawn from the given ``unigrams`` counts raised to ``distortion``; the first
    ``num_reserved_ids`` classes have probability zero."""

    attrs = {
        **_CandidateSampler.attrs,
        "vocab_file": "",
        "distortion": 1.0,
        "num_reserved_ids": 0,
        "num_shards": 1,
        "shard": 0,
        "unigrams": [],
    }
    samples = [
        Sample(
            true_classes=np.array([[1], [3]], np.int64),
            num_true=1,
            num_sampled=3,
            unique=True,
            range_max=5,
            seed=1,
            unigrams=[4.0, 1.0, 2.0, 5.0, 3.0],
        ),
        Sample(
            true_classes=np.array([[2]], np.int64),
            num_true=1,
            num_sampled=4,
            unique=False,
            range_max=4,
            seed=2,
            unigrams=[1.0, 1.0, 2.0],
            num_reserved_ids=1,
            distortion=0.5,
        ),
    ]

    def probability(self, ctx: KernelContext, true_classes: Any, attrs: dict) -> np.ndarray:
        weights = np.asarray(attrs["unigrams"], np.float64)
        if attrs["vocab_file"]:
            with open(attrs["vocab_file"]) as f:
                weights = np.array([float(line.rsplit(",", 1)[-1]) for line in f if line.strip()])
        weights = np.concatenate([np.zeros(attrs["num_reserved_ids"]), weights])
        if len(weights) != attrs["range_max"]:
            raise ValueError(
                f"range_max {attrs['range_max']} != num_reserved_ids + len(unigrams) "
                f"= {len(weights)}"
            )
        p = weights ** attrs["distortion"]
        p[: attrs["num_reserved_ids"]] = 0.0
        shard, num_shards = attrs["shard"], attrs["num_shards"]
        if num_shards > 1:
            p[np.arange(len(p)) % num_shards != shard] = 0.0
        return p / p.sum()


class AllCandidateSampler(_CandidateSampler):
    """All classes ``[0, num_sampled)``, each with expected count 1 (for testing)."""

    samples = [
        Sample(
            true_classes=np.array([[1], [2]], np.int64),
            num_true=1,
            num_sampled=4,
            unique=True,
            range_max=4,
            seed=1,
        )
    ]

    def compute(
        self,
        ctx: KernelContext,
        true_classes: Any,
        num_true: int,
        num_sampled: int,
        unique: bool,
        range_max: int,
        seed: int,
        seed2: int,
        rng=None,
        **attrs: Any,
    ):
        xp = ctx.xp
        return (
            xp.arange(num_sampled, dtype=np.int64),
            xp.ones(np.shape(true_classes), np.float32),
            xp.ones(num_sampled, np.float32),
        )


def _candidate_sampler(
    op_type, true_classes, num_true, num_sampled, unique, range_max, seed, name, **extra: Any
):
    seed1, seed2 = get_seed(seed)
    true_classes = ops_lib.convert_to_tensor(true_classes, dtype=dtypes.int64)
    attrs = {
        "num_true": int(num_true),
        "num_sampled": int(num_sampled),
        "unique": bool(unique),
        "range_max": int(range_max),
        "seed": seed1 or 0,
        "seed2": seed2 or 0,
        **extra,
    }
    op = ops_lib.get_default_graph().create_op(op_type, [true_classes], attrs, name=name or op_type)
    return op.outputs[0], op.outputs[1], op.outputs[2]


def uniform_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    """Classes drawn uniformly from ``[0, range_max)``, with expected counts."""
    return _candidate_sampler(
        "UniformCandidateSampler",
        true_classes,
        num_true,
        num_sampled,
        unique,
        range_max,
        seed,
        name,
    )


def learned_unigram_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    """Classes drawn from the unigram distribution of the true classes seen so far."""
    return _candidate_sampler(
        "ThreadUnsafeUnigramCandidateSampler",
        true_classes,
        num_true,
        num_sampled,
        unique,
        range_max,
        seed,
        name,
    )


def fixed_unigram_candidate_sampler(
    true_classes,
    num_true,
    num_sampled,
    unique,
    range_max,
    vocab_file="",
    distortion=1.0,
    num_reserved_ids=0,
    num_shards=1,
    shard=0,
    unigrams=(),
    seed=None,
    name=None,
):
    """Classes drawn from fixed unigram counts (``unigrams`` or ``vocab_file``)."""
    return _candidate_sampler(
        "FixedUnigramCandidateSampler",
        true_classes,
        num_true,
        num_sampled,
        unique,
        range_max,
        seed,
        name,
        vocab_file=vocab_file,
        distortion=float(distortion),
        num_reserved_ids=int(num_reserved_ids),
        num_shards=int(num_shards),
        shard=int(shard),
        unigrams=[float(u) for u in unigrams],
    )


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """All classes ``[0, num_sampled)`` as candidates, each with expected count 1."""
    return _candidate_sampler(
        "AllCandidateSampler", true_classes, num_true, num_sampled, unique, num_sampled, seed, name
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
