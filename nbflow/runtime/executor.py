"""Executors run a compiled ``Plan``. Two strategies share one plan:

``InlineExecutor`` turns a plan into one straight-line Python function, generated once:

    def step(ctx, feeds):
        f0, = feeds
        n = 0; v0_0 = k0(ctx)                 # Const
        n = 1; v1_0 = k1(ctx, v0_0, f0)       # Add
        del v0_0                              # released after its last reader
        return (v1_0,)

so a repeated ``Session.run`` costs a dict lookup, the feed conversion and one call per kernel.
It serves graphs where parallelism would not pay: one device, no blocking kernels, no two
expensive kernels that could overlap.

``ParallelExecutor`` is the whitepaper's dataflow executor (§3.1): each node has a count of
inputs still pending; nodes whose count reaches zero are ready; ready nodes run on a thread pool
(BLAS releases the GIL, so independent matmuls overlap). A worker that finishes a node runs one
newly ready cheap successor itself and hands the rest to the pool. ``StepState`` holds the pure
bookkeeping; the executor only carries out its decisions.
"""

from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from collections.abc import Callable

import numpy as np

from nbflow import errors
from nbflow.framework.op_def import KernelContext
from nbflow.runtime.plan import Plan, PlanNode, Source

_ERROR_FOR: dict[type, type[errors.OpError]] = {
    ValueError: errors.InvalidArgumentError,
    TypeError: errors.InvalidArgumentError,
    IndexError: errors.InvalidArgumentError,
    KeyError: errors.InvalidArgumentError,
    ZeroDivisionError: errors.InvalidArgumentError,
    FloatingPointError: errors.InvalidArgumentError,
    np.linalg.LinAlgError: errors.InvalidArgumentError,
    MemoryError: errors.ResourceExhaustedError,
    NotImplementedError: errors.UnimplementedError,
}


def describe(value: Any) -> str:
    """A short description of a kernel input: "float32[2,3]"."""
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        dims = ",".join(str(d) for d in value.shape)
        return f"{value.dtype}[{dims}]"
    if hasattr(value, "name") and hasattr(value, "is_initialized"):
        return f"variable {value.name}"
    return type(value).__name__


def _where(op: Any) -> str:
    site = op.traceback
    return f" defined at {os.path.basename(site[0])}:{site[1]}" if site else ""


def kernel_error(node: PlanNode, exc: BaseException, inputs: list[Any] | None) -> errors.OpError:
    """Translate an exception raised by a node's kernel into an OpError naming the node."""
    op = node.op
    context = f" [[node {op.name} ({op.type}){_where(op)}]]"
    if isinstance(exc, errors.OpError):
        if exc.op is not None:
            return exc
        return type(exc)(op.node_def, op, f"{exc.message}{context}")
    error_type = _ERROR_FOR.get(type(exc))
    if error_type is None:
        error_type = next(
            (v for k, v in _ERROR_FOR.items() if isinstance(exc, k)), errors.InternalError
        )
    shown = ", ".join(describe(v) for v in inputs) if inputs is not None else "unknown"
    message = (
        f"{op.type} failed on {node.device or 'CPU:0'}: {type(exc).__name__}: {exc}; "
        f"inputs {shown}{context}"
    )
    return error_type(op.node_def, op, message)


def owned(value: Any) -> Any:
    """A fetched value the caller may keep and mutate (copies views and read-only buffers)."""
    if type(value) is np.ndarray:
        if value.ndim == 0:
            return value[()]  # a NumPy scalar, as TensorFlow returns for scalar fetches
        if value.base is not None or not value.flags.writeable:
            return value.copy()
    return value


def release_points(plan: Plan) -> dict[int, list[Source]]:
    """For each node index, the values that can be dropped once it has run."""
    out: dict[int, list[Source]] = {}
    for src, last in plan.last_use.items():
        if src[0] == "node" and last < len(plan.nodes):
            out.setdefault(last, []).append(src)
    return out


# --- the straight-line executor ------------------------------------------------------------------
class InlineExecutor:
    """Runs a plan as one generated function: no per-node scheduling at all."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.source = _generate(plan)
        namespace: dict[str, Any] = {"_fail": self._fail, "_owned": owned}
        for node in plan.nodes:
            namespace[f"k{node.index}"] = node.kernel
        exec(compile(self.source, f"<nbflow plan of {len(plan.nodes)} nodes>", "exec"), namespace)
        self._step: Callable[[KernelContext, tuple], tuple] = namespace["step"]

    def run(self, ctx: KernelContext, feeds: tuple) -> tuple:
        return self._step(ctx, feeds)

    def _fail(self, n: int, exc: BaseException, frame_locals: dict[str, Any]) -> None:
        if n < 0 or n >= len(self.plan.nodes):
            raise exc
        node = self.plan.nodes[n]
        inputs = [frame_locals.get(_var(src)) for src in node.sources]
        raise kernel_error(node, exc, inputs) from (
            None if isinstance(exc, errors.OpError) else exc
        )


def _var(src: Source) -> str:
    return f"f{src[1]}" if src[0] == "feed" else f"v{src[1]}_{src[2]}"


def _generate(plan: Plan) -> str:
    releases = release_points(plan)
    lines = ["def step(ctx, feeds):", "    n = -1", "    try:"]
    body = []
    if plan.feeds:
        names = ", ".join(f"f{i}" for i in range(len(plan.feeds)))
        body.append(f"{names}, = feeds")
    for node in plan.nodes:
        args = ["ctx"]
        for src, deref in zip(node.sources, node.deref):
            args.append(f"{_var(src)}.read()" if deref else _var(src))
        call = f"k{node.index}({', '.join(args)})"
        outputs = [f"v{node.index}_{k}" for k in range(node.num_outputs)]
        used = [
            o if ("node", node.index, k) in plan.last_use else "_" for k, o in enumerate(outputs)
        ]
        if node.num_outputs == 0:
            body.append(f"n = {node.index}; {call}")
        elif node.num_outputs == 1:
            body.append(f"n = {node.index}; {used[0]} = {call}")
        else:
            body.append(f"n = {node.index}; {', '.join(used)}, = {call}")
        dead = [_var(s) for s in releases.get(node.index, [])]
        if dead:
            body.append(f"del {', '.join(dead)}")
    results = []
    for i, (src, copy, deref) in enumerate(
        zip(plan.fetch_sources, plan.fetch_copies, plan.fetch_deref)
    ):
        value = _var(src)
        if deref:  # reading a fetched variable can fail: blame its node
            body.append(f"n = {src[1]}; r{i} = {value}.read()")
            value = f"r{i}"
        results.append(f"_owned({value}.copy())" if copy else f"_owned({value})")
    body.append("n = -1")
    body.append(f"return ({', '.join(results)}{',' if results else ''})")
    lines += [f"        {line}" for line in body]
    lines += ["    except BaseException as e:", "        _fail(n, e, locals())", ""]
    return "\n".join(lines)


# --- the dataflow executor -----------------------------------------------------------------------
class StepState:
    """Bookkeeping of one step on the dataflow executor: pending counts and values.

    Pure state: ``finish(node, outputs)`` stores a node's outputs, releases values whose last
    reader ran, and returns the nodes that became ready.
    """

    __slots__ = ("pending", "values", "remaining", "error", "done", "lock")

    def __init__(self, initial_pending: list[int], num_nodes: int):
        self.pending = list(initial_pending)
        self.values: dict[Source, Any] = {}
        self.remaining = num_nodes
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.lock = threading.Lock()


class ParallelExecutor:
    """Runs a plan by pending counts on a thread pool (see the module docstring)."""

    def __init__(self, plan: Plan, pool: ThreadPoolExecutor):
        self.plan = plan
        self.pool = pool
        n = len(plan.nodes)
        self._consumers: list[list[int]] = [[] for _ in range(n)]
        pending = [0] * n
        for node in plan.nodes:
            preds = {s[1] for s in node.sources if s[0] == "node"} | set(node.control_sources)
            pending[node.index] = len(preds)
            for p in preds:
                self._consumers[p].append(node.index)
        self._initial_pending = pending
        self._roots = [i for i, c in enumerate(pending) if c == 0]
        self._releases = release_points(plan)
        self._expensive = [node.op.op_def.cost == "expensive" for node in plan.nodes]

    def run(self, ctx: KernelContext, feeds: tuple, timeout: float | None = None) -> tuple:
        plan = self.plan
        state = StepState(self._initial_pending, len(plan.nodes))
        for i, value in enumerate(feeds):
            state.values[("feed", i)] = value
        if not plan.nodes:
            state.done.set()
        else:
            roots = self._roots
            for i in roots[1:]:
                self.pool.submit(self._run_from, ctx, state, i)
            if roots:
                self.pool.submit(self._run_from, ctx, state, roots[0])
        if not state.done.wait(timeout):
            self._abort(
                ctx,
                state,
                errors.DeadlineExceededError(
                    None, None, f"Timed out after {timeout:.3f} s waiting for the step to finish"
                ),
            )
        if state.error is not None:
            raise state.error
        out = []
        for src, copy, deref in zip(plan.fetch_sources, plan.fetch_copies, plan.fetch_deref):
            value = state.values[src]
            if deref:
                value = value.read()
            out.append(owned(value.copy()) if copy else owned(value))
        return tuple(out)

    def _run_from(self, ctx: KernelContext, state: StepState, index: int) -> None:
        """Run node ``index`` and then, in this thread, successors that become ready."""
        nodes = self.plan.nodes
        while index is not None and state.error is None:
            node = nodes[index]
            values = state.values
            try:
                inputs = [
                    values[src].read() if deref else values[src]
                    for src, deref in zip(node.sources, node.deref)
                ]
            except BaseException as exc:  # an uninitialized variable read
                self._abort(ctx, state, kernel_error(node, exc, None))
                return
            if node.is_async:
                self._start_async(ctx, state, node, inputs)
                return
            try:
                result = node.kernel(ctx, *inputs)
            except BaseException as exc:
                self._abort(ctx, state, kernel_error(node, exc, inputs))
                return
            index = self._finish(ctx, state, node, result)

    def _start_async(self, ctx: KernelContext, state: StepState, node: PlanNode, inputs: list):
        """Start an async kernel; its ``done`` continues the step from whichever thread calls it."""
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
            successor = self._finish(ctx, state, node, result)
            if successor is not None:
                self.pool.submit(self._run_from, ctx, state, successor)

        try:
            node.kernel(ctx, *inputs, done=done)
        except BaseException as exc:
            done(error=exc)

    def _finish(self, ctx: KernelContext, state: StepState, node: PlanNode, result: Any):
        values = state.values
        if node.num_outputs == 1:
            values[("node", node.index, 0)] = result
        elif node.num_outputs > 1:
            for k, value in enumerate(result):
                values[("node", node.index, k)] = value
        ready = []
        with state.lock:
            for c in self._consumers[node.index]:
                state.pending[c] -= 1
                if state.pending[c] == 0:
                    ready.append(c)
            for src in self._releases.get(node.index, ()):
                values.pop(src, None)
            state.remaining -= 1
            if state.remaining == 0:
                state.done.set()
                return None
        if not ready:
            return None
        # Keep one successor in this thread (a cheap one if any), hand the others to the pool.
        ready.sort(key=lambda i: self._expensive[i])
        for other in ready[1:]:
            self.pool.submit(self._run_from, ctx, state, other)
        return ready[0]

    def _abort(self, ctx: KernelContext, state: StepState, error: BaseException) -> None:
        with state.lock:
            if state.error is None:
                state.error = error
            state.done.set()
        ctx.cancellation.cancel()


_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()
_step_ids = itertools.count(1)


def shared_pool(threads: int = 0) -> ThreadPoolExecutor:
    """The process-wide inter-op thread pool of a given size (0: one per core, at least 4)."""
    threads = threads or max(4, os.cpu_count() or 1)
    with _pools_lock:
        pool = _pools.get(threads)
        if pool is None:
            pool = ThreadPoolExecutor(threads, thread_name_prefix="nbflow-inter-op")
            _pools[threads] = pool
        return pool


def next_step_id() -> int:
    return next(_step_ids)


def has_parallel_work(plan: Plan) -> bool:
    """Whether two expensive kernels of the plan could run at the same time.

    Two ops at the same depth (longest path from the plan's roots) cannot depend on each other,
    so two expensive ops at one depth are independent work worth a thread pool.
    """
    depth = [0] * len(plan.nodes)
    seen: set[int] = set()
    for node in plan.nodes:
        preds = [s[1] for s in node.sources if s[0] == "node"] + node.control_sources
        depth[node.index] = 1 + max((depth[p] for p in preds), default=0)
        if node.op.op_def.cost == "expensive":
            if depth[node.index] in seen:
                return True
            seen.add(depth[node.index])
    return False
