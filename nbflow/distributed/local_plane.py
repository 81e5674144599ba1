"""The data plane between tasks on one machine: Unix-domain sockets, opened through Dask.

Tasks on two Dask workers of the same machine (``Cluster.local``, the common case) send each
other their tensors through the kernel anyway. Over Dask's TLS connections on loopback that
costs each 313 KB tensor about 0.4 ms of CPU on each end in Python's ``ssl`` (encryption, and
a system call per 16 KB record), against under 0.1 ms for the same bytes in the clear; for a
small model on a parameter server that is most of a step. A Unix-domain socket carries the
bytes kernel to kernel, without a cipher and without TCP.

How a connection is made (``connect_local``):

    sender                                    receiver (its ``LocalPlaneListener``)
    ------ nbflow_plane_offer (Dask, TLS) ---->
    <------ {path, machine, token} -----------  a fresh one-time 32-byte token
    (same machine?) connect(path)  ---------->  a Unix socket in a 0700 directory
    token, mode [, ring's path] ------------->  known, unexpired, unused? same user?
    <------------------------ ACCEPT[_RING] --
    TENSORS: raw frames (``wire.tensor_frames``), one way, until either end closes
    MESSAGES: a request and its reply at a time (``wire.message_frames``)

A TENSORS connection comes with a ring of shared memory where the machine allows
(``shared_ring``; the mode byte is then RING and the sender's ring's path follows): a large
payload goes through the ring, and only its header through the socket. The listener maps the
ring only if it is open in the process at the other end of the socket (``SO_PEERCRED``) and
is its own user's, and answers ACCEPT_RING once it has, ACCEPT if not (the socket carries all).

A task's worker sends its Sends' tensors on TENSORS connections; the client sends a step's
large feeds on one (``channel.Channels.plane``) and its run and abort requests on MESSAGES
connections (``channel.Channels.call``), so a step to a task on the same machine touches
Dask's comm layer not at all once the connections stand. Both ends of a connection are
``PlaneStream``s: asyncio's own socket transport, read in place, rather than the Tornado
streams Dask's comms use (half the CPU of a null step's messages; see the class).

Why this is as safe as TLS for a peer on the same machine: the offer travels on Dask's own
connection, so only a process holding the cluster's credentials (``Cluster.local``'s
per-cluster TLS certificate) can obtain a token; the socket lies in a directory only its user
can enter; the listener accepts a connection only with a token it issued, once, within
``OFFER_TTL_S``, and (where the OS says, ``SO_PEERCRED``) from a process of its own user; and
no other unprivileged user can read what a Unix socket carries. Anything else — a peer on
another machine, a container that cannot see the path, a refused token — leaves the sender on
the data plane over Dask's own connection (``plugin.TaskHost._connect_plane``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import secrets
import shutil
import socket
import struct
import tempfile
import time
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tornado.iostream import StreamClosedError

from nbflow.distributed.shared_ring import RingReader, RingWriter

logger = logging.getLogger(__name__)

TOKEN_BYTES = 32
ACCEPT, ACCEPT_RING = b"\x01", b"\x02"
TENSORS, MESSAGES = b"T", b"M"  # what a connection carries (the byte after the token)
RING = b"R"  # TENSORS, with a shared-memory ring whose path follows (u16 length, UTF-8)
_PATH_SIZE = struct.Struct("<H")
OFFER_TTL_S = 30.0  # a token not used within this is void
_HANDSHAKE_S = 10.0  # a connection that sends no token within this is closed
_SOCKET_BUFFER = 1 << 20  # a step's tensor in one or two system calls, not a dozen
_READ_BUFFER = 64 * 1024  # a connection's buffer for headers and messages (grows if need be)


def machine_id() -> str:
    """This machine, as the host name and (on Linux) the kernel's boot id: two processes with
    the same id share a kernel, so one can reach the other's Unix socket if it sees its path."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}"


def _peer(sock: socket.socket) -> tuple[int | None, int | None]:
    """The process and the user at the other end of a Unix socket, where the OS tells."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None, None
    credentials = struct.Struct("3i")  # pid, uid, gid
    pid, uid, _ = credentials.unpack(sock.getsockopt(socket.SOL_SOCKET, option, credentials.size))
    return pid, uid


def _tune(sock: socket.socket) -> None:
    for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, option, _SOCKET_BUFFER)


class PlaneStream(asyncio.BufferedProtocol):
    """One end of a plane connection: a Unix socket on asyncio's transport, read as a stream.

    What it replaces, Tornado's ``IOStream`` (which Dask's comms use), re-registers the socket
    with ``epoll`` around each read and copies every read through a buffer of its own: per
    tiny step message that is several system calls and tens of microseconds of Python. Here the
    socket stays registered for reading while the connection lives (asyncio calls
    ``get_buffer``/``buffer_updated``), small reads are served from one reused buffer, a
    ``read_into`` waiting for a tensor's payload lends the array's own memory to the socket
    (one copy, kernel to array), and ``write_frames`` hands a header and its payload to the
    kernel in one ``sendmsg``. Whatever the socket does not take at once waits in the
    transport's queue; the future a write returns is done once the socket has taken every byte
    (until then the buffers must not change, as with Tornado's streams).

    The interface is the part of ``IOStream`` the plane uses (``read_bytes``, ``read_into``,
    ``write``, ``close``, ``closed``, ``socket``), so ``wire``'s readers serve both; a closed
    connection fails reads and writes with ``StreamClosedError``, as Tornado's does.
    """

    def __init__(self, sock: socket.socket):
        self.socket = sock  # the raw socket: peer credentials, and ``sendmsg`` past the queue
        self.ring: RingWriter | RingReader | None = None  # a TENSORS connection's shared ring
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray(_READ_BUFFER)
        self._view = memoryview(self._buffer)
        self._start = self._end = 0  # unread bytes are self._buffer[start:end]
        self._target: memoryview | None = None  # what a pending ``read_into`` still needs
        self._lent = False  # whether the last ``get_buffer`` lent ``_target`` to the socket
        self._want = 0  # bytes a pending ``read_bytes`` needs buffered
        self._waiter: asyncio.Future | None = None  # the pending read's
        self._drains: list[asyncio.Future] = []  # writes waiting for the queue to empty
        self._paused = False  # reading paused: the buffer is full and nobody reads
        self._closed = False

    # --- asyncio's side -----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        # Told of any queued byte (``pause_writing``) and of the queue's emptying.
        self._transport.set_write_buffer_limits(high=0)  # type: ignore[union-attr]

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._target is not None and self._start == self._end:
            self._lent = True
            return self._target
        self._lent = False
        if self._end == len(self._buffer):  # make room: move the unread bytes to the front
            self._make_room(max(self._want, len(self._buffer)))
        return self._view[self._end :]

    def buffer_updated(self, nbytes: int) -> None:
        if self._lent:
            self._target = self._target[nbytes:]  # type: ignore[index]
        else:
            self._end += nbytes
        self._serve_reader()
        if (
            self._end == len(self._buffer)
            and self._start == 0
            and self._waiter is None
            and self._transport is not None
        ):
            self._paused = True  # nobody reads: let the peer's writes wait in the kernel
            self._transport.pause_reading()

    def eof_received(self) -> bool | None:
        return None  # close: every frame is whole or the connection is useless

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        if self.ring is not None:
            self.ring.close()  # its memory goes now, not when the stream is collected
        error = StreamClosedError(real_error=exc)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(error)
        self._waiter = None
        self._finish_drains(error)

    def pause_writing(self) -> None:
        pass  # the queue is looked at when a write returns (``_queued``)

    def resume_writing(self) -> None:
        self._finish_drains(None)

    # --- the stream's side ------------------------------------------------------------------
    def closed(self) -> bool:
        return self._closed or self._transport is None or self._transport.is_closing()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.abort()  # queued bytes are dropped, as a Tornado close drops them
        else:
            self.socket.close()
        self._closed = True
        if self.ring is not None:
            self.ring.close()

    async def read_bytes(self, count: int) -> bytes:
        """The next ``count`` bytes."""
        if self._end - self._start < count:
            self._want = count
            await self._wait()
            self._want = 0
        data = bytes(self._view[self._start : self._start + count])
        self._consumed(count)
        return data

    async def read_into(self, target: memoryview) -> None:
        """Fill ``target`` (bytes) with the next ``len(target)`` bytes."""
        take = min(len(target), self._end - self._start)
        if take:
            target[:take] = self._view[self._start : self._start + take]
            self._consumed(take)
        if take < len(target):
            self._target = target[take:]
            await self._wait()

    def write(self, data: bytes | memoryview) -> asyncio.Future:
        return self.write_frames([data])

    def write_frames(self, frames: list) -> asyncio.Future:
        """Write ``frames`` in order, in one system call when the socket takes them all."""
        if self.closed():
            raise StreamClosedError()
        assert self._transport is not None
        if self._transport.get_write_buffer_size() == 0:  # nothing queued: straight to the kernel
            try:
                sent = self.socket.sendmsg(frames)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError as exc:
                self.close()
                raise StreamClosedError(real_error=exc) from exc
            for frame in frames:
                size = memoryview(frame).nbytes
                if sent >= size:
                    sent -= size
                    continue
                self._transport.write(frame[sent:] if sent else frame)
                sent = 0
        else:
            for frame in frames:
                self._transport.write(frame)
        return self._queued()

    # --- inside -----------------------------------------------------------------------------
    def _queued(self) -> asyncio.Future:
        done = asyncio.get_running_loop().create_future()
        if self._transport is None or self._transport.get_write_buffer_size() == 0:
            done.set_result(None)
        else:
            self._drains.append(done)
        return done

    def _finish_drains(self, error: BaseException | None) -> None:
        drains, self._drains = self._drains, []
        for future in drains:
            if future.done():
                continue
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(error)
                # Seen by whoever awaits it; if nobody does (a message whose reply is read
                # instead), the failed read reports the lost connection, not asyncio's logger.
                future.exception()

    async def _wait(self) -> None:
        if self._closed:
            raise StreamClosedError()
        assert self._waiter is None, "one reader at a time"
        self._waiter = asyncio.get_running_loop().create_future()
        if self._paused and self._transport is not None:
            self._make_room(self._want)
            self._paused = False
            self._transport.resume_reading()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _serve_reader(self) -> None:
        """Wake the pending read if what it waits for is here."""
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._target is not None:
            if self._end > self._start:  # bytes that came before the target was lent
                take = min(len(self._target), self._end - self._start)
                self._target[:take] = self._view[self._start : self._start + take]
                self._target = self._target[take:]
                self._consumed(take)
            if not len(self._target):
                self._target = None
                waiter.set_result(None)
        elif self._end - self._start >= self._want:
            waiter.set_result(None)

    def _consumed(self, count: int) -> None:
        self._start += count
        if self._start == self._end:
            self._start = self._end = 0
            if len(self._buffer) > 16 * _READ_BUFFER:  # grown for one big message: let it go
                self._buffer = bytearray(_READ_BUFFER)
                self._view = memoryview(self._buffer)
        if self._paused and self._transport is not None and self._end < len(self._buffer):
            self._paused = False
            self._transport.resume_reading()

    def _make_room(self, need: int) -> None:
        """Move the unread bytes to the front, into a bigger buffer if ``need`` bytes must fit
        or the buffer is full. (A new buffer, not a resized one: a view of the old may live.)"""
        unread = self._end - self._start
        if need > len(self._buffer) or unread == len(self._buffer):
            bigger = bytearray(max(need, 2 * len(self._buffer)))
            bigger[:unread] = self._view[self._start : self._end]
            self._buffer, self._view = bigger, memoryview(bigger)
        elif self._start:
            self._buffer[:unread] = self._buffer[self._start : self._end]
        self._start, self._end = 0, unread


class LocalPlaneListener:
    """A worker's Unix socket for peers on the same machine (see the module docstring);
    ``serve[mode](stream)`` serves each accepted connection of that mode, a ``PlaneStream``.
    Made on the event loop that will serve it."""

    def __init__(self, serve: dict[bytes, Callable[[PlaneStream], Awaitable[None]]]):
        self._serve = serve
        self._directory = tempfile.mkdtemp(prefix="nbflow-plane-")  # mode 0700
        self.path = os.path.join(self._directory, "tensors.sock")
        self._tokens: dict[bytes, float] = {}  # token -> when it expires (monotonic)
        self._loop = asyncio.get_running_loop()
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.bind(self.path)
        os.chmod(self.path, 0o600)
        self._socket.listen(128)
        self._socket.setblocking(False)
        self._loop.add_reader(self._socket.fileno(), self._accept_ready)
        self._connections: set[asyncio.Task] = set()
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._directory, True)

    def offer(self) -> dict[str, Any]:
        """What a peer needs to connect once: the path, this machine, a fresh token."""
        now = time.monotonic()
        self._tokens = {t: expires for t, expires in self._tokens.items() if expires > now}
        token = secrets.token_bytes(TOKEN_BYTES)
        self._tokens[token] = now + OFFER_TTL_S
        return {"path": self.path, "machine": machine_id(), "token": token}

    def _redeem(self, token: bytes) -> bool:
        """Whether ``token`` is one this listener issued and nobody used yet (it is used now)."""
        found = None
        for known in list(self._tokens):
            if hmac.compare_digest(known, token):
                found = self._tokens.pop(known)
        return found is not None and found > time.monotonic()

    def _accept_ready(self) -> None:
        while True:
            try:
                sock, _ = self._socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of descriptors: the peer falls back on its own
                logger.warning("nbflow data plane at %s: accept failed: %s", self.path, exc)
                return
            task = self._loop.create_task(self._connection(sock))
            self._connections.add(task)
            task.add_done_callback(self._connections.discard)

    async def _connection(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        try:
            _, stream = await self._loop.connect_accepted_socket(lambda: PlaneStream(sock), sock)
        except OSError:  # the peer went away at once
            sock.close()
            return
        await self.accept(stream)

    async def accept(self, stream: PlaneStream) -> None:
        try:
            hello = await asyncio.wait_for(stream.read_bytes(TOKEN_BYTES + 1), _HANDSHAKE_S)
        except (StreamClosedError, OSError, asyncio.TimeoutError):
            stream.close()
            return
        token, mode = hello[:TOKEN_BYTES], hello[TOKEN_BYTES:]
        pid, uid = _peer(stream.socket)
        serve = self._serve.get(TENSORS if mode == RING else mode)
        if not self._redeem(token) or serve is None or (uid is not None and uid != os.getuid()):
            logger.warning(
                "nbflow data plane at %s: refused a connection (%s)",
                self.path,
                "another user" if uid is not None and uid != os.getuid() else "unknown token",
            )
            stream.close()
            return
        if mode == RING:
            try:
                (size,) = _PATH_SIZE.unpack(
                    await asyncio.wait_for(stream.read_bytes(_PATH_SIZE.size), _HANDSHAKE_S)
                )
                path = await asyncio.wait_for(stream.read_bytes(size), _HANDSHAKE_S)
            except (StreamClosedError, OSError, asyncio.TimeoutError):
                stream.close()
                return
            stream.ring = RingReader.open(path.decode(errors="replace"), pid=pid)
        _tune(stream.socket)
        await stream.write(ACCEPT if stream.ring is None else ACCEPT_RING)
        await serve(stream)

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the loop may be closed already
            self._loop.remove_reader(self._socket.fileno())
        self._socket.close()
        self._cleanup()


class LocalPlane:
    """The sending end of a connection to a peer's listener: what the data plane writes
    frames on (``stream``), like the Dask comm it replaces."""

    def __init__(self, stream: PlaneStream, path: str):
        self.stream = stream
        self.path = path

    def closed(self) -> bool:
        return self.stream.closed()

    def abort(self) -> None:
        self.stream.close()

    def __repr__(self) -> str:
        return f"<LocalPlane {self.path}{' closed' if self.closed() else ''}>"


async def connect_local(
    offer: dict[str, Any] | None, mode: bytes = TENSORS, timeout: float = 10.0
) -> LocalPlane | None:
    """A connection of ``mode`` to the listener that made ``offer``, or None where it cannot be
    had (another machine, a path this process cannot see, a refused token)."""
    if not offer or offer.get("machine") != machine_id():
        return None
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    _tune(sock)
    stream: PlaneStream | None = None
    ring = RingWriter.create() if mode == TENSORS else None
    try:
        await asyncio.wait_for(loop.sock_connect(sock, offer["path"]), timeout)
        _, stream = await loop.create_unix_connection(lambda: PlaneStream(sock), sock=sock)
        if ring is None:
            stream.write(offer["token"] + mode)
        else:
            path = ring.path.encode()
            stream.write(offer["token"] + RING + _PATH_SIZE.pack(len(path)) + path)
        accepted = await asyncio.wait_for(stream.read_bytes(len(ACCEPT)), timeout)
    except (StreamClosedError, OSError, asyncio.TimeoutError) as exc:
        logger.debug("nbflow data plane: no local connection to %s: %s", offer.get("path"), exc)
        if stream is not None:
            stream.close()
        else:
            sock.close()
        if ring is not None:
            ring.close()
        return None
    if ring is not None:
        ring.release()  # mapped by the peer, or refused: nobody needs to open it now
        if accepted == ACCEPT_RING:
            stream.ring = ring
        else:
            ring.close()
    if accepted not in (ACCEPT, ACCEPT_RING) or (accepted == ACCEPT_RING and ring is None):
        stream.close()
        return None
    return LocalPlane(stream, offer["path"])
