"""TFRecord framing: the container of TensorBoard's event files.

Each record is

    uint64 length (little-endian) | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)

where ``masked_crc32c(x) = ((crc >> 15) | (crc << 17)) + 0xa282ead8`` over CRC-32C (Castagnoli),
computed by the ``google-crc32c`` package. ``read_records`` stops cleanly at a record that is
still being written, returning the offset to resume from, so a reader can tail a live file.

Two readers: ``read_records`` raises ``DataLossError`` at the first bad checksum (what
``tf.compat.v1.train.summary_iterator`` does); ``scan_records`` is the forgiving one that viewers
use. It yields a ``Skipped`` for each damaged stretch and carries on: past a record whose data
checksum fails (its length is trusted), or, when the length itself is damaged, from the next
offset where a header's checksum and its record's checksum both hold again. A log with one
flipped bit so loses one record, not the rest of the file.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import google_crc32c

_MASK_DELTA = 0xA282EAD8
_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")


def masked_crc32c(data: bytes) -> int:
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def encode_record(data: bytes) -> bytes:
    """One framed record."""
    length = struct.pack("<Q", len(data))
    return length + _FOOTER.pack(masked_crc32c(length)) + data + _FOOTER.pack(masked_crc32c(data))


class RecordWriter:
    """Appends framed records to a binary file."""

    def __init__(self, file: BinaryIO):
        self._file = file

    def write(self, data: bytes) -> None:
        self._file.write(encode_record(data))

    def write_encoded(self, records: list[bytes]) -> None:
        """Append records already framed by ``encode_record``, with one write."""
        if records:
            self._file.write(b"".join(records))

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class DataLossError(ValueError):
    """A record whose checksum does not match: the file is corrupt at ``offset``."""

    def __init__(self, path: str, offset: int, what: str):
        super().__init__(f"{path}: corrupt record at offset {offset} ({what})")
        self.offset = offset


def read_records(file: BinaryIO, offset: int = 0, path: str = "") -> Iterator[tuple[bytes, int]]:
    """Yield (record, offset after it) from ``offset`` on; stop at an incomplete tail."""
    file.seek(offset)
    while True:
        header = file.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        length, length_crc = _HEADER.unpack(header)
        if masked_crc32c(header[:8]) != length_crc:
            raise DataLossError(path, offset, "length checksum")
        body = file.read(length + _FOOTER.size)
        if len(body) < length + _FOOTER.size:
            return  # the writer has not finished this record yet
        data = body[:length]
        if masked_crc32c(data) != _FOOTER.unpack(body[length:])[0]:
            raise DataLossError(path, offset, "data checksum")
        offset += _HEADER.size + len(body)
        yield data, offset


@dataclass(frozen=True)
class Skipped:
    """A damaged stretch ``[offset, resume)`` that ``scan_records`` stepped over."""

    offset: int
    resume: int
    what: str


def scan_records(file: BinaryIO, offset: int = 0) -> Iterator[tuple[bytes, int] | Skipped]:
    """Yield (record, offset after it) or ``Skipped``; stop at an incomplete tail.

    The caller resumes from the last offset yielded (a record's end or a ``Skipped.resume``).
    """
    file.seek(offset)
    while True:
        header = file.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        length, length_crc = _HEADER.unpack(header)
        if masked_crc32c(header[:8]) != length_crc:
            resume = _resync(file, offset + 1)
            if resume is None:  # nothing whole follows (yet): stay here, look again next time
                yield Skipped(offset, offset, "length checksum; no whole record after it")
                return
            yield Skipped(offset, resume, "length checksum")
            offset = resume
            file.seek(offset)
            continue
        body = file.read(length + _FOOTER.size)
        if len(body) < length + _FOOTER.size:
            return
        end = offset + _HEADER.size + len(body)
        data = body[:length]
        if masked_crc32c(data) != _FOOTER.unpack(body[length:])[0]:
            yield Skipped(offset, end, "data checksum")
        else:
            yield data, end
        offset = end


def _resync(file: BinaryIO, start: int) -> int | None:
    """The first offset >= ``start`` where a whole, checksummed record begins, or None.

    Lengths are little-endian uint64s well under 4 GiB, so a header has four zero bytes at 4..8:
    ``find`` jumps between such candidates instead of checksumming every byte.
    """
    file.seek(start)
    rest = file.read()
    i = rest.find(b"\0\0\0\0", 4)
    while i != -1:
        candidate = i - 4
        header = rest[candidate : candidate + _HEADER.size]
        if len(header) == _HEADER.size:
            length, length_crc = _HEADER.unpack(header)
            body_start = candidate + _HEADER.size
            body_end = body_start + length + _FOOTER.size
            if masked_crc32c(header[:8]) == length_crc and body_end <= len(rest):
                data = rest[body_start : body_start + length]
                if (
                    masked_crc32c(data)
                    == _FOOTER.unpack(rest[body_end - _FOOTER.size : body_end])[0]
                ):
                    return start + candidate
        i = rest.find(b"\0\0\0\0", i + 1)
    return None
