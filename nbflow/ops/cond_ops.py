"""``cond`` and ``case``: only the taken branch's ops run (OSDI §3.4).

A cond is a Switch on every value the branches read, the two branches, and a Merge per output.
``switch(pred, pred)`` makes two pivots, one live per branch; each branch function runs in a
``CondContext``, whose ``switched(t)`` routes an outside tensor ``t`` through a Switch on
``pred`` so that it is live only when the branch is taken, and ops with no inputs get a control
input from the branch's pivot. The Merges forward whichever branch is live; each remembers its
predicate (``_merge_preds``) for the gradient, which switches the incoming gradient the same way.
``case`` is a chain of conds, with an optional run-time check that at most one predicate holds.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, TensorSpec
from nbflow.framework.ops import Operation, Tensor
from nbflow.ops import math_ops
from nbflow.ops.array_ops import constant, identity
from nbflow.ops.control_flow_contexts import (
    _capture,
    _Context,
    _contexts,
    _merge_preds,
    current_context,
)
from nbflow.ops.control_flow_primitives import _create, merge, switch
from nbflow.ops.control_flow_structures import _flatten, _pack_as, _rewrap


class CondContext(_Context):
    """One branch of a cond: ``pred`` selects it when equal to ``branch`` (1 true, 0 false)."""

    def __init__(self, pred: Tensor, pivot: Tensor, branch: int, outer: Any):
        super().__init__(outer)
        self.pred = pred
        self.pivot = pivot
        self.branch = branch
        self._switched: dict[Tensor, Tensor] = {}

    def switched(self, t: Tensor) -> Tensor:
        """``t`` as seen inside this branch: live only when the branch is taken."""
        out = self._switched.get(t)
        if out is None:
            with ops_lib.control_dependencies(None):
                out = switch(t, self.pred, name="Switch")[self.branch]
            _contexts[out.op] = self.outer
            self._switched[t] = out
        return out


def cond(
    pred: Any,
    true_fn: Callable[[], Any] | None = None,
    false_fn: Callable[[], Any] | None = None,
    strict: bool = False,
    name: str | None = None,
    fn1: Callable[[], Any] | None = None,
    fn2: Callable[[], Any] | None = None,
) -> Any:
    """``true_fn()`` if ``pred`` else ``false_fn()``; only the taken branch's ops run.

    >>> import nbflow as tf
    >>> x = tf.constant(2.0)
    >>> tf.Session().run(tf.cond(x > 1.0, lambda: x * 10.0, lambda: x))
    20.0
    """
    true_fn = true_fn or fn1
    false_fn = false_fn or fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("cond: true_fn and false_fn must be callable")
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "cond"):
        pred = ops_lib.convert_to_tensor(pred)
        if pred.dtype.base_dtype is not dtypes.bool:
            raise TypeError(f"cond: pred must be a bool tensor, got {pred.dtype.name}")
        outer_limit = graph._id_counter  # ops up to this id are outside the cond
        p_false, p_true = switch(pred, pred)
        outer = current_context()
        results = []
        for branch, fn, p in ((1, true_fn, p_true), (0, false_fn, p_false)):
            pivot = identity(p, name="switch_t" if branch else "switch_f")
            ctx = CondContext(pred, pivot, branch, outer)
            _contexts[pivot.op] = ctx
            result, new_ops = ctx.build(fn)
            if result is None:
                raise ValueError(
                    "cond: true_fn and false_fn must return values; use tf.group for ops"
                )
            flat = [_branch_value(v) for v in _flatten(result)]
            _capture(new_ops, outer_limit, ctx.switched, pivot.op, None)
            flat = [ctx.switched(t) if t.op._id <= outer_limit else t for t in flat]
            results.append((result, flat))
        (true_result, true_flat), (_, false_flat) = results
        if len(true_flat) != len(false_flat):
            raise ValueError(
                "cond: true_fn and false_fn must return the same structure, got "
                f"{len(true_flat)} and {len(false_flat)} values"
            )
        merged = []
        for t, f in zip(true_flat, false_flat):
            if t.dtype.base_dtype is not f.dtype.base_dtype:
                raise ValueError(
                    f"cond: outputs of true_fn and false_fn differ in dtype: "
                    f"{t.dtype.name} vs {f.dtype.name}"
                )
            out, _ = merge([f, t])
            _contexts[out.op] = outer
            _merge_preds[out.op] = pred
            merged.append(out)
        leaves = _flatten(true_result)
        merged = [_rewrap(v, out) for v, out in zip(leaves, merged)]  # TensorArrays come back
        return _pack_as(true_result, merged, unwrap_single=not strict)


def _branch_value(value: Any) -> Tensor:
    if getattr(value, "_loop_flow", None) is not None:  # a TensorArray travels as its flow
        return value._loop_flow
    if isinstance(value, Operation):
        # An op as a branch result: a scalar live exactly when the op ran.
        with ops_lib.control_dependencies([value]):
            return constant(True)
    return ops_lib.convert_to_tensor(value)


def case(
    pred_fn_pairs: Any,
    default: Callable[[], Any] | None = None,
    exclusive: bool = False,
    strict: bool = False,
    name: str = "case",
) -> Any:
    """The result of the first ``fn`` whose ``pred`` is true, else of ``default``.

    Built as nested conds, so only the selected function's ops run. With ``exclusive``, a run
    where more than one predicate is true fails.
    """
    if isinstance(pred_fn_pairs, dict):
        pairs = list(pred_fn_pairs.items())
    else:
        pairs = list(pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, builtins.tuple) or len(pair) != 2 or not callable(pair[1]):
            raise TypeError("case: pred_fn_pairs must be (predicate, callable) pairs")
    if default is None:
        if not pairs:
            raise ValueError("case: needs at least one predicate or a default")
        *pairs, (_, default) = pairs
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name):
        preds = [ops_lib.convert_to_tensor(p) for p, _ in pairs]
        if exclusive and len(preds) > 1:
            count = math_ops.add_n([math_ops.cast(p, dtypes.int32) for p in preds])
            check = _assert_at_most_one(count, [p.name for p in preds])
            preds = [_with_dependency(p, check) for p in preds]

        def chain(i: int) -> Any:
            if i == len(pairs):
                return default()
            return cond(preds[i], pairs[i][1], lambda: chain(i + 1), strict=strict)

        return chain(0)


class _AssertAtMostOne(OpDef):
    """Fails when its count of true predicates exceeds one (``case(..., exclusive=True)``)."""

    inputs = ("count",)
    attrs = {"names": []}
    num_outputs = 0
    stateful = True
    differentiable = False

    def infer(self, count: TensorSpec, names: list) -> list:
        return []

    def compute(self, ctx: KernelContext, count: Any, names: list) -> None:
        if int(count) > 1:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"case: more than one condition evaluated as True ({int(count)} of "
                f"{', '.join(names)}) but exclusive=True",
            )


def _assert_at_most_one(count: Tensor, names: list[str]) -> Operation:
    return _create("_AssertAtMostOne", [count], {"names": names}, name="Assert")


def _with_dependency(t: Tensor, op: Operation) -> Tensor:
    with ops_lib.control_dependencies([op]):
        return identity(t)
