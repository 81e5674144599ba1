"""The Dask side of a task: a WorkerPlugin installs nbflow's message handlers in each worker.

``NbflowPlugin`` is registered once with the scheduler (``client.register_plugin``); Dask
installs it in every worker that exists or joins later — including a worker the nanny restarts
after a crash. Its ``TaskHost`` keeps the worker's ``TaskServer``s and the rendezvous of steps
in flight, and answers these rpc handlers on the worker's own server:

    nbflow_create_task  create (or replace) a task with its devices
    nbflow_register     import and compile a subgraph, cached under a handle
    nbflow_run          run one step of a handle; reply with the fetched values and timings
    nbflow_tensor       a tensor pushed by another task's Send, for a Recv here
    nbflow_abort        abort a step here (another task of the step failed)
    nbflow_ping         which tasks live here (health checks)
    nbflow_reset        drop resource containers (``Session.reset``)

A step costs each task one ``nbflow_run`` message and its reply, and each cross-task edge one
``nbflow_tensor`` message, one way: a Send writes it (``"reply": False``) on a connection the
worker keeps open to that peer (``distributed.comm.connect`` with the worker's own connection
arguments, so its TLS settings), and the peer's Recv picks it up; nothing answers it. Only a
large variable buffer sent without a copy goes request/response (``worker.rpc``): the step
must not end, and a later step update the variable, before the peer has it. A small step whose
async kernels are all Recvs runs on the message loop itself (``runtime.drivers.CallerDriver``
drives the dataflow state there), others on a driver thread. Nothing passes through the client
or the scheduler.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import numpy as np
from distributed import WorkerPlugin
from distributed.comm import connect
from distributed.protocol.serialize import to_serialize

from nbflow import errors
from nbflow.distributed.task import Registered, StepReport, TaskRendezvous, TaskServer
from nbflow.distributed.wire import SMALL_BYTES, decode, encode
from nbflow.ops.sendrecv_ops import RendezvousKey

PLUGIN_NAME = "nbflow"
LOOP_BUDGET_S = 2e-3  # a step computing longer than this goes back to a driver thread


def error_reply(exc: BaseException, task: str) -> dict[str, Any]:
    """An error as a message: its OpError class name and a message naming the task."""
    if isinstance(exc, errors.OpError):
        kind, message = type(exc).__name__, exc.message
    else:
        kind, message = "InternalError", f"{type(exc).__name__}: {exc}"
    if task not in message:
        message = f"{message} (on task {task})"
    return {"status": "error", "error": kind, "message": message}


class TaskHost:
    """The nbflow tasks of one Dask worker process (see the module docstring)."""

    # How steps run; ``bench/dask_transport.py`` turns these off to measure what they save.
    steps_on_loop = True  # small Recv-only steps driven on the message loop
    one_way_sends = True  # tensors on kept-open connections, unanswered

    def __init__(self, worker: Any):
        self.worker = worker
        self.tasks: dict[str, TaskServer] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._rendezvous: dict[tuple[str, int], TaskRendezvous] = {}
        self._finished: OrderedDict[tuple[str, int], None] = OrderedDict()
        self._lock = threading.Lock()
        self._drivers = ThreadPoolExecutor(64, thread_name_prefix="nbflow-task")
        self._peers: dict[str, asyncio.Future] = {}  # address -> its kept-open comm
        self._pushes: set[asyncio.Task] = set()  # writes under way (kept from the collector)

    def handlers(self) -> dict[str, Any]:
        return {
            name: _with_signature(method)
            for name, method in {
                "nbflow_create_task": self.create_task,
                "nbflow_register": self.register,
                "nbflow_run": self.run,
                "nbflow_tensor": self.tensor,
                "nbflow_abort": self.abort,
                "nbflow_ping": self.ping,
                "nbflow_reset": self.reset,
            }.items()
        }

    def _bind_loop(self) -> None:
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
            self._loop_thread = threading.get_ident()

    # --- rendezvous of steps in flight ---------------------------------------------------------
    def rendezvous_for(self, task: str, step_id: int) -> TaskRendezvous | None:
        key = (task, step_id)
        with self._lock:
            found = self._rendezvous.get(key)
            if found is None:
                server = self.tasks.get(task)
                if key in self._finished or server is None:
                    return None
                found = self._rendezvous[key] = server.new_rendezvous(step_id, None)
            return found

    def _finish(self, task: str, step_id: int) -> None:
        key = (task, step_id)
        with self._lock:
            self._rendezvous.pop(key, None)
            self._finished[key] = None
            while len(self._finished) > 20000:
                self._finished.popitem(last=False)

    def _push(
        self, routes: dict[str, str], dst_task: str, step_id: int, key: str, value: Any, on_error
    ) -> Any:
        """Deliver a Send's tensor to ``dst_task``: in this process directly, else by a message
        (returns the future of a write the step must wait for, or None)."""
        if dst_task in self.tasks:
            found = self.rendezvous_for(dst_task, step_id)
            if found is not None:
                found.deliver(key, value, RendezvousKey.parse(key).send_device)
            return None
        address = routes.get(dst_task)
        if address is None:
            on_error(
                errors.InternalError(None, None, f"No route to task {dst_task} for Send {key}")
            )
            return None
        big = isinstance(value, np.ndarray) and value.nbytes > SMALL_BYTES
        shared = big and not value.flags.writeable  # a variable's buffer (``copy_names``)
        one_way = self.one_way_sends and not shared
        if one_way:  # built now: a small value is copied before the step goes on
            message = {
                "op": "nbflow_tensor",
                "reply": False,
                "task": dst_task,
                "step_id": step_id,
                "key": key,
                "value": encode(value),
            }

        async def push() -> None:
            try:
                if one_way:
                    await self._send(address, message)
                else:
                    await self.worker.rpc(address).nbflow_tensor(
                        task=dst_task, step_id=step_id, key=key, value=to_serialize(value)
                    )
            except Exception as exc:  # noqa: BLE001 - the step fails, naming the task
                on_error(
                    errors.UnavailableError(
                        None,
                        None,
                        f"Send of {key.rsplit(';', 1)[-1]} to task {dst_task} at {address} "
                        f"failed: {type(exc).__name__}: {exc}",
                    )
                )

        assert self.loop is not None
        if threading.get_ident() == self._loop_thread:
            task = self.loop.create_task(push())
            self._pushes.add(task)
            task.add_done_callback(self._pushes.discard)
            return task if shared else None
        future = asyncio.run_coroutine_threadsafe(push(), self.loop)
        return future if shared else None

    async def _send(self, address: str, message: dict) -> None:
        """Write ``message`` on the kept-open connection to ``address``; nothing answers."""
        found = self._peers.get(address)
        if found is None:
            found = self._peers[address] = asyncio.ensure_future(
                connect(address, **self.worker.connection_args)
            )
        try:
            comm = await found
            if comm.closed():
                raise OSError(f"connection to {address} closed")
            comm.allow_offload = False  # no sizeof walk per message; NumPy pickles zero-copy
            await comm.write(message)
        except BaseException:
            if self._peers.get(address) is found:
                del self._peers[address]
            if found.done() and not found.cancelled() and found.exception() is None:
                found.result().abort()
            raise

    # --- handlers ------------------------------------------------------------------------------
    async def create_task(
        self, comm: Any = None, task: str = "", device_count: dict | None = None
    ) -> dict:
        self._bind_loop()
        server = TaskServer(task, device_count)
        self.tasks[task] = server
        return {**server.describe(), "pid": os.getpid(), "address": self.worker.address}

    async def register(
        self, comm: Any = None, task: str = "", handle: str = "", spec: dict | None = None
    ) -> dict:
        server = self.tasks.get(task)
        if server is None:
            return error_reply(_lost(task, self.worker.address), task)
        try:
            await asyncio.get_running_loop().run_in_executor(
                self._drivers, server.register, handle, spec
            )
        except BaseException as exc:  # noqa: BLE001 - reported to the master
            return error_reply(exc, task)
        return {"status": "ok"}

    async def run(
        self,
        comm: Any = None,
        task: str = "",
        handle: str = "",
        step_id: int = 0,
        feeds: list | None = None,
        timeout: float | None = None,
    ) -> dict:
        self._bind_loop()
        if comm is not None:  # the reply is small or zero-copy NumPy: no sizeof, no thread
            comm.allow_offload = False
        server = self.tasks.get(task)
        if server is None:
            return error_reply(_lost(task, self.worker.address), task)
        try:
            registered = server.lookup(handle)
        except errors.OpError as exc:
            return error_reply(exc, task)
        rendezvous = self.rendezvous_for(task, step_id)
        if rendezvous is None:
            return error_reply(
                errors.AbortedError(None, None, f"Step {step_id} was aborted on task {task}"), task
            )
        rendezvous.push = partial(self._push, registered.routes)
        values = {int(i): decode(v) for i, v in feeds or ()}
        try:
            if registered.inline:
                report = server.run_step(registered, rendezvous, values, timeout)
            elif registered.on_loop and self.steps_on_loop:
                report = await self._run_on_loop(server, registered, rendezvous, values, timeout)
            else:
                report = await asyncio.get_running_loop().run_in_executor(
                    self._drivers, server.run_step, registered, rendezvous, values, timeout
                )
                # Short Recv-free plans run on the message loop itself from now on.
                registered.inline = (
                    registered.runs >= 3
                    and report.run_s < 2e-4
                    and not any(p.runner.can_wait for p in registered.parts)
                )
            if rendezvous.sent:  # variable buffers sent without a copy: written out first
                await asyncio.gather(
                    *(f if isinstance(f, asyncio.Future) else asyncio.wrap_future(f)
                      for f in rendezvous.sent if f is not None)
                )  # fmt: skip
        except BaseException as exc:  # noqa: BLE001 - reported to the master
            return error_reply(exc, task)
        finally:
            self._finish(task, step_id)
        return {
            "status": "ok",
            "values": [[i, encode(v)] for i, v in report.values.items()],
            "run_s": report.run_s,
            "recv_wait_s": report.recv_wait_s,
        }

    async def _run_on_loop(
        self,
        server: TaskServer,
        registered: Registered,
        rendezvous: TaskRendezvous,
        values: dict[int, Any],
        timeout: float | None,
    ) -> StepReport:
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()

        def done(report: StepReport | None, error: BaseException | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(report)

        timer = None
        if timeout:
            deadline = errors.DeadlineExceededError(
                None, None, f"Timed out after {timeout:.3f} s waiting for the step"
            )
            timer = loop.call_later(timeout, rendezvous.abort, deadline)
        server.start_step(registered, rendezvous, values, done)
        try:
            report = await future
        finally:
            if timer is not None:
                timer.cancel()
        if report.run_s - report.recv_wait_s > LOOP_BUDGET_S and registered.runs > 1:
            registered.slow_runs += 1  # the first run warms caches: not counted
            if registered.slow_runs >= 3:  # too long to hold the message loop: a driver thread
                registered.on_loop = False
        else:
            registered.slow_runs = 0
        return report

    async def tensor(
        self, comm: Any = None, task: str = "", step_id: int = 0, key: str = "", value: Any = None
    ) -> None:
        found = self.rendezvous_for(task, step_id)
        if found is not None:
            found.deliver(key, decode(value), RendezvousKey.parse(key).send_device)

    async def abort(
        self, comm: Any = None, task: str = "", step_id: int = 0, message: str = ""
    ) -> None:
        found = self.rendezvous_for(task, step_id)
        if found is not None:
            found.abort(errors.AbortedError(None, None, message or f"Step {step_id} aborted"))

    async def ping(self, comm: Any = None) -> dict:
        self._bind_loop()
        return {
            "pid": os.getpid(),
            "address": self.worker.address,
            "tasks": {name: s.describe() for name, s in self.tasks.items()},
        }

    async def reset(
        self, comm: Any = None, task: str = "", containers: list[str] | None = None
    ) -> None:
        """Drop ``containers`` of ``task`` (all when None) and cancel its steps in flight, as
        TensorFlow's ``Session.reset`` does: their blocked kernels (a dequeue of a dropped
        queue) would otherwise wait forever."""
        server = self.tasks.get(task)
        if server is None:
            return
        with self._lock:
            running = [r for (t, _), r in self._rendezvous.items() if t == task]
        for rendezvous in running:
            rendezvous.abort(
                errors.CancelledError(
                    None, None, f"Session.reset cancelled step {rendezvous.step_id} on task {task}"
                )
            )
        for device in server.devices:
            device.resources.reset(containers)


def _with_signature(method: Any) -> Any:
    """``method`` as a plain function carrying its signature: Dask inspects a handler's
    signature on every message (does it take ``comm``?), which costs a bound method about
    20 µs a message and a function with ``__signature__`` set about 1."""

    async def handler(*args: Any, **kwargs: Any) -> Any:
        return await method(*args, **kwargs)

    handler.__signature__ = inspect.signature(method)  # type: ignore[attr-defined]
    handler.__name__ = handler.__qualname__ = method.__name__
    handler.__wrapped_method__ = method  # type: ignore[attr-defined]
    return handler


def _lost(task: str, address: str) -> errors.OpError:
    return errors.AbortedError(
        None,
        None,
        f"Task {task} does not exist on Dask worker {address} (the worker restarted or the "
        "task was never created there); recreate the session",
    )


class NbflowPlugin(WorkerPlugin):
    """Installs nbflow's ``TaskHost`` handlers in a Dask worker."""

    name = PLUGIN_NAME

    async def setup(self, worker: Any) -> None:
        host = getattr(worker, "_nbflow_host", None)
        if host is None:
            host = TaskHost(worker)
            worker._nbflow_host = host
            worker.handlers.update(host.handlers())
        host._bind_loop()

    def teardown(self, worker: Any) -> None:
        """Tasks outlive a re-registration of the plugin (another client attaching): their
        host stays with the worker process until it exits."""
