"""The Dask side of a task: a WorkerPlugin installs nbflow's message handlers in each worker.

``NbflowPlugin`` is registered once with the scheduler (``client.register_plugin``); Dask
installs it in every worker that exists or joins later — including a worker the nanny restarts
after a crash. Its ``TaskHost`` keeps the worker's ``TaskServer``s and the rendezvous of steps
in flight, and answers these rpc handlers on the worker's own server:

    nbflow_create_task  create (or replace) a task with its devices
    nbflow_register     import and compile a subgraph, cached under a handle
    nbflow_run          run one step of a handle; reply with the fetched values and timings
    nbflow_tensor       a tensor pushed by another task's Send, for a Recv here
    nbflow_tensor_stream  hand this connection to the data plane: raw tensors follow
    nbflow_abort        abort a step here (another task of the step failed)
    nbflow_ping         which tasks live here (health checks)
    nbflow_reset        drop resource containers (``Session.reset``)

A step costs each task one ``nbflow_run`` message and its reply, and each cross-task edge one
tensor, one way. A numeric array goes on the data plane: the worker keeps one connection open
to each peer (``distributed.comm.connect`` with the worker's own connection arguments, so its
TLS settings), hands it to the peer's ``nbflow_tensor_stream`` handler with one Dask message,
and from then on writes each tensor as raw frames on its stream (``wire.tensor_frames``: a
header and the array's own buffer; no pickle, no msgpack walk, no Dask frame bookkeeping); the
peer reads it straight into a fresh array and hands it to the Recv. Nothing answers it. A
variable's buffer sent without a copy is the one case a Send waits for: its step does not end,
and a later step update the variable, before the bytes are handed to the socket. Any other
value is an ``nbflow_tensor`` message on a second kept-open connection. A small step whose
async kernels are all Recvs runs on the message loop itself (``runtime.drivers.CallerDriver``
drives the dataflow state there), others on a driver thread. Nothing passes through the client
or the scheduler.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import numpy as np
from distributed import WorkerPlugin
from distributed.comm import connect
from distributed.protocol.serialize import to_serialize
from tornado.iostream import StreamClosedError

from nbflow import errors
from nbflow.devices import device as device_lib
from nbflow.distributed.dashboard import StepLog
from nbflow.distributed.local_plane import (
    MESSAGES,
    TENSORS,
    LocalPlaneListener,
    connect_local,
)
from nbflow.distributed.task import Registered, StepReport, TaskRendezvous, TaskServer
from nbflow.distributed.wire import (
    SMALL_BYTES,
    decode,
    encode,
    feed_key,
    is_raw,
    message_frames,
    read_message,
    read_tensor,
    write_frames,
    write_tensor,
)
from nbflow.ops.sendrecv_ops import RendezvousKey
from nbflow.runtime.rendezvous import LocalRendezvous

logger = logging.getLogger(__name__)

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
    raw_tensors = True  # numeric arrays as raw frames on the data plane, not in messages
    local_plane = True  # the data plane on a Unix socket to a peer on this machine

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
        self._planes: dict[str, asyncio.Future] = {}  # address -> its data-plane comm, opening
        self._plane_comms: dict[str, Any] = {}  # address -> its data-plane comm, open
        self._pushes: set[asyncio.Task] = set()  # writes under way (kept from the collector)
        self._listener: LocalPlaneListener | None = None  # made at the first offer
        self.steps = StepLog(worker)  # step totals for the Dask dashboard (dashboard.py)

    def handlers(self) -> dict[str, Any]:
        return {
            name: _with_signature(method)
            for name, method in {
                "nbflow_create_task": self.create_task,
                "nbflow_register": self.register,
                "nbflow_run": self.run,
                "nbflow_tensor": self.tensor,
                "nbflow_tensor_stream": self.tensor_stream,
                "nbflow_plane_offer": self.plane_offer,
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
        failed = partial(self._send_failed, dst_task, address, key, on_error)
        if self.raw_tensors and is_raw(value) and address.startswith(("tcp://", "tls://")):
            # A payload written from the array's own buffer: a variable's (read-only) is
            # waited for, so that no later update reaches the socket.
            shared = isinstance(value, np.ndarray) and not value.flags.writeable
            return self._push_tensor(address, (dst_task, step_id, key, value), failed, shared)
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
                failed(exc)

        assert self.loop is not None
        if threading.get_ident() == self._loop_thread:
            task = self.loop.create_task(push())
            self._pushes.add(task)
            task.add_done_callback(self._pushes.discard)
            return task if shared else None
        future = asyncio.run_coroutine_threadsafe(push(), self.loop)
        return future if shared else None

    def _push_tensor(
        self, address: str, tensor: tuple, failed: Callable[[BaseException], None], wait: bool
    ) -> Any:
        """Write ``tensor`` (task, step id, key, value) on the data plane to ``address``; with
        ``wait``, the future of its payload's hand-over (the step waits for it), else None."""
        assert self.loop is not None
        if threading.get_ident() == self._loop_thread:
            comm = self._plane_comms.get(address)
            if comm is not None:  # the common case: written now, nothing scheduled
                return self._write_tensor(address, comm, tensor, failed, wait)
            task = self.loop.create_task(self._push_tensor_later(address, tensor, failed))
            self._pushes.add(task)
            task.add_done_callback(self._pushes.discard)
            return task if wait else None
        future = asyncio.run_coroutine_threadsafe(
            self._push_tensor_later(address, tensor, failed), self.loop
        )
        return future if wait else None

    async def _push_tensor_later(
        self, address: str, tensor: tuple, failed: Callable[[BaseException], None]
    ) -> None:
        try:
            comm = self._plane_comms.get(address) or await self._open_plane(address)
        except Exception as exc:  # noqa: BLE001 - the step fails, naming the task
            failed(exc)
            return
        written = self._write_tensor(address, comm, tensor, failed, True)
        if written is not None:
            await written

    def _write_tensor(
        self,
        address: str,
        comm: Any,
        tensor: tuple,
        failed: Callable[[BaseException], None],
        wait: bool,
    ) -> asyncio.Future | None:
        """Hand ``tensor``'s frames to the comm's stream in one go (no other tensor's bytes
        between); with ``wait``, and the payload not copied on the way (``wire.write_tensor``),
        a future done once it is in the socket or has failed (``failed`` reports that: the
        future itself never raises)."""
        stream = comm.stream
        try:
            if stream is None or stream.closed():
                raise StreamClosedError()
            written, reading = write_tensor(stream, *tensor)
        except Exception as exc:  # noqa: BLE001
            self._drop_plane(address, comm)
            failed(exc)
            return None

        wait = wait and reading
        quiet = self.loop.create_future() if wait and self.loop is not None else None

        def check(future: asyncio.Future) -> None:
            if not future.cancelled() and future.exception() is not None:
                self._drop_plane(address, comm)
                failed(future.exception())  # type: ignore[arg-type]
            if quiet is not None and not quiet.done():
                quiet.set_result(None)

        written.add_done_callback(check)
        return quiet

    async def _open_plane(self, address: str) -> Any:
        """The data-plane connection to ``address``, opened once (concurrent pushes share it)."""
        found = self._planes.get(address)
        if found is None:
            found = self._planes[address] = asyncio.ensure_future(self._connect_plane(address))
        try:
            return await asyncio.shield(found)
        except BaseException:
            if self._planes.get(address) is found:
                del self._planes[address]
            raise

    async def _connect_plane(self, address: str) -> Any:
        """A Unix socket to a peer on this machine (``local_plane``), else a Dask connection
        the peer's ``nbflow_tensor_stream`` handler keeps for raw frames."""
        comm: Any = None
        if self.local_plane:
            try:  # the offer comes over Dask's (TLS) connection: only peers get a token
                offer = await self.worker.rpc(address).nbflow_plane_offer()
            except Exception as exc:  # noqa: BLE001 - an older peer, or it is going away
                logger.debug("nbflow data plane: no offer from %s: %s", address, exc)
                offer = None
            comm = await connect_local(offer)
        if comm is None:
            comm = await connect(address, **self.worker.connection_args)
            # The peer's handler keeps the connection; "close" ends Dask's loop on it after.
            await comm.write({"op": "nbflow_tensor_stream", "reply": False, "close": True})
        self._plane_comms[address] = comm
        return comm

    def _drop_plane(self, address: str, comm: Any) -> None:
        if self._plane_comms.get(address) is comm:
            del self._plane_comms[address]
            self._planes.pop(address, None)
        comm.abort()

    @staticmethod
    def _send_failed(
        dst_task: str, address: str, key: str, on_error: Callable, exc: BaseException
    ) -> None:
        """A push that failed fails its step with an error naming the tensor and the task."""
        on_error(
            errors.UnavailableError(
                None,
                None,
                f"Send of {key.rsplit(';', 1)[-1]} to task {dst_task} at {address} "
                f"failed: {type(exc).__name__}: {exc}",
            )
        )

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
                self._drivers, server.register, handle, spec or {}
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
        plane_feeds: list | None = None,
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
            if plane_feeds:  # raw frames on the client's Unix socket, maybe still arriving
                await self._plane_feeds(task, rendezvous, plane_feeds, values, timeout)
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
                # Cheap Recv-only plans are driven on the loop from now on (``_run_on_loop``).
                registered.on_loop = (
                    registered.loop_drivers is not None
                    and report.run_s - report.recv_wait_s <= LOOP_BUDGET_S
                )
            if rendezvous.sent:  # variable buffers sent without a copy: written out first
                await asyncio.gather(
                    *(f if isinstance(f, asyncio.Future) else asyncio.wrap_future(f)
                      for f in rendezvous.sent if f is not None)
                )  # fmt: skip
        except BaseException as exc:  # noqa: BLE001 - reported to the master
            self.steps.record_error(task, server.incarnation, exc)
            return error_reply(exc, task)
        finally:
            self._finish(task, step_id)
        self.steps.record(task, server.incarnation, report.run_s, report.recv_wait_s)
        return {
            "status": "ok",
            "values": [[i, encode(v)] for i, v in report.values.items()],
            "run_s": report.run_s,
            "recv_wait_s": report.recv_wait_s,
        }

    async def _plane_feeds(
        self,
        task: str,
        rendezvous: TaskRendezvous,
        indices: list,
        values: dict[int, Any],
        timeout: float | None,
    ) -> None:
        """Wait for the feeds the client wrote on its Unix socket (``wire.feed_key``), as a
        Recv waits: an abort of the step (``nbflow_abort``) fails the wait."""
        loop = asyncio.get_running_loop()
        arrivals = []
        for index in indices:
            arrived: asyncio.Future = loop.create_future()

            def settle(value: Any, src: str, error: BaseException | None, future=arrived) -> None:
                if future.done():
                    return
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(value)

            def wake(value: Any, src: str, error: BaseException | None, settle=settle) -> None:
                if threading.get_ident() == self._loop_thread:
                    settle(value, src, error)
                else:  # an abort from a kernel's thread
                    loop.call_soon_threadsafe(settle, value, src, error)

            # The plain rendezvous's recv: a feed's wait is not a Recv's (``recv_wait``).
            LocalRendezvous.recv(rendezvous, feed_key(task, rendezvous.step_id, int(index)), wake)
            arrivals.append(arrived)
        try:
            got = await asyncio.wait_for(asyncio.gather(*arrivals), timeout)
        except asyncio.TimeoutError:
            raise errors.DeadlineExceededError(
                None, None, f"Timed out after {timeout:.3f} s waiting for the step's feeds"
            ) from None
        values.update(zip((int(i) for i in indices), got))

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

    async def tensor_stream(self, comm: Any = None) -> None:
        """The data plane's receiving end on a Dask connection (TCP or TLS) a peer handed over."""
        try:
            stream = getattr(comm, "stream", None)  # TCP and TLS comms; others never come here
            if stream is not None:
                await self._receive_tensors(stream, getattr(comm, "peer_address", "?"))
        finally:
            comm.abort()

    async def plane_offer(self, comm: Any = None) -> dict | None:
        """A peer asks to send its tensors on this worker's Unix socket (``local_plane``)."""
        if not self.local_plane:
            return None
        if self._listener is None:
            self._listener = LocalPlaneListener(
                {TENSORS: self._receive_tensors, MESSAGES: self._serve_messages}
            )
        return self._listener.offer()

    async def _serve_messages(self, stream: Any) -> None:
        """The client's step requests on a Unix socket (``wire.message_frames``), answered in
        turn, as Dask's message loop answers them on its connections."""
        served: dict[str, Callable[..., Any]] = {
            "nbflow_run": self.run,
            "nbflow_abort": self.abort,
            "nbflow_ping": self.ping,
        }
        try:
            while True:
                message = await read_message(stream)
                handler = served.get(message.pop("op", None))
                message.pop("reply", None)
                if handler is None:
                    reply: Any = {"status": "error", "error": "InvalidArgumentError",
                                  "message": "not a step request"}  # fmt: skip
                else:
                    reply = await handler(**message)
                # every request has a reply (None for an abort)
                await write_frames(stream, message_frames(reply))
        except (StreamClosedError, OSError):
            pass  # the client went away
        except (ValueError, TypeError, MemoryError) as exc:  # a malformed message
            logger.warning("nbflow step messages on %s: %s", stream, exc)
        finally:
            stream.close()

    async def _receive_tensors(self, stream: Any, peer: str = "a peer on this machine") -> None:
        """Tensors as raw frames (``wire.read_tensor``) to their steps' rendezvous, until the
        peer closes the connection."""
        try:
            while True:
                task, step_id, key, value = await read_tensor(stream)
                found = self.rendezvous_for(task, step_id)
                if found is not None:
                    found.deliver(key, value, RendezvousKey.parse(key).send_device)
        except (StreamClosedError, OSError):
            pass  # the peer went away (or the worker closes): its steps fail on their own
        except (ValueError, TypeError, MemoryError) as exc:  # a malformed header: not trusted
            logger.warning("nbflow data plane from %s: %s", peer, exc)
        finally:
            stream.close()

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
            # Dask starts workers with MALLOC_TRIM_THRESHOLD_ set, which leaves glibc mapping
            # every array over 128 KiB afresh: a task's steps reuse the heap instead.
            device_lib.retain_freed_host_memory()
            host = TaskHost(worker)
            worker._nbflow_host = host
            worker.handlers.update(host.handlers())
        host._bind_loop()

    def teardown(self, worker: Any) -> None:
        """Tasks outlive a re-registration of the plugin (another client attaching): their
        host stays with the worker process until it exits."""
