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

Messages to other tasks go through ``worker.rpc`` (the worker's connection pool and its TLS
settings); nothing passes through the client or the scheduler.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from distributed import WorkerPlugin
from distributed.protocol.serialize import to_serialize

from nbflow import errors
from nbflow.distributed.task import TaskRendezvous, TaskServer

PLUGIN_NAME = "nbflow"


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

    def __init__(self, worker: Any):
        self.worker = worker
        self.tasks: dict[str, TaskServer] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._rendezvous: dict[tuple[str, int], TaskRendezvous] = {}
        self._finished: OrderedDict[tuple[str, int], None] = OrderedDict()
        self._lock = threading.Lock()
        self._drivers = ThreadPoolExecutor(64, thread_name_prefix="nbflow-task")

    def handlers(self) -> dict[str, Any]:
        return {
            "nbflow_create_task": self.create_task,
            "nbflow_register": self.register,
            "nbflow_run": self.run,
            "nbflow_tensor": self.tensor,
            "nbflow_abort": self.abort,
            "nbflow_ping": self.ping,
            "nbflow_reset": self.reset,
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
        """Deliver a Send's tensor to ``dst_task``: in this process directly, else by rpc
        (returns the future of that message)."""
        if dst_task in self.tasks:
            found = self.rendezvous_for(dst_task, step_id)
            if found is not None:
                found.deliver(key, value, key.split(";", 1)[0])
            return None
        address = routes.get(dst_task)
        if address is None:
            on_error(
                errors.InternalError(None, None, f"No route to task {dst_task} for Send {key}")
            )
            return None

        async def push() -> None:
            try:
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
            return self.loop.create_task(push())
        return asyncio.run_coroutine_threadsafe(push(), self.loop)

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
        values = {int(i): v for i, v in feeds or ()}
        try:
            if registered.inline:
                report = server.run_step(registered, rendezvous, values, timeout)
            else:
                report = await asyncio.get_running_loop().run_in_executor(
                    self._drivers, server.run_step, registered, rendezvous, values, timeout
                )
                # Short Recv-free plans run on the message loop itself from now on.
                registered.inline = (
                    registered.runs >= 3
                    and report.run_s < 2e-4
                    and not any(p.parallel for p in registered.parts)
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
            "values": [[i, to_serialize(v)] for i, v in report.values.items()],
            "run_s": report.run_s,
            "recv_wait_s": report.recv_wait_s,
        }

    async def tensor(
        self, comm: Any = None, task: str = "", step_id: int = 0, key: str = "", value: Any = None
    ) -> None:
        found = self.rendezvous_for(task, step_id)
        if found is not None:
            found.deliver(key, value, key.split(";", 1)[0])

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
        server = self.tasks.get(task)
        if server is not None:
            for device in server.devices:
                device.resources.reset(containers)


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
