"""``gradients(ys, xs)``: reverse-mode differentiation by adding gradient ops to the graph.

The algorithm (whitepaper §4.1, OSDI §4.1) in three passes over the graph:

1. **reach**: walk forward from ``xs`` over consumer edges: the ops whose value depends on an x;
2. **between**: walk backward from ``ys`` through reached ops: the ops on a path x → y. Only
   these get gradient ops; everything else (the rest of the model, integer index arithmetic,
   parameters other than ``xs``) is never looked at;
3. **backward**: each between op waits until every between op consuming one of its outputs has
   contributed a gradient (a pending count per op, like the executor's). It then sums the
   partial gradients of each output (``AddN``; sparse ``IndexedSlices`` by concatenation, so a
   sparse gradient stays sparse), gives zeros to float outputs that received none (a
   multi-output op's gradient function sees one gradient per output), and calls its OpDef's
   ``gradient(op, *grads)``, which returns one gradient (or None) per flat input.

Gradients flow only through floating-point and complex tensors: integer and boolean paths give
None, as do ``xs`` that ``ys`` do not depend on. Ops marked ``differentiable = False``
(``StopGradient``, comparisons) and the ops of ``stop_gradients`` pass nothing back. A needed op
whose OpDef declares no gradient raises LookupError naming it. Gradient ops of op ``foo/bar``
are created in the name scope ``gradients/foo/bar_grad/``.
"""

from __future__ import annotations

import collections
import contextlib
import enum
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from nbflow.framework import ops as ops_lib
from nbflow.framework.indexed_slices import IndexedSlices
from nbflow.framework.ops import Operation, Tensor
from nbflow.ops import control_flow_grad
from nbflow.ops.constant_ops import zeros_like
from nbflow.ops import array_ops, control_flow_ops, math_ops
from nbflow.framework import dtypes


_OVERRIDES: dict[str, Any] = {}  # op type (or override key) -> gradient function, None = none


class RegisterGradient:
    """Decorator registering a gradient function under a name, overriding the OpDef's gradient.

    >>> import nbflow as tf
    >>> @tf.RegisterGradient("DoctestClippedIdentity")
    ... def _clipped(op, grad):
    ...     return [tf.clip_by_value(grad, -1.0, 1.0)]

    Ops use it when their type is that name, or inside ``gradient_override_map``.
    """

    def __init__(self, op_type: str):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn: Any) -> Any:
        _OVERRIDES[self._op_type] = fn
        return fn


def NotDifferentiable(op_type: str) -> None:  # noqa: N802 - TensorFlow's name
    """Declare that ops of ``op_type`` pass no gradient back (their inputs get None)."""
    _OVERRIDES[op_type] = None


no_gradient = NotDifferentiable


@contextlib.contextmanager
def gradient_override_map(op_type_map: dict[str, str], graph: Any = None) -> Iterator[None]:
    """Ops of the mapped types created inside use the gradient registered under the new name.

    ``with gradient_override_map({"Identity": "DoctestClippedIdentity"}): y = tf.identity(x)``
    """
    graph = graph or ops_lib.get_default_graph()

    def tag(op: Operation) -> None:
        key = op_type_map.get(op.type)
        if key is not None:
            op._attrs["_gradient_op_type"] = key

    graph._op_observers.append(tag)
    try:
        yield
    finally:
        graph._op_observers.remove(tag)


class AggregationMethod:
    """How partial gradients are summed; every method sums with one AddN here."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class UnconnectedGradients(enum.Enum):
    """What ``tf.gradients`` returns for an x no differentiable path connects to the ys."""

    NONE = "none"  # None, TensorFlow 1.x's default
    ZERO = "zero"  # zeros of the x's shape and dtype


def gradients(
    ys: Any,
    xs: Any,
    grad_ys: Any = None,
    name: str = "gradients",
    colocate_gradients_with_ops: bool = False,
    gate_gradients: bool = False,
    aggregation_method: Any = None,
    stop_gradients: Any = None,
    unconnected_gradients: Any = UnconnectedGradients.NONE,
) -> list[Any]:
    """The symbolic gradients of ``sum(ys)`` with respect to each of ``xs``.

    Returns a list with one entry per x: a Tensor, an IndexedSlices (sparse gradients of
    gathers) or, when no differentiable path leads from x to the ys, None (or zeros with
    ``unconnected_gradients=tf.UnconnectedGradients.ZERO``).

    >>> import nbflow as tf
    >>> x = tf.constant(3.0)
    >>> (g,) = tf.gradients(x * x, [x])
    >>> float(tf.Session().run(g))
    6.0
    """
    try:
        unconnected = UnconnectedGradients(
            getattr(unconnected_gradients, "value", unconnected_gradients)
        )
    except ValueError:
        raise ValueError(
            f"Unknown value for unconnected_gradients: {unconnected_gradients!r} "
            f"(tf.UnconnectedGradients.NONE or ZERO)"
        ) from None
    ys = [_as_tensor(y) for y in _as_list(ys)]
    xs = [_as_tensor(x, as_ref=True) for x in _as_list(xs)]
    grad_ys = [None] * len(ys) if grad_ys is None else _as_list(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    stop_ops = {_as_tensor(t).op for t in _as_list(stop_gradients)} if stop_gradients else set()
    graph = ys[0].graph if ys else ops_lib.get_default_graph()

    with graph.as_default(), graph.name_scope(name) as scope, graph.gradient_call(scope):
        xs_set = set(xs)
        between = _between_ops(ys, xs)
        # While loops are differentiated as wholes (ops/control_flow_grad.py): their inner ops
        # leave ``between``; their Exits hand over to the loop's backward pass below.
        loops = control_flow_grad.LoopGradients(between)
        pending = _pending_counts(between)
        loops.count_external_reads(pending)
        grads: dict[Tensor, list[Any]] = collections.defaultdict(list)
        for i, (y, gy) in enumerate(zip(ys, grad_ys)):
            grads[y].append(_grad_y(graph, y, gy, i, colocate_gradients_with_ops))

        # An input needs a gradient when it is an x or the output of a between op.
        def needs_grad(t: Tensor) -> bool:
            return (t in xs_set or t.op in between) and t.dtype.base_dtype.is_differentiable

        ready = collections.deque(sorted((op for op in between if pending[op] == 0), key=_op_id))
        while ready:
            op = ready.popleft()
            out_grads = [_aggregate(grads, t) for t in op._outputs]
            if op in loops.exits:
                for t, g in loops.exit_done(op, out_grads[0]):
                    if g is not None and needs_grad(t):
                        grads[t].append(g)
                    if t.op in between:
                        pending[t.op] -= 1
                        if pending[t.op] == 0:
                            ready.append(t.op)
                continue
            if op not in stop_ops and any(g is not None for g in out_grads):
                wanted = [needs_grad(t) for t in op._inputs]
                if any(wanted):
                    in_grads = _op_gradient(
                        graph, op, out_grads, wanted, gate_gradients, colocate_gradients_with_ops
                    )
                    for t, g in zip(op._inputs, in_grads):
                        if g is not None:
                            grads[t].append(g)
            for t in op._inputs:
                src = t.op
                if src in between:
                    pending[src] -= 1
                    if pending[src] == 0:
                        ready.append(src)
        results = [
            _aggregate(grads, x) if x.dtype.base_dtype.is_differentiable else None for x in xs
        ]
        if unconnected is UnconnectedGradients.ZERO:
            results = [zeros_like(x) if g is None else g for g, x in zip(results, xs)]
        return results


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _as_tensor(value: Any, as_ref: bool = False) -> Tensor:
    if as_ref and hasattr(value, "_ref"):
        return value._ref()  # a Variable: differentiate with respect to the variable itself
    if isinstance(value, Tensor):
        return value
    return ops_lib.convert_to_tensor(value)


def _op_id(op: Operation) -> int:
    return op._id


def _between_ops(ys: Sequence[Tensor], xs: Sequence[Tensor]) -> set[Operation]:
    """Ops on a path from some x to some y (reached forward from xs, then backward from ys)."""
    reached: set[Operation] = set()
    stack = [c for x in xs for c in x._consumers]
    while stack:
        op = stack.pop()
        if op in reached:
            continue
        reached.add(op)
        for t in op._outputs:
            stack.extend(c for c in t._consumers if c not in reached)
    between: set[Operation] = set()
    stack = [y.op for y in ys if y.op in reached]
    while stack:
        op = stack.pop()
        if op in between:
            continue
        between.add(op)
        stack.extend(t.op for t in op._inputs if t.op in reached and t.op not in between)
    return between


def _pending_counts(between: set[Operation]) -> dict[Operation, int]:
    """For each between op, how many input edges of between ops read one of its outputs."""
    pending = dict.fromkeys(between, 0)
    for op in between:
        for t in op._inputs:
            if t.op in between:
                pending[t.op] += 1
    return pending


def _grad_y(graph: ops_lib.Graph, y: Tensor, grad_y: Any, i: int, colocate: bool) -> Any:
    """The initial gradient of y: the given grad_y, or ones of y's shape."""
    dtype = y.dtype.base_dtype
    if grad_y is not None:
        if isinstance(grad_y, IndexedSlices):
            return grad_y
        grad_y = ops_lib.convert_to_tensor(grad_y, dtype=dtype, name=f"grad_ys_{i}")
        if grad_y.dtype.base_dtype is not dtype:
            raise TypeError(
                f"Gradient type {grad_y.dtype.name} generated for y {y.name} does not match "
                f"its type {dtype.name}"
            )
        return grad_y
    if not dtype.is_differentiable:
        return None
    with _maybe_colocate(graph, y.op, colocate):
        size = y.shape.num_elements()  # None unless the shape is fully defined
        if size is not None and size <= 1024:
            return array_ops.constant(
                np.ones(y.shape.as_list(), dtype=dtype.np), dtype=dtype, name=f"grad_ys_{i}"
            )
        return array_ops.ones_like(y, name=f"grad_ys_{i}")


def _maybe_colocate(graph: ops_lib.Graph, op: Operation, colocate: bool):
    return graph.colocate_with(op) if colocate else contextlib.nullcontext()


def _op_gradient(
    graph: ops_lib.Graph,
    op: Operation,
    out_grads: list[Any],
    wanted: list[bool],
    gate: bool,
    colocate: bool,
) -> list[Any]:
    """Call the op's gradient function in ``<op name>_grad``; one gradient per flat input,
    None where the input needs none (so unneeded gradient ops are pruned away at run time)."""
    opdef = op.op_def
    key = op._attrs.get("_gradient_op_type", op.type)
    if key in _OVERRIDES:  # RegisterGradient / NotDifferentiable / gradient_override_map
        gradient = _OVERRIDES[key]
    else:
        gradient = opdef.gradient if opdef.differentiable else None
    if gradient is None:
        return [None] * len(op._inputs)
    with graph.name_scope(op.name + "_grad"), _maybe_colocate(graph, op, colocate):
        for k, (t, g) in enumerate(zip(op._outputs, out_grads)):
            if g is None and t.dtype.base_dtype.is_differentiable:
                out_grads[k] = array_ops.zeros_like(t)
        in_grads = list(gradient(op, *out_grads))
        if len(in_grads) != len(op._inputs):
            raise ValueError(
                f"Num gradients {len(in_grads)} generated for op {op.name} ({op.type}) do not "
                f"match num inputs {len(op._inputs)}"
            )
        in_grads = [g if want else None for g, want in zip(in_grads, wanted)]
        if gate and sum(g is not None for g in in_grads) > 1:
            in_grads = _gate(in_grads)
    return in_grads


def _gate(in_grads: list[Any]) -> list[Any]:
    """The same gradients, each available only once all of them are (gate_gradients=True)."""
    dense = [g for g in in_grads if isinstance(g, Tensor)]
    gated = iter(control_flow_ops.tuple(dense))
    return [next(gated) if isinstance(g, Tensor) else g for g in in_grads]


def _aggregate(grads: dict[Tensor, list[Any]], t: Tensor) -> Any:
    """The sum of t's partial gradients (cached, so later readers share one sum)."""
    parts = grads.get(t)
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    total = aggregate_gradients(parts)
    grads[t] = [total]
    return total


def aggregate_gradients(parts: list[Any]) -> Any:
    """Sum partial gradients: AddN for tensors; IndexedSlices stay sparse when all are."""
    if all(isinstance(g, IndexedSlices) for g in parts):
        values = array_ops.concat([g.values for g in parts], 0)
        index_parts = [g.indices for g in parts]
        if len({i.dtype.base_dtype for i in index_parts}) > 1:
            index_parts = [_int64(i) for i in index_parts]
        indices = array_ops.concat(index_parts, 0)
        return IndexedSlices(values, indices, parts[0].dense_shape)
    dense = [ops_lib.convert_to_tensor(g) for g in parts]
    return math_ops.add_n(dense)


def _int64(indices: Tensor) -> Tensor:
    return math_ops.cast(indices, dtypes.int64) if indices.dtype != dtypes.int64 else indices
