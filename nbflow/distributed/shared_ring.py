"""A one-way ring of shared memory beside a Unix socket: a tensor's bytes between two tasks on
one machine without the kernel copying them through the socket.

On a Unix socket (``local_plane``) a 313 KB tensor costs its sender 40-220 µs in ``sendmsg``
and its receiver 40-60 µs in ``recv``: the kernel copies the bytes into socket buffers and out
again, in pieces, waking the reader on the way. Here the sender copies the payload into memory
both processes map and writes only the header on the socket, with the payload's place in the
ring; the receiver copies the payload out into a fresh array. One ``memcpy`` on each side
(~20 µs for 313 KB), no system call for the payload. (What that gives a training step, a few
percent, is in the README's issue 21 section.)

The memory is an anonymous file (``memfd_create``) that the sender holds open until the peer
has mapped it: the peer opens it as ``/proc/<sender's pid>/fd/<n>``, which only the sender's
user (and root) may open. It has no name on any file system, so a process killed at any moment
leaves nothing behind: the memory goes with the last mapping. Layout of the mapping::

    [ control page: consumed (u64) | ... ][ data: SIZE bytes ]

Positions are byte counts since the ring was made; they only grow. A record at position ``p``
lies at ``data[p % SIZE:]``. A record that would run past the end of ``data`` starts at the
next multiple of ``SIZE`` instead (the bytes skipped count as used), so each record is one
piece. The sender alone advances ``produced`` (its own memory); the receiver alone writes
``consumed`` (shared), the end of the last record it copied out. Records are read in the order
they are written — the order of their headers on the socket — so everything below ``consumed``
is free: a record fits at ``p`` unless some are unread and ``p + n - consumed > SIZE``.

A record that does not fit goes on the socket instead (``place`` says None): the sender never
waits for its receiver, and a stalled or dead receiver cannot block it.

Why the bytes are whole when read, and not overwritten while read:

- The sender writes the record, then the header naming it on the socket. The system call
  orders the memory writes before the header, and the receiver reads the record only after
  the header came out of its own system call.
- The receiver publishes ``consumed`` only after its copy. On x86-64 a store never passes an
  earlier load, so the sender cannot see the space free before the copy has read it. Other
  architectures make no such promise to a Python store, so there the ring is not made
  (``available``) and the socket carries the bytes.

The memory is reserved in full when the ring is made (``posix_fallocate``): a machine short
of memory refuses the ring then, rather than killing a process with SIGBUS at a later write.
And a process makes or maps at most ``BUDGET`` bytes of rings at once: a ring's pages count in
the resident memory of both ends once touched, which Dask's memory monitor compares with a
worker's memory limit, so a parameter server with many workers keeps the rest of its
connections on sockets rather than growing by 16 MB a worker each way.
"""

from __future__ import annotations

import errno
import mmap
import os
import platform
import re
import stat
import threading
import weakref

import numpy as np

SIZE = 16 << 20  # bytes of data: Figure 1's tensors fifty times over, a large MLP's twice
CONTROL = mmap.PAGESIZE  # the control page before the data: ``consumed`` at its start
ALIGN = 64  # records start on a cache line
_NAME = "nbflow-ring"  # the anonymous file's name, as /proc shows it
BUDGET = 8 * (CONTROL + SIZE)  # bytes of rings one process makes or maps at once: 128 MB
_mapped = 0  # bytes of rings this process has mapped now
_budget_lock = threading.Lock()


def available() -> bool:
    """Whether this machine can have rings: x86-64 (see the module docstring), anonymous
    files, and ``/proc`` to open another process's."""
    return (
        platform.machine().lower() in ("x86_64", "amd64")
        and hasattr(os, "memfd_create")
        and os.path.isdir(f"/proc/{os.getpid()}/fd")
    )


def _unreserve(nbytes: int) -> None:
    global _mapped
    with _budget_lock:
        _mapped -= nbytes


class _Mapping:
    """The shared mapping, seen as NumPy arrays: ``data`` (bytes) and ``consumed`` (one u64).
    It counts against the process's ``BUDGET`` until it is dropped (OSError if over it)."""

    def __init__(self, fd: int, size: int):
        global _mapped
        nbytes = CONTROL + size
        with _budget_lock:
            if _mapped + nbytes > BUDGET:
                raise OSError(errno.ENOMEM, "this process's rings are at their budget")
            _mapped += nbytes
        try:
            self._map = mmap.mmap(fd, nbytes)
        except BaseException:
            _unreserve(nbytes)
            raise
        weakref.finalize(self, _unreserve, nbytes)
        memory = np.frombuffer(self._map, dtype=np.uint8)
        self.consumed = memory[:8].view(np.uint64)
        self.data = memory[CONTROL:]


class RingWriter:
    """The sending end: ``place`` copies a payload into the ring. Made by ``create``."""

    def __init__(self, fd: int, mapping: _Mapping, size: int):
        self.path = f"/proc/{os.getpid()}/fd/{fd}"  # where the peer opens it, while ``fd`` is
        self.size = size
        self._fd: int | None = fd
        self._mapping: _Mapping | None = mapping
        self.produced = 0

    @classmethod
    def create(cls, size: int = SIZE) -> RingWriter | None:
        """A new ring, or None where none can be had (another architecture, no anonymous
        files, not enough memory)."""
        if not available():
            return None
        try:
            fd = os.memfd_create(_NAME, os.MFD_CLOEXEC)
        except OSError:
            return None
        try:
            os.posix_fallocate(fd, 0, CONTROL + size)
            return cls(fd, _Mapping(fd, size), size)
        except OSError:
            os.close(fd)
            return None

    def release(self) -> None:
        """Close the file (the peer has mapped it, or never will): nobody can open it any
        more, and the memory lives on while either end keeps it mapped."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def place(self, chunks: list, nbytes: int) -> int | None:
        """Copy ``chunks`` (buffers of ``nbytes`` bytes in all) into the ring; their position,
        or None if they do not fit now (the caller sends them on the socket)."""
        mapping = self._mapping
        if mapping is None or nbytes > self.size:
            return None
        position = self.produced
        offset = position % self.size
        if offset + nbytes > self.size:  # one piece: start over at the front
            position += self.size - offset
            offset = 0
        consumed = int(mapping.consumed[0])
        if consumed != self.produced and position + nbytes - consumed > self.size:
            return None  # it would reach the unread records (none when all are read)
        for chunk in chunks:
            piece = np.frombuffer(chunk, dtype=np.uint8)
            mapping.data[offset : offset + piece.size] = piece
            offset += piece.size
        self.produced = position + -(-nbytes // ALIGN) * ALIGN
        return position

    def close(self) -> None:
        self._mapping = None  # unmapped once no array views it
        self.release()

    def __del__(self) -> None:
        self.release()


class RingReader:
    """The receiving end: ``take`` copies a record out and frees its space. Made by ``open``."""

    def __init__(self, mapping: _Mapping, size: int):
        self.size = size
        self._mapping: _Mapping | None = mapping

    @classmethod
    def open(cls, path: str, size: int = SIZE, pid: int | None = None) -> RingReader | None:
        """The ring a peer made, open at ``path`` (``/proc/<pid>/fd/<n>``; with ``pid``, only
        that process's), or None if it is not a ring of this user's of the expected size."""
        found = re.fullmatch(r"/proc/(\d+)/fd/(\d+)", path)
        if not available() or found is None or (pid is not None and int(found[1]) != pid):
            return None
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if (
                not stat.S_ISREG(info.st_mode)
                or info.st_uid != os.getuid()
                or info.st_size != CONTROL + size
                # what was opened is a ring, not a file the peer opened since in its place
                or not os.readlink(f"/proc/self/fd/{fd}").startswith(f"/memfd:{_NAME} ")
            ):
                return None
            return cls(_Mapping(fd, size), size)
        except OSError:
            return None
        finally:
            os.close(fd)

    def take(self, position: int, target: memoryview) -> None:
        """Copy the record at ``position`` into ``target`` (its length is the record's) and
        free the ring up to its end."""
        mapping = self._mapping
        nbytes = len(target)
        offset = position % self.size
        if mapping is None or position < 0 or offset + nbytes > self.size:
            raise ValueError(f"a ring record at {position} of {nbytes} bytes lies outside it")
        np.frombuffer(target, dtype=np.uint8)[:] = mapping.data[offset : offset + nbytes]
        mapping.consumed[0] = position + -(-nbytes // ALIGN) * ALIGN

    def close(self) -> None:
        self._mapping = None  # unmapped once no array views it
