"""The dataflow executor's state: pending counts, dead values, frames and iteration tags
(OSDI §3.4), as plain data — no threads, no locks. Drivers run the kernels it makes ready.

A plan without control flow is a DAG: each node waits for a count of predecessors; nodes whose
count reaches zero are ready. Control flow adds two ideas, both from the tagged-token dataflow
machines the whitepaper cites (§4.4):

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

``DataflowProgram`` is what a plan's structure fixes once (consumers, initial pending counts,
frames); ``StepState`` is one step's bookkeeping, changed only through four calls that a
driver makes:

    ready = state.start()                       # the root nodes, now outstanding
    inputs, outputs, dead = state.prepare(item)  # outputs None: run the node's kernel on inputs
    ready = state.complete(item, outputs, dead)  # store outputs, route them; newly ready nodes
    state.fail(error)                            # the step ends with ``error``
    state.done, state.error, state.results()     # when it is over

Drivers decide where kernels run: a thread pool (``drivers.DataflowExecutor``, which calls
``complete`` under its lock), or the thread that calls it, async kernels resuming the walk from
whichever thread completes them (``drivers.CallerDriver``, the distributed task's message
loop). Control-flow plans without async kernels usually skip this state altogether: the loop
compiler writes them as structured Python (``loop_compiler.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nbflow import errors
from nbflow.ops.control_flow_ops import DEAD
from nbflow.runtime.plan import Plan, PlanNode

# A ready node: (node index, its frame, its iteration).
Item = tuple


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


class DataflowProgram:
    """What a plan's structure fixes for every step (see the module docstring)."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.nodes = nodes = plan.nodes
        n = len(nodes)
        self.layout = frame_layout(plan)
        self.kind = [control_kind(node) for node in nodes]
        self.consumers: list[list[int]] = [[] for _ in range(n)]
        self.control_consumers: list[set[int]] = [set() for _ in range(n)]
        pending = [0] * n
        self.merge_inputs = [0] * n
        for node in nodes:
            data_preds = {s[1] for s in node.sources if s[0] == "node"}
            control_preds = set(node.control_sources) - data_preds
            if self.kind[node.index] == "merge":
                loop_merge = any(self.kind[p] == "next_iteration" for p in data_preds)
                self.merge_inputs[node.index] = 1 if loop_merge else len(node.sources)
                pending[node.index] = len(control_preds)
            else:
                pending[node.index] = len(data_preds) + len(control_preds)
            for p in data_preds | control_preds:
                self.consumers[p].append(node.index)
            for p in control_preds:
                self.control_consumers[p].add(node.index)
        self.initial_pending = pending
        self.roots = [
            i
            for i, c in enumerate(pending)
            if c == 0 and self.layout.node_frame[i] == "" and self.kind[i] != "merge"
        ]
        self.expensive = [node.op.op_def.cost == "expensive" for node in nodes]
        # Values are dropped once their last reader ran (counted: readers finish in any order).
        # In loops values live per iteration and go with it.
        self.reads: list[tuple] = [()] * n
        self.readers: dict[tuple, int] = {}
        if not any(self.kind):
            fetched = set(plan.fetch_sources)
            for node in nodes:
                srcs = tuple({s for s in node.sources if s[0] == "node" and s not in fetched})
                self.reads[node.index] = srcs
                for src in srcs:
                    self.readers[src] = self.readers.get(src, 0) + 1


class StepState:
    """The bookkeeping of one step (see the module docstring): plain data, no threads."""

    __slots__ = ("program", "root", "error", "done", "feeds", "readers")

    def __init__(self, program: DataflowProgram, feeds: tuple):
        self.program = program
        self.readers = dict(program.readers)
        self.root = _Frame("", None, None, 0, 1)
        self.root.iterations[0] = _Iteration(0, program.initial_pending)
        self.feeds = feeds
        self.error: BaseException | None = None
        self.done = False

    # --- the driver's calls -------------------------------------------------------------------
    def start(self) -> list[Item]:
        """The root nodes, ready; the step is done at once when there are none."""
        it = self.root.iterations[0]
        roots = self.program.roots
        if not roots:
            self.done = True
        it.outstanding = len(roots)
        return [(i, self.root, it) for i in roots]

    def prepare(self, item: Item) -> tuple[list | None, list | None, bool]:
        """(inputs, outputs, dead) of a ready node: outputs None means run its kernel on the
        inputs; a Merge passes its chosen input, a node with a dead input is dead."""
        index, _, it = item
        program = self.program
        node = program.nodes[index]
        if program.kind[index] == "merge":
            chosen = it.merges[index][1]
            if chosen is None:
                return None, [DEAD, DEAD], True
            return None, list(chosen), False
        values = it.values
        feeds = self.feeds
        inputs = []
        for src, deref in zip(node.sources, node.deref):
            value = feeds[src[1]] if src[0] == "feed" else values[src]
            if deref and value is not DEAD:
                value = value.read()
            inputs.append(value)
        if index in it.dead_control or any(v is DEAD for v in inputs):
            return inputs, [DEAD] * node.num_outputs, True
        return inputs, None, False

    def complete(self, item: Item, outputs: list, dead: bool) -> list[Item]:
        """Store a node's outputs, route them by its control kind; returns newly ready nodes."""
        index, frame, it = item
        program = self.program
        kind = program.kind[index]
        ready: list[Item] = []
        if kind == "" or kind == "switch" or kind == "merge" or kind == "loop_cond":
            values = it.values
            for k, value in enumerate(outputs):
                values[("node", index, k)] = value
            self._activate(index, frame, it, dead, ready)
            if program.reads[index]:
                readers = self.readers
                for src in program.reads[index]:
                    readers[src] -= 1
                    if readers[src] == 0:
                        values.pop(src, None)
        elif kind == "enter":
            self._enter(program.plan.nodes[index], frame, it, outputs[0], ready)
        elif kind == "exit":
            if not dead:
                frame.delivered_exits.add(index)
                parent_it = frame.parent_iter
                assert parent_it is not None and frame.parent is not None
                parent_it.values[("node", index, 0)] = outputs[0]
                self._activate(index, frame.parent, parent_it, False, ready)
        elif kind == "next_iteration":
            if not dead:
                self._next_iteration(index, frame, it, outputs[0], ready)
        it.outstanding -= 1
        if it.outstanding == 0 and it.frames == 0:
            self._retire(frame, it.index, ready)
        return ready

    def fail(self, error: BaseException) -> None:
        """End the step with ``error`` (the first one wins)."""
        if self.error is None:
            self.error = error
        self.done = True

    def results(self) -> list[Any]:
        """The fetched values of a finished step (variables read, not yet copied)."""
        if self.error is not None:
            raise self.error
        plan = self.program.plan
        values = self.root.iterations[0].values
        out = []
        for src, deref in zip(plan.fetch_sources, plan.fetch_deref):
            value = self.feeds[src[1]] if src[0] == "feed" else values.get(src, DEAD)
            if value is DEAD:
                op = plan.nodes[src[1]].op
                raise errors.InvalidArgumentError(
                    op.node_def,
                    op,
                    f"Fetched tensor {op.name}:{src[2]} has no value: it is on a branch of a "
                    "cond that was not taken, or inside a loop (fetch the loop's outputs)",
                )
            out.append(value.read() if deref else value)
        return out

    # --- propagation ------------------------------------------------------------------------------
    def _activate(self, index: int, frame: _Frame, it: _Iteration, dead: bool, ready: list) -> None:
        """Node ``index`` delivered its outputs into ``it``: count down its consumers there."""
        program = self.program
        pending = it.pending
        kinds = program.kind
        control = program.control_consumers[index]
        for c in program.consumers[index]:
            if kinds[c] == "merge":
                self._arrive_at_merge(index, c, frame, it, c in control, ready)
                continue
            if dead and c in control:
                it.dead_control.add(c)
            pending[c] -= 1
            if pending[c] == 0:
                it.outstanding += 1
                ready.append((c, frame, it))

    def _arrive_at_merge(
        self, src: int, merge: int, frame: _Frame, it: _Iteration, is_control: bool, ready: list
    ) -> None:
        slot = it.merges.get(merge)
        if slot is None:
            slot = it.merges[merge] = [0, None, False]  # dead inputs, choice, fired
        if slot[2]:
            return
        if is_control:
            it.pending[merge] -= 1
        else:
            node = self.program.plan.nodes[merge]
            for k, s in enumerate(node.sources):
                if s[0] == "node" and s[1] == src:
                    value = it.values.get(s, DEAD)
                    if value is DEAD:
                        slot[0] += 1
                    elif slot[1] is None:
                        slot[1] = (value, np.int32(k))
                    break
        inputs = self.program.merge_inputs[merge]
        if it.pending[merge] == 0 and (slot[1] is not None or slot[0] >= inputs):
            slot[2] = True
            it.outstanding += 1
            ready.append((merge, frame, it))

    def _enter(
        self, node: PlanNode, frame: _Frame, it: _Iteration, value: Any, ready: list
    ) -> None:
        layout = self.program.layout
        name = node.op.get_attr("frame_name")
        key = (it.index, name)
        child = frame.children.get(key)
        if child is None:
            child = _Frame(
                name,
                frame,
                it,
                layout.enter_count[name],
                layout.parallel_iterations.get(name, 10),
            )
            child.iterations[0] = _Iteration(0, self.program.initial_pending)
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
            self._activate(node.index, child, target, value is DEAD, ready)
        child.pending_enters -= 1
        first = child.iterations.get(0)
        if first is not None and first.outstanding == 0 and first.frames == 0:
            self._retire(child, 0, ready)

    def _next_iteration(
        self, index: int, frame: _Frame, it: _Iteration, value: Any, ready: list
    ) -> None:
        following = frame.iterations.get(it.index + 1)
        if following is None:
            if len(frame.iterations) >= frame.max_parallel:
                frame.deferred.append((index, value))
                return
            following = self._new_iteration(frame, it.index + 1, ready)
        following.values[("node", index, 0)] = value
        self._activate(index, frame, following, False, ready)

    def _new_iteration(self, frame: _Frame, k: int, ready: list) -> _Iteration:
        it = _Iteration(k, self.program.initial_pending)
        frame.iterations[k] = it
        frame.latest = k
        for enter, value in frame.invariants:
            it.values[("node", enter, 0)] = value
            self._activate(enter, frame, it, value is DEAD, ready)
        return it

    def _retire(self, frame: _Frame, k: int, ready: list) -> None:
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
                self.done = True
                return
            del iterations[k]
            if frame.deferred:  # NextIteration values of the latest iteration were waiting
                deferred, frame.deferred = frame.deferred, []
                following = self._new_iteration(frame, frame.latest + 1, ready)
                for index, value in deferred:
                    following.values[("node", index, 0)] = value
                    self._activate(index, frame, following, False, ready)
            k += 1
        if not iterations and not frame.pending_enters:
            self._finish_frame(frame, ready)

    def _finish_frame(self, frame: _Frame, ready: list) -> None:
        parent, parent_it = frame.parent, frame.parent_iter
        assert parent is not None and parent_it is not None
        for index in self.program.layout.exits.get(frame.name, ()):
            if index not in frame.delivered_exits:
                parent_it.values[("node", index, 0)] = DEAD
                self._activate(index, parent, parent_it, True, ready)
        del parent.children[(parent_it.index, frame.name)]
        parent_it.frames -= 1
        if parent_it.outstanding == 0 and parent_it.frames == 0:
            self._retire(parent, parent_it.index, ready)
