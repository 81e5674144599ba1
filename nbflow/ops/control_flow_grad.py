"""Gradients of cond and while_loop (OSDI §4.1): record forward decisions, replay them in reverse.

**cond.** A cond's gradient is itself a cond on the same predicate. The gradient of a Merge
switches the incoming gradient by ``pred`` (so only the branch that ran is differentiated);
the gradient of a Switch merges the gradients of its two sides. A side that got no gradient
gets zeros switched by the same predicate, which are dead exactly when that side was not taken.

**while_loop.** The loop is differentiated as a whole once the gradients of all its outputs are
known (``LoopGradients``, called from ``gradients()``). The forward loop is extended, after the
fact, with

* an iteration counter (one more loop variable: Enter/Merge/Switch/NextIteration/Exit), and
* for every forward value a gradient op needs, a push onto a stack keyed by the iteration
  (``_StackPush(stack, key, value)``; the counter's NextIteration waits for the pushes, so the
  count leaves the loop only once every iteration has pushed).

The backward loop is an ordinary ``while_loop`` that runs the count down: iteration ``j``
pops key ``n - 1 - j``, calls each body op's ``OpDef.gradient`` in reverse topological order,
and carries the gradients of the loop variables. Gradients of tensors the body read from
outside (loop invariants such as weights) are summed over the iterations in extra loop
variables. Keyed stacks make the result independent of how iterations overlapped.

**Nesting.** Everything above composes:

* a loop inside a loop keys its stacks by the iteration of every enclosing loop
  (``_StackKey(outer key, i)``), and its iteration count is itself a forward value of the
  outer loop, pushed and popped like any other; its backward loop is built inside the outer
  backward body when the reverse walk reaches its Exits;
* a value inside a cond branch may be dead in some iterations: its push is dead too, and the
  pop of a key never pushed gives DEAD, so the backward branch is dead exactly when the
  forward one was. The counter waits for such pushes through a Merge (which completes whether
  its control inputs were live or dead), not through a control edge that a dead push would kill.
"""

from __future__ import annotations

import collections
from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Operation, Tensor
from nbflow.ops import control_flow_ops as cf
from nbflow.ops import iteration_stacks  # noqa: F401 - registers the stack ops built below

from nbflow import errors


# --- cond ---------------------------------------------------------------------------------------
def switch_grad(op: Operation, grad_false: Any, grad_true: Any) -> list:
    ctx = cf.context_of(op)
    if isinstance(ctx, cf.WhileContext) and op in ctx.switches:
        raise LookupError(f"Switch '{op.name}' is differentiated with its whole while loop")
    if grad_false is None and grad_true is None:
        return [None, None]
    parts = []
    for k, g in enumerate((grad_false, grad_true)):
        if g is None:  # zeros on the side not differentiated, dead when it was not taken
            g = cf.switch(_zeros_like(op.inputs[0]), op.inputs[1], name="cond_grad_zeros")[k]
        parts.append(_dense(g))
    merged, _ = cf.merge(parts, name="cond_grad")
    return [merged, None]


def merge_grad(op: Operation, grad: Any) -> list:
    pred = cf._merge_preds.get(op)
    if pred is None:
        raise LookupError(f"Merge '{op.name}' is differentiated with its whole while loop")
    if grad is None:
        return [None] * len(op.inputs)
    g_false, g_true = cf.switch(_dense(grad), pred, name="cond_grad")
    return [g_false, g_true]


def _dense(g: Any) -> Tensor:
    return ops_lib.convert_to_tensor(g)


def _zeros_like(t: Tensor) -> Tensor:
    return array_ops.zeros_like(t)


# --- where forward values live ------------------------------------------------------------------
def _in_loop(op: Operation, loop: cf.WhileContext) -> bool:
    ctx = cf.context_of(op)
    while ctx is not None:
        if ctx is loop:
            return True
        ctx = ctx.outer
    return False


def _is_cond_switch(op: Operation) -> bool:
    if op.type not in ("Switch", "RefSwitch"):
        return False
    ctx = cf.context_of(op)
    return not (isinstance(ctx, cf.WhileContext) and op in ctx.switches)


def _may_be_dead(t: Tensor, loop: cf.WhileContext) -> bool:
    """Whether ``t``, a value of ``loop``'s body, is dead in iterations that skip a branch."""
    if _is_cond_switch(t.op):
        return True
    ctx = cf.context_of(t.op)
    while ctx is not None and ctx is not loop:
        if isinstance(ctx, cf.CondContext):
            return True
        ctx = ctx.outer
    return False


def _enclosing_loops(loop: cf.WhileContext) -> list[cf.WhileContext]:
    """The while loops ``loop`` is nested in, outermost first."""
    out = []
    ctx = loop.outer
    while ctx is not None:
        if isinstance(ctx, cf.WhileContext):
            out.append(ctx)
        ctx = ctx.outer
    return out[::-1]


def _pivot(ctx: Any) -> Operation | None:
    """An op that runs exactly when ``ctx`` (a cond branch or loop body, None: top level) does."""
    if isinstance(ctx, cf.CondContext):
        return ctx.pivot.op
    if isinstance(ctx, cf.WhileContext):
        return ctx.identities[0].op
    return None


# --- while_loop ---------------------------------------------------------------------------------
class _ForwardState:
    """What the forward loop records for its gradient: an iteration counter and stacks."""

    def __init__(self, loop: cf.WhileContext):
        self.loop = loop
        self.stacks: dict[Tensor, Tensor] = {}  # forward tensor -> stack handle (top level)
        self.gate: Operation | None = None  # Merge the counter waits on for maybe-dead pushes
        graph = ops_lib.get_default_graph()
        with ops_lib.control_dependencies(None), graph.name_scope(f"{loop.name}/grad_counter/"):
            zero = array_ops.constant(0, dtype=dtypes.int32, name="zero")
            pivot = _pivot(loop.outer)
            if pivot is not None:  # in the frame (and branch) the loop is entered from
                zero.op._add_control_input(pivot)
            cf._contexts[zero.op] = loop.outer
            enter = cf._create(
                "Enter",
                [zero],
                {
                    "frame_name": loop.name,
                    "is_constant": False,
                    "parallel_iterations": loop.parallel_iterations,
                },
                name="Enter",
            )
            cf._contexts[enter] = loop.outer
            merge = cf._create("Merge", [[enter.outputs[0], enter.outputs[0]]], name="Merge")
            assert loop.loop_cond is not None
            switch = cf._create("Switch", [merge.outputs[0], loop.loop_cond.outputs[0]])
            index = array_ops.identity(switch.outputs[1], name="index")
            one = array_ops.constant(1, dtype=dtypes.int32, name="one")
            one.op._add_control_input(index.op)
            nxt = cf._create("NextIteration", [index + one], name="NextIteration")
            merge._update_input(1, nxt.outputs[0])
            count = cf._create("Exit", [switch.outputs[0]], name="Exit")
            made = [merge, switch, index.op, one.op, nxt, count, nxt.inputs[0].op]
            key = index
            enclosing = _enclosing_loops(loop)
            if enclosing:  # keyed by the iterations of the enclosing loops too
                outer_state = _forward_state(enclosing[-1])
                key = cf._create("_StackKey", [loop.enter_invariant(outer_state.key), index])
                key = key.outputs[0]
                made.append(key.op)
            for op in made:
                cf._contexts[op] = loop
        self.index = index  # the forward iteration, 0-based, inside the loop
        self.key: Tensor = key  # the stack key of the iteration, inside the loop
        self.next_iteration = nxt
        self.count = count.outputs[0]  # iterations run, in the frame around the loop

    def stack_for(self, t: Tensor) -> Tensor:
        """The stack holding ``t``'s value of every forward iteration (adds the push once)."""
        handle = self.stacks.get(t)
        if handle is None:
            graph = ops_lib.get_default_graph()
            with ops_lib.control_dependencies(None), graph.name_scope(None):
                handle = cf._create(
                    "_StackV2",
                    [],
                    {"elem_type": t.dtype.base_dtype, "stack_name": t.name},
                    name=f"{self.loop.name}/grad_stack",
                ).outputs[0]
                cf._contexts[handle.op] = None
                inside = handle
                for loop in _enclosing_loops(self.loop) + [self.loop]:
                    inside = loop.enter_invariant(inside)
                push = cf._create(
                    "_StackPush", [inside, self.key, t], name=f"{self.loop.name}/grad_push"
                )
            cf._contexts[push] = self.loop
            self._wait_for(push, _may_be_dead(t, self.loop))
            self.stacks[t] = handle
        return handle

    def _wait_for(self, push: Operation, may_be_dead: bool) -> None:
        """Hold the counter's next iteration until ``push`` ran (or was skipped, dead)."""
        if not may_be_dead:
            self.next_iteration._add_control_input(push)
            return
        if self.gate is None:
            graph = ops_lib.get_default_graph()
            with ops_lib.control_dependencies(None), graph.name_scope(None):
                self.gate = cf._create(
                    "Merge", [[self.next_iteration.inputs[0]]], name=f"{self.loop.name}/grad_gate"
                )
            cf._contexts[self.gate] = self.loop
            self.next_iteration._update_input(0, self.gate.outputs[0])
        self.gate._add_control_input(push)


def _forward_state(loop: cf.WhileContext) -> _ForwardState:
    if loop.grad_state is None:
        loop.grad_state = _ForwardState(loop)
    return loop.grad_state


class LoopGradients:
    """The while loops among ``gradients()``'s between ops, differentiated as wholes.

    ``gradients()`` hands each loop's Exit ops here instead of calling their OpDef gradient;
    once every Exit of a loop that lies on a path has its gradient, ``exit_done`` builds the
    backward loop and returns the gradients of the loop's inputs from outside. Loops nested in
    another of the loops found are part of that loop's body, differentiated with it.
    ``key`` is the stack key of the enclosing backward iteration (None at the top level).
    """

    def __init__(self, between: set[Operation], key: Tensor | None = None):
        self.key = key
        found: dict[cf.WhileContext, list[Operation]] = {}
        for op in between:
            ctx = cf.context_of(op)
            if op.type == "Exit" and isinstance(ctx, cf.WhileContext):
                found.setdefault(ctx, []).append(op)
        self.loops = {
            ctx: ops
            for ctx, ops in found.items()
            if not any(outer in found for outer in _enclosing_loops(ctx))
        }
        self.exits = {op: ctx for ctx, ops in self.loops.items() for op in ops}
        self._on_path = set(between)  # a loop invariant whose Enter is not needs no gradient
        self._grads: dict[cf.WhileContext, dict[Operation, Any]] = collections.defaultdict(dict)
        internal = set()
        for ctx in self.loops:
            for op in between:
                if op not in self.exits and _in_loop(op, ctx):
                    internal.add(op)
            internal.update(op for op in ctx.enters if op in between)
            internal.update(t.op for t in ctx.invariants.values() if t.op in between)
        for op in internal:
            between.discard(op)
        self.internal = internal

    def __bool__(self) -> bool:
        return bool(self.loops)

    def count_external_reads(self, pending: dict[Operation, int]) -> None:
        """Make ``gradients()`` wait for each loop before it differentiates the loop's inputs."""
        for ctx in self.loops:
            for t in _external_inputs(ctx):
                if t.op in pending:
                    pending[t.op] += 1

    def exit_done(self, op: Operation, grad: Any) -> list[tuple[Tensor, Any]]:
        """Record an Exit's gradient. When the loop's last Exit arrives, differentiate the loop:
        returns one (outside tensor, gradient or None) pair per read counted above."""
        ctx = self.exits[op]
        self._grads[ctx][op] = grad
        if len(self._grads[ctx]) < len(self.loops[ctx]):
            return []
        exit_grads = [self._grads[ctx].get(t.op) for t in ctx.exits]
        found = while_loop_grad(ctx, exit_grads, self.key, self._on_path)
        out = []
        for t in _external_inputs(ctx):
            out.append((t, found.pop(t, None)))
        return out


def _external_inputs(ctx: cf.WhileContext) -> list[Tensor]:
    return [e.inputs[0] for e in ctx.enters] + [outside for outside, _ in _invariants(ctx)]


def _invariants(ctx: cf.WhileContext) -> list[tuple[Tensor, Tensor]]:
    """(outside tensor, its value inside) of each loop invariant. The outside tensor is what
    the Enter reads now: a cond or loop around this one may have captured it since."""
    return [(inside.op.inputs[0], inside) for inside in ctx.invariants.values()]


def while_loop_grad(
    loop: cf.WhileContext,
    exit_grads: list[Any],
    outer_key: Tensor | None = None,
    on_path: set[Operation] | None = None,
) -> dict[Tensor, Any]:
    """Build the backward loop; returns the gradients of the outside tensors the loop reads.

    ``outer_key`` is the stack key of the enclosing backward iteration when ``loop`` is nested
    in another loop (its backward loop is then built inside the enclosing backward body).
    Loop invariants whose Enter is not in ``on_path`` (when given) get no gradient.
    """
    if not loop.back_prop:
        return {}
    if _enclosing_loops(loop) and outer_key is None:
        exit_op = loop.exits[0].op
        raise errors.UnimplementedError(
            exit_op.node_def,
            exit_op,
            f"Gradients of while_loop '{loop.name}' (through {exit_op.name}) taken inside the "
            f"body of the loop around it ('{_enclosing_loops(loop)[-1].name}') are not "
            "supported; differentiate the outer loop as a whole instead",
        )
    region = _body_region(loop)
    state = _forward_state(loop)
    flat = [t for t in loop.exits]
    diff = [k for k, t in enumerate(flat) if t.dtype.base_dtype.is_differentiable]
    init_grads = []
    for k in diff:
        g = exit_grads[k]
        init_grads.append(_dense(g) if g is not None else array_ops.zeros_like(flat[k]))
    invariants = [
        (outside, inside)
        for outside, inside in _invariants(loop)
        if outside.dtype.base_dtype.is_differentiable
        and (on_path is None or inside.op in on_path)
        and any(c in region for c in inside._consumers)
    ]
    accs = [array_ops.zeros_like(outside) for outside, _ in invariants]
    identities = [loop.identities[k] for k in diff]
    outputs = [loop.body_outputs[k] for k in diff]

    def cond(n: Tensor, grads: list, acc: list) -> Tensor:
        return n > 0

    def body(n: Tensor, grads: list, acc: list) -> Any:
        graph = ops_lib.get_default_graph()
        first = graph._id_counter
        index = n - 1
        key = index
        if outer_key is not None:
            key = cf._create("_StackKey", [outer_key, index]).outputs[0]
        seeds = dict(zip(outputs, grads))
        sources = set(identities) | {inside for _, inside in invariants}
        found = _backprop(region, seeds, sources, key)
        new_grads = [
            found.get(t) if found.get(t) is not None else array_ops.zeros_like(g)
            for t, g in zip(identities, grads)
        ]
        new_acc = []
        for (_, inside), a in zip(invariants, acc):
            g = found.get(inside)
            new_acc.append(a if g is None else math_ops.add(a, _dense(g)))
        new_grads = [_dense(g) for g in new_grads]
        _route_forward_values(loop, state, graph, first, key)
        return index, new_grads, new_acc

    graph = ops_lib.get_default_graph()
    with graph.name_scope(None), graph.name_scope(f"{loop.name}_grad"):
        _, grads, acc = cf.while_loop(
            cond,
            body,
            (state.count, init_grads, accs),
            parallel_iterations=loop.parallel_iterations,
            name="while",
        )
    out: dict[Tensor, Any] = {}
    for k, g in zip(diff, grads):
        t = loop.enters[k].inputs[0]
        out[t] = g if t not in out else math_ops.add(out[t], g)
    for (outside, _), a in zip(invariants, acc):
        out[outside] = a if outside not in out else math_ops.add(out[outside], a)
    return out


def _body_region(loop: cf.WhileContext) -> set[Operation]:
    """The forward body ops gradients flow through (not the loop's own primitives); ops of
    conds and loops nested in the body are part of it."""
    own = set(loop.merges) | set(loop.switches) | set(loop.next_iterations)
    own |= {t.op for t in loop.exits} | set(loop.enters)
    return {op for op in loop.body_ops if op not in own and _in_loop(op, loop)}


def _route_forward_values(
    loop: cf.WhileContext, state: _ForwardState, graph: Any, first: int, key: Tensor
) -> None:
    """Backward ops built since ``first`` that read forward-loop values read them from stacks;
    those reading the forward loop's invariants read the outside tensor instead."""
    constant_enters = {inside.op: outside for outside, inside in _invariants(loop)}
    pops: dict[Tensor, Tensor] = {}
    for op in [op for op in graph._ops if op._id > first]:
        if _in_loop(op, loop):
            continue  # added to the forward loop (pushes of a nested loop's gradient)
        for k, t in enumerate(op._inputs):
            if t.op in constant_enters:
                op._update_input(k, constant_enters[t.op])
            elif _in_loop(t.op, loop):
                pop = pops.get(t)
                if pop is None:
                    handle = state.stack_for(t)
                    with ops_lib.control_dependencies(None):
                        pop = cf._create(
                            "_StackPop",
                            [handle, key],
                            {"elem_type": t.dtype.base_dtype, "shape": t.shape},
                            name="grad_pop",
                        ).outputs[0]
                    pops[t] = pop
                op._update_input(k, pop)


def _backprop(
    region: set[Operation], seeds: dict[Tensor, Any], sources: set[Tensor], key: Tensor
) -> dict[Tensor, Any]:
    """Reverse-mode over ``region`` from ``seeds``; the gradients reaching ``sources``.
    Loops nested in the region are differentiated as wholes (``LoopGradients``)."""
    graph = ops_lib.get_default_graph()
    # ops on a path source -> seed, inside the region
    reached: set[Operation] = set()
    stack = [c for s in sources for c in s._consumers if c in region]
    while stack:
        op = stack.pop()
        if op in reached:
            continue
        reached.add(op)
        for t in op._outputs:
            stack.extend(c for c in t._consumers if c in region and c not in reached)
    between: set[Operation] = set()
    stack = [t.op for t in seeds if t.op in reached]
    while stack:
        op = stack.pop()
        if op in between:
            continue
        between.add(op)
        stack.extend(t.op for t in op._inputs if t.op in reached and t.op not in between)
    loops = LoopGradients(between, key)
    pending = dict.fromkeys(between, 0)
    for op in between:
        for t in op._inputs:
            if t.op in between:
                pending[t.op] += 1
    loops.count_external_reads(pending)
    grads: dict[Tensor, list] = collections.defaultdict(list)
    for t, g in seeds.items():
        if g is not None:
            grads[t].append(g)

    def done_with(t: Tensor) -> None:
        if t.op in between:
            pending[t.op] -= 1
            if pending[t.op] == 0:
                ready.append(t.op)

    ready = collections.deque(sorted((op for op in between if pending[op] == 0), key=_op_id))
    while ready:
        op = ready.popleft()
        out_grads = [_sum(grads, t) for t in op._outputs]
        if op in loops.exits:
            for t, g in loops.exit_done(op, out_grads[0]):
                if g is not None and t.dtype.base_dtype.is_differentiable:
                    grads[t].append(g)
                done_with(t)
            continue
        if op.op_def.differentiable and any(g is not None for g in out_grads):
            with graph.name_scope(op.name.split("/")[-1] + "_grad"):
                if not _is_cond_switch(op):  # switch_grad makes its own (switched) zeros
                    for k, (t, g) in enumerate(zip(op._outputs, out_grads)):
                        if g is None and t.dtype.base_dtype.is_differentiable:
                            out_grads[k] = _zeros_like(t)
                in_grads = list(op.op_def.gradient(op, *out_grads))
            for t, g in zip(op._inputs, in_grads):
                if g is not None and t.dtype.base_dtype.is_differentiable:
                    grads[t].append(g)
        for t in op._inputs:
            done_with(t)
    return {s: _sum(grads, s) for s in sources}


def _sum(grads: dict[Tensor, list], t: Tensor) -> Any:
    parts = grads.get(t)
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    total = math_ops.add_n([_dense(g) for g in parts])
    grads[t] = [total]
    return total


def _op_id(op: Operation) -> int:
    return op._id


# Modules that import this one, bound once its definitions exist (the gradients and
# composites above call into them).
from nbflow.ops import array_ops, math_ops  # noqa: E402
