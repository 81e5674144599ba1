"""The dataflow executor: pending counts, dead values, frames and iteration tags (OSDI §3.4).

A plan without control flow is a DAG: each node waits for a count of predecessors; nodes whose
count reaches zero are ready and run on a thread pool (BLAS releases the GIL, so independent
matmuls overlap); a worker keeps one ready successor for itself and hands the others to the pool.

Control flow adds two ideas, both from the tagged-token dataflow machines the whitepaper cites
(§4.4):

* **dead values** — ``Switch`` sends DEAD down the branch not taken; a node with a DEAD input
  (data or control) produces DEAD without running its kernel; ``Merge`` fires on its first live
  input, or DEAD once all its inputs are dead. So only the taken branch runs.
* **frames and iterations** — every value is tagged with the *frame* (one running instance of a
  while loop) and the *iteration* it belongs to. ``Enter`` passes a value into a child frame
  (a loop invariant, ``is_constant``, into every iteration); ``NextIteration`` into the next
  iteration of its frame; ``Exit`` back to the parent frame. Pending counts live per iteration,
  so iteration ``i + 1`` can start while ``i`` still runs, up to the loop's
  ``parallel_iterations``; extra NextIteration values wait (``deferred``) until an iteration
  retires.

Termination is counted, not guessed: an iteration is *done* when it has no outstanding nodes and
no live child frames and its predecessor is done (iteration 0: all the frame's Enters arrived).
A frame is done when its iterations are; it then hands DEAD to the parent for every Exit that
delivered nothing (a loop inside an untaken branch). The step is done when the root frame is.

``StepState``, ``_Frame`` and ``_Iteration`` are plain state changed under one lock per step;
kernels run outside it. Async kernels (queues, Recv) get a ``done`` continuation and pin no
thread while they wait (whitepaper §5.3).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from nbflow import errors
from nbflow.framework.op_def import KernelContext
from nbflow.ops.control_flow_ops import DEAD
from nbflow.runtime.executor import kernel_error, owned
from nbflow.runtime.plan import Plan, PlanNode


# --- static analysis: which frame each node runs in ------------------------------------------
@dataclass
class FrameLayout:
    """Frames of a plan: the frame each node runs in ("" is the root) and their nesting."""

    node_frame: list[str]
    parent: dict[str, str] = field(default_factory=dict)
    enter_count: dict[str, int] = field(default_factory=dict)
    exits: dict[str, list[int]] = field(default_factory=dict)
    parallel_iterations: dict[str, int] = field(default_factory=dict)


def control_kind(node: PlanNode) -> str:
    return node.op.op_def.control_kind


def frame_layout(plan: Plan) -> FrameLayout:
    """Assign frames in plan order (topological once NextIteration back edges are cut)."""
    nodes = plan.nodes
    node_frame = [""] * len(nodes)
    out_frame = [""] * len(nodes)
    layout = FrameLayout(node_frame)
    for node in nodes:
        preds = {s[1] for s in node.sources if s[0] == "node"} | set(node.control_sources)
        frames = {out_frame[p] for p in preds if p < node.index}
        if len(frames) > 1:
            raise errors.InvalidArgumentError(
                node.op.node_def,
                node.op,
                f"Node {node.op.name} reads from different loop frames ({sorted(frames)}): "
                "a value can leave a loop only through Exit",
            )
        frame = frames.pop() if frames else ""
        node_frame[node.index] = frame
        kind = control_kind(node)
        if kind == "enter":
            child = node.op.get_attr("frame_name")
            layout.parent[child] = frame
            layout.enter_count[child] = layout.enter_count.get(child, 0) + 1
            layout.parallel_iterations[child] = node.op.get_attr("parallel_iterations")
            out_frame[node.index] = child
        elif kind == "exit":
            if frame == "":
                raise errors.InvalidArgumentError(
                    node.op.node_def, node.op, f"Exit {node.op.name} is not inside a loop"
                )
            layout.exits.setdefault(frame, []).append(node.index)
            out_frame[node.index] = layout.parent[frame]
        else:
            out_frame[node.index] = frame
    return layout


# --- per-step state -----------------------------------------------------------------------------
class _Iteration:
    """One iteration of one frame: input values, pending counts and what is still running."""

    __slots__ = ("values", "pending", "merges", "dead_control", "outstanding", "frames", "index")

    def __init__(self, index: int, pending: list[int]):
        self.index = index
        self.values: dict[tuple, Any] = {}
        self.pending = list(pending)
        self.merges: dict[int, list] = {}  # merge node -> [dead count, chosen (value, i) | None]
        self.dead_control: set[int] = set()
        self.outstanding = 0  # nodes ready or running
        self.frames = 0  # live child frames


class _Frame:
    """One running instance of a loop (or the root): its iterations and loop invariants."""

    __slots__ = (
        "name",
        "parent",
        "parent_iter",
        "iterations",
        "latest",
        "max_parallel",
        "pending_enters",
        "invariants",
        "deferred",
        "delivered_exits",
        "children",
    )

    def __init__(self, name: str, parent: Any, parent_iter: Any, enters: int, max_parallel: int):
        self.name = name
        self.parent: _Frame | None = parent
        self.parent_iter: _Iteration | None = parent_iter
        self.iterations: dict[int, _Iteration] = {}
        self.latest = 0
        self.max_parallel = max_parallel
        self.pending_enters = enters
        self.invariants: list[tuple[int, Any]] = []  # (Enter node, value)
        self.deferred: list[tuple[int, Any]] = []  # NextIteration values over the limit
        self.delivered_exits: set[int] = set()
        self.children: dict[tuple[int, str], _Frame] = {}


class StepState:
    """Bookkeeping of one step: the root frame, the first error and completion."""

    __slots__ = ("root", "error", "done", "lock", "feeds", "readers")

    def __init__(self, initial_pending: list[int], feeds: tuple, readers: dict | None = None):
        self.readers = dict(readers) if readers else {}
        self.root = _Frame("", None, None, 0, 1)
        self.root.iterations[0] = _Iteration(0, initial_pending)
        self.feeds = feeds
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.lock = threading.Lock()


# --- the executor -------------------------------------------------------------------------------
class DataflowExecutor:
    """Runs a plan by pending counts on a thread pool (see the module docstring)."""

    can_wait = True

    def __init__(self, plan: Plan, pool: ThreadPoolExecutor):
        self.plan = plan
        self.pool = pool
        nodes = plan.nodes
        n = len(nodes)
        self.layout = frame_layout(plan)
        self._kind = [control_kind(node) for node in nodes]
        self._consumers: list[list[int]] = [[] for _ in range(n)]
        self._control_consumers: list[set[int]] = [set() for _ in range(n)]
        pending = [0] * n
        self._loop_merge = [False] * n
        self._merge_inputs = [0] * n
        for node in nodes:
            data_preds = {s[1] for s in node.sources if s[0] == "node"}
            control_preds = set(node.control_sources) - data_preds
            is_merge = self._kind[node.index] == "merge"
            if is_merge:
                self._loop_merge[node.index] = any(
                    self._kind[p] == "next_iteration" for p in data_preds
                )
                self._merge_inputs[node.index] = (
                    1 if self._loop_merge[node.index] else len(node.sources)
                )
                pending[node.index] = len(control_preds)
            else:
                pending[node.index] = len(data_preds) + len(control_preds)
            for p in data_preds | control_preds:
                self._consumers[p].append(node.index)
            for p in control_preds:
                self._control_consumers[p].add(node.index)
        self._initial_pending = pending
        self._roots = [
            i
            for i, c in enumerate(pending)
            if c == 0 and self.layout.node_frame[i] == "" and self._kind[i] != "merge"
        ]
        self._expensive = [node.op.op_def.cost == "expensive" for node in nodes]
        self._has_control_flow = any(self._kind)
        # Values are dropped once their last reader ran (counted: readers finish in any order).
        # In loops values live per iteration and go with it.
        self._reads: list[tuple] = [()] * n
        self._readers: dict[tuple, int] = {}
        if not self._has_control_flow:
            fetched = set(plan.fetch_sources)
            for node in nodes:
                srcs = tuple({s for s in node.sources if s[0] == "node" and s not in fetched})
                self._reads[node.index] = srcs
                for src in srcs:
                    self._readers[src] = self._readers.get(src, 0) + 1

    # --- running a step -----------------------------------------------------------------------
    def run(self, ctx: KernelContext, feeds: tuple, deadline: float | None = None) -> tuple:
        plan = self.plan
        state = StepState(self._initial_pending, feeds, self._readers)
        root_iter = state.root.iterations[0]
        cancellation = ctx.cancellation
        token = cancellation.register(lambda: self._abort(ctx, state, cancellation.reason()))
        if token is None:
            raise cancellation.reason()
        try:
            if not self._roots:
                state.done.set()
            else:
                root_iter.outstanding = len(self._roots)
                items = [(i, state.root, root_iter) for i in self._roots]
                if deadline is None:
                    # The caller would only wait: it runs the roots (and what they make ready)
                    # itself, saving a thread hand-off per step; extra expensive roots still
                    # fan out to the pool. With a deadline the caller must stay free to time out.
                    stack: list = []
                    self._dispatch(ctx, state, items[::-1], stack)
                    self._run_stack(ctx, state, stack)
                else:
                    for item in items[1:]:
                        self.pool.submit(self._run_from, ctx, state, item)
                    self.pool.submit(self._run_from, ctx, state, items[0])
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not state.done.wait(timeout):
                cancellation.cancel(
                    errors.DeadlineExceededError(
                        None,
                        None,
                        f"Timed out after {timeout:.3f} s waiting for the step to finish",
                    )
                )
        finally:
            cancellation.deregister(token)
        if state.error is not None:
            raise state.error
        out = []
        values = root_iter.values
        for src, copy, deref in zip(plan.fetch_sources, plan.fetch_copies, plan.fetch_deref):
            value = feeds[src[1]] if src[0] == "feed" else values.get(src, DEAD)
            if value is DEAD:
                op = plan.nodes[src[1]].op
                raise errors.InvalidArgumentError(
                    op.node_def,
                    op,
                    f"Fetched tensor {op.name}:{src[2]} has no value: it is on a branch of a "
                    "cond that was not taken, or inside a loop (fetch the loop's outputs)",
                )
            if deref:
                value = value.read()
            out.append(value.copy() if copy else owned(value))
        return tuple(out)

    def _inputs(self, state: StepState, node: PlanNode, it: _Iteration) -> list:
        values = it.values
        feeds = state.feeds
        out = []
        for src, deref in zip(node.sources, node.deref):
            value = feeds[src[1]] if src[0] == "feed" else values[src]
            if deref and value is not DEAD:
                value = value.read()
            out.append(value)
        return out

    def _run_from(self, ctx: KernelContext, state: StepState, item: tuple) -> None:
        """Run a ready node, then, in this thread, ready successors (others go to the pool)."""
        self._run_stack(ctx, state, [item])

    def _run_stack(self, ctx: KernelContext, state: StepState, stack: list) -> None:
        """Run the ready nodes on ``stack`` and, in this thread, what they make ready."""
        nodes = self.plan.nodes
        kinds = self._kind
        while stack:
            if state.error is not None:
                return
            index, frame, it = stack.pop()
            node = nodes[index]
            kind = kinds[index]
            inputs = None
            dead = False
            try:
                if kind == "merge":
                    chosen = it.merges[index][1]
                    dead = chosen is None
                    outputs = [DEAD, DEAD] if dead else list(chosen)
                else:
                    inputs = self._inputs(state, node, it)
                    if index in it.dead_control or any(v is DEAD for v in inputs):
                        dead = True
                        outputs = [DEAD] * node.num_outputs
                    elif node.is_async:
                        self._start_async(ctx, state, node, frame, it, inputs)
                        continue
                    else:
                        result = node.kernel(ctx, *inputs)
                        if node.num_outputs == 1:
                            outputs = [result]
                        elif node.num_outputs == 0:
                            outputs = []
                        else:
                            outputs = list(result)
            except BaseException as exc:
                self._abort(ctx, state, kernel_error(node, exc, inputs))
                return
            ready = self._finish(state, node, frame, it, outputs, dead)
            if ready:
                self._dispatch(ctx, state, ready, stack)

    def _dispatch(self, ctx: KernelContext, state: StepState, ready: list, stack: list) -> None:
        """Keep cheap work (and one expensive node) in this thread; fan the rest out."""
        expensive = self._expensive
        kept_expensive = False
        for item in ready:
            if expensive[item[0]]:
                if kept_expensive:
                    self.pool.submit(self._run_from, ctx, state, item)
                    continue
                kept_expensive = True
            stack.append(item)

    def _start_async(
        self,
        ctx: KernelContext,
        state: StepState,
        node: PlanNode,
        frame: _Frame,
        it: _Iteration,
        inputs: list,
    ) -> None:
        """Start an async kernel; ``done`` continues the step from whichever thread calls it."""
        called = [False]

        def done(result: Any = None, error: BaseException | None = None) -> None:
            if called[0]:
                return
            called[0] = True
            if error is not None:
                self._abort(ctx, state, kernel_error(node, error, inputs))
                return
            if state.error is not None:
                return
            if node.num_outputs == 1:
                outputs = [result]
            elif node.num_outputs == 0:
                outputs = []
            else:
                outputs = list(result)
            ready = self._finish(state, node, frame, it, outputs, False)
            for item in ready:
                self.pool.submit(self._run_from, ctx, state, item)

        try:
            node.kernel(ctx, *inputs, done=done)
        except BaseException as exc:
            done(error=exc)

    # --- propagation (all under the step lock) ----------------------------------------------------
    def _finish(
        self,
        state: StepState,
        node: PlanNode,
        frame: _Frame,
        it: _Iteration,
        outputs: list,
        dead: bool,
    ) -> list:
        """Store a node's outputs, route them by its control kind; returns newly ready nodes."""
        index = node.index
        kind = self._kind[index]
        ready: list = []
        with state.lock:
            if kind == "" or kind == "switch" or kind == "merge" or kind == "loop_cond":
                values = it.values
                for k, value in enumerate(outputs):
                    values[("node", index, k)] = value
                self._activate(state, index, frame, it, dead, ready)
                if self._reads[index]:
                    readers = state.readers
                    for src in self._reads[index]:
                        readers[src] -= 1
                        if readers[src] == 0:
                            values.pop(src, None)
            elif kind == "enter":
                self._enter(state, node, frame, it, outputs[0], ready)
            elif kind == "exit":
                if not dead:
                    frame.delivered_exits.add(index)
                    parent_it = frame.parent_iter
                    assert parent_it is not None and frame.parent is not None
                    parent_it.values[("node", index, 0)] = outputs[0]
                    self._activate(state, index, frame.parent, parent_it, False, ready)
            elif kind == "next_iteration":
                if not dead:
                    self._next_iteration(state, index, frame, it, outputs[0], ready)
            it.outstanding -= 1
            if it.outstanding == 0 and it.frames == 0:
                self._retire(state, frame, it.index, ready)
        return ready

    def _activate(
        self, state: StepState, index: int, frame: _Frame, it: _Iteration, dead: bool, ready: list
    ) -> None:
        """Node ``index`` delivered its outputs into ``it``: count down its consumers there."""
        pending = it.pending
        kinds = self._kind
        control = self._control_consumers[index]
        for c in self._consumers[index]:
            if kinds[c] == "merge":
                self._arrive_at_merge(state, index, c, frame, it, c in control, ready)
                continue
            if dead and c in control:
                it.dead_control.add(c)
            pending[c] -= 1
            if pending[c] == 0:
                it.outstanding += 1
                ready.append((c, frame, it))

    def _arrive_at_merge(
        self,
        state: StepState,
        src: int,
        merge: int,
        frame: _Frame,
        it: _Iteration,
        is_control: bool,
        ready: list,
    ) -> None:
        slot = it.merges.get(merge)
        if slot is None:
            slot = it.merges[merge] = [0, None, False]  # dead inputs, choice, fired
        if slot[2]:
            return
        if is_control:
            it.pending[merge] -= 1
        else:
            node = self.plan.nodes[merge]
            for k, s in enumerate(node.sources):
                if s[0] == "node" and s[1] == src:
                    value = it.values.get(s, DEAD)
                    if value is DEAD:
                        slot[0] += 1
                    elif slot[1] is None:
                        slot[1] = (value, _int32(k))
                    break
        if it.pending[merge] == 0 and (slot[1] is not None or slot[0] >= self._merge_inputs[merge]):
            slot[2] = True
            it.outstanding += 1
            ready.append((merge, frame, it))

    def _enter(
        self,
        state: StepState,
        node: PlanNode,
        frame: _Frame,
        it: _Iteration,
        value: Any,
        ready: list,
    ) -> None:
        name = node.op.get_attr("frame_name")
        key = (it.index, name)
        child = frame.children.get(key)
        if child is None:
            child = _Frame(
                name,
                frame,
                it,
                self.layout.enter_count[name],
                self.layout.parallel_iterations.get(name, 10),
            )
            child.iterations[0] = _Iteration(0, self._initial_pending)
            frame.children[key] = child
            it.frames += 1
        src = ("node", node.index, 0)
        if node.op.get_attr("is_constant"):
            child.invariants.append((node.index, value))
            targets = list(child.iterations.values())
        else:
            targets = [child.iterations[0]] if 0 in child.iterations else []
        for target in targets:
            target.values[src] = value
            self._activate(state, node.index, child, target, value is DEAD, ready)
        child.pending_enters -= 1
        first = child.iterations.get(0)
        if first is not None and first.outstanding == 0 and first.frames == 0:
            self._retire(state, child, 0, ready)

    def _next_iteration(
        self, state: StepState, index: int, frame: _Frame, it: _Iteration, value: Any, ready: list
    ) -> None:
        following = frame.iterations.get(it.index + 1)
        if following is None:
            if len(frame.iterations) >= frame.max_parallel:
                frame.deferred.append((index, value))
                return
            following = self._new_iteration(state, frame, it.index + 1, ready)
        following.values[("node", index, 0)] = value
        self._activate(state, index, frame, following, False, ready)

    def _new_iteration(self, state: StepState, frame: _Frame, k: int, ready: list) -> _Iteration:
        it = _Iteration(k, self._initial_pending)
        frame.iterations[k] = it
        frame.latest = k
        for enter, value in frame.invariants:
            it.values[("node", enter, 0)] = value
            self._activate(state, enter, frame, it, value is DEAD, ready)
        return it

    def _retire(self, state: StepState, frame: _Frame, k: int, ready: list) -> None:
        """Delete finished iterations of ``frame`` from ``k`` on; finish the frame when empty."""
        iterations = frame.iterations
        while True:
            it = iterations.get(k)
            if it is None or it.outstanding or it.frames:
                break
            if k == 0 and frame.pending_enters:
                break
            if k > 0 and (k - 1) in iterations:
                break
            if frame.parent is None:  # the root: the step is over
                state.done.set()
                return
            del iterations[k]
            if frame.deferred:  # NextIteration values of the latest iteration were waiting
                deferred, frame.deferred = frame.deferred, []
                following = self._new_iteration(state, frame, frame.latest + 1, ready)
                for index, value in deferred:
                    following.values[("node", index, 0)] = value
                    self._activate(state, index, frame, following, False, ready)
            k += 1
        if not iterations and not frame.pending_enters:
            self._finish_frame(state, frame, ready)

    def _finish_frame(self, state: StepState, frame: _Frame, ready: list) -> None:
        parent, parent_it = frame.parent, frame.parent_iter
        assert parent is not None and parent_it is not None
        for index in self.layout.exits.get(frame.name, ()):
            if index not in frame.delivered_exits:
                parent_it.values[("node", index, 0)] = DEAD
                self._activate(state, index, parent, parent_it, True, ready)
        del parent.children[(parent_it.index, frame.name)]
        parent_it.frames -= 1
        if parent_it.outstanding == 0 and parent_it.frames == 0:
            self._retire(state, parent, parent_it.index, ready)

    def _abort(self, ctx: KernelContext, state: StepState, error: BaseException) -> None:
        with state.lock:
            if state.error is None:
                state.error = error
            state.done.set()
        ctx.cancellation.cancel(error)


def _int32(k: int) -> Any:
    import numpy as np

    return np.int32(k)


# The pool type the executor runs on, for callers that build their own.
Pool = ThreadPoolExecutor
Kernel = Callable[..., Any]
