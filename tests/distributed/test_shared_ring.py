"""The shared-memory ring beside a Unix socket: records come back whole and in order, a full
ring sends the payload on the socket instead, and a ring is only ever this user's."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from nbflow.distributed import shared_ring
from nbflow.distributed.shared_ring import RingReader, RingWriter

pytestmark = pytest.mark.skipif(
    not shared_ring.available(), reason="rings need x86-64, anonymous files and /proc"
)

SMALL = 1 << 20  # a 1 MB ring for the tests: wraps around in a few records


def _pair(size: int = SMALL) -> tuple[RingWriter, RingReader]:
    writer = RingWriter.create(size)
    assert writer is not None
    reader = RingReader.open(writer.path, size)
    assert reader is not None
    writer.release()
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
    writer.release()  # the peer has it mapped: nobody opens it any more
    assert RingReader.open(writer.path, SMALL) is None


def test_a_process_makes_and_maps_rings_only_up_to_its_budget(monkeypatch):
    """Rings count in both ends' resident memory: past the budget a connection keeps its
    socket, and a ring closed gives its share back."""
    monkeypatch.setattr(
        shared_ring, "BUDGET", shared_ring._mapped + 3 * (shared_ring.CONTROL + SMALL)
    )
    writer, reader = _pair()  # two of the three
    third = RingWriter.create(SMALL)
    assert third is not None
    assert RingWriter.create(SMALL) is None  # a fourth is over the budget
    assert RingReader.open(third.path, SMALL) is None  # mapping one counts alike
    third.close()
    fourth = RingWriter.create(SMALL)
    assert fourth is not None  # the closed one's share is free again
    for ring in (writer, reader, fourth):
        ring.close()
