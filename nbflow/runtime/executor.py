"""The generated-code runners of a compiled ``Plan`` (chosen by ``step.choose_runner``).

``InlineExecutor`` turns a plan into one straight-line Python function, generated once:

    def step(ctx, feeds, deadline=None):
        xp = ctx.xp
        try:
            f0, = feeds
            v0_0 = k0(ctx)  # node 0:         # Const: a kernel call
            v1_0 = v0_0 + f0  # node 1:v0_0 f0  # Add: its expression, pasted (runtime/codegen.py)
            del v0_0                          # released after its last reader
            return (v1_0,)
        except BaseException as e:
            _fail(e, locals())                # the marked line that raised names the node

and that function *is* the runner's ``run``: a repeated ``Session.run`` costs a dict lookup,
the feed conversion and one call (or less) per kernel. It serves graphs where parallelism would
not pay: one device, no two expensive kernels that could overlap, and kernels that wait (a
queue's enqueue or dequeue, a reader's read, a mutex) only in one chain, each depending on the
one before (``waits_in_line``), as in a queue runner's step (the reader's read, the parse, the
enqueue) or a training step reading its batch from a queue. With no kernel that can wait, the
step cannot overrun a deadline by waiting, so ``deadline`` is unused.

Waiting kernels. ``emission_order`` puts every node that does not depend on a waiting kernel
before it; the kernel is started with a ``Pending`` as its ``done`` and joined on the same line
(``p3 = _Pending(); k3(ctx, v2_0, done=p3.done); v3_0 = p3.wait(ctx, deadline, o3)``). While it
waits, nothing else in the step could run, which is all the dataflow executor could do too: it
would park the kernel and find nothing ready. The join honours ``Session.close`` and the
deadline; at the deadline it cancels the step with ``DeadlineExceededError`` naming the waiting
node, which withdraws the kernel's waiter from its queue, and a step that fails cancels its
context too, so a kernel holding something (a ``MutexLock``) gives it up — both as the dataflow
executor does. Waiting kernels on no single chain (a dequeue beside an enqueue of the same
queue) and Recvs stay on the dataflow executor. The CSV pipeline of bench/control_flow.py
(``TextLineReader`` → ``decode_csv`` → ``shuffle_batch``, a queue runner's step per record)
reads ~2.7x as many records per second this way as when the dataflow executor parks and resumes
its waiting kernels.

``ResumableInline`` is the same function for one partition of a local step over devices, run
in the calling thread beside the others (runtime/multi_device.py): at a Recv whose value is not
there yet it parks, ``if not p3._called: yield p3``, and the Send that delivers the value
resumes it. Its nodes come in its share of one topological order of all the partitions.

Background kernels (``OpDef.runs_in_background``: async kernels that wait on nothing but their
own work, such as the histogram summary) are the exception. ``emission_order`` puts them, and
everything they read, first; each is started with a ``Pending`` as its ``done``
(``p5 = _Pending(); k5(ctx, v1_0, done=p5.done)``) and joined just before its first reader
(``v5_0 = p5.wait(ctx, deadline)``), so its work overlaps the rest of the step. Such a step can
wait, so it honours the deadline and ``Session.close`` at the join.

``StructuredExecutor`` runs the code runtime/loop_compiler.py generates for a control-flow plan
without async kernels: each loop frame a Python ``while`` that checks the deadline and the
step's cancellation once per iteration, so a loop iteration costs about what the same Python
loop would, and ``Session.close`` stops a long loop.

Plans needing a thread pool, async kernels or tagged frames run on the dataflow state
(runtime/dataflow.py) through the drivers of runtime/drivers.py.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from collections.abc import Callable

import numpy as np

from nbflow import errors
from nbflow.framework.op_def import KernelContext
from nbflow.ops.control_flow_ops import DEAD
from nbflow.runtime import codegen
from nbflow.runtime.plan import Plan, PlanNode, Source

StepFunction = Callable[[KernelContext, tuple, "float | None"], tuple]

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

    can_wait = False

    def __init__(self, plan: Plan, order: list[PlanNode] | None = None, resumable: bool = False):
        assert not plan.has_control_flow, "a cyclic plan has no straight-line form"
        if order is None:
            assert waits_in_line(plan), "these waiting kernels need the dataflow executor"
            order = emission_order(plan)
        self.plan = plan
        # A step waiting for a background kernel can be cancelled (Session.close) or time out.
        self.can_wait = plan.has_async
        self._waits = plan.has_waiting_async
        self.source = _generate(plan, order, resumable)
        self._lines = codegen.node_lines(self.source)
        namespace: dict[str, Any] = {"_fail": self._fail, "_owned": owned, "_Pending": Pending}
        for node in plan.nodes:
            namespace[f"k{node.index}"] = node.kernel
        for node in waiting_nodes(plan):
            namespace[f"o{node.index}"] = node.op  # named when its wait times out
        exec(compile(self.source, f"<nbflow plan of {len(plan.nodes)} nodes>", "exec"), namespace)
        self.run: StepFunction = namespace["step"]  # the generated function is the runner

    def _fail(self, exc: BaseException, frame_locals: dict[str, Any]) -> None:
        try:
            fail_step(self.plan, self._lines, exc, frame_locals)
        except BaseException as error:
            if self._waits:  # what a waiting kernel holds (a mutex) is given up, as the
                frame_locals["ctx"].cancellation.cancel(error)  # dataflow executor's fail does
            raise


class ResumableInline(InlineExecutor):
    """A partition of a local step over devices as one generated function that parks instead
    of blocking: at a Recv whose value is not there yet it yields, and the Send that delivers
    the value resumes it, in the sender's thread (``multi_device.PartitionRunner``). Driven
    like a ``CallerDriver``: ``start(ctx, feeds, done)``.

    ``order`` runs the plan's Sends and Recvs as they come in one topological order of all the
    step's partitions together, each Send before its Recv (``multi_device.order_by_transfers``),
    so parked partitions never wait on each other in a cycle. A task's share of a cluster step
    runs the same way on the task's message loop, a Recv resumed by a message. (Its ``run`` is
    the generated function, a generator where the plan has a Recv: ``start`` drives it.)"""

    def __init__(self, plan: Plan, order: list[PlanNode]):
        super().__init__(plan, order, resumable=True)
        self._parks = bool(waiting_nodes(plan))  # with no Recv the function yields nothing

    def start(self, ctx: KernelContext, feeds: tuple, done: Callable[..., None]) -> None:
        """Run one step; ``done(fetched values, None)`` or ``done(None, error)`` when over."""
        if not self._parks:
            try:
                values = self.run(ctx, feeds, None)
            except BaseException as exc:  # noqa: BLE001 - the step's error, through ``done``
                done(None, exc)
                return
            done(values, None)
            return
        steps: Any = self.run(ctx, feeds, None)

        def advance() -> None:
            try:
                parked = steps.send(None)
            except StopIteration as stop:
                done(stop.value, None)
                return
            except BaseException as exc:  # noqa: BLE001 - the step's error, through ``done``
                done(None, exc)
                return
            parked.then(advance)

        advance()


def _var(src: Source) -> str:
    return f"f{src[1]}" if src[0] == "feed" else f"v{src[1]}_{src[2]}"


def fail_step(
    plan: Plan,
    lines: dict[int, tuple[int, list[str]]],
    exc: BaseException,
    frame_locals: dict[str, Any],
) -> None:
    """Re-raise ``exc``, caught in a generated step, as the error of the node whose line raised
    it, naming the values it read (``lines``: codegen.node_lines of the step's source)."""
    n, names = codegen.failed_node(exc, lines)
    if n < 0 or n >= len(plan.nodes):
        raise exc
    inputs = [frame_locals.get(name) for name in names]
    raise kernel_error(plan.nodes[n], exc, inputs) from (
        None if isinstance(exc, errors.OpError) else exc
    )


_then_lock = threading.Lock()  # ``Pending.then`` against a ``done`` in another thread


class Pending:
    """The result of a background kernel started by a straight-line step: ``done`` is its
    continuation (called once, from the worker's thread), ``wait`` the step's join point. The
    event to wait on is made only when the step has to wait: a kernel that finished in line
    (``histograms_in_background`` off) costs no lock."""

    __slots__ = ("_event", "_called", "_result", "_error", "_then")

    def __init__(self) -> None:
        self._event: threading.Event | None = None
        self._called = False
        self._result: Any = None
        self._error: BaseException | None = None
        self._then: Callable[[], None] | None = None

    def done(self, result: Any = None, error: BaseException | None = None) -> None:
        if self._called:
            return
        self._result, self._error = result, error
        self._called = True
        event = self._event  # read after ``_called`` is set: see ``wait``
        if event is not None:
            event.set()
        if self._then is not None:  # a parked resumable step (``then``)
            with _then_lock:
                then, self._then = self._then, None
            if then is not None:
                then()

    def then(self, resume: Callable[[], None]) -> None:
        """Call ``resume`` once ``done`` has been called: now, or from ``done``'s thread."""
        with _then_lock:
            if not self._called:
                self._then = resume
                return
        resume()

    def wait(self, ctx: KernelContext, deadline: float | None, blocked: Any = None) -> Any:
        """The kernel's result, or its error; a cancelled step (``Session.close``) or a passed
        deadline stops waiting at once. ``blocked``: the op of a kernel that waits on something
        outside itself (a queue): at the deadline the step is cancelled with
        ``DeadlineExceededError`` naming it, which withdraws the kernel's waiter, as the
        dataflow executor does."""
        cancellation = ctx.cancellation
        if not self._called:
            # set the event before looking at ``_called`` again: a ``done`` in between either
            # saw the event (and sets it) or set ``_called`` before this second look
            event = self._event = threading.Event()
            if self._called:
                event.set()
            token = cancellation.register(event.set)
            if token is None:
                raise cancellation.reason()
            try:
                timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                event.wait(timeout)
            finally:
                cancellation.deregister(token)
            if not self._called:
                if cancellation.is_cancelled:
                    raise cancellation.reason()
                if blocked is None:
                    raise errors.DeadlineExceededError(
                        None, None, "Timed out waiting for a background kernel to finish"
                    )
                cancellation.cancel(step_timed_out(timeout, [blocked]))
                raise cancellation.reason()
        if self._error is not None:
            # a kernel withdrawn by the step's cancellation fails with the cancellation's error
            raise cancellation.reason() if cancellation.is_cancelled else self._error
        return self._result


def step_timed_out(timeout: float | None, blocked: list[Any]) -> errors.OpError:
    """The error of a step past its deadline, naming the ops it still waits in (up to three)."""
    waiting = "".join(f"; still waiting in '{op.name}' ({op.type})" for op in blocked[:3])
    first = blocked[0] if blocked else None
    return errors.DeadlineExceededError(
        first.node_def if first is not None else None,
        first,
        f"Timed out after {timeout:.3f} s waiting for the step to finish{waiting}",
    )


def waiting_nodes(plan: Plan) -> list[PlanNode]:
    """The plan's kernels that may wait on something outside themselves (a queue, a reader's
    queue, an accumulator, a Recv), in plan order."""
    return [n for n in plan.nodes if n.is_async and not n.op.op_def.runs_in_background]


def _waiting_depths(plan: Plan) -> list[int]:
    """For each node, the length of the longest chain of waiting kernels among its strict
    ancestors (plan order is topological, so one forward pass)."""
    waits = [False] * len(plan.nodes)
    for node in waiting_nodes(plan):
        waits[node.index] = True
    depth = [0] * len(plan.nodes)
    for node in plan.nodes:
        parents = [s[1] for s in node.sources if s[0] == "node"] + list(node.control_sources)
        depth[node.index] = max((depth[p] + waits[p] for p in parents), default=0)
    return depth


def waits_in_line(plan: Plan) -> bool:
    """Whether a straight-line step can run the plan's waiting kernels where they stand: none
    is a Recv (its sender is another partition's business: ``ResumableInline`` orders those),
    and they form one chain, each an ancestor of the next (a reader's dequeue, then the enqueue
    of what it read). Then ``emission_order`` runs everything that does not depend on a waiting
    kernel before it, so while it waits nothing else in the step could run — as in the dataflow
    executor, which would park the kernel and find nothing else ready."""
    waiting = waiting_nodes(plan)
    if any(n.op.op_def.is_recv for n in waiting):
        return False
    depth = _waiting_depths(plan)
    return all(depth[n.index] == k for k, n in enumerate(waiting))


def emission_order(plan: Plan) -> list[PlanNode]:
    """The plan's nodes in the order a straight-line step runs them. Background kernels and
    everything they read come first, so their work overlaps the rest of the step. A waiting
    kernel comes after every node that does not depend on it (``waits_in_line``): nodes sort
    by how many waiting kernels they depend on, a waiting kernel last among its equals, then
    by whether a background kernel reads them, then by plan order. A node's inputs never sort
    after it, so the order is topological."""
    early: set[int] = set()
    stack = [n.index for n in plan.nodes if n.op.op_def.runs_in_background]
    while stack:
        i = stack.pop()
        if i not in early:
            early.add(i)
            node = plan.nodes[i]
            stack.extend(src[1] for src in node.sources if src[0] == "node")
            stack.extend(node.control_sources)
    waiting = {n.index for n in waiting_nodes(plan)}
    if not early and not waiting:
        return plan.nodes
    depth = _waiting_depths(plan)
    return sorted(
        plan.nodes,
        key=lambda n: (depth[n.index], n.index in waiting, n.index not in early, n.index),
    )


def _generate(plan: Plan, order: list[PlanNode], resumable: bool = False) -> str:
    background = {n.index for n in order if n.op.op_def.runs_in_background}
    waiting = {n.index for n in waiting_nodes(plan)}
    releases = release_points(plan) if order is plan.nodes else _release_points_in(order, plan)
    # where each background kernel's result is awaited: before its first reader (data or
    # control), else before the step returns
    joins: dict[int, list[int]] = {}
    for b in background:
        position = order.index(plan.nodes[b])
        readers = (
            k
            for k, n in enumerate(order[position + 1 :], position + 1)
            if b in n.control_sources or any(s[0] == "node" and s[1] == b for s in n.sources)
        )
        joins.setdefault(next(readers, len(order)), []).append(b)
    lines = ["def step(ctx, feeds, deadline=None):", "    xp = ctx.xp", "    try:"]
    body = []
    if plan.feeds:
        names = ", ".join(f"f{i}" for i in range(len(plan.feeds)))
        body.append(f"{names}, = feeds")
    for position, node in enumerate(order + [None]):  # None: the join point before returning
        for b in joins.get(position, []):
            joined = _unpacked(plan.nodes[b])
            body.append(codegen.mark(f"{joined} = p{b}.wait(ctx, deadline)", b))
        if node is None:
            break
        args = []
        for src, deref in zip(node.sources, node.deref):
            args.append(f"{_var(src)}.read()" if deref else _var(src))
        if node.index in background:  # started here, joined above its first reader
            call = ", ".join(["ctx", *args, f"done=p{node.index}.done"])
            line = f"p{node.index} = _Pending(); k{node.index}({call})"
        elif node.index in waiting:  # started and joined here: nothing else could run now
            i = node.index
            call = ", ".join(["ctx", *args, f"done=p{i}.done"])
            joined = _unpacked(node)
            if resumable:  # not there yet: park the step until ``done`` resumes it
                body.append(codegen.mark(f"p{i} = _Pending(); k{i}({call})", i, args))
                body.append(f"if not p{i}._called: yield p{i}")
                line = f"{joined} = p{i}.wait(ctx, deadline, o{i})"
            else:
                line = f"p{i} = _Pending(); k{i}({call}); {joined} = p{i}.wait(ctx, deadline, o{i})"
        else:
            call = codegen.kernel_call(f"k{node.index}", node.kernel, args)
            outputs = [f"v{node.index}_{k}" for k in range(node.num_outputs)]
            used = [
                o if ("node", node.index, k) in plan.last_use else "_"
                for k, o in enumerate(outputs)
            ]
            if node.num_outputs == 0:
                line = call
            elif node.num_outputs == 1:
                line = f"{used[0]} = {call}"
            else:
                line = f"{', '.join(used)}, = {call}"
        body.append(codegen.mark(line, node.index, args))
        dead = [_var(s) for s in releases.get(node.index, [])]
        if dead:
            body.append(f"del {', '.join(dead)}")
    results = []
    for i, (src, copy, deref) in enumerate(
        zip(plan.fetch_sources, plan.fetch_copies, plan.fetch_deref)
    ):
        value = _var(src)
        if deref:  # reading a fetched variable can fail: blame its node
            body.append(codegen.mark(f"r{i} = {value}.read()", src[1], [value]))
            value = f"r{i}"
        results.append(f"_owned({value}.copy())" if copy else f"_owned({value})")
    body.append(f"return ({', '.join(results)}{',' if results else ''})")
    lines += [f"        {line}" for line in body]
    if resumable:  # a parked step dropped unfinished is closed: not a kernel's failure
        lines += ["    except GeneratorExit:", "        raise"]
    lines += ["    except BaseException as e:", "        _fail(e, locals())", ""]
    return "\n".join(lines)


def _unpacked(node: PlanNode) -> str:
    """The target of an assignment from an async kernel's result: its outputs' variables."""
    outputs = [f"v{node.index}_{k}" for k in range(node.num_outputs)]
    return outputs[0] if len(outputs) == 1 else f"{', '.join(outputs)}," if outputs else "_"


def _release_points_in(order: list[PlanNode], plan: Plan) -> dict[int, list[Source]]:
    """``release_points`` for nodes run in ``order``: a value goes after its last reader there.
    A background kernel reads its inputs when it starts, so it releases them like any node."""
    last: dict[Source, int] = {}
    for node in order:
        for src in node.sources:
            if src[0] == "node":
                last[src] = node.index
    out: dict[int, list[Source]] = {}
    for src, reader in last.items():
        if plan.last_use.get(src, -1) < len(plan.nodes):  # fetched values live to the end
            out.setdefault(reader, []).append(src)
    return out


# --- structured loops -----------------------------------------------------------------------------
class StructuredExecutor:
    """Runs a control-flow plan as the structured code loop_compiler.py wrote for it."""

    can_wait = True  # a loop may run long: its iterations check the deadline and cancellation

    def __init__(self, plan: Plan, source: str):
        self.plan = plan
        self.source = source
        self._lines = codegen.node_lines(source)
        self.run: StepFunction = _compile_structured(source, plan, self._fail)

    def _fail(self, exc: BaseException, frame_locals: dict[str, Any]) -> None:
        fail_step(self.plan, self._lines, exc, frame_locals)


def _compile_structured(source: str, plan: Plan, fail: Callable[..., None]) -> StepFunction:
    def stop(ctx: KernelContext) -> None:
        """A loop iteration found the step cancelled (``Session.close``) or past its deadline."""
        if ctx.cancellation.is_cancelled:
            raise ctx.cancellation.reason()
        raise errors.DeadlineExceededError(
            None, None, "Timed out waiting for the step to finish (RunOptions.timeout_in_ms)"
        )

    def dead_fetch(index: int, k: int) -> None:
        op = plan.nodes[index].op
        raise errors.InvalidArgumentError(
            op.node_def,
            op,
            f"Fetched tensor {op.name}:{k} has no value: it is on a branch of a cond that was "
            "not taken",
        )

    namespace: dict[str, Any] = {
        "_fail": fail,
        "_owned": owned,
        "DEAD": DEAD,
        "_now": time.monotonic,
        "_stop": stop,
        "_dead_fetch": dead_fetch,
        "_I0": np.int32(0),
        "_I1": np.int32(1),
    }
    for node in plan.nodes:
        namespace[f"k{node.index}"] = node.kernel
    exec(
        compile(source, f"<nbflow control-flow plan of {len(plan.nodes)} nodes>", "exec"), namespace
    )
    return namespace["step"]


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
    so two expensive ops at one depth are independent work worth a thread pool. A plan with
    control flow always takes the dataflow executor: it has frames to keep.
    """
    if plan.has_control_flow:
        return True
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
