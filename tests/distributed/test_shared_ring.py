"""The shared-memory ring beside a Unix socket: records come back whole and in order, a full
ring sends the payload on the socket instead, and a ring is only ever this user's."""

from __future__ import annotations

import asyncio
import os
import socket
import stat

import numpy as np
import pytest

from nbflow.distributed import shared_ring
from nbflow.distributed.local_plane import TENSORS, LocalPlaneListener, connect_local
from nbflow.distributed.shared_ring import RingReader, RingWriter
from nbflow.distributed.wire import read_tensor, write_tensor

pytestmark = pytest.mark.skipif(
    not shared_ring.available() or not hasattr(socket, "AF_UNIX"),
    reason="rings need x86-64, /dev/shm and Unix sockets",
)

SMALL = 1 << 20  # a 1 MB ring for the tests: wraps around in a few records


def _pair(size: int = SMALL) -> tuple[RingWriter, RingReader]:
    writer = RingWriter.create(size)
    assert writer is not None
    reader = RingReader.open(writer.path, size)
    assert reader is not None
    writer.unlink()
    return writer, reader


def _bytes(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 256, n, dtype=np.uint8)


def test_records_of_every_size_come_back_whole_while_the_ring_wraps_many_times():
    rng = np.random.default_rng(0)
    writer, reader = _pair()
    sizes = [int(s) for s in rng.integers(1, 300_000, 200)] + [SMALL, 64, 1]
    total = 0
    for n in sizes:
        payload = _bytes(rng, n)
        halves = [payload[: n // 2].data, payload[n // 2 :].data]  # chunks, as frames come
        position = writer.place(halves, n)
        assert position is not None
        out = np.empty(n, np.uint8)
        reader.take(position, out.data)
        np.testing.assert_array_equal(out, payload)
        total += n
    assert total > 20 * SMALL  # wrapped around the ring many times


def test_a_full_ring_takes_nothing_more_and_never_overwrites_what_is_unread():
    rng = np.random.default_rng(1)
    writer, reader = _pair()
    placed = []
    while True:
        payload = _bytes(rng, 100_000)
        position = writer.place([payload.data], payload.size)
        if position is None:
            break
        placed.append((position, payload))
    assert len(placed) == SMALL // 100_032  # as many as fit, each on its cache line
    for position, payload in placed:  # all intact, though the writer kept trying
        out = np.empty(payload.size, np.uint8)
        reader.take(position, out.data)
        np.testing.assert_array_equal(out, payload)
    assert writer.place([_bytes(rng, 100_000).data], 100_000) is not None  # room again
    assert writer.place([b"x" * (SMALL + 1)], SMALL + 1) is None  # never bigger than the ring


def test_a_record_said_to_lie_outside_the_ring_is_refused():
    writer, reader = _pair()
    with pytest.raises(ValueError, match="outside"):
        reader.take(SMALL - 10, np.empty(100, np.uint8).data)
    with pytest.raises(ValueError, match="outside"):
        reader.take(-64, np.empty(10, np.uint8).data)


def test_a_ring_has_no_name_and_opens_only_as_the_makers_open_file_of_the_agreed_size(tmp_path):
    writer = RingWriter.create(SMALL)
    assert writer is not None
    assert writer.path == f"/proc/{os.getpid()}/fd/{writer._fd}"
    assert stat.S_ISREG(os.stat(writer.path).st_mode)
    assert RingReader.open(writer.path, SMALL * 2) is None  # not the size agreed
    assert RingReader.open(writer.path, SMALL, pid=os.getpid() + 1) is None  # not the peer's
    regular = tmp_path / "ring"
    regular.write_bytes(bytes(shared_ring.CONTROL + SMALL))
    assert RingReader.open(str(regular), SMALL) is None  # only a process's open file
    other = os.memfd_create("other")
    try:
        os.ftruncate(other, shared_ring.CONTROL + SMALL)
        assert RingReader.open(f"/proc/{os.getpid()}/fd/{other}", SMALL) is None  # not a ring
    finally:
        os.close(other)
    assert RingReader.open(writer.path, SMALL, pid=os.getpid()) is not None
    writer.unlink()  # the peer has it mapped: nobody opens it any more
    assert RingReader.open(writer.path, SMALL) is None


def _with_listener(body):
    """Run ``body(listener, streams, received)`` on a fresh loop: ``streams`` holds the
    listener's end of each connection, ``received`` what arrives."""

    async def go():
        received: asyncio.Queue = asyncio.Queue()
        streams = []

        async def receive(stream):
            streams.append(stream)
            try:
                while True:
                    await received.put(await read_tensor(stream))
            except Exception:  # noqa: BLE001 - the connection closed
                stream.close()

        listener = LocalPlaneListener({TENSORS: receive})
        try:
            return await body(listener, streams, received)
        finally:
            listener.close()

    return asyncio.run(asyncio.wait_for(go(), 60))


def test_a_tensor_connection_carries_big_payloads_in_its_ring_and_the_rest_on_the_socket():
    """Forty 1 MB tensors written before the reader takes any: the first sixteen fill the
    16 MB ring, the rest go on the socket, and all come back in order; a small one and None
    go on the socket as ever. Written into the ring, a tensor is copied at once: the write
    no longer reads the array, which may change."""
    rng = np.random.default_rng(2)
    values = [rng.normal(size=(512, 512)).astype(np.float32) for _ in range(40)]
    values += [np.arange(3, dtype=np.int64), None]

    async def body(listener, streams, received):
        plane = await connect_local(listener.offer())
        assert plane is not None and isinstance(plane.stream.ring, RingWriter)
        assert plane.stream.ring._fd is None  # mapped by the peer, then closed
        reading = []
        for i, value in enumerate(values):
            _, still_reading = write_tensor(plane.stream, "/job:ps/task:0", i, f"k{i}", value)
            reading.append(still_reading)
        for value in values[:16]:
            value[:] = 0  # in the ring already: what arrives is what was written
        got = [await asyncio.wait_for(received.get(), 10) for _ in values]
        assert isinstance(streams[0].ring, RingReader)
        plane.abort()
        return reading, got

    sent = [v.copy() if v is not None else None for v in values]
    reading, got = _with_listener(body)
    assert reading[:16] == [False] * 16 and all(reading[16:40])
    for i, (value, (task, step_id, key, back)) in enumerate(zip(sent, got)):
        assert (task, step_id, key) == ("/job:ps/task:0", i, f"k{i}")
        if value is None:
            assert back is None
        else:
            np.testing.assert_array_equal(back, value)


def test_a_listener_that_cannot_map_the_ring_takes_everything_on_the_socket(monkeypatch):
    monkeypatch.setattr(RingReader, "open", classmethod(lambda cls, *args, **kwargs: None))
    made = []
    create = RingWriter.create.__func__
    monkeypatch.setattr(RingWriter, "create", classmethod(lambda cls: made.append(create(cls))
                                                          or made[-1]))  # fmt: skip
    value = np.random.default_rng(3).normal(size=(100, 784)).astype(np.float32)

    async def body(listener, streams, received):
        plane = await connect_local(listener.offer())
        assert plane is not None and plane.stream.ring is None
        _, still_reading = write_tensor(plane.stream, "/job:ps/task:0", 1, "k", value)
        got = await asyncio.wait_for(received.get(), 10)
        plane.abort()
        return still_reading, got

    still_reading, (_, _, _, back) = _with_listener(body)
    assert still_reading  # on the socket, from the array's own buffer
    np.testing.assert_array_equal(back, value)
    assert made and made[0]._fd is None and made[0]._mapping is None  # the ring is gone
