"""Structured code for control-flow plans: a frame becomes a Python ``while`` loop.

The dataflow executor (dataflow.py) tags every value with its frame and iteration and pays for
that bookkeeping on every node. When a plan has no asynchronous kernel, the same semantics can
be generated once as straight-line Python, as ``InlineExecutor`` does for plain graphs:

    def step(ctx, feeds, deadline=None):
        ...                                   # root nodes in topological order
        v3_0 = f0                             # Enter (loop variable)
        v4_0 = v3_0                           # Merge: iteration 0 takes the Enter value
        while True:
            if _c._cancelled or deadline and _now() > deadline: _stop(ctx)
            v6_0 = v4_0 < v5_0                # cond part (does not depend on the Switches)
            if not v7_0:                      # LoopCond false: the Exits take the values
                v9_0 = v4_0
                break
            v8_1 = v4_0                       # Switch true side
            v10_0 = k10(ctx, v8_1, ...)       # body
            v4_0 = v10_0                      # NextIteration -> Merge
        ...

Kernels are pasted in or called as in the straight-line steps (runtime/codegen.py: ``Less``
becomes ``v4_0 < v5_0``), and each kernel's line is marked with its node, so an error in a loop
body names the node and the values it read.

Dead values keep their dataflow meaning: a node whose input may statically be DEAD (it sits
below a cond's Switch and above its Merge, or reads an op declaring ``produces_dead``, such as a
gradient's stack pop) is guarded, ``if x is DEAD: y = DEAD else: y = k(..)``, so only the taken
branch's kernels run. A loop whose entry may be dead (a loop inside a branch) is guarded as a
whole.

Constants without inputs are computed once, before their loop. A 0-d numeric one read only by
stateless kernels is held as a NumPy scalar: loop-counter arithmetic (``i + 1``, ``i < n``) on
scalars costs ~30 ns instead of ~1 us of ufunc dispatch on 0-d arrays.

Iterations run one after another here; the dataflow executor is the one that overlaps them
(``parallel_iterations``), and it runs any plan this module declines (``compile_plan`` returns
None): async kernels, or loops not shaped as ``while_loop`` builds them.
"""

from __future__ import annotations

import heapq
from typing import Any

from nbflow.runtime.codegen import kernel_call, mark
from nbflow.runtime.dataflow import FrameLayout, control_kind, frame_layout
from nbflow.runtime.plan import Plan


class _NotStructured(Exception):
    """The plan's control flow is not in the shape this compiler knows."""


def compile_plan(plan: Plan) -> str | None:
    """Python source of ``step(ctx, feeds, deadline)`` for ``plan``, or None if not compilable."""
    if any(n.is_async for n in plan.nodes):
        return None
    try:
        return _Compiler(plan, frame_layout(plan)).source()
    except _NotStructured:
        return None


# Kernels that return their one input unchanged: their outputs become plain aliases.


def _var(src: tuple) -> str:
    return f"f{src[1]}" if src[0] == "feed" else f"v{src[1]}_{src[2]}"


class _Compiler:
    def __init__(self, plan: Plan, layout: FrameLayout):
        self.plan = plan
        self.layout = layout
        nodes = plan.nodes
        self.kind = [control_kind(n) for n in nodes]
        self.home = [
            n.op.get_attr("frame_name") if self.kind[n.index] == "enter" else layout.node_frame[i]
            for i, n in enumerate(nodes)
        ]
        self.children: dict[str, list[str]] = {}
        for child, parent in layout.parent.items():
            self.children.setdefault(parent, []).append(child)
        self.alias: dict[str, str] = {}  # variable -> the variable it is a copy of
        self.maydead: set[int] = set()  # nodes whose outputs may be DEAD
        self.lines: list[str] = []
        self.readers: list[list[int]] = [[] for _ in nodes]
        for node in nodes:
            for src in node.sources:
                if src[0] == "node":
                    self.readers[src[1]].append(node.index)
        self.loops: dict[str, dict[str, Any]] = {}
        for frame in layout.parent:
            self.loops[frame] = self._loop_shape(frame)

    # --- recognising loops -----------------------------------------------------------------------
    def _loop_shape(self, frame: str) -> dict[str, Any]:
        nodes = self.plan.nodes
        members = [i for i, h in enumerate(self.home) if h == frame]
        conds = [i for i in members if self.kind[i] == "loop_cond"]
        if len(conds) != 1:
            raise _NotStructured(f"frame {frame} has {len(conds)} LoopCond nodes")
        loop_cond = conds[0]
        merges, switches, enters = {}, {}, []
        for i in members:
            kind = self.kind[i]
            node = nodes[i]
            if kind == "enter" and node.op.get_attr("frame_name") == frame:
                enters.append(i)
            elif kind == "merge":
                srcs = [s for s in node.sources if s[0] == "node"]
                nexts = [s for s in srcs if self.kind[s[1]] == "next_iteration"]
                if nexts:
                    if len(node.sources) != 2 or len(nexts) != 1:
                        raise _NotStructured("loop Merge must join one Enter and one NextIteration")
                    first = node.sources[0] if node.sources[1] == nexts[0] else node.sources[1]
                    if first[0] != "node" or self.kind[first[1]] != "enter":
                        raise _NotStructured("loop Merge must start from an Enter")
                    merges[i] = (first, nexts[0])
            elif kind == "switch":
                data, pred = node.sources
                if pred[0] == "node" and pred[1] == loop_cond:
                    if data[0] != "node" or data[1] not in merges and self.kind[data[1]] != "merge":
                        raise _NotStructured("loop Switch must read a loop Merge")
                    switches[i] = data
        for data in switches.values():
            if data[1] not in merges:
                raise _NotStructured("loop Switch must read a loop Merge")
        for i in members:
            node = nodes[i]
            for src in node.sources:
                if src[0] == "node" and src[1] in switches and src[2] == 0:
                    if self.kind[i] != "exit":
                        raise _NotStructured("only Exit may read a loop Switch's false side")
            if self.kind[i] == "exit":
                src = node.sources[0]
                if src[0] != "node" or src[1] not in switches or src[2] != 0:
                    raise _NotStructured("Exit must read a loop Switch's false side")
            for c in node.control_sources:
                if c in switches or self.kind[c] in ("exit", "next_iteration"):
                    raise _NotStructured("control edge from a loop primitive")
        for i in members:
            if self.kind[i] == "next_iteration":
                for j, node in enumerate(nodes):
                    if any(s[0] == "node" and s[1] == i for s in node.sources) and j not in merges:
                        raise _NotStructured("NextIteration must feed a loop Merge")
        return {
            "members": members,
            "loop_cond": loop_cond,
            "merges": merges,
            "switches": switches,
            "enters": enters,
        }

    # --- units: nodes of a frame, and child loops as single units ---------------------------------
    def _chain(self, i: int) -> list[str]:
        frames = [self.home[i]]
        while frames[-1] != "":
            frames.append(self.layout.parent[frames[-1]])
        return frames

    def _unit(self, i: int, frame: str) -> Any:
        """The unit of frame ``frame`` that node ``i`` belongs to (None: outside the frame)."""
        chain = self._chain(i)
        if chain[0] == frame:
            if self.kind[i] == "enter" and frame != "" and self.home[i] == frame:
                return None  # this frame's own Enters are emitted before its loop
            return i
        for child, parent in zip(chain, chain[1:]):
            if parent == frame:
                return ("frame", child)
        return None

    def _subtree_nodes(self, frame: str) -> list[int]:
        return [i for i in range(len(self.plan.nodes)) if frame in self._chain(i)]

    def _order(self, frame: str, skip: set[int]) -> list[Any]:
        """The units of ``frame`` in a topological order (ties: plan order)."""
        nodes = self.plan.nodes
        units: dict[Any, int] = {}
        for i in range(len(nodes)):
            u = self._unit(i, frame)
            if u is not None and u not in skip:
                units[u] = min(units.get(u, i), i)
        deps: dict[Any, set] = {u: set() for u in units}
        for i in self._subtree_nodes(frame):
            u = self._unit(i, frame)
            if u is None or u in skip:
                continue
            node = nodes[i]
            preds = [s[1] for s in node.sources if s[0] == "node"] + list(node.control_sources)
            for p in preds:
                if self.kind[i] == "merge" and self.kind[p] == "next_iteration":
                    continue
                pu = self._unit(p, frame)
                if pu is not None and pu != u:
                    deps[u].add(pu)
        consumers: dict[Any, list] = {u: [] for u in units}
        pending = {u: len([p for p in d if p in units]) for u, d in deps.items()}
        for u, d in deps.items():
            for p in d:
                if p in units:
                    consumers[p].append(u)
        heap = [(units[u], repr(u), u) for u, n in pending.items() if n == 0]
        heapq.heapify(heap)
        order = []
        while heap:
            _, _, u = heapq.heappop(heap)
            order.append(u)
            for c in consumers[u]:
                pending[c] -= 1
                if pending[c] == 0:
                    heapq.heappush(heap, (units[c], repr(c), c))
        if len(order) != len(units):
            raise _NotStructured(f"units of frame {frame!r} form a cycle")
        self._deps = getattr(self, "_deps", {})
        self._deps[frame] = deps
        return order

    # --- emitting -------------------------------------------------------------------------------
    def source(self) -> str:
        lines = ["from numpy import ndarray as _ndarray", ""]
        lines += [
            "def step(ctx, feeds, deadline=None):",
            "    xp = ctx.xp",
            "    _c = ctx.cancellation",
        ]
        lines += ["    try:"]
        body: list[str] = []
        if self.plan.feeds:
            body.append(f"{', '.join(f'f{i}' for i in range(len(self.plan.feeds)))}, = feeds")
        self._emit_frame("", body, 0)
        results = []
        for i, (src, copy, deref) in enumerate(
            zip(self.plan.fetch_sources, self.plan.fetch_copies, self.plan.fetch_deref)
        ):
            value = self._ref(src)
            if src[0] == "node" and src[1] in self.maydead:
                body.append(mark(f"if {value} is DEAD: _dead_fetch({src[1]}, {src[2]})", src[1]))
            if deref:
                body.append(mark(f"r{i} = {value}.read()", src[1], [value]))
                value = f"r{i}"
            results.append(f"{value}.copy()" if copy else f"_owned({value})")
        body.append(f"return ({', '.join(results)}{',' if results else ''})")
        lines += [f"        {line}" for line in body]
        lines += ["    except BaseException as e:", "        _fail(e, locals())", ""]
        return "\n".join(lines)

    def _ref(self, src: tuple) -> str:
        name = _var(src)
        return self.alias.get(name, name)

    def _emit_frame(self, frame: str, out: list[str], depth: int) -> None:
        for u in self._order(frame, set()):
            if isinstance(u, tuple):
                self._emit_loop(u[1], out)
            else:
                self._emit_node(u, out)

    def _src_dead(self, src: tuple) -> bool:
        return src[0] == "node" and src[1] in self.maydead

    def _dead_test(self, node: Any) -> list[str]:
        tests = []
        for src in node.sources:
            if self._src_dead(src):
                tests.append(f"{self._ref(src)} is DEAD")
        for c in node.control_sources:
            if c in self.maydead:
                tests.append(self._liveness(c))
        return tests

    def _liveness(self, c: int) -> str:
        node = self.plan.nodes[c]
        if self.kind[c] == "switch":
            return f"({self._ref(('node', c, 0))} is DEAD and {self._ref(('node', c, 1))} is DEAD)"
        if node.num_outputs == 0:
            return f"d{c} is DEAD"
        return f"{self._ref(('node', c, 0))} is DEAD"

    def _emit_node(self, i: int, out: list[str]) -> None:
        node = self.plan.nodes[i]
        kind = self.kind[i]
        args = []
        for src, deref in zip(node.sources, node.deref):
            args.append(f"{self._ref(src)}.read()" if deref else self._ref(src))
        outputs = [f"v{i}_{k}" for k in range(node.num_outputs)]
        tests = self._dead_test(node)
        if kind == "merge":
            if all(self._src_dead(s) for s in node.sources):
                self.maydead.add(i)
            tests = []
        elif kind == "switch" or tests or node.op.op_def.produces_dead:
            self.maydead.add(i)
        passes_input = kind in ("enter", "exit", "next_iteration", "loop_cond") or (
            node.op.op_def.passes_through and not node.deref[0]
        )
        if passes_input and not any(c in self.maydead for c in node.control_sources):
            # a DEAD input passes through as DEAD: an alias needs no test
            self.alias[outputs[0]] = args[0]
            return
        call = kernel_call(f"k{i}", node.kernel, args)
        if node.num_outputs == 0:
            run = [f"{call}; d{i} = None"]
            dead = [f"d{i} = DEAD"]
        elif node.num_outputs == 1:
            run = [f"{outputs[0]} = {call}"]
            dead = [f"{outputs[0]} = DEAD"]
        else:
            run = [f"{', '.join(outputs)}, = {call}"]
            dead = [f"{' = '.join(outputs)} = DEAD"]
        run = [mark(line, i, args) for line in run]
        if tests:
            out.append(f"if {' or '.join(tests)}:")
            out += [f"    {line}" for line in dead]
            out.append("else:")
            out += [f"    {line}" for line in run]
        else:
            out += run

    def _emit_loop(self, frame: str, out: list[str]) -> None:
        shape = self.loops[frame]
        nodes = self.plan.nodes
        for e in shape["enters"]:
            self._emit_node(e, out)
        merges, switches = shape["merges"], shape["switches"]
        exits = self.layout.exits.get(frame, [])
        entry_dead = [
            f"{self._ref(enter_src)} is DEAD"
            for enter_src, _ in merges.values()
            if self._src_dead(nodes[enter_src[1]].sources[0])
        ]
        body = out
        if entry_dead:
            out.append(f"if {' or '.join(entry_dead)}:")
            out += [f"    v{x}_0 = DEAD" for x in exits] or ["    pass"]
            out.append("else:")
            body = []
            self.maydead.update(exits)
        read = {s for node in nodes for s in node.sources}
        indexed = [m for m in merges if ("node", m, 1) in read]  # value_index is read
        for m, (enter_src, _) in merges.items():
            body.append(f"v{m}_0 = {self._ref(enter_src)}")
        for m in indexed:
            body.append(f"v{m}_1 = _I0")
        loop: list[str] = ["if _c._cancelled or deadline and _now() > deadline: _stop(ctx)"]
        skip = set(merges) | set(switches) | set(exits)
        order = self._order(frame, skip)
        deps = self._deps[frame]
        in_body: set[Any] = set()
        for u in order:
            if any(d in switches or d in in_body for d in deps[u]):
                in_body.add(u)
        for u in order:
            if self._hoistable(u):  # a constant: computed once, before the loop
                self._emit_unit(u, body)
                if self._as_scalar(u):
                    v = f"v{u}_0"
                    body.append(f"if {v}.__class__ is _ndarray and {v}.ndim == 0: {v} = {v}[()]")
            elif u not in in_body:
                self._emit_unit(u, loop)
        loop.append(f"if not {self._ref(('node', shape['loop_cond'], 0))}:")
        for x in exits:
            data = switches[nodes[x].sources[0][1]]
            loop.append(f"    v{x}_0 = {self._ref(data)}")
        loop.append("    break")
        for s, data in switches.items():
            self.alias[f"v{s}_1"] = self._ref(data)
        for u in order:
            if u in in_body and not self._hoistable(u):
                self._emit_unit(u, loop)
        for x in exits:  # a DEAD carried into the next iteration may leave through an Exit
            merge = switches[nodes[x].sources[0][1]][1]
            if self._src_dead(merges[merge][1]):
                self.maydead.add(x)
        if merges:  # all Merges take their NextIteration values at once
            targets = [f"v{m}_0" for m in merges]
            values = [self._ref(next_src) for _, next_src in merges.values()]
            loop.append(f"{', '.join(targets)}, = {', '.join(values)},")
            for m in indexed:
                loop.append(f"v{m}_1 = _I1")
        body.append("while True:")
        body += [f"    {line}" for line in loop]
        if body is not out:
            out += [f"    {line}" for line in body]

    def _hoistable(self, u: Any) -> bool:
        """A stateless node with no data input computes the same value in every iteration."""
        if isinstance(u, tuple):
            return False
        node = self.plan.nodes[u]
        return (
            not node.sources
            and not node.op.op_def.stateful
            and not node.is_async
            and not self.kind[u]
            and not any(c in self.maydead for c in node.control_sources)
        )

    def _as_scalar(self, u: int) -> bool:
        """Whether a hoisted 0-d constant may be held as a NumPy scalar: scalar arithmetic on
        loop counters (``i + 1``, ``i < n``) is then ~30x cheaper than on 0-d arrays. Only for
        numbers read by stateless kernels that do not hand their input on (nothing can
        store the scalar where an array is expected, e.g. in a variable)."""
        nodes = self.plan.nodes
        node = nodes[u]
        dtype = node.op.outputs[0].dtype.base_dtype if node.num_outputs == 1 else None
        if dtype is None or not (dtype.is_integer or dtype.is_floating or dtype.is_bool):
            return False
        for r in self.readers[u]:
            opdef = nodes[r].op.op_def
            if opdef.stateful or self.kind[r] or getattr(opdef, "forwards_input", False):
                return False
            if nodes[r].op.op_def.passes_through or nodes[r].is_async:
                return False
        return bool(self.readers[u])

    def _emit_unit(self, u: Any, out: list[str]) -> None:
        if isinstance(u, tuple):
            self._emit_loop(u[1], out)
        else:
            self._emit_node(u, out)
