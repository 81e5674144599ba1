"""Elementwise string ops: join, length, case, strip, substrings, regexes, numbers, hash buckets.

A ``tf.string`` tensor is a NumPy object array of ``bytes`` (``dtypes.string``); these kernels
map a Python function over its elements, on the host (``cpu_only``: TensorFlow too keeps string
tensors in host memory). None has a gradient. Regexes are Python's ``re`` over bytes, which
agrees with TensorFlow's RE2 on the common syntax (classes, groups, ``\\1`` in rewrites) but not
on every corner (RE2 has no backreferences in patterns). Hash buckets and fingerprints are in
``string_hash_ops``; splitting, joining along axes and ``format`` in ``string_split_ops``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape, broadcast_shapes

Tensor = ops_lib.Tensor


def strings(*values: Any) -> np.ndarray:
    """An object array of bytes from Python strings (for samples and tests)."""
    return np.array([v.encode() if isinstance(v, str) else v for v in values], dtype=object)


_WORDS = strings("Hello", " a b ", "ü∂x", "")


def map_strings(fn: Callable[[Any], Any], values: Any, dtype: Any = object) -> np.ndarray:
    """``fn`` applied to each bytes element of ``values``, as an array of ``dtype``."""
    array = np.asarray(values, dtype=object)
    out = np.empty(array.shape, dtype=object)
    flat_in, flat_out = array.reshape(-1), out.reshape(-1)
    for i, v in enumerate(flat_in):
        flat_out[i] = fn(v)
    return out if dtype is object else out.astype(dtype)


def _check_string(op_type: str, spec: TensorSpec, name: str = "input") -> None:
    if spec.dtype.base_dtype is not dtypes.string:
        raise TypeError(f"{op_type}: '{name}' must be a string tensor, got {spec.dtype.name}")


class StringOp(OpDef):
    """Base of the string ops: host only, no gradient."""

    abstract = True
    cpu_only = True
    differentiable = False


class _ElementwiseString(StringOp):
    """A string tensor in, a tensor of the same shape and ``out_dtype`` out."""

    abstract = True
    inputs = ("input",)
    out_dtype: dtypes.DType = dtypes.string
    samples = [Sample(input=_WORDS)]

    def infer(self, input: TensorSpec, **attrs: Any) -> TensorSpec:
        _check_string(self.type, input)
        return TensorSpec(input.shape, self.out_dtype)


class StringLength(_ElementwiseString):
    """The length of each string in bytes, or in Unicode characters with ``unit="UTF8_CHAR"``."""

    attrs = {"unit": "BYTE"}
    out_dtype = dtypes.int32
    samples = [Sample(input=_WORDS), Sample(input=_WORDS, unit="UTF8_CHAR")]

    def compute(self, ctx: KernelContext, input: Any, unit: str) -> Any:
        if unit == "UTF8_CHAR":
            return map_strings(lambda s: len(s.decode("utf-8")), input, np.int32)
        return map_strings(len, input, np.int32)


class StringLower(_ElementwiseString):
    """Each string in lower case: ASCII letters only, or all of Unicode with ``encoding``."""

    attrs = {"encoding": ""}

    def compute(self, ctx: KernelContext, input: Any, encoding: str) -> Any:
        if encoding:
            return map_strings(lambda s: s.decode(encoding).lower().encode(encoding), input)
        return map_strings(bytes.lower, input)


class StringUpper(_ElementwiseString):
    """Each string in upper case: ASCII letters only, or all of Unicode with ``encoding``."""

    attrs = {"encoding": ""}

    def compute(self, ctx: KernelContext, input: Any, encoding: str) -> Any:
        if encoding:
            return map_strings(lambda s: s.decode(encoding).upper().encode(encoding), input)
        return map_strings(bytes.upper, input)


class StringStrip(_ElementwiseString):
    """Each string without leading and trailing ASCII whitespace."""

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        return map_strings(bytes.strip, input)


class StringToNumber(_ElementwiseString):
    """Each string parsed as a number of ``out_type`` (float32, float64, int32 or int64)."""

    inputs = ("string_tensor",)
    attrs = {"out_type": dtypes.float32}
    samples = [
        Sample(string_tensor=strings("1.5", " -2", "1e3")),
        Sample(string_tensor=strings("12", "-3"), out_type=dtypes.int64),
    ]

    def infer(self, string_tensor: TensorSpec, out_type: dtypes.DType) -> TensorSpec:
        _check_string(self.type, string_tensor, "string_tensor")
        if out_type not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
            raise TypeError(f"StringToNumber: out_type must be float or int, got {out_type}")
        return TensorSpec(string_tensor.shape, out_type)

    def compute(self, ctx: KernelContext, string_tensor: Any, out_type: dtypes.DType) -> Any:
        parse = int if out_type.is_integer else float

        def number(s: bytes) -> Any:
            text = s.decode("utf-8", "replace")
            try:
                if "_" in text:
                    raise ValueError(text)
                value = parse(text)
            except ValueError:
                raise ValueError(
                    f"StringToNumberOp could not correctly convert string: {text}"
                ) from None
            if out_type.is_integer and not out_type.min <= value <= out_type.max:
                raise ValueError(f"StringToNumberOp could not correctly convert string: {text}")
            return value

        return map_strings(number, string_tensor, out_type.np)


class Substr(StringOp):
    """The substring of ``len`` bytes (or UTF-8 characters) at ``pos`` of each string; a
    negative ``pos`` counts from the end. ``pos`` and ``len`` broadcast against ``input``."""

    inputs = ("input", "pos", "len")
    attrs = {"unit": "BYTE"}
    samples = [
        Sample(input=_WORDS[:3], pos=np.int32(1), len=np.int32(2)),
        Sample(input=strings("hello", "world"), pos=np.array([-3, 0], np.int32), len=np.int32(9)),
        Sample(input=strings("aü∂b"), pos=np.int32(1), len=np.int32(2), unit="UTF8_CHAR"),
    ]

    def infer(self, input: TensorSpec, pos: TensorSpec, len: TensorSpec, unit: str):
        _check_string(self.type, input)
        if not pos.dtype.is_integer or pos.dtype.base_dtype is not len.dtype.base_dtype:
            raise TypeError(f"Substr: pos and len must be integers of one dtype: {pos}, {len}")
        shape = broadcast_shapes(broadcast_shapes(input.shape, pos.shape), len.shape)
        return TensorSpec(shape, dtypes.string)

    def compute(self, ctx: KernelContext, input: Any, pos: Any, len: Any, unit: str) -> Any:
        values: Any  # an object array: its elements are bytes
        values, starts, lengths = np.broadcast_arrays(np.asarray(input, object), pos, len)
        out = np.empty(values.shape, dtype=object)
        utf8 = unit == "UTF8_CHAR"
        for index in np.ndindex(values.shape):
            s = values[index].decode("utf-8") if utf8 else values[index]
            start, length = int(starts[index]), int(lengths[index])
            size = _builtin_len(s)
            if not -size <= start <= size:
                raise ValueError(f"pos {start} out of range for string {values[index]!r}")
            start = start + size if start < 0 else start
            piece = s[start : start + max(length, 0)]
            out[index] = piece.encode("utf-8") if utf8 else piece
        return out


_builtin_len = len


class RegexReplace(StringOp):
    """Each string with matches of ``pattern`` replaced by ``rewrite`` (``\\1`` names a group);
    all matches, or the first only without ``replace_global``."""

    inputs = ("input", "pattern", "rewrite")
    attrs = {"replace_global": True}
    samples = [
        Sample(input=_WORDS, pattern=np.array(b"l+", object), rewrite=np.array(b"L", object)),
        Sample(
            input=strings("aaa bab"),
            pattern=np.array(b"a(b?)", object),
            rewrite=np.array(rb"<\1>", object),
            replace_global=False,
        ),
    ]

    def infer(self, input: TensorSpec, pattern: TensorSpec, rewrite: TensorSpec, replace_global):
        _check_string(self.type, input)
        pattern.shape.with_rank(0)
        rewrite.shape.with_rank(0)
        return TensorSpec(input.shape, dtypes.string)

    def compute(self, ctx: KernelContext, input, pattern, rewrite, replace_global: bool):
        regex = _compile(pattern)
        count = 0 if replace_global else 1
        template = _as_bytes(rewrite)
        return map_strings(lambda s: regex.sub(template, s, count=count), input)


def _as_bytes(value: Any) -> bytes:
    value = np.asarray(value, dtype=object).item()
    return value.encode() if isinstance(value, str) else value


def _compile(pattern: Any) -> re.Pattern[bytes]:
    try:
        return re.compile(_as_bytes(pattern))
    except re.error as e:
        raise ValueError(f"Invalid pattern: {_as_bytes(pattern)!r}, error: {e}") from None


class RegexFullMatch(StringOp):
    """Whether each whole string matches ``pattern``."""

    inputs = ("input", "pattern")
    samples = [Sample(input=_WORDS, pattern=np.array(b"[A-Za-z ]*", object))]

    def infer(self, input: TensorSpec, pattern: TensorSpec) -> TensorSpec:
        _check_string(self.type, input)
        pattern.shape.with_rank(0)
        return TensorSpec(input.shape, dtypes.bool)

    def compute(self, ctx: KernelContext, input: Any, pattern: Any) -> Any:
        regex = _compile(pattern)
        return map_strings(lambda s: regex.fullmatch(s) is not None, input, np.bool_)


_PRINTF_FLAGS = ("", " ", "+", "-", "0", "#")  # fill goes into the format as a printf flag


class AsString(StringOp):
    """Each number (or bool) as a string, C ``printf`` style: ``precision`` digits,
    ``scientific`` (``%e``) or ``shortest`` (``%g``) floats, padded to ``width`` with ``fill``."""

    inputs = ("input",)
    attrs = {"precision": -1, "scientific": False, "shortest": False, "width": -1, "fill": ""}
    samples = [
        Sample(input=(3,)),
        Sample(input=np.array([3, -12], np.int64), width=5, fill="0"),
        Sample(input=np.array([True, False])),
        Sample(input=(2,), precision=2, scientific=True),
    ]

    def infer(self, input: TensorSpec, precision, scientific, shortest, width, fill):
        if input.dtype.base_dtype is dtypes.string:
            raise TypeError("AsString: input must be numeric or bool, got string")
        if scientific and shortest:
            raise ValueError("Cannot select both scientific and shortest notation")
        if fill not in _PRINTF_FLAGS:
            raise ValueError(
                f"Fill argument not supported: {fill!r} (one of ' ', '+', '-', '0', '#')"
            )
        return TensorSpec(input.shape, dtypes.string)

    def compute(self, ctx: KernelContext, input, precision, scientific, shortest, width, fill):
        array = np.asarray(input)
        if array.dtype == np.bool_:
            return map_strings(lambda v: b"true" if v else b"false", array)
        flags = fill + (str(width) if width > -1 else "")
        if array.dtype.kind in "iu":
            fmt = f"%{flags}d"
            return map_strings(lambda v: (fmt % int(v)).encode(), array)
        kind = "e" if scientific else "g" if shortest else "f"
        fmt = f"%{flags}{'.' + str(precision) if precision > -1 else ''}{kind}"
        if array.dtype.kind == "c":
            return map_strings(lambda v: f"({fmt % v.real},{fmt % v.imag})".encode(), array)
        return map_strings(lambda v: (fmt % float(v)).encode(), array)


class StringJoin(StringOp):
    """The elementwise concatenation of ``inputs`` (same shapes, or scalars), with
    ``separator`` between them."""

    inputs = ("inputs*",)
    attrs = {"separator": ""}
    samples = [
        Sample(inputs=[_WORDS, np.array(b"!", object)], separator="-"),
        Sample(inputs=[_WORDS]),
    ]

    def infer(self, inputs: list[TensorSpec], separator: str) -> TensorSpec:
        shape = TensorShape([])
        for i, spec in enumerate(inputs):
            _check_string(self.type, spec, f"inputs[{i}]")
            shape = broadcast_shapes(shape, spec.shape)
        return TensorSpec(shape, dtypes.string)

    def compute(self, ctx: KernelContext, inputs: Any, separator: str) -> Any:
        arrays: Any = np.broadcast_arrays(*(np.asarray(v, dtype=object) for v in inputs))
        sep = separator.encode() if isinstance(separator, str) else separator
        out = np.empty(arrays[0].shape, dtype=object)
        for index in np.ndindex(out.shape):
            out[index] = sep.join(a[index] for a in arrays)
        return out


class EncodeBase64(_ElementwiseString):
    """Each string in web-safe base64 (``-`` and ``_``), padded with ``=`` when ``pad``."""

    attrs = {"pad": False}
    samples = [Sample(input=_WORDS), Sample(input=_WORDS, pad=True)]

    def compute(self, ctx: KernelContext, input: Any, pad: bool) -> Any:
        def encode(s: bytes) -> bytes:
            text = base64.urlsafe_b64encode(s)
            return text if pad else text.rstrip(b"=")

        return map_strings(encode, input)


class DecodeBase64(_ElementwiseString):
    """Each web-safe base64 string decoded (padding optional)."""

    samples = [Sample(input=strings("SGVsbG8", "YSBi", ""))]

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        def decode(s: bytes) -> bytes:
            try:
                return base64.urlsafe_b64decode(s + b"=" * (-len(s) % 4))
            except (binascii.Error, ValueError):
                raise ValueError(f"Invalid character found in base64: {s!r}") from None

        return map_strings(decode, input)


# --- builders -------------------------------------------------------------------------------------
def _create(op_type: str, inputs: list[Any], attrs: dict[str, Any] | None = None, name=None):
    return ops_lib.get_default_graph().create_op(op_type, inputs, attrs or {}, name=name).outputs[0]


def _string(value: Any, name: str = "input") -> Tensor:
    return ops_lib.convert_to_tensor(value, dtype=dtypes.string, name=name)


def length(input: Any, name: str | None = None, unit: str = "BYTE") -> Tensor:
    """The length of each string, in bytes or (``unit="UTF8_CHAR"``) characters.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.strings.length(["ab", "ü"], unit="UTF8_CHAR")).tolist()
    [2, 1]
    """
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    return _create("StringLength", [_string(input)], {"unit": unit}, name)


def lower(input: Any, encoding: str = "", name: str | None = None) -> Tensor:
    """Each string in lower case (ASCII only unless ``encoding``, e.g. ``"utf-8"``)."""
    return _create("StringLower", [_string(input)], {"encoding": encoding}, name)


def upper(input: Any, encoding: str = "", name: str | None = None) -> Tensor:
    """Each string in upper case (ASCII only unless ``encoding``, e.g. ``"utf-8"``)."""
    return _create("StringUpper", [_string(input)], {"encoding": encoding}, name)


def strip(input: Any, name: str | None = None) -> Tensor:
    """Each string without leading and trailing whitespace."""
    return _create("StringStrip", [_string(input)], {}, name)


def to_number(string_tensor: Any, out_type: Any = dtypes.float32, name: str | None = None):
    """Each string parsed as a number of ``out_type``; a string that is not one fails the run.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.strings.to_number(["1.5", "-2"])).tolist()
    [1.5, -2.0]
    """
    attrs = {"out_type": dtypes.as_dtype(out_type).base_dtype}
    return _create("StringToNumber", [_string(string_tensor, "string_tensor")], attrs, name)


def substr(input: Any, pos: Any, len: Any, name: str | None = None, unit: str = "BYTE"):
    """The substring of ``len`` bytes (or characters) at ``pos`` of each string.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.strings.substr(["hello"], -3, 2)).tolist()
    [b'll']
    """
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    pos_t = ops_lib.convert_to_tensor(pos, name="pos")
    if not pos_t.dtype.is_integer:
        raise TypeError(f"substr: pos must be an integer tensor, got {pos_t.dtype}")
    len_t = ops_lib.convert_to_tensor(len, dtype=pos_t.dtype.base_dtype, name="len")
    return _create("Substr", [_string(input), pos_t, len_t], {"unit": unit}, name)


def regex_replace(
    input: Any, pattern: Any, rewrite: Any, replace_global: bool = True, name: str | None = None
) -> Tensor:
    """Each string with matches of ``pattern`` replaced by ``rewrite``."""
    inputs = [_string(input), _string(pattern, "pattern"), _string(rewrite, "rewrite")]
    return _create("RegexReplace", inputs, {"replace_global": bool(replace_global)}, name)


def regex_full_match(input: Any, pattern: Any, name: str | None = None) -> Tensor:
    """Whether each whole string matches ``pattern``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.strings.regex_full_match(["abc", "abd"], "a.c")).tolist()
    [True, False]
    """
    return _create("RegexFullMatch", [_string(input), _string(pattern, "pattern")], {}, name)


def as_string(
    input: Any,
    precision: int = -1,
    scientific: bool = False,
    shortest: bool = False,
    width: int = -1,
    fill: str = "",
    name: str | None = None,
) -> Tensor:
    """Each number as a string, ``printf`` style.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.as_string([3, -12], width=5, fill="0")).tolist()
    [b'00003', b'-0012']
    """
    attrs = {
        "precision": int(precision),
        "scientific": bool(scientific),
        "shortest": bool(shortest),
        "width": int(width),
        "fill": fill,
    }
    return _create("AsString", [ops_lib.convert_to_tensor(input, name="input")], attrs, name)


def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> Tensor:
    """Each string in web-safe base64.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.encode_base64(["Hello"])).tolist()
    [b'SGVsbG8']
    """
    return _create("EncodeBase64", [_string(input)], {"pad": bool(pad)}, name)


def decode_base64(input: Any, name: str | None = None) -> Tensor:
    """Each web-safe base64 string decoded."""
    return _create("DecodeBase64", [_string(input)], {}, name)


def join(inputs: Any, separator: str = "", name: str | None = None) -> Tensor:
    """The elementwise concatenation of the string tensors ``inputs``, with ``separator``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.strings.join([["a", "b"], "x"], separator="-")).tolist()
    [b'a-x', b'b-x']
    """
    tensors = [_string(v, "inputs") for v in inputs]
    return _create("StringJoin", [tensors], {"separator": separator}, name)


__all__ = [
    "as_string",
    "decode_base64",
    "encode_base64",
    "join",
    "length",
    "lower",
    "map_strings",
    "regex_full_match",
    "regex_replace",
    "strings",
    "strip",
    "substr",
    "to_number",
    "upper",
]
