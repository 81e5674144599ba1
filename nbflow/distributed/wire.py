"""How tensors travel between tasks: as raw frames on nbflow's own connections, or in messages.

A Send's numeric array goes on the data plane (below): raw frames on a connection Dask opened
and secured, or on a Unix socket to a task on the same machine (``local_plane``). Everything
else — and every value in a step's request or reply — travels in a message.

A message is a Dask message, or, between the client and a task on the same machine, a
message on a Unix socket (``message_frames``, below). A Dask message is a dict that
``distributed.comm`` frames with msgpack. A small NumPy array in it — a scalar, 32 ids, a row
of gradients — goes as a msgpack-native triple ``[dtype, shape, bytes]``: no pickle, no extra
frames, so a null step's messages stay a few hundred bytes. Anything bigger (or not an array)
goes wrapped in ``to_serialize``, which Dask sends as frames of its own, without copies for
NumPy buffers.

>>> import numpy as np
>>> decode(encode(np.arange(3, dtype=np.int32)))
array([0, 1, 2], dtype=int32)
"""

from __future__ import annotations

import pickle
import struct
from typing import Any

import msgpack
import numpy as np
from distributed.protocol.serialize import Serialize, to_serialize

from nbflow.distributed.local_plane import PlaneStream
from nbflow.distributed.shared_ring import RingReader, RingWriter

SMALL_BYTES = 64 * 1024  # up to this size an array travels inline in the msgpack message


def encode(value: Any) -> Any:
    """A value as part of a message (see the module docstring)."""
    if (
        type(value) is np.ndarray
        and value.nbytes <= SMALL_BYTES
        and value.dtype.kind in "biufc"
        and value.dtype.byteorder in "=|<"
    ):
        return [value.dtype.str, list(value.shape), value.tobytes()]
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return [value.dtype.str, None, value.tobytes()]  # a NumPy scalar stays a scalar
    return to_serialize(value)


def decode(value: Any, writable: bool = False) -> Any:
    """The value ``encode`` packed (Dask has already unpacked a ``to_serialize``d one). An
    inline array aliases the message, read-only, unless ``writable`` (a fetched value the
    caller keeps); kernels never write to their inputs."""
    if type(value) is list or type(value) is tuple:  # Dask's msgpack reads lists as tuples
        dtype, shape, data = value
        if shape is None:
            return np.frombuffer(data, dtype=dtype)[0]
        array = np.frombuffer(data, dtype=dtype).reshape(shape)
        return array.copy() if writable else array
    return value


# --- the data plane: tensors as raw frames ------------------------------------------------------
#
# On a connection a worker opens to a peer for tensors (``plugin.TaskHost``), after one Dask
# message that hands the connection to nbflow, each tensor is written as
#
#     PREFIX (header bytes, payload bytes) | msgpack [task, step id, key, dtype, shape] | payload
#
# straight onto the connection's stream (TCP or TLS, as Dask opened it): the array's own buffer,
# no pickle, no msgpack walk of the value, and read back into a fresh array of its dtype and
# shape with one copy out of the socket. Only plain numeric arrays (and None) travel so
# (``is_raw``): a receiver never builds anything but such an array from what arrives.
#
# On a Unix socket with a shared ring (``shared_ring``), a payload the ring takes is not on
# the socket: the header size carries the flag IN_RING, and the header ends with the
# payload's position in the ring (u64).
PREFIX = struct.Struct("<IQ")
IN_RING = 1 << 31
_POSITION = struct.Struct("<Q")
_INLINE_BYTES = 16 * 1024  # a payload up to this size goes out in one write with its header
_CHUNK = 2**30  # a read or write of a huge buffer is split (sockets take at most 2**31 - 1)


def is_raw(value: Any) -> bool:
    """Whether ``value`` travels as raw frames: a numeric NumPy array or scalar, or None (what
    a Send of a control edge carries)."""
    return value is None or (
        (type(value) is np.ndarray or isinstance(value, np.generic))
        and value.dtype.kind in "biufc"
        and value.dtype.byteorder in "=|<"
    )


def feed_key(task: str, step_id: int, index: int) -> str:
    """The rendezvous key of a step's feed ``index`` that the client sent ``task`` as raw
    frames (``channel.Channels.plane``) instead of in the step's message."""
    return f"/job:client;{step_id};{task};feed:{index}"


def tensor_frames(
    task: str, step_id: int, key: str, value: Any, ring: RingWriter | None = None
) -> list[bytes | memoryview]:
    """What to write for one tensor (``is_raw(value)``): header and payload, in order. With a
    ``ring`` that takes the payload (over ``_INLINE_BYTES``), the header alone, naming its
    place there; more than one frame means the payload is ``value``'s own buffer."""
    if value is None:
        header = msgpack.packb([task, step_id, key, None, None])
        return [PREFIX.pack(len(header), 0) + header]
    scalar = isinstance(value, np.generic)
    array = np.asarray(value)
    if not array.flags.c_contiguous:
        array = array.copy(order="C")
    header = msgpack.packb([task, step_id, key, array.dtype.str, None if scalar else array.shape])
    if array.nbytes <= _INLINE_BYTES:
        return [PREFIX.pack(len(header), array.nbytes) + header + array.tobytes()]
    payload = array.reshape(-1).view(np.uint8).data
    chunks = [payload[i : i + _CHUNK] for i in range(0, array.nbytes, _CHUNK)]
    position = None if ring is None else ring.place(chunks, array.nbytes)
    if position is not None:
        size = (len(header) + _POSITION.size) | IN_RING
        return [PREFIX.pack(size, array.nbytes) + header + _POSITION.pack(position)]
    return [PREFIX.pack(len(header), array.nbytes) + header, *chunks]


def write_tensor(stream: Any, task: str, step_id: int, key: str, value: Any) -> tuple[Any, bool]:
    """Write one tensor (``is_raw(value)``) on ``stream``, its payload through the stream's
    shared ring if it has one with room. The write's future (see ``write_frames``), and
    whether the write still reads ``value``'s own buffer until that future is done (False when
    the bytes were copied: into the ring, or into the header's frame)."""
    ring = getattr(stream, "ring", None)
    ring = ring if isinstance(ring, RingWriter) else None  # a receiver's ring is not written
    frames = tensor_frames(task, step_id, key, value, ring)
    return write_frames(stream, frames), len(frames) > 1


def write_frames(stream: Any, frames: list) -> Any:
    """Hand ``frames`` (a tensor's or a message's) to ``stream`` in order, with no other bytes
    between; the future of the last one's hand-over to the socket. A Unix socket's stream
    (``local_plane.PlaneStream``) takes them in one system call; a Tornado one, as Dask's TCP
    and TLS comms have, one write each."""
    if isinstance(stream, PlaneStream):
        return stream.write_frames(frames)
    for frame in frames[:-1]:
        stream.write(frame)
    return stream.write(frames[-1])


async def read_tensor(stream: Any) -> tuple[str, int, str, Any]:
    """Read one tensor ``tensor_frames`` wrote from ``stream`` (Tornado's or a ``PlaneStream``):
    (task, step id, key, value); the value is a fresh array the caller owns."""
    header_size, nbytes = PREFIX.unpack(await stream.read_bytes(PREFIX.size))
    header = await stream.read_bytes(header_size & ~IN_RING)
    position = None
    if header_size & IN_RING:
        if len(header) < _POSITION.size:
            raise ValueError("a tensor's header too short for its place in the ring")
        (position,) = _POSITION.unpack(header[-_POSITION.size :])
    task, step_id, key, dtype_str, shape = msgpack.unpackb(
        header if position is None else header[: -_POSITION.size]
    )
    if dtype_str is None:
        return task, step_id, key, None
    dtype = np.dtype(dtype_str)
    if dtype.kind not in "biufc":
        raise ValueError(f"tensor {key!r} for task {task} has dtype {dtype_str!r}: not numeric")
    array = np.empty(() if shape is None else tuple(shape), dtype)
    if array.nbytes != nbytes:
        raise ValueError(
            f"tensor {key!r} for task {task}: {nbytes} bytes sent for {dtype_str}{shape}"
        )
    buffer = array.reshape(-1).view(np.uint8).data
    if position is not None:
        ring = getattr(stream, "ring", None)
        if not isinstance(ring, RingReader):
            raise ValueError(f"tensor {key!r} for task {task}: in a ring this connection lacks")
        ring.take(position, buffer)
    else:
        for i in range(0, nbytes, _CHUNK):
            await stream.read_into(buffer[i : i + _CHUNK])
    return task, step_id, key, array[()] if shape is None else array


# --- messages on a Unix socket ----------------------------------------------------------------
#
# Between the client and a task on the same machine, a step's request and reply go on a Unix
# socket the task offered (``local_plane``) rather than through Dask's comm layer, whose
# framing costs ~100-150 µs of CPU a message. Each message is written as
#
#     PREFIX (header bytes, payload bytes) | msgpack of the message | payload buffers
#
# where a numeric array (``is_raw``) in the message is an ext value naming its dtype and
# shape, its bytes following in order (no copy on either side but the socket's), and any
# other object (a string tensor) is an ext value holding its pickle, as Dask would send it:
# the peer is authenticated by the socket's one-time token.
_ARRAY, _PICKLE = 1, 2


def message_frames(message: Any) -> list[bytes | memoryview]:
    """What to write for one message (a dict, or None) on a Unix socket: header and payload
    buffers, in order."""
    buffers: list[np.ndarray] = []

    def default(value: Any) -> Any:
        if type(value) is tuple:
            return list(value)
        if isinstance(value, Serialize):  # ``encode``'s wrapping, for Dask's frames
            value = value.data
        if value is not None and is_raw(value):
            scalar = isinstance(value, np.generic)
            array = np.asarray(value)  # (``ascontiguousarray`` would make rank 0 rank 1)
            if not array.flags.c_contiguous:
                array = array.copy(order="C")
            buffers.append(array)
            shape = None if scalar else list(array.shape)
            return msgpack.ExtType(_ARRAY, msgpack.packb([array.dtype.str, shape]))
        return msgpack.ExtType(_PICKLE, pickle.dumps(value, protocol=5))

    # strict types: a NumPy float64 (a float subclass) stays a NumPy scalar
    header = msgpack.packb(message, default=default, strict_types=True)
    head = PREFIX.pack(len(header), sum(b.nbytes for b in buffers)) + header
    if sum(b.nbytes for b in buffers) <= _INLINE_BYTES:
        return [head + b"".join(b.tobytes() for b in buffers)]
    frames: list[bytes | memoryview] = [head]
    for array in buffers:
        payload = array.reshape(-1).view(np.uint8).data
        frames += [payload[i : i + _CHUNK] for i in range(0, array.nbytes, _CHUNK)]
    return frames


async def read_message(stream: Any) -> Any:
    """Read one message ``message_frames`` wrote from ``stream``; its arrays are
    fresh ones the caller owns."""
    header_size, nbytes = PREFIX.unpack(await stream.read_bytes(PREFIX.size))
    arrays: list[tuple[np.ndarray, bool]] = []

    def ext_hook(code: int, data: bytes) -> Any:
        if code == _PICKLE:
            return pickle.loads(data)
        if code != _ARRAY:
            raise ValueError(f"unknown value kind {code} in a message")
        dtype_str, shape = msgpack.unpackb(data)
        dtype = np.dtype(dtype_str)
        if dtype.kind not in "biufc":
            raise ValueError(f"array of dtype {dtype_str!r} in a message: not numeric")
        array = np.empty(() if shape is None else tuple(shape), dtype)
        arrays.append((array, shape is None))
        return array  # filled below, before anyone sees it; a scalar is taken out after

    message = msgpack.unpackb(await stream.read_bytes(header_size), ext_hook=ext_hook)
    if sum(a.nbytes for a, _ in arrays) != nbytes:
        raise ValueError(f"a message's arrays take {nbytes} bytes, not what their shapes say")
    for array, _ in arrays:
        if array.nbytes:
            buffer = array.reshape(-1).view(np.uint8).data
            for i in range(0, array.nbytes, _CHUNK):
                await stream.read_into(buffer[i : i + _CHUNK])
    scalars = {id(array) for array, scalar in arrays if scalar}
    return _scalars_out(message, scalars) if scalars else message


def _scalars_out(value: Any, scalars: set[int]) -> Any:
    """``value`` with each array standing in for a NumPy scalar (ids in ``scalars``) made
    that scalar again."""
    if type(value) is np.ndarray:
        return value[()] if id(value) in scalars else value
    if isinstance(value, dict):
        return {k: _scalars_out(v, scalars) for k, v in value.items()}
    if isinstance(value, list):
        return [_scalars_out(v, scalars) for v in value]
    return value
