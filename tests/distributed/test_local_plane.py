"""The data plane's Unix sockets between workers of one machine: a connection needs a token the
listener issued over Dask's authenticated connection, once; everything else is refused."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import socket
import stat

import numpy as np
import pytest
from tornado.iostream import IOStream, StreamClosedError

from nbflow.distributed import local_plane, shared_ring
from nbflow.distributed.local_plane import (
    MESSAGES,
    TENSORS,
    LocalPlaneListener,
    PlaneStream,
    connect_local,
)
from nbflow.distributed.shared_ring import RingReader, RingWriter
from nbflow.distributed.wire import (
    message_frames,
    read_message,
    read_tensor,
    tensor_frames,
    write_frames,
    write_tensor,
)

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets")
needs_rings = pytest.mark.skipif(not shared_ring.available(), reason="no shared rings here")


def _with_listener(body):
    """Run ``body(listener, received)`` on a fresh loop; ``received`` collects what arrives
    (and, as ``received.streams``, the listener's end of each connection)."""

    async def go():
        received: asyncio.Queue = asyncio.Queue()

        received.streams = []  # the listener's end of each connection

        async def receive(stream):
            received.streams.append(stream)
            try:
                while True:
                    await received.put(await read_tensor(stream))
            except Exception:  # noqa: BLE001 - the connection closed
                stream.close()

        listener = LocalPlaneListener({TENSORS: receive})
        try:
            return await body(listener, received)
        finally:
            listener.close()

    return asyncio.run(asyncio.wait_for(go(), 30))


def test_a_tensor_crosses_on_a_connection_made_with_the_offered_token():
    value = np.random.default_rng(0).normal(size=(100, 784)).astype(np.float32)

    async def body(listener, received):
        plane = await connect_local(listener.offer())
        assert plane is not None
        for frame in tensor_frames("/job:ps/task:0", 3, "k", value):
            plane.stream.write(frame)
        task, step_id, key, got = await asyncio.wait_for(received.get(), 10)
        plane.abort()
        return task, step_id, key, got

    task, step_id, key, got = _with_listener(body)
    assert (task, step_id, key) == ("/job:ps/task:0", 3, "k")
    np.testing.assert_array_equal(got, value)


def test_the_socket_lies_in_a_directory_only_its_user_can_enter():
    async def body(listener, received):
        return listener.path

    path = _with_listener(body)
    assert not os.path.exists(path)  # removed with the listener
    modes = []

    async def look(listener, received):
        modes.append(stat.S_IMODE(os.stat(os.path.dirname(listener.path)).st_mode))
        modes.append(stat.S_ISSOCK(os.stat(listener.path).st_mode))

    _with_listener(look)
    assert modes == [0o700, True]


def test_a_wrong_a_reused_or_an_expired_token_is_refused(monkeypatch):
    async def body(listener, received):
        offer = listener.offer()
        wrong = {**offer, "token": bytes(32)}
        refused_wrong = await connect_local(wrong, timeout=5)
        first = await connect_local(offer, timeout=5)
        reused = await connect_local(offer, timeout=5)
        monkeypatch.setattr(local_plane, "OFFER_TTL_S", 0.0)
        expired = await connect_local(listener.offer(), timeout=5)
        return refused_wrong, first, reused, expired

    refused_wrong, first, reused, expired = _with_listener(body)
    assert refused_wrong is None and reused is None and expired is None
    assert first is not None


def test_a_raw_connection_without_a_token_gets_nothing_and_no_tensor_is_taken():
    value = np.arange(6, dtype=np.float32)

    async def body(listener, received):
        reader, writer = await asyncio.open_unix_connection(listener.path)
        frames = tensor_frames("/job:ps/task:0", 1, "k", value)  # no token: a header instead
        writer.write(b"".join(bytes(f) for f in frames) + bytes(32))
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(1), 10)  # b"": closed, not accepted
        writer.close()
        return answer, received.qsize()

    answer, taken = _with_listener(body)
    assert answer == b"" and taken == 0


def test_a_connection_asking_for_a_mode_the_listener_does_not_serve_is_refused():
    async def body(listener, received):
        return await connect_local(listener.offer(), MESSAGES, timeout=5)

    assert _with_listener(body) is None


async def _stream_pair(kind: str) -> tuple:
    """Two streams of ``kind`` (a ``PlaneStream``, or Tornado's as on Dask's comms) on the ends
    of a real Unix socket pair."""
    a, b = socket.socketpair()
    if kind == "tornado":
        return IOStream(a), IOStream(b)
    loop = asyncio.get_running_loop()
    ends = []
    for sock in (a, b):
        sock.setblocking(False)
        _, stream = await loop.connect_accepted_socket(lambda s=sock: PlaneStream(s), sock)
        ends.append(stream)
    return tuple(ends)


@pytest.mark.parametrize("kind", ["plane", "tornado"])
def test_messages_keep_arrays_scalars_strings_and_plain_values(kind):
    """A step request or reply as ``message_frames`` writes it: numeric arrays (large ones as
    their own buffers), NumPy scalars, rank-0 arrays, a string tensor and plain values."""
    rng = np.random.default_rng(4)
    big = rng.normal(size=(100, 784)).astype(np.float32)
    message = {
        "op": "nbflow_run",
        "step_id": 12,
        "values": [[0, big], [1, np.float64(2.5)], [2, np.array(3, np.int32)]],
        "names": np.array([b"a", b"bc"], dtype=object),
        "inline": ["<f4", [2], b"\0\0\0\0\0\0\0\0"],
        "timeout": None,
    }

    async def go():
        sender, receiver = await _stream_pair(kind)
        write_frames(sender, message_frames(message))
        write_frames(sender, message_frames(None))
        got = await read_message(receiver), await read_message(receiver)
        sender.close()
        receiver.close()
        return got

    got, nothing = asyncio.run(asyncio.wait_for(go(), 30))
    assert nothing is None
    assert got["op"] == "nbflow_run" and got["step_id"] == 12 and got["timeout"] is None
    np.testing.assert_array_equal(got["values"][0][1], big)
    assert got["values"][0][1].flags.writeable
    assert type(got["values"][1][1]) is np.float64 and got["values"][1][1] == 2.5
    rank0 = got["values"][2][1]
    assert type(rank0) is np.ndarray and rank0.shape == () and rank0.dtype == np.int32
    assert list(got["names"]) == [b"a", b"bc"]
    assert got["inline"] == ["<f4", [2], b"\0" * 8]


def test_a_plane_stream_keeps_order_and_content_through_a_backlog():
    """Everything written before the reader starts: many small messages (read from the
    stream's own buffer, which fills and stops reading), a message whose header outgrows that
    buffer (a 300 KB string tensor), and tensors larger than the socket's buffers (read
    straight into their arrays) all come back in order and intact."""
    rng = np.random.default_rng(7)
    small = [{"op": "nbflow_run", "step_id": i, "feeds": [[0, np.float32(i)]]} for i in range(300)]
    strings = np.array([bytes(rng.integers(65, 90, 1000, dtype=np.uint8))] * 300, dtype=object)
    big = rng.normal(size=(1500, 1000)).astype(np.float32)  # 6 MB: more than both buffers
    wide = rng.integers(0, 1 << 40, size=(3, 100_000))

    async def go():
        sender, receiver = await _stream_pair("plane")
        for message in small:
            write_frames(sender, message_frames(message))
        write_frames(sender, message_frames({"values": strings}))
        last = write_frames(sender, tensor_frames("/job:ps/task:0", 1, "big", big))
        write_frames(sender, tensor_frames("/job:ps/task:0", 2, "wide", wide))
        got = [await read_message(receiver) for _ in small]
        got.append(await read_message(receiver))
        got += [await read_tensor(receiver), await read_tensor(receiver)]
        await asyncio.wait_for(last, 10)  # every byte of it taken by the socket
        sender.close()
        receiver.close()
        return got

    got = asyncio.run(asyncio.wait_for(go(), 30))
    for i, message in enumerate(got[: len(small)]):
        assert message["step_id"] == i and message["feeds"][0][1] == np.float32(i)
    assert list(got[len(small)]["values"]) == list(strings)
    (task, step, key, back_big), (_, _, _, back_wide) = got[-2:]
    assert (task, step, key) == ("/job:ps/task:0", 1, "big")
    np.testing.assert_array_equal(back_big, big)
    np.testing.assert_array_equal(back_wide, wide)


def test_a_big_write_is_done_only_when_the_socket_has_taken_every_byte():
    """The future a write returns is what a task waits on before a variable's buffer, sent
    without a copy, may change: it stays pending while the bytes wait for the reader."""
    value = np.ones((2000, 1000), np.float32)  # 8 MB: more than the socket's buffers hold

    async def go():
        sender, receiver = await _stream_pair("plane")
        written = write_frames(sender, tensor_frames("/job:ps/task:0", 1, "w", value))
        pending = not written.done()
        _, _, _, back = await read_tensor(receiver)
        await asyncio.wait_for(written, 10)
        sender.close()
        receiver.close()
        return pending, back

    pending, back = asyncio.run(asyncio.wait_for(go(), 30))
    assert pending
    np.testing.assert_array_equal(back, value)


def test_a_plane_stream_whose_peer_closes_fails_reads_and_writes():
    async def go():
        sender, receiver = await _stream_pair("plane")
        reading = asyncio.ensure_future(read_message(receiver))
        write_frames(sender, [b"\x05"])  # part of a header, then the peer is gone
        sender.close()
        with pytest.raises(StreamClosedError):
            await asyncio.wait_for(reading, 10)
        assert receiver.closed()
        with pytest.raises(StreamClosedError):
            write_frames(receiver, message_frames({"op": "nbflow_ping"}))

    asyncio.run(asyncio.wait_for(go(), 30))


def test_a_write_cut_off_by_the_peer_fails_its_future_without_a_stray_log(caplog):
    """A message written with its reply read instead (``Channels.call``) leaves the write's
    future to nobody: when the peer goes away mid-write, the read reports it, and asyncio's
    logger stays quiet; a caller that awaits the write still gets the error."""
    value = np.ones((2000, 1000), np.float32)  # more than the socket's buffers hold

    async def go():
        sender, receiver = await _stream_pair("plane")
        ignored = write_frames(sender, tensor_frames("/job:ps/task:0", 1, "w", value))
        awaited = write_frames(sender, message_frames({"op": "nbflow_ping"}))
        assert not ignored.done()
        receiver.close()
        with pytest.raises(StreamClosedError):
            await asyncio.wait_for(awaited, 10)
        done = ignored.done()  # (asking for its exception would count as seeing it)
        sender.close()
        return done

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        assert asyncio.run(asyncio.wait_for(go(), 30))
        gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


def test_an_offer_from_another_machine_is_not_tried():
    async def body(listener, received):
        offer = {**listener.offer(), "machine": "elsewhere/0"}
        return await connect_local(offer, timeout=5), await connect_local(None)

    assert _with_listener(body) == (None, None)


async def _offer(dask_worker):
    return await dask_worker._nbflow_host.plane_offer()


def test_a_worker_offers_its_socket_only_over_the_clusters_tls(cluster):
    """The test's client holds the cluster's credentials, so it may ask; the offer names this
    machine and a socket in a private directory of the worker's user."""
    offers = cluster.client.run(_offer)
    for offer in offers.values():
        assert offer["machine"] == local_plane.machine_id()
        assert len(offer["token"]) == local_plane.TOKEN_BYTES
        directory = os.stat(os.path.dirname(offer["path"]))
        assert stat.S_IMODE(directory.st_mode) == 0o700 and directory.st_uid == os.getuid()
    assert len({o["path"] for o in offers.values()}) == len(offers)  # one per worker
    assert str(cluster.client.scheduler.address).startswith("tls://")


def test_a_workers_socket_refuses_a_peer_without_its_token_and_keeps_serving(cluster):
    """A local process that finds a worker's socket (same user, so it can enter the directory)
    but holds no token gets the connection closed unanswered; the worker trains on."""
    import nbflow as tf

    offers = cluster.client.run(_offer)

    async def knock(path: str) -> bytes:
        reader, writer = await asyncio.open_unix_connection(path)
        writer.write(bytes(32) + local_plane.MESSAGES)  # a guessed token
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(1), 15)
        writer.close()
        return answer

    for offer in offers.values():
        assert asyncio.run(knock(offer["path"])) == b""  # closed, not ACCEPT
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32, [100, 784])
        total = tf.reduce_sum(x, 0)
    batch = np.random.default_rng(5).normal(size=(100, 784)).astype(np.float32)
    with tf.Session(cluster.target) as sess:
        np.testing.assert_allclose(sess.run(total, {x: batch}), batch.sum(0), rtol=1e-4, atol=1e-4)


@needs_rings
def test_a_tensor_connection_carries_big_payloads_in_its_ring_and_the_rest_on_the_socket():
    """Forty 1 MB tensors written before the reader takes any: the first sixteen fill the
    16 MB ring, the rest go on the socket, and all come back in order; a small one and None
    go on the socket as ever. Written into the ring, a tensor is copied at once: the write
    no longer reads the array, which may change."""
    rng = np.random.default_rng(2)
    values = [rng.normal(size=(512, 512)).astype(np.float32) for _ in range(40)]
    values += [np.arange(3, dtype=np.int64), None]

    async def body(listener, received):
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
        assert isinstance(received.streams[0].ring, RingReader)
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


@needs_rings
def test_a_listener_that_cannot_map_the_ring_takes_everything_on_the_socket(monkeypatch):
    monkeypatch.setattr(RingReader, "open", classmethod(lambda cls, *args, **kwargs: None))
    made = []
    create = RingWriter.create.__func__
    monkeypatch.setattr(RingWriter, "create", classmethod(lambda cls: made.append(create(cls))
                                                          or made[-1]))  # fmt: skip
    value = np.random.default_rng(3).normal(size=(100, 784)).astype(np.float32)

    async def body(listener, received):
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
