"""Whole files and raw bytes as tensors: ``read_file``, ``write_file``, ``matching_files``,
``decode_raw`` and ``serialize_tensor``/``parse_tensor``.

A string tensor holds bytes (a NumPy object array of ``bytes``). ``read_file`` gives a file's
contents as one such string, typically fed to ``tf.image.decode_jpeg`` or ``decode_raw``;
``decode_raw`` reinterprets each string as a vector of numbers, as ``np.frombuffer`` does::

    pixels = tf.decode_raw(tf.read_file("batch.bin"), tf.uint8)    # shape [n]

``serialize_tensor`` writes a tensor as TensorFlow's ``TensorProto`` bytes (what
``tf.io.serialize_tensor`` writes), ``parse_tensor`` reads them back.
"""

from __future__ import annotations

import glob
import gzip
import os
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from nbflow import errors
from nbflow.framework import dtypes, protos
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops.variables import Variable

Tensor = ops_lib.Tensor

__all__ = [
    "decode_compressed",
    "decode_raw",
    "match_filenames_once",
    "matching_files",
    "parse_tensor",
    "read_file",
    "serialize_tensor",
    "write_file",
]


def _path(value: Any) -> str:
    value = np.asarray(value, dtype=object)
    if value.ndim != 0:
        raise errors.InvalidArgumentError(
            None, None, f"filename must be a scalar, got shape {list(value.shape)}"
        )
    item = value.item()
    return item.decode() if isinstance(item, bytes) else str(item)


def _scalar_string(data: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = data
    return out


class ReadFile(OpDef):
    """The contents of the file ``filename`` as one string."""

    inputs = ("filename",)
    stateful = True  # the file may change between steps: never folded or cached
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files

    def infer(self, filename: TensorSpec) -> TensorSpec:
        filename.shape.assert_is_compatible_with(TensorShape([]))
        return TensorSpec([], dtypes.string)

    def compute(self, ctx: KernelContext, filename: Any) -> np.ndarray:
        path = _path(filename)
        try:
            with open(path, "rb") as f:
                return _scalar_string(f.read())
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None


class WriteFile(OpDef):
    """Write the string ``contents`` to the file ``filename`` (created or replaced)."""

    inputs = ("filename", "contents")
    num_outputs = 0
    stateful = True
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files

    def infer(self, filename: TensorSpec, contents: TensorSpec) -> list:
        contents.shape.assert_is_compatible_with(TensorShape([]))
        return []

    def compute(self, ctx: KernelContext, filename: Any, contents: Any) -> None:
        path = _path(filename)
        data = np.asarray(contents, dtype=object).item()
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "wb") as f:
                f.write(data if isinstance(data, bytes) else str(data).encode())
        except OSError as e:
            raise errors.PermissionDeniedError(None, None, f"{path}; {e.strerror or e}") from None


class MatchingFiles(OpDef):
    """The sorted file names matching a glob ``pattern`` (or a vector of patterns)."""

    inputs = ("pattern",)
    stateful = True
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files

    def infer(self, pattern: TensorSpec) -> TensorSpec:
        return TensorSpec([None], dtypes.string)

    def compute(self, ctx: KernelContext, pattern: Any) -> np.ndarray:
        names: list[str] = []
        for p in np.asarray(pattern, dtype=object).reshape(-1):
            names.extend(sorted(glob.glob(p.decode() if isinstance(p, bytes) else str(p))))
        out = np.empty(len(names), dtype=object)
        out[:] = [n.encode() for n in names]
        return out


class DecodeRaw(OpDef):
    """Each string's bytes as a vector of ``out_type``: shape ``bytes.shape + [n]``."""

    inputs = ("bytes",)
    attrs = {"out_type": dtypes.uint8, "little_endian": True}
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    samples = [
        Sample(
            bytes=np.array([b"\x01\x00\x02\x00", b"\xff\xff\x00\x01"], dtype=object),
            out_type=dtypes.int16,
        ),
        Sample(
            bytes=np.array(b"\x00\x00\x80\x3f", dtype=object),
            out_type=dtypes.float32,
            little_endian=False,
        ),
    ]

    def infer(self, data: TensorSpec, out_type: dtypes.DType, little_endian: bool) -> TensorSpec:
        return TensorSpec(data.shape.concatenate([None]), out_type)

    def compute(self, ctx: KernelContext, data: Any, out_type: dtypes.DType, little_endian: bool):
        strings = np.asarray(data, dtype=object)
        dtype = np.dtype(out_type.np).newbyteorder("<" if little_endian else ">")
        rows = [r if isinstance(r, bytes) else str(r).encode() for r in strings.reshape(-1)]
        lengths = {len(r) for r in rows}
        if len(lengths) > 1:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"DecodeRaw requires input strings to all be the same size, but element 0 has "
                f"size {len(rows[0])} != {sorted(lengths - {len(rows[0])})[0]}",
            )
        size = lengths.pop() if lengths else 0
        if size % dtype.itemsize:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Input to DecodeRaw has length {size} that is not a multiple of "
                f"{dtype.itemsize}, the size of {out_type.name}",
            )
        flat = np.frombuffer(b"".join(rows), dtype=dtype).astype(out_type.np)
        return flat.reshape([*strings.shape, size // dtype.itemsize])


class SerializeTensor(OpDef):
    """A tensor as the bytes of TensorFlow's ``TensorProto``."""

    inputs = ("tensor",)
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    samples = [Sample(tensor=(2, 3))]

    def infer(self, tensor: TensorSpec) -> TensorSpec:
        return TensorSpec([], dtypes.string)

    def compute(self, ctx: KernelContext, tensor: Any) -> np.ndarray:
        value = tensor.get() if hasattr(tensor, "get") else np.asarray(tensor)
        return _scalar_string(protos.make_tensor_proto(value).SerializeToString())


class ParseTensor(OpDef):
    """The tensor of ``TensorProto`` bytes, checked to be ``out_type``."""

    inputs = ("serialized",)
    attrs = {"out_type": dtypes.float32}
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files

    def infer(self, serialized: TensorSpec, out_type: dtypes.DType) -> TensorSpec:
        return TensorSpec(TensorShape(None), out_type)

    def compute(self, ctx: KernelContext, serialized: Any, out_type: dtypes.DType) -> np.ndarray:
        data = np.asarray(serialized, dtype=object).item()
        try:
            value = protos.make_ndarray(protos.TensorProto.FromString(data))
        except (DecodeError, TypeError) as e:
            raise errors.InvalidArgumentError(
                None, None, f"Could not parse `serialized` as TensorProto: {e}"
            ) from None
        if dtypes.as_dtype(value.dtype) != out_type:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Type mismatch between parsed tensor ({dtypes.as_dtype(value.dtype).name}) "
                f"and dtype ({out_type.name})",
            )
        return value


def _strings_out(values: list[bytes], shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(shape)


def _elementwise(data: Any, convert: Any) -> np.ndarray:
    strings = np.asarray(data, dtype=object)
    flat = [convert(s if isinstance(s, bytes) else str(s).encode()) for s in strings.reshape(-1)]
    return _strings_out(flat, strings.shape)


class DecodeCompressed(OpDef):
    """Each string decompressed: ``compression_type`` "" (none), "ZLIB" or "GZIP"."""

    inputs = ("bytes",)
    attrs = {"compression_type": ""}
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    samples = [
        Sample(bytes=np.array([zlib.compress(b"abc")], dtype=object), compression_type="ZLIB")
    ]

    def infer(self, data: TensorSpec, compression_type: str) -> TensorSpec:
        return data

    def compute(self, ctx: KernelContext, data: Any, compression_type: str) -> np.ndarray:
        codecs: dict[str, Callable[[bytes], bytes]] = {
            "": bytes,
            "ZLIB": zlib.decompress,
            "GZIP": gzip.decompress,
        }
        decompress = codecs.get(compression_type)
        if decompress is None:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"compression_type must be '', 'ZLIB' or 'GZIP', got {compression_type!r}",
            )

        def inflate(s: bytes) -> bytes:
            try:
                return decompress(s)
            except (OSError, zlib.error, EOFError) as e:
                raise errors.DataLossError(
                    None, None, f"Failed to decompress ({compression_type}): {e}"
                ) from None

        return _elementwise(data, inflate)


# --- builders -------------------------------------------------------------------------------------
def _create(op_type: str, inputs: list, attrs: dict | None, name: str | None) -> ops_lib.Operation:
    return ops_lib.get_default_graph().create_op(op_type, inputs, attrs or {}, name=name or op_type)


def _string(value: Any) -> Tensor:
    return ops_lib.convert_to_tensor(value, dtype=dtypes.string)


def read_file(filename: Any, name: str | None = None) -> Tensor:
    """The contents of ``filename`` as a string scalar.

    >>> import nbflow as tf, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> _ = open(path, "wb").write(b"abc")
    >>> tf.Session().run(tf.read_file(path))
    b'abc'
    """
    return _create("ReadFile", [_string(filename)], None, name).outputs[0]


def write_file(filename: Any, contents: Any, name: str | None = None) -> ops_lib.Operation:
    """An op writing the string ``contents`` to ``filename``."""
    return _create("WriteFile", [_string(filename), _string(contents)], None, name)


def matching_files(pattern: Any, name: str | None = None) -> Tensor:
    """The sorted names of the files matching the glob ``pattern``."""
    return _create("MatchingFiles", [_string(pattern)], None, name).outputs[0]


def decode_raw(
    input_bytes: Any = None,
    out_type: Any = None,
    little_endian: bool = True,
    name: str | None = None,
    bytes: Any = None,  # noqa: A002 - TensorFlow 1.x's keyword
) -> Tensor:
    """Each string of ``input_bytes`` as a vector of ``out_type`` (all strings one length).

    >>> import nbflow as tf
    >>> tf.Session().run(tf.decode_raw(tf.constant([b"\\x01\\x02"]), tf.uint8)).tolist()
    [[1, 2]]
    """
    data = input_bytes if input_bytes is not None else bytes
    if data is None or out_type is None:
        raise TypeError("decode_raw needs input_bytes (or bytes) and out_type")
    attrs = {"out_type": dtypes.as_dtype(out_type), "little_endian": bool(little_endian)}
    return _create("DecodeRaw", [_string(data)], attrs, name).outputs[0]


def serialize_tensor(tensor: Any, name: str | None = None) -> Tensor:
    """``tensor`` as the bytes of a ``TensorProto`` (a string scalar)."""
    return _create("SerializeTensor", [ops_lib.convert_to_tensor(tensor)], None, name).outputs[0]


def parse_tensor(serialized: Any, out_type: Any, name: str | None = None) -> Tensor:
    """The tensor that ``serialize_tensor`` wrote into ``serialized``, of dtype ``out_type``."""
    attrs = {"out_type": dtypes.as_dtype(out_type)}
    return _create("ParseTensor", [_string(serialized)], attrs, name).outputs[0]


def decode_compressed(bytes: Any, compression_type: str = "", name: str | None = None) -> Tensor:  # noqa: A002
    """Each string decompressed with ``compression_type`` ("", "ZLIB" or "GZIP")."""
    attrs = {"compression_type": compression_type or ""}
    return _create("DecodeCompressed", [_string(bytes)], attrs, name).outputs[0]


def match_filenames_once(pattern: Any, name: str | None = None) -> Variable:
    """A local variable holding the files matching ``pattern`` when it was initialized (run
    ``local_variables_initializer``)."""
    return Variable(
        lambda: matching_files(pattern),
        name=name or "matching_filenames",
        trainable=False,
        validate_shape=False,
        collections=[ops_lib.GraphKeys.LOCAL_VARIABLES],
    )
