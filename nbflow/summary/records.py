"""TFRecord framing: the container of TensorBoard's event files.

Each record is

    uint64 length (little-endian) | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)

where ``masked_crc32c(x) = ((crc >> 15) | (crc << 17)) + 0xa282ead8`` over CRC-32C (Castagnoli),
computed by the ``google-crc32c`` package. ``read_records`` stops cleanly at a record that is
still being written, returning the offset to resume from, so a reader can tail a live file.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
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
