"""Protocol-buffer bytes of a step's summaries, written and walked without protobuf objects.

A summary written every step goes through three hands: the summary op makes a ``Summary``,
``MergeSummary`` joins several and checks that no tag repeats, and ``FileWriter.add_summary``
wraps the result in an ``Event``. Through protobuf objects each hand parses and re-serializes
the whole message (a histogram's ~3.5 KB: ~40 µs a time), which is most of what a summary costs
a small training step. The wire format makes all three cheap:

- a message is its fields one after another, each a *key* (``field number << 3 | wire type``,
  a varint) and a value: a varint (type 0), 8 bytes (1), a varint length and that many bytes
  (2), or 4 bytes (5);
- so concatenated ``Summary`` messages are their merge (its only field, ``value``, repeats), and
  an ``Event`` holding a serialized ``Summary`` is a few key bytes in front of it;
- and a ``Summary``'s tags are found by reading the keys and skipping the values: field 1 of
  each ``Value`` (field 1 of the ``Summary``).

Everything written here is byte-for-byte what protobuf writes for the same message (fields in
number order, proto3 defaults left out), which the tests check against protobuf itself.
"""

from __future__ import annotations

import struct

from nbflow.framework.table import TableError, get_varint, put_varint

_DOUBLE = struct.Struct("<d")
_NO_BITS = bytes(8)
_INT64 = (1 << 64) - 1


class WireError(ValueError):
    """Bytes that are not a well-formed protocol-buffer message."""


def varint(n: int) -> bytes:
    """``n`` (non-negative, below 2**64) as a protobuf varint, as the table format writes it."""
    out = bytearray()
    put_varint(out, n)
    return bytes(out)


def double_field(key: int, value: float) -> bytes:
    """A double field (``key``: field number << 3 | 1), left out where all the value's bits are
    zero, as proto3 does (a -0.0 stays)."""
    packed = _DOUBLE.pack(value)
    return b"" if packed == _NO_BITS else bytes((key,)) + packed


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    try:
        return get_varint(data, pos)
    except TableError as e:
        raise WireError(str(e)) from None


def _field(data: bytes, pos: int, end: int) -> tuple[int, int, int, int]:
    """(field number, wire type, value start, value end) of the field whose key is at ``pos``;
    a varint's value spans its bytes, a length-delimited value the bytes after its length."""
    key, pos = _read_varint(data, pos)
    kind = key & 7
    if kind == 0:
        _, after = _read_varint(data, pos)
    elif kind == 1:
        after = pos + 8
    elif kind == 2:
        length, pos = _read_varint(data, pos)
        after = pos + length
    elif kind == 5:
        after = pos + 4
    else:
        raise WireError(f"wire type {kind} (a group, or not a message) at byte {pos}")
    if after > end:
        raise WireError(f"field {key >> 3} runs past the end of the message")
    return key >> 3, kind, pos, after


def summary_tags(data: bytes) -> list[str]:
    """The tag of each value of a serialized ``Summary``, in order (raises ``WireError`` where
    ``data`` is not a well-formed message)."""
    tags = []
    pos, end = 0, len(data)
    while pos < end:
        field, kind, start, pos = _field(data, pos, end)
        if field == 1 and kind == 2:  # a Value: its field 1 is the tag
            tag = b""
            while start < pos:
                inner, inner_kind, at, start = _field(data, start, pos)
                if inner == 1 and inner_kind == 2:
                    tag = data[at:start]
            try:
                tags.append(tag.decode())
            except UnicodeDecodeError as e:
                raise WireError(f"a tag is not UTF-8: {tag!r}") from e
    return tags


def event_bytes(wall_time: float, step: int | None, summary: bytes) -> bytes:
    """``Event(wall_time=..., step=..., summary=Summary.FromString(summary))`` serialized:
    fields 1 (a double), 2 (an int64 varint, two's complement when negative) and 5 (the
    ``Summary``, part of a oneof, so written even when empty)."""
    head = double_field(0x09, wall_time)
    if step:
        head += b"\x10" + varint(step & _INT64)
    return head + b"\x2a" + varint(len(summary)) + summary
