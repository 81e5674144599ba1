"""TensorFlow's immutable sorted table (``tensorflow/core/lib/io/table``, LevelDB's SSTable).

A checkpoint's ``prefix.index`` file is such a table: string keys in sorted order, each with a
byte-string value. The file is a sequence of blocks followed by a fixed-size footer:

    [data block 0][trailer] [data block 1][trailer] ... [metaindex block][trailer]
    [index block][trailer] [footer: 48 bytes]

**Block.** Entries one after another, then the restart array. Keys are prefix-compressed: an
entry stores how many leading bytes it shares with the previous key, then only the rest:

    varint32 shared | varint32 non_shared | varint32 value_length | key[shared:] | value

Every ``restart_interval`` entries (16) the sharing restarts (``shared = 0``) and the entry's
offset is recorded; the block ends with those offsets and their count, each a little-endian
uint32. A reader can binary-search the restart points; this module reads blocks in full.

**Trailer.** After every block: one byte of compression type (0 = none; TensorFlow's bundles
never compress) and the masked CRC32C of the block's bytes plus that type byte. Masking
(``rotate right 15, add 0xa282ead8``) keeps a CRC of data that itself holds CRCs from being
trivially related to it.

**Index block.** One entry per data block: a key at least as large as every key of that block
and smaller than the next block's first key (this module uses the block's last key), whose value
is the block's handle: ``varint64 offset | varint64 size`` (size excludes the trailer).

**Footer.** The metaindex block's handle, the index block's handle, zero padding to 40 bytes, and
the magic number 0xdb4775248b80fb57 as little-endian uint64. The metaindex block is empty here.

    data = build_table([(b"a", b"1"), (b"b", b"2")])
    assert read_table(data) == [(b"a", b"1"), (b"b", b"2")]

Every malformed input (bad magic, CRC mismatch, a handle or varint past the end) raises
``TableError`` naming what is wrong; callers add the file name and turn it into
``errors.DataLossError``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

import google_crc32c

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
BLOCK_TRAILER_SIZE = 5
_MASK_DELTA = 0xA282EAD8
_NO_COMPRESSION = 0


class TableError(ValueError):
    """The bytes are not a well-formed table (the message says where)."""


# --- checksums ----------------------------------------------------------------------------------
_CRC_CHUNK = 1 << 20  # google_crc32c takes bytes only: a big buffer goes a cached MiB at a time


def crc32c(data: bytes | memoryview, crc: int = 0) -> int:
    """CRC32C (Castagnoli) of ``data`` (bytes, or any buffer such as an array's memoryview),
    continuing from ``crc``."""
    if isinstance(data, bytes):
        return google_crc32c.extend(crc, data) if crc else google_crc32c.value(data)
    view = memoryview(data).cast("B")
    for start in range(0, len(view), _CRC_CHUNK):
        crc = google_crc32c.extend(crc, bytes(view[start : start + _CRC_CHUNK]))
    return crc


def mask_crc(crc: int) -> int:
    """TensorFlow's masked CRC: rotate right by 15 bits and add a constant."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmask_crc(masked: int) -> int:
    rotated = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rotated >> 17) | (rotated << 15)) & 0xFFFFFFFF


# --- varints ------------------------------------------------------------------------------------
def put_varint(out: bytearray, value: int) -> None:
    """Append ``value`` as a base-128 varint (7 bits per byte, low bits first)."""
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def get_varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """(value, position after it) of the varint at ``pos``."""
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise TableError(f"truncated or overlong varint at offset {pos}")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


# --- writing ------------------------------------------------------------------------------------
def _block(entries: list[tuple[bytes, bytes]], restart_interval: int) -> bytes:
    out = bytearray()
    restarts = []
    previous = b""
    for k, (key, value) in enumerate(entries):
        shared = 0
        if k % restart_interval == 0:
            restarts.append(len(out))
        else:
            limit = min(len(previous), len(key))
            while shared < limit and previous[shared] == key[shared]:
                shared += 1
        put_varint(out, shared)
        put_varint(out, len(key) - shared)
        put_varint(out, len(value))
        out += key[shared:]
        out += value
        previous = key
    if not restarts:
        restarts.append(0)
    out += struct.pack(f"<{len(restarts)}I", *restarts)
    out += struct.pack("<I", len(restarts))
    return bytes(out)


def _handle(offset: int, size: int) -> bytes:
    out = bytearray()
    put_varint(out, offset)
    put_varint(out, size)
    return bytes(out)


def build_table(
    entries: Iterable[tuple[bytes, bytes]], block_size: int = 256 * 1024, restart_interval: int = 16
) -> bytes:
    """The bytes of a table holding ``entries`` (keys strictly increasing, compared as bytes)."""
    out = bytearray()
    index: list[tuple[bytes, bytes]] = []

    def flush(block_entries: list[tuple[bytes, bytes]], interval: int) -> bytes:
        contents = _block(block_entries, interval)
        handle = _handle(len(out), len(contents))
        trailer = bytes([_NO_COMPRESSION])
        out.extend(contents + trailer)
        out.extend(struct.pack("<I", mask_crc(crc32c(contents + trailer))))
        return handle

    pending: list[tuple[bytes, bytes]] = []
    pending_size = 0
    previous: bytes | None = None
    for key, value in entries:
        if previous is not None and key <= previous:
            raise TableError(f"keys must be strictly increasing: {previous!r} then {key!r}")
        previous = key
        pending.append((key, value))
        pending_size += len(key) + len(value) + 8
        if pending_size >= block_size:
            index.append((key, flush(pending, restart_interval)))
            pending, pending_size = [], 0
    if pending:
        index.append((pending[-1][0], flush(pending, restart_interval)))
    metaindex = flush([], restart_interval)
    index_handle = flush(index, 1)
    footer = (metaindex + index_handle).ljust(FOOTER_SIZE - 8, b"\0")
    out += footer + struct.pack("<Q", MAGIC)
    return bytes(out)


# --- reading ------------------------------------------------------------------------------------
def _read_handle(data: bytes | memoryview, pos: int) -> tuple[int, int, int]:
    offset, pos = get_varint(data, pos)
    size, pos = get_varint(data, pos)
    return offset, size, pos


def _read_block(data: bytes | memoryview, offset: int, size: int, what: str) -> memoryview:
    end = offset + size + BLOCK_TRAILER_SIZE
    if end > len(data) - FOOTER_SIZE or size < 4:
        raise TableError(f"{what} block at offset {offset} (size {size}) runs past the file end")
    view = memoryview(data)
    contents = view[offset : offset + size]
    kind = view[offset + size]
    (stored,) = struct.unpack_from("<I", view, offset + size + 1)
    actual = crc32c(view[offset : offset + size + 1])
    if unmask_crc(stored) != actual:
        raise TableError(
            f"{what} block at offset {offset}: checksum mismatch (stored {unmask_crc(stored):#010x}"
            f", computed {actual:#010x})"
        )
    if kind != _NO_COMPRESSION:
        raise TableError(f"{what} block at offset {offset} is compressed (type {kind})")
    return contents


def _block_entries(block: memoryview, what: str) -> list[tuple[bytes, bytes]]:
    (num_restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    limit = len(block) - 4 - 4 * num_restarts
    if limit < 0:
        raise TableError(f"{what} block has a bad restart count {num_restarts}")
    out = []
    key = b""
    pos = 0
    while pos < limit:
        shared, pos = get_varint(block, pos)
        non_shared, pos = get_varint(block, pos)
        value_length, pos = get_varint(block, pos)
        if shared > len(key) or pos + non_shared + value_length > limit:
            raise TableError(f"{what} block: corrupt entry at offset {pos}")
        key = key[:shared] + bytes(block[pos : pos + non_shared])
        pos += non_shared
        out.append((key, bytes(block[pos : pos + value_length])))
        pos += value_length
    return out


def read_table(data: bytes | memoryview) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of a table, in key order; checks magic, block CRCs and structure."""
    if len(data) < FOOTER_SIZE:
        raise TableError(f"file is too short to be a table ({len(data)} bytes)")
    (magic,) = struct.unpack_from("<Q", data, len(data) - 8)
    if magic != MAGIC:
        raise TableError(f"not a table: bad magic number {magic:#018x}")
    footer = len(data) - FOOTER_SIZE
    _, _, pos = _read_handle(data, footer)  # the metaindex block (empty in bundles)
    index_offset, index_size, _ = _read_handle(data, pos)
    index = _block_entries(_read_block(data, index_offset, index_size, "index"), "index")
    entries: list[tuple[bytes, bytes]] = []
    for _, handle in index:
        offset, size, _ = _read_handle(handle, 0)
        entries += _block_entries(_read_block(data, offset, size, "data"), "data")
    return entries
