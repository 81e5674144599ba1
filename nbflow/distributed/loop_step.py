"""A task's small step run on the Dask worker's message loop itself, Recvs included.

A task's share of a typical step is a few cheap kernels around its Sends and Recvs. Handing it
to a thread would cost a thread hop there, one per Recv resumed, and one back with the reply;
on a busy machine each hop waits for a core. ``LoopStep`` instead runs a plan event-driven in
the thread that carries the messages:

    start:     every node whose inputs are ready runs at once (a stack of ready nodes; a
               node's pending count is its number of producers, data and control, in the plan);
    a Recv:    parks its ``done`` callback in the step's rendezvous and the walk goes on with
               other ready nodes; when the stack is empty the loop is free for other messages;
    a tensor:  arriving over the network (on the same loop) completes the Recv, which
               pushes its consumers and resumes the walk where it stopped;
    the end:   when every node has run, ``done(fetched values, None)``; the first error (a
               kernel's, or the rendezvous aborted) ends it as ``done(None, error)``.

No thread, no lock: everything runs on the loop. Only plans without control flow whose async
kernels are all Recvs qualify (``runs_on_loop``); any other async kernel (a Dequeue, a
take_grad) may finish in another thread, and those plans keep the thread-pool executor, as do
plans with independent expensive kernels worth running in parallel. The task server moves a
plan back to a driver thread when it keeps computing longer than the loop can spare.

>>> program = LoopProgram.of(plan)  # doctest: +SKIP
>>> LoopStep(program, ctx, feeds, done).start()  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nbflow.framework.op_def import KernelContext
from nbflow.runtime.executor import kernel_error, owned
from nbflow.runtime.plan import Plan

Done = Callable[[tuple | None, BaseException | None], None]


def runs_on_loop(plan: Plan) -> bool:
    """Whether ``plan`` may run on the message loop (see the module docstring)."""
    return not plan.has_control_flow and all(
        node.op.op_def.is_recv for node in plan.nodes if node.is_async
    )


@dataclass(frozen=True)
class LoopProgram:
    """A plan's dependency structure, computed once at registration."""

    plan: Plan
    consumers: tuple[tuple[int, ...], ...]  # node -> nodes it unblocks (once per edge)
    pending: tuple[int, ...]  # node -> number of its producers (edges) in the plan
    roots: tuple[int, ...]  # nodes with no producers, last first (popped first)

    @classmethod
    def of(cls, plan: Plan) -> LoopProgram:
        consumers: list[list[int]] = [[] for _ in plan.nodes]
        pending = [0] * len(plan.nodes)
        for node in plan.nodes:
            producers = [s[1] for s in node.sources if s[0] == "node"] + node.control_sources
            pending[node.index] = len(producers)
            for p in producers:
                consumers[p].append(node.index)
        roots = tuple(n.index for n in reversed(plan.nodes) if pending[n.index] == 0)
        return cls(plan, tuple(map(tuple, consumers)), tuple(pending), roots)


class LoopStep:
    """One step of one plan, driven by the message loop (see the module docstring)."""

    __slots__ = ("program", "ctx", "feeds", "done", "values", "pending", "ready", "left", "state",
                 "walking")  # fmt: skip

    def __init__(self, program: LoopProgram, ctx: KernelContext, feeds: tuple, done: Done):
        self.program = program
        self.ctx = ctx
        self.feeds = feeds
        self.done = done
        self.values: dict[int, Any] = {}  # node -> its output (one) or outputs (tuple)
        self.pending = list(program.pending)
        self.ready = list(program.roots)
        self.left = len(program.plan.nodes)
        self.state = "running"  # then "finished" or "failed"
        self.walking = False  # ``_walk`` is on the stack

    def start(self) -> None:
        self._walk()

    def _input(self, source: tuple) -> Any:
        if source[0] == "feed":
            return self.feeds[source[1]]
        node = self.program.plan.nodes[source[1]]
        value = self.values[source[1]]
        return value if node.num_outputs == 1 else value[source[2]]

    def _walk(self) -> None:
        self.walking = True
        try:
            self._run_ready()
        finally:
            self.walking = False
        if self.left == 0 and self.state == "running":
            self._finish()

    def _run_ready(self) -> None:
        nodes = self.program.plan.nodes
        ready = self.ready
        while ready and self.state == "running":
            node = nodes[ready.pop()]
            inputs = None
            try:
                inputs = [self._input(s) for s in node.sources]
                for k, deref in enumerate(node.deref):
                    if deref:
                        inputs[k] = inputs[k].read()
                if node.is_async:
                    node.kernel(self.ctx, *inputs, done=self._resume(node.index, inputs))
                    continue
                self._complete(node.index, node.kernel(self.ctx, *inputs))
            except BaseException as exc:  # noqa: BLE001 - ends the step, naming the node
                self._fail(kernel_error(node, exc, inputs))
                return

    def _resume(self, index: int, inputs: list) -> Callable[..., None]:
        called = []

        def resume(result: Any = None, error: BaseException | None = None) -> None:
            if called or self.state != "running":
                return
            called.append(True)
            if error is not None:
                self._fail(kernel_error(self.program.plan.nodes[index], error, inputs))
                return
            self._complete(index, result)
            # A Recv whose value was already here completes inside ``_walk``, which goes on
            # with its consumers; one completed later by a message resumes the walk here.
            if not self.walking:
                self._walk()

        return resume

    def _complete(self, index: int, outputs: Any) -> None:
        self.values[index] = outputs
        self.left -= 1
        pending = self.pending
        for c in self.program.consumers[index]:
            pending[c] -= 1
            if pending[c] == 0:
                self.ready.append(c)

    def _finish(self) -> None:
        plan = self.program.plan
        try:
            fetched = []
            for source, copy, deref in zip(plan.fetch_sources, plan.fetch_copies, plan.fetch_deref):
                value = self._input(source)
                if deref:
                    value = value.read()
                fetched.append(owned(value.copy() if copy else value))
        except BaseException as exc:  # noqa: BLE001 - a fetched variable that cannot be read
            self._fail(exc)
            return
        self.state = "finished"
        self.values.clear()
        self.done(tuple(fetched), None)

    def _fail(self, error: BaseException) -> None:
        if self.state != "running":
            return
        self.state = "failed"
        self.values.clear()
        self.done(None, error)
