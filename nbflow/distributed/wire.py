"""How tensors travel in nbflow's messages: small arrays as plain msgpack, big ones by Dask.

Every message is a Dask message (a dict that ``distributed.comm`` frames with msgpack). A
small NumPy array — a scalar, 32 ids, a row of gradients — goes as a msgpack-native triple
``[dtype, shape, bytes]``: no pickle, no extra frames, so a null step's messages stay a few
hundred bytes. Anything bigger (or not an array) goes wrapped in ``to_serialize``, which
Dask sends as frames of its own, without copies for NumPy buffers.

>>> import numpy as np
>>> decode(encode(np.arange(3, dtype=np.int32)))
array([0, 1, 2], dtype=int32)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from distributed.protocol.serialize import to_serialize

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
