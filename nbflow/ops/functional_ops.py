"""Higher-order functions over the first dimension, built on ``while_loop`` (OSDI §3.4):
``map_fn``, ``foldl``, ``foldr`` and ``scan``.

Element ``i`` is read with ``gather(elems, i)``; stacked results grow by concatenation along
dimension 0 (a loop variable with shape invariant ``[None, ...]``). Everything is made of
differentiable ops, so gradients flow through these loops like through any ``while_loop``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Tensor
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops import control_flow_ops as cf


def _elems(elems: Any) -> tuple[list[Tensor], Callable[[list], Any]]:
    flat = [ops_lib.convert_to_tensor(e) for e in cf._flatten(elems)]
    if not flat:
        raise ValueError("elems must hold at least one tensor")
    return flat, lambda leaves: cf._pack_as(elems, leaves)


def _length(flat: list[Tensor]) -> Tensor:
    from nbflow.ops import array_ops

    return array_ops.shape(flat[0])[0]


def _row(t: Tensor, i: Tensor) -> Tensor:
    from nbflow.ops import array_ops

    return array_ops.gather(t, i)


def _append(acc: Tensor, value: Tensor) -> Tensor:
    from nbflow.ops import array_ops

    return array_ops.concat([acc, array_ops.expand_dims(value, 0)], 0)


def _stacked_invariant(t: Tensor) -> TensorShape:
    return TensorShape([None]).concatenate(t.shape[1:]) if t.shape.ndims else TensorShape(None)


def map_fn(
    fn: Callable[[Any], Any],
    elems: Any,
    dtype: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    name: str | None = None,
) -> Any:
    """``stack([fn(e) for e in unstack(elems)])``; ``elems`` may be nested; needs >= 1 element.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.map_fn(lambda x: x * x, tf.constant([1, 2, 3])))
    array([1, 4, 9], dtype=int32)
    """
    from nbflow.ops import array_ops

    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "map"):
        flat, pack = _elems(elems)
        n = _length(flat)
        first_result = fn(pack([_row(t, 0) for t in flat]))
        first = cf._flatten(first_result)
        accs = [array_ops.expand_dims(ops_lib.convert_to_tensor(v), 0) for v in first]

        def body(i: Tensor, accs: list) -> Any:
            out = cf._flatten(fn(pack([_row(t, i) for t in flat])))
            return i + 1, [_append(a, ops_lib.convert_to_tensor(v)) for a, v in zip(accs, out)]

        _, results = cf.while_loop(
            lambda i, accs: i < n,
            body,
            (ops_lib.convert_to_tensor(1, dtype=dtypes.int32), accs),
            shape_invariants=(TensorShape([]), [_stacked_invariant(a) for a in accs]),
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
        )
        return cf._pack_as(first_result, results)


def foldl(
    fn: Callable[[Any, Any], Any],
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
) -> Any:
    """``acc = fn(acc, e)`` for the elements from first to last; starts from ``initializer``
    (else from element 0)."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, name or "foldl", False)


def foldr(
    fn: Callable[[Any, Any], Any],
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
) -> Any:
    """Like ``foldl`` from the last element to the first."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, name or "foldr", True)


def _fold(fn, elems, initializer, parallel_iterations, back_prop, name, reverse):  # noqa: ANN001
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name):
        flat, pack = _elems(elems)
        n = _length(flat)
        if initializer is None:
            start = n - 1 if reverse else 0
            acc = pack([_row(t, start) for t in flat])
            i0 = n - 2 if reverse else ops_lib.convert_to_tensor(1, dtype=dtypes.int32)
        else:
            acc = initializer
            i0 = n - 1 if reverse else ops_lib.convert_to_tensor(0, dtype=dtypes.int32)
        acc_flat = [ops_lib.convert_to_tensor(a) for a in cf._flatten(acc)]

        def cond(i: Tensor, a: list) -> Tensor:
            return i >= 0 if reverse else i < n

        def body(i: Tensor, a: list) -> Any:
            out = fn(cf._pack_as(acc, a), pack([_row(t, i) for t in flat]))
            nxt = i - 1 if reverse else i + 1
            return nxt, [ops_lib.convert_to_tensor(v) for v in cf._flatten(out)]

        _, result = cf.while_loop(
            cond,
            body,
            (i0, acc_flat),
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
        )
        return cf._pack_as(acc, result)


def scan(
    fn: Callable[[Any, Any], Any],
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    reverse: bool = False,
    name: str | None = None,
) -> Any:
    """The successive values of ``acc = fn(acc, e)``, stacked (``reverse`` runs last to first).

    >>> import nbflow as tf
    >>> tf.Session().run(tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3, 4])))
    array([ 1,  3,  6, 10], dtype=int32)
    """
    from nbflow.ops import array_ops

    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "scan"):
        flat, pack = _elems(elems)
        n = _length(flat)
        if initializer is None:
            start = n - 1 if reverse else ops_lib.convert_to_tensor(0, dtype=dtypes.int32)
            acc = pack([_row(t, start) for t in flat])
            i0 = n - 2 if reverse else ops_lib.convert_to_tensor(1, dtype=dtypes.int32)
        else:
            first_index = n - 1 if reverse else ops_lib.convert_to_tensor(0, dtype=dtypes.int32)
            acc = fn(initializer, pack([_row(t, first_index) for t in flat]))
            i0 = n - 2 if reverse else ops_lib.convert_to_tensor(1, dtype=dtypes.int32)
        acc_flat = [ops_lib.convert_to_tensor(a) for a in cf._flatten(acc)]
        stacks = [array_ops.expand_dims(a, 0) for a in acc_flat]

        def cond(i: Tensor, a: list, s: list) -> Tensor:
            return i >= 0 if reverse else i < n

        def body(i: Tensor, a: list, s: list) -> Any:
            out = fn(cf._pack_as(acc, a), pack([_row(t, i) for t in flat]))
            out_flat = [ops_lib.convert_to_tensor(v) for v in cf._flatten(out)]
            nxt = i - 1 if reverse else i + 1
            if reverse:
                grown = [
                    array_ops.concat([array_ops.expand_dims(v, 0), st], 0)
                    for v, st in zip(out_flat, s)
                ]
            else:
                grown = [_append(st, v) for st, v in zip(s, out_flat)]
            return nxt, out_flat, grown

        _, _, result = cf.while_loop(
            cond,
            body,
            (i0, acc_flat, stacks),
            shape_invariants=(
                TensorShape([]),
                [a.shape for a in acc_flat],
                [_stacked_invariant(s) for s in stacks],
            ),
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
        )
        return cf._pack_as(acc, result)
