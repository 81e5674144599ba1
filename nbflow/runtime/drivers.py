"""Thin drivers of the dataflow state (runtime/dataflow.py): they only carry out its decisions.

``DataflowExecutor`` runs ready kernels on a thread pool (BLAS releases the GIL, so independent
matmuls overlap): a worker keeps one ready successor for itself and hands other expensive ones
to the pool; async kernels (queues, Recv) get a ``done`` continuation and pin no thread while
they wait (whitepaper §5.3). Its one lock guards ``StepState.complete``; its event tells the
caller the step is over, or the deadline passes first and the step is cancelled.

``CallerDriver`` runs every kernel in the thread that starts the step or completes an async
kernel — the distributed task's message loop, where Recvs are completed by tensor messages
arriving on that same loop — so it needs no lock at all. A task uses it for a partition whose
Sends and Recvs the master did not order (``step.caller_driver``); one it did runs as
straight-line code instead (``executor.ResumableInline``).

Both are built by ``step.py`` (``choose_runner``, ``caller_driver``) and fail a step the same
way: the first error ends the state, and ``ctx.cancellation`` withdraws blocked kernels.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from nbflow.framework.op_def import KernelContext
from nbflow.runtime.dataflow import DataflowProgram, Item, StepState
from nbflow.runtime.executor import kernel_error, owned, step_timed_out
from nbflow.runtime.plan import Plan, PlanNode


def _outputs(node: PlanNode, result: Any) -> list:
    if node.num_outputs == 1:
        return [result]
    return [] if node.num_outputs == 0 else list(result)


def _fetched(plan: Plan, values: list) -> tuple:
    return tuple(
        value.copy() if copy else owned(value) for value, copy in zip(values, plan.fetch_copies)
    )


class DataflowExecutor:
    """Drives the dataflow state on a thread pool (see the module docstring)."""

    can_wait = True

    def __init__(self, plan: Plan, pool: ThreadPoolExecutor):
        self.plan = plan
        self.pool = pool
        self.program = DataflowProgram(plan)

    def run(self, ctx: KernelContext, feeds: tuple, deadline: float | None = None) -> tuple:
        state = StepState(self.program, feeds)
        step = _PoolStep(self, ctx, state)
        cancellation = ctx.cancellation
        token = cancellation.register(lambda: step.fail(cancellation.reason()))
        if token is None:
            raise cancellation.reason()
        try:
            with step.lock:
                ready = state.start()
            if state.done:
                step.finished.set()
            elif deadline is None:
                # The caller would only wait: it runs the roots (and what they make ready)
                # itself, saving a thread hand-off per step; extra expensive roots still fan
                # out to the pool. With a deadline the caller must stay free to time out.
                stack: list = []
                step.dispatch(ready[::-1], stack)
                step.run_stack(stack)
            else:
                for item in ready:
                    self.pool.submit(step.run_stack, [item])
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not step.finished.wait(timeout):
                blocked = [node.op for node in step.waiting.values()]
                cancellation.cancel(step_timed_out(timeout, blocked))
        finally:
            cancellation.deregister(token)
        return _fetched(self.plan, state.results())


class _PoolStep:
    """One step of a ``DataflowExecutor``: the state, its lock and its completion event."""

    __slots__ = ("executor", "ctx", "state", "lock", "finished", "waiting")

    def __init__(self, executor: DataflowExecutor, ctx: KernelContext, state: StepState):
        self.executor = executor
        self.ctx = ctx
        self.state = state
        self.lock = threading.Lock()
        self.finished = threading.Event()
        self.waiting: dict[int, PlanNode] = {}  # async kernels started and not yet done

    def fail(self, error: BaseException) -> None:
        with self.lock:
            self.state.fail(error)
        self.finished.set()
        self.ctx.cancellation.cancel(error)  # blocked kernels withdraw their waiters

    def complete(self, item: Item, outputs: list, dead: bool) -> list:
        with self.lock:
            ready = self.state.complete(item, outputs, dead)
            done = self.state.done
        if done:
            self.finished.set()
        return ready

    def run_stack(self, stack: list) -> None:
        """Run the ready nodes on ``stack`` and, in this thread, what they make ready."""
        state = self.state
        nodes = self.executor.plan.nodes
        ctx = self.ctx
        lock = self.lock
        prepare = state.prepare
        while stack:
            if state.error is not None:
                return
            item = stack.pop()
            node = nodes[item[0]]
            inputs: Any = None  # (named in the error if prepare fails)
            try:
                inputs, outputs, dead = prepare(item)
                if outputs is None:
                    if node.is_async:
                        self.start_async(node, item, inputs)
                        continue
                    result = node.kernel(ctx, *inputs)
                    n = node.num_outputs
                    outputs = [result] if n == 1 else [] if n == 0 else list(result)
            except BaseException as exc:
                self.fail(kernel_error(node, exc, inputs))
                return
            with lock:  # ``complete`` inlined: this loop is the executor's per-node cost
                ready = state.complete(item, outputs, dead)
                done = state.done
            if done:
                self.finished.set()
            if ready:
                self.dispatch(ready, stack)

    def dispatch(self, ready: list, stack: list) -> None:
        """Keep cheap work (and one expensive node) in this thread; fan the rest out."""
        expensive = self.executor.program.expensive
        kept_expensive = False
        for item in ready:
            if expensive[item[0]]:
                if kept_expensive:
                    self.executor.pool.submit(self.run_stack, [item])
                    continue
                kept_expensive = True
            stack.append(item)

    def start_async(self, node: PlanNode, item: Item, inputs: Any) -> None:
        """Start an async kernel; ``done`` continues the step from whichever thread calls it."""
        called = [False]

        def done(result: Any = None, error: BaseException | None = None) -> None:
            if called[0]:
                return
            called[0] = True
            self.waiting.pop(node.index, None)
            if error is not None:
                self.fail(kernel_error(node, error, inputs))
                return
            if self.state.error is not None:
                return
            for ready in self.complete(item, _outputs(node, result), False):
                self.executor.pool.submit(self.run_stack, [ready])

        self.waiting[node.index] = node
        try:
            node.kernel(self.ctx, *inputs, done=done)
        except BaseException as exc:
            done(error=exc)


Done = Callable[[tuple | None, BaseException | None], None]


class CallerDriver:
    """Drives the dataflow state in the calling thread, without a lock: ``start`` runs what is
    ready; an async kernel parks, and its completion resumes the walk in the thread that
    completes it (the distributed task's message loop). Only plans whose async kernels all
    complete on that thread qualify (``step.caller_driver``)."""

    can_wait = True

    def __init__(self, plan: Plan):
        self.plan = plan
        self.program = DataflowProgram(plan)

    def start(self, ctx: KernelContext, feeds: tuple, done: Done) -> None:
        """Run one step; ``done(fetched values, None)`` or ``done(None, error)`` when over."""
        _Walk(self, ctx, StepState(self.program, feeds), done).run()


class _Walk:
    __slots__ = ("driver", "ctx", "state", "done", "stack", "walking", "reported")

    def __init__(self, driver: CallerDriver, ctx: KernelContext, state: StepState, done: Done):
        self.driver = driver
        self.ctx = ctx
        self.state = state
        self.done = done
        self.stack: list = state.start()[::-1]
        self.walking = False  # ``run`` is on the stack: a completion only pushes its successors
        self.reported = False

    def run(self) -> None:
        state = self.state
        nodes = self.driver.plan.nodes
        stack = self.stack
        self.walking = True
        try:
            while stack and state.error is None:
                item = stack.pop()
                node = nodes[item[0]]
                inputs: Any = None  # (named in the error if prepare fails)
                try:
                    inputs, outputs, dead = state.prepare(item)
                    if outputs is None:
                        if node.is_async:
                            node.kernel(self.ctx, *inputs, done=self._resume(node, item, inputs))
                            continue
                        outputs = _outputs(node, node.kernel(self.ctx, *inputs))
                except BaseException as exc:  # noqa: BLE001 - ends the step, naming the node
                    state.fail(kernel_error(node, exc, inputs))
                    break
                stack.extend(state.complete(item, outputs, dead)[::-1])
        finally:
            self.walking = False
        self._report()

    def _resume(self, node: PlanNode, item: Item, inputs: Any) -> Callable[..., None]:
        called: list[bool] = []

        def resume(result: Any = None, error: BaseException | None = None) -> None:
            if called or self.state.error is not None:
                return
            called.append(True)
            if error is not None:
                self.state.fail(kernel_error(node, error, inputs))
            else:
                self.stack.extend(self.state.complete(item, _outputs(node, result), False))
            # A Recv whose value was already here completes inside ``run``, which goes on
            # with its consumers; one completed later by a message resumes the walk here.
            if not self.walking:
                self.run()

        return resume

    def _report(self) -> None:
        state = self.state
        if self.reported or not state.done:
            return
        self.reported = True
        try:
            values = _fetched(self.driver.plan, state.results())
        except BaseException as exc:  # noqa: BLE001 - the step's error, or an unreadable fetch
            self.done(None, exc)
            return
        self.done(values, None)
