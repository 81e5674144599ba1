"""Control-flow contexts: which cond branch or while loop each op was built in.

``cond`` and ``while_loop`` call the user's branch and body functions inside a context
(``CondContext``, ``WhileContext``; ``outer`` links to the enclosing one, ``None`` is the top
level). ``_Context.build`` pushes the context on a per-thread stack, calls the function, and
records every op it created in ``_contexts`` (op -> context; weak keys, so a dropped graph
frees them). ``context_of(op)`` answers the gradient code (ops/control_flow_grad.py), which
must know where each forward op lives.

``_capture`` then makes the new ops belong to their context: an input from outside (an op
older than the context) is replaced by ``wrap(t)``, a Switch for a cond branch or a
loop-invariant Enter for a loop, and an op with no inputs at all gets a control input from the
context's pivot, so it is dead, or repeated, exactly when its context is. A ``WhileContext``
also keeps the loop's primitives (Enters, Merges, Switches, NextIterations, Exits) in order:
the gradient builds the backward loop from them.
"""

from __future__ import annotations

import builtins
import contextlib
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Operation, Tensor


_contexts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_merge_preds: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # cond Merge -> pred
_local = threading.local()


def context_of(op: Operation) -> Any:
    """The innermost CondContext or WhileContext ``op`` was built in (None: top level)."""
    return _contexts.get(op)


def _context_stack() -> list:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def current_context() -> Any:
    stack = _context_stack()
    return stack[-1] if stack else None


@contextlib.contextmanager
def outside_control_flow() -> Iterator[None]:
    """Build ops as if no cond or while_loop were under construction (TensorFlow's init_scope):
    a variable first created inside a loop body is created and initialized once, outside it."""
    graph = ops_lib.get_default_graph()
    first = graph._id_counter
    stack = _context_stack()
    saved = stack[:]
    stack.clear()
    try:
        yield
    finally:
        stack[:] = saved
        for op in graph._ops:
            if op._id > first and op not in _contexts:
                _contexts[op] = None  # top level: no enclosing context claims it


class _Context:
    """Ops built inside a cond branch or a loop; ``outer`` is the enclosing context."""

    def __init__(self, outer: Any):
        self.outer = outer

    def while_context(self) -> WhileContext | None:
        ctx: Any = self
        while ctx is not None and not isinstance(ctx, WhileContext):
            ctx = ctx.outer
        return ctx

    def build(self, fn: Callable[[], Any]) -> builtins.tuple[Any, list[Operation]]:
        """Call ``fn`` with this context current; returns its result and the ops it made."""
        graph = ops_lib.get_default_graph()
        first = graph._id_counter
        stack = _context_stack()
        stack.append(self)
        try:
            result = fn()
        finally:
            stack.pop()
        new_ops = [op for op in graph._ops if op._id > first]
        for op in new_ops:
            if op not in _contexts:
                _contexts[op] = self
        return result, new_ops


def _nested_in(ctx: Any, owner: Any) -> bool:
    while ctx is not None:
        if ctx is owner:
            return True
        ctx = ctx.outer
    return owner is None


def _capture(
    new_ops: list[Operation],
    first_id: int,
    wrap: Callable[[Tensor], Tensor],
    pivot: Operation,
    on_external_control: Callable[[Operation], None] | None,
) -> None:
    """Route inputs from outside (ops older than ``first_id``) through ``wrap``; give ops with no
    data input a control input from ``pivot``."""
    made: set[Operation] = set()
    owner = _contexts.get(pivot)
    for op in list(new_ops):
        if op in made or not _nested_in(_contexts.get(op), owner):
            continue  # built here on behalf of another context (e.g. a forward-loop push)
        for k, t in enumerate(op._inputs):
            if t.op._id <= first_id or not _nested_in(_contexts.get(t.op), owner):
                wrapped = wrap(t)
                made.add(wrapped.op)
                op._update_input(k, wrapped)
        if on_external_control is not None:
            for c in list(op._control_inputs):
                if c._id <= first_id:
                    op._control_inputs.remove(c)
                    if op in c._control_outputs:
                        c._control_outputs.remove(op)
                    on_external_control(c)
        if not op._inputs and not op._control_inputs and op is not pivot:
            op._add_control_input(pivot)


class WhileContext(_Context):
    """One while loop: its frame and the primitives that make it (see the module docstring)."""

    def __init__(self, name: str, parallel_iterations: int, back_prop: bool, outer: Any):
        super().__init__(outer)
        self.name = name
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.enters: list[Operation] = []  # loop-variable Enters, one per flat loop var
        self.merges: list[Operation] = []
        self.switches: list[Operation] = []
        self.identities: list[Tensor] = []  # the body's view of the loop variables
        self.next_iterations: list[Operation] = []
        self.exits: list[Tensor] = []
        self.loop_cond: Operation | None = None
        self.invariants: dict[Tensor, Tensor] = {}  # outside tensor -> its constant Enter
        self.body_outputs: list[Tensor] = []
        self.body_ops: list[Operation] = []
        self.cond_ops: list[Operation] = []
        self.grad_state: Any = None  # built by control_flow_grad when differentiated

    def enter_invariant(self, t: Tensor) -> Tensor:
        out = self.invariants.get(t)
        if out is None:
            graph = ops_lib.get_default_graph()
            op_type = "RefEnter" if t.dtype.is_ref_dtype else "Enter"
            with ops_lib.control_dependencies(None), graph.name_scope(None):
                op = graph.create_op(
                    op_type,
                    [t],
                    {
                        "frame_name": self.name,
                        "is_constant": True,
                        "parallel_iterations": self.parallel_iterations,
                    },
                    name=f"{self.name}/Enter",
                )
            _contexts[op] = self.outer
            out = self.invariants[t] = op.outputs[0]
        return out

    def add_external_control(self, op: Operation) -> None:
        for enter in self.enters:
            enter._add_control_input(op)
