"""Control flow as dataflow: NoOp, group and tuple; Switch, Merge, Enter, Exit, NextIteration
and LoopCond; and the builders ``cond``, ``case`` and ``while_loop`` made of them (OSDI §3.4).

The primitives carry *dead* values (``DEAD``), as in the dynamic dataflow machines the papers
borrow from. ``Switch(data, pred)`` forwards ``data`` to one output and DEAD to the other; any
op with a DEAD input produces DEAD outputs without running its kernel; ``Merge`` forwards its
first live input. A cond is Switches on every value the branches read, the two branches, and
a Merge per output, so only the taken branch's kernels run. A loop is a *frame*:

    Enter ─▶ Merge ─▶ Switch ─(true)─▶ Identity ─▶ body ─▶ NextIteration ─┐
               ▲        │  ▲                                               │
               │        │  └─ LoopCond ◀─ cond(Merge outputs)              │
               │        └─(false)─▶ Exit ─▶ (outside the loop)             │
               └───────────────────────────────────────────────────────────┘

The executor (runtime/dataflow.py) tags every value with its frame and iteration, so
iterations overlap up to the loop's ``parallel_iterations``.

Branch and body functions are ordinary Python that builds ops. After a function returns, its
new ops are *captured* into their context: a tensor they read from outside is routed through
a Switch (cond) or a loop-invariant Enter (while), and an op with no data input gets a control
input from the context's pivot, so it is dead, or repeated, exactly when its context is.
Each captured op remembers its context (``context_of``) for the gradient code
(ops/control_flow_grad.py).
"""

from __future__ import annotations

import builtins
import contextlib
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, TensorSpec
from nbflow.framework.ops import Operation, Tensor
from nbflow.framework.tensor_shape import TensorShape, as_shape


class NoOp(OpDef):
    """Does nothing; its control inputs give it meaning."""

    differentiable = False
    groups_only = True

    def infer(self) -> list:
        return []

    num_outputs = 0

    def compute(self, ctx: KernelContext) -> None:
        return None


def no_op(name: str | None = None) -> ops_lib.Operation:
    return ops_lib.get_default_graph().create_op("NoOp", [], name=name)


def group(*inputs: Any, name: str | None = None) -> ops_lib.Operation:
    """An op that runs after all of ``inputs`` (tensors or ops, possibly nested in lists)."""
    flat: list[Any] = []

    def collect(value: Any) -> None:
        if isinstance(value, (list, builtins.tuple)):
            for v in value:
                collect(v)
        elif isinstance(value, dict):
            for v in value.values():
                collect(v)
        elif value is not None:
            flat.append(value)

    collect(inputs)
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "group_deps") as scope:
        deps = [ops_lib._as_operation(graph, v) for v in flat]
        with graph.control_dependencies(deps):
            return graph.create_op("NoOp", [], name=scope or "group_deps/")


def tuple(tensors: Sequence[Any], name: str | None = None, control_inputs: Any = None) -> list:
    """Tensors with the same values as ``tensors`` that are all available only after all are."""
    from nbflow.ops.array_ops import identity

    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "tuple") as scope:
        gating = group(*[t for t in tensors if t is not None], *(control_inputs or []))
        out = []
        with graph.control_dependencies([gating]):
            for t in tensors:
                out.append(None if t is None else identity(t))
        del scope
        return out


# --- dead values and the primitives ------------------------------------------------------------
class _Dead:
    """The value on a branch not taken. One instance, ``DEAD``; falsy, never a real tensor."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEAD"

    def __bool__(self) -> bool:
        return False


DEAD = _Dead()


class _ControlFlowOp(OpDef):
    """Base of the primitives; ``control_kind`` tells the executor how to route values."""

    abstract = True
    rewritable = False  # the loop structure the executors rely on


class Switch(_ControlFlowOp):
    """Forward ``data`` to ``output_true`` if ``pred`` else ``output_false``; DEAD to the other."""

    inputs = ("data", "pred")
    num_outputs = 2
    control_kind = "switch"

    def infer(self, data: TensorSpec, pred: TensorSpec) -> list[TensorSpec]:
        if pred.dtype.base_dtype is not dtypes.bool or not pred.shape.is_compatible_with([]):
            raise ValueError(f"Switch predicate must be a scalar bool, got {pred}")
        return [TensorSpec(data.shape, data.dtype), TensorSpec(data.shape, data.dtype)]

    def compute(self, ctx: KernelContext, data: Any, pred: Any) -> builtins.tuple:
        return (DEAD, data) if pred else (data, DEAD)

    def gradient(self, op: Operation, grad_false: Any, grad_true: Any) -> list:
        from nbflow.ops import control_flow_grad

        return control_flow_grad.switch_grad(op, grad_false, grad_true)


class RefSwitch(Switch):
    """Switch of a variable reference (both outputs are references)."""

    inputs = ("data&", "pred")


class Merge(_ControlFlowOp):
    """Forward the first live input; ``value_index`` says which. Dead only if all inputs are."""

    inputs = ("inputs*",)
    num_outputs = 2
    control_kind = "merge"

    def infer(self, inputs: list[TensorSpec]) -> list[TensorSpec]:
        shape = inputs[0].shape
        for spec in inputs[1:]:
            if spec.dtype.base_dtype is not inputs[0].dtype.base_dtype:
                raise TypeError(f"Merge inputs differ in dtype: {inputs[0]} vs {spec}")
            shape = _most_specific_compatible(shape, spec.shape)
        return [TensorSpec(shape, inputs[0].dtype), TensorSpec(TensorShape([]), dtypes.int32)]

    def compute(self, ctx: KernelContext, inputs: Any) -> builtins.tuple:
        for i, value in enumerate(inputs):
            if value is not DEAD:
                return value, np.int32(i)
        return DEAD, DEAD

    def gradient(self, op: Operation, grad: Any, grad_index: Any) -> list:
        from nbflow.ops import control_flow_grad

        return control_flow_grad.merge_grad(op, grad)


class Enter(_ControlFlowOp):
    """Enter frame ``frame_name``: a loop variable (iteration 0) or, with ``is_constant``, a
    loop invariant that every iteration sees."""

    inputs = ("data",)
    attrs = {"frame_name": REQUIRED, "is_constant": False, "parallel_iterations": 10}
    control_kind = "enter"

    def infer(self, data: TensorSpec, frame_name: str, is_constant: bool, parallel_iterations: int):
        return TensorSpec(data.shape, data.dtype)

    def compute(self, ctx: KernelContext, data: Any, **attrs: Any) -> Any:
        return data

    def gradient(self, op: Operation, grad: Any) -> list:
        loop = current_context()
        loop = loop.while_context() if loop is not None else None
        if op.get_attr("is_constant") and loop is not None and _in_frame(loop, op):
            # gradients() called inside the loop's body: the gradient of this iteration
            return [grad]
        raise LookupError(f"Enter '{op.name}' is differentiated with its whole while loop")


def _in_frame(loop: WhileContext, enter: Operation) -> bool:
    """Whether ``loop`` is the frame ``enter`` enters, or a loop nested in it."""
    frame = enter.get_attr("frame_name")
    ctx: Any = loop
    while ctx is not None:
        if isinstance(ctx, WhileContext) and ctx.name == frame:
            return True
        ctx = ctx.outer
    return False


class RefEnter(Enter):
    """Enter of a variable reference (a loop-invariant handle the body can assign to)."""

    inputs = ("data&",)


class Exit(_ControlFlowOp):
    """Leave the loop frame: the value of the last iteration, in the parent frame."""

    inputs = ("data",)
    control_kind = "exit"

    def infer(self, data: TensorSpec) -> TensorSpec:
        return TensorSpec(data.shape, data.dtype)

    def compute(self, ctx: KernelContext, data: Any) -> Any:
        return data

    def gradient(self, op: Operation, grad: Any) -> list:
        raise LookupError(f"Exit '{op.name}' is differentiated with its whole while loop")


class NextIteration(_ControlFlowOp):
    """Carry a value to the next iteration of its frame (the back edge into a Merge)."""

    inputs = ("data",)
    control_kind = "next_iteration"

    def infer(self, data: TensorSpec) -> TensorSpec:
        return TensorSpec(data.shape, data.dtype)

    def compute(self, ctx: KernelContext, data: Any) -> Any:
        return data

    def gradient(self, op: Operation, grad: Any) -> list:
        raise LookupError(f"NextIteration '{op.name}' is differentiated with its while loop")


class LoopCond(_ControlFlowOp):
    """The loop's termination predicate, as the Switches of the loop variables see it."""

    inputs = ("input",)
    control_kind = "loop_cond"
    differentiable = False

    def infer(self, input: TensorSpec) -> TensorSpec:
        if input.dtype.base_dtype is not dtypes.bool or not input.shape.is_compatible_with([]):
            raise ValueError(f"LoopCond takes a scalar bool, got {input}")
        return TensorSpec(TensorShape([]), dtypes.bool)

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        return input


def _most_specific_compatible(a: TensorShape, b: TensorShape) -> TensorShape:
    if a.dims is None or b.dims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x.value if x.value == y.value else None for x, y in zip(a.dims, b.dims)])


def _create(op_type: str, inputs: list, attrs: dict | None = None, name: str | None = None):
    return ops_lib.get_default_graph().create_op(op_type, inputs, attrs, name=name)


def switch(data: Any, pred: Any, name: str | None = None) -> builtins.tuple[Tensor, Tensor]:
    """``(output_false, output_true)``: ``data`` on the side ``pred`` selects, DEAD on the other."""
    data = ops_lib.convert_to_tensor(data)
    op_type = "RefSwitch" if data.dtype.is_ref_dtype else "Switch"
    op = _create(op_type, [data, pred], name=name or "Switch")
    return op.outputs[0], op.outputs[1]


def merge(inputs: Sequence[Any], name: str | None = None) -> builtins.tuple[Tensor, Tensor]:
    """``(output, value_index)``: the first live one of ``inputs``."""
    op = _create("Merge", [list(inputs)], name=name or "Merge")
    return op.outputs[0], op.outputs[1]


# --- contexts: which cond branch or loop an op belongs to ----------------------------------------
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


def _replace_input(op: Operation, index: int, tensor: Tensor) -> None:
    old = op._inputs[index]
    op._inputs[index] = tensor
    if op in old._consumers:
        old._consumers.remove(op)
    tensor._consumers.append(op)


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
                _replace_input(op, k, wrapped)
        if on_external_control is not None:
            for c in list(op._control_inputs):
                if c._id <= first_id:
                    op._control_inputs.remove(c)
                    if op in c._control_outputs:
                        c._control_outputs.remove(op)
                    on_external_control(c)
        if not op._inputs and not op._control_inputs and op is not pivot:
            op._add_control_input(pivot)


# --- cond -----------------------------------------------------------------------------------------
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
    from nbflow.ops.array_ops import identity

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
        from nbflow.ops.array_ops import constant

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
    from nbflow.ops import math_ops

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
            from nbflow import errors

            raise errors.InvalidArgumentError(
                None,
                None,
                f"case: more than one condition evaluated as True ({int(count)} of "
                f"{', '.join(names)}) but exclusive=True",
            )


def _assert_at_most_one(count: Tensor, names: list[str]) -> Operation:
    return _create("_AssertAtMostOne", [count], {"names": names}, name="Assert")


def _with_dependency(t: Tensor, op: Operation) -> Tensor:
    from nbflow.ops.array_ops import identity

    with ops_lib.control_dependencies([op]):
        return identity(t)


# --- while_loop -----------------------------------------------------------------------------------
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
                op = _create(
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
    from nbflow.ops import math_ops

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
    from nbflow.ops.array_ops import identity

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
            _replace_input(m, 1, nxt.outputs[0])
            ex = _create("Exit", [sw.outputs[0]], name="Exit")
            _contexts[ex] = ctx
            exits.append(ex.outputs[0])
        ctx.exits = exits
        _register_loop(graph, ctx)
        return _pack_as(structure, [_rewrap(v, t) for v, t in zip(flat_vars, exits)])


def _register_loop(graph: ops_lib.Graph, ctx: WhileContext) -> None:
    graph.add_to_collection(ops_lib.GraphKeys.WHILE_CONTEXT, ctx)


def _loop_tensor(value: Any) -> Tensor:
    flow = getattr(value, "_loop_flow", None)
    if flow is not None:
        return flow
    return ops_lib.convert_to_tensor(value)


def _rewrap(template: Any, tensor: Tensor) -> Any:
    rebuild = getattr(template, "_with_flow", None)
    return rebuild(tensor) if rebuild is not None else tensor


# --- nested structures ----------------------------------------------------------------------------
def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, builtins.tuple) and hasattr(value, "_fields")


def _flatten(structure: Any, shapes: bool = False) -> list[Any]:
    """The leaves of a nest of lists, tuples, namedtuples and dicts (sorted keys), in order."""
    if shapes and isinstance(structure, TensorShape):
        return [structure]
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in _flatten(structure[k], shapes)]
    if isinstance(structure, (list, builtins.tuple)):
        if shapes and structure and all(isinstance(d, (int, type(None))) for d in structure):
            return [TensorShape(list(structure))]
        return [leaf for v in structure for leaf in _flatten(v, shapes)]
    return [structure]


def _pack_as(structure: Any, flat: Sequence[Any], unwrap_single: bool = False) -> Any:
    """Rebuild ``structure`` with ``flat`` as its leaves."""
    it = iter(flat)

    def build(s: Any) -> Any:
        if isinstance(s, dict):
            values = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, values[k]) for k in s)
        if _is_namedtuple(s):
            return type(s)(*[build(v) for v in s])
        if isinstance(s, builtins.tuple):
            return builtins.tuple(build(v) for v in s)
        if isinstance(s, list):
            return [build(v) for v in s]
        return next(it)

    out = build(structure)
    if (
        unwrap_single
        and isinstance(out, (list, builtins.tuple))
        and len(out) == 1
        and not (_is_namedtuple(out))
    ):
        return out[0]
    return out
