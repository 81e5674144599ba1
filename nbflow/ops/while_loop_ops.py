"""``while_loop``: a loop is a frame of Enter, Merge, Switch, NextIteration and Exit (OSDI §3.4).

    Enter ─▶ Merge ─▶ Switch ─(true)─▶ Identity ─▶ body ─▶ NextIteration ─┐
               ▲        │  ▲                                               │
               │        │  └─ LoopCond ◀─ cond(Merge outputs)              │
               │        └─(false)─▶ Exit ─▶ (outside the loop)             │
               └───────────────────────────────────────────────────────────┘

Per flat loop variable, ``_while`` builds an Enter and a Merge whose second input is patched to
the NextIteration once the body exists. ``cond`` runs in the loop's ``WhileContext`` and ends in
LoopCond; each Merge feeds a Switch on it, whose true side (through an Identity) is what the body
sees and whose false side leaves through Exit. Tensors the cond or body read from outside become
loop invariants (a constant Enter each, made once). The executor (runtime/dataflow.py) tags every
value with its frame and iteration, so iterations overlap up to ``parallel_iterations``.
``maximum_iterations`` adds a counter as an extra loop variable.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import TensorSpec
from nbflow.framework.ops import Tensor
from nbflow.framework.tensor_shape import TensorShape, as_shape
from nbflow.ops import math_ops
from nbflow.ops.array_ops import identity
from nbflow.ops.control_flow_contexts import (
    WhileContext,
    _capture,
    _contexts,
    current_context,
)
from nbflow.ops.control_flow_primitives import _create
from nbflow.ops.control_flow_structures import _flatten, _loop_tensor, _pack_as, _rewrap


def while_loop(
    cond: Callable[..., Any],
    body: Callable[..., Any],
    loop_vars: Any,
    shape_invariants: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
    maximum_iterations: Any = None,
    return_same_structure: bool = False,
) -> Any:
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``; returns the final vars.

    ``loop_vars`` may be nested (lists, tuples, namedtuples, dicts, TensorArrays).
    Iterations overlap up to ``parallel_iterations``. A loop variable whose shape changes
    across iterations needs a ``shape_invariants`` entry (e.g. ``TensorShape([None, 2])``).

    >>> import nbflow as tf
    >>> i = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [tf.constant(0)])
    >>> tf.Session().run(i)
    10
    """
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop: cond and body must be callable")
    if parallel_iterations < 1:
        raise ValueError("while_loop: parallel_iterations must be a positive integer")
    single = not isinstance(loop_vars, (list, builtins.tuple))
    structure = [loop_vars] if single else loop_vars
    invariants = [shape_invariants] if single and shape_invariants is not None else shape_invariants
    if maximum_iterations is None:
        result = _while(cond, body, structure, invariants, parallel_iterations, back_prop, name)
    else:
        limit = ops_lib.convert_to_tensor(maximum_iterations, dtype=dtypes.int32)
        counter = ops_lib.convert_to_tensor(0, dtype=dtypes.int32, name="iteration_counter")

        def counted_cond(n: Tensor, user: Any) -> Tensor:
            return math_ops.logical_and(n < limit, cond(*user))

        def counted_body(n: Tensor, user: Any) -> Any:
            return n + 1, _as_structure(body(*user), user)

        if invariants is not None:
            invariants = (TensorShape([]), invariants)
        result = _while(
            counted_cond,
            counted_body,
            (counter, structure),
            invariants,
            parallel_iterations,
            back_prop,
            name,
        )[1]
    if len(structure) == 1 and not return_same_structure:
        return result[0]
    return result


def _as_structure(out: Any, structure: Any) -> Any:
    """A body's result as a list/tuple like ``structure`` (a lone value for one loop var)."""
    if len(structure) == 1 and not isinstance(out, (list, builtins.tuple)):
        return [out]
    return out


def _while(
    cond: Callable[..., Any],
    body: Callable[..., Any],
    structure: Any,
    shape_invariants: Any,
    parallel_iterations: int,
    back_prop: bool,
    name: str | None,
) -> Any:
    graph = ops_lib.get_default_graph()
    flat_vars = _flatten(structure)
    flat_tensors = [_loop_tensor(v) for v in flat_vars]
    if shape_invariants is not None:
        flat_shapes = [as_shape(s) for s in _flatten(shape_invariants, shapes=True)]
        if len(flat_shapes) != len(flat_tensors):
            raise ValueError(
                f"while_loop: shape_invariants has {len(flat_shapes)} entries for "
                f"{len(flat_tensors)} loop variables"
            )
    else:
        flat_shapes = [t.shape for t in flat_tensors]
    for t, s in zip(flat_tensors, flat_shapes):
        if not s.is_compatible_with(t.shape):
            raise ValueError(
                f"while_loop: the shape invariant {s} is not compatible with the initial shape "
                f"{t.shape} of loop variable {t.name}"
            )
    with graph.name_scope(name or "while") as scope:
        frame = scope.rstrip("/")
        ctx = WhileContext(frame, parallel_iterations, back_prop, current_context())
        attrs = {
            "frame_name": frame,
            "is_constant": False,
            "parallel_iterations": parallel_iterations,
        }
        outer_limit = graph._id_counter  # ops up to this id are outside the loop
        merged = []
        for t, s in zip(flat_tensors, flat_shapes):
            op_type = "RefEnter" if t.dtype.is_ref_dtype else "Enter"
            enter = _create(op_type, [t], attrs, name="Enter")
            m = graph.create_op(
                "Merge",
                [[enter.outputs[0], enter.outputs[0]]],
                name="Merge",
                output_specs=[
                    TensorSpec(s, t.dtype.base_dtype),
                    TensorSpec(TensorShape([]), dtypes.int32),
                ],
            )
            ctx.enters.append(enter)
            ctx.merges.append(m)
            merged.append(m.outputs[0])
            _contexts[enter] = ctx.outer
            _contexts[m] = ctx
        packed = _pack_as(structure, [_rewrap(v, t) for v, t in zip(flat_vars, merged)])

        def build_cond() -> Tensor:
            pred = cond(*packed)
            pred = ops_lib.convert_to_tensor(pred)
            if pred.dtype.base_dtype is not dtypes.bool:
                raise TypeError(f"while_loop: cond must return a bool, got {pred.dtype.name}")
            return _create("LoopCond", [pred], name="LoopCond").outputs[0]

        pred, cond_ops = ctx.build(build_cond)
        ctx.loop_cond = pred.op
        ctx.cond_ops = cond_ops
        _capture(
            cond_ops, outer_limit, ctx.enter_invariant, ctx.merges[0], ctx.add_external_control
        )
        if pred.op not in cond_ops:
            raise ValueError("while_loop: cond must build its predicate from the loop variables")
        body_in = []
        for m in ctx.merges:
            sw = _create(
                "RefSwitch" if m.outputs[0].dtype.is_ref_dtype else "Switch",
                [m.outputs[0], pred],
                name="Switch",
            )
            _contexts[sw] = ctx
            ctx.switches.append(sw)
            ident = identity(sw.outputs[1], name="Identity")
            _contexts[ident.op] = ctx
            body_in.append(ident)
        ctx.identities = body_in
        pivot = body_in[0].op
        packed_body = _pack_as(structure, [_rewrap(v, t) for v, t in zip(flat_vars, body_in)])

        def build_body() -> list[Tensor]:
            with ops_lib.control_dependencies(None):
                out = _as_structure(body(*packed_body), structure)
            flat_out = _flatten(out)
            if len(flat_out) != len(flat_tensors):
                raise ValueError(
                    f"while_loop: body returned {len(flat_out)} values for "
                    f"{len(flat_tensors)} loop variables"
                )
            tensors = []
            for v, t in zip(flat_out, flat_tensors):
                v = ops_lib.convert_to_tensor(_loop_tensor(v), dtype=t.dtype.base_dtype)
                tensors.append(v)
            return tensors

        body_out, body_ops = ctx.build(build_body)
        ctx.body_ops = body_ops
        _capture(body_ops, outer_limit, ctx.enter_invariant, pivot, ctx.add_external_control)
        body_out = [ctx.enter_invariant(t) if t.op._id <= outer_limit else t for t in body_out]
        ctx.body_outputs = body_out
        exits = []
        for m, sw, out, shape in zip(ctx.merges, ctx.switches, body_out, flat_shapes):
            if not shape.is_compatible_with(out.shape):
                raise ValueError(
                    f"Input tensor '{m.inputs[0].name}' enters the loop with shape {shape}, "
                    f"but has shape {out.shape} after one iteration. To allow the shape to vary "
                    "across iterations, use the `shape_invariants` argument of tf.while_loop."
                )
            nxt = _create("NextIteration", [out], name="NextIteration")
            _contexts[nxt] = ctx
            ctx.next_iterations.append(nxt)
            m._update_input(1, nxt.outputs[0])
            ex = _create("Exit", [sw.outputs[0]], name="Exit")
            _contexts[ex] = ctx
            exits.append(ex.outputs[0])
        ctx.exits = exits
        _register_loop(graph, ctx)
        return _pack_as(structure, [_rewrap(v, t) for v, t in zip(flat_vars, exits)])


def _register_loop(graph: ops_lib.Graph, ctx: WhileContext) -> None:
    graph.add_to_collection(ops_lib.GraphKeys.WHILE_CONTEXT, ctx)
