"""Image codecs: ``tf.image.decode_jpeg/png/gif/bmp/image`` and ``encode_jpeg/png``, on Pillow.

A decoder takes one encoded file (a string scalar, e.g. from ``tf.read_file``) and gives its
pixels ``[height, width, channels]`` as ``uint8`` (``decode_gif``: ``[frames, height, width,
3]``). ``channels`` is TensorFlow's: 0 keeps the file's own (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA),
1 converts to gray, 3 to RGB (alpha dropped, gray repeated), 4 to RGBA::

    image = tf.image.decode_jpeg(tf.read_file(path), channels=3)
    png = tf.image.encode_png(tf.cast(image, tf.uint8))

The conversions follow TensorFlow's libraries where Pillow would differ: a colour PNG read as
gray uses libpng's weights (0.299, 0.587 and the rest, in 1/32768ths) instead of Pillow's;
16-bit PNGs, which Pillow reads as 8-bit, are decoded and encoded here (``_png16``). A JPEG read
as gray takes the decoder's own luma channel, as libjpeg does for TensorFlow. JPEG decodes may
differ from TensorFlow's by a few levels: TensorFlow asks libjpeg for its fast integer inverse
DCT, Pillow for the accurate one.
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any, ClassVar

import numpy as np
from PIL import Image, ImageSequence

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops import array_ops

Tensor = ops_lib.Tensor

__all__ = [
    "decode_and_crop_jpeg",
    "decode_bmp",
    "extract_jpeg_shape",
    "decode_gif",
    "decode_image_uint8",
    "decode_jpeg",
    "decode_png",
    "encode_jpeg",
    "encode_jpeg_variable_quality",
    "encode_png",
    "is_jpeg",
]

_SIGNATURES = {
    b"\xff\xd8\xff": "jpeg",
    b"\x89PNG\r\n\x1a\n": "png",
    b"GIF87a": "gif",
    b"GIF89a": "gif",
    b"BM": "bmp",
}
_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}
_PNG_GRAY_WEIGHTS = (9798, 19235, 3735)  # libpng's rgb_to_gray(0.299, 0.587), sum 2**15


def _contents(value: Any) -> bytes:
    value = np.asarray(value, dtype=object)
    if value.ndim != 0:
        raise errors.InvalidArgumentError(
            None, None, f"contents must be scalar, got shape {list(value.shape)}"
        )
    data = value.item()
    return data if isinstance(data, bytes) else str(data).encode()


def _format(data: bytes) -> str | None:
    return next((kind for sig, kind in _SIGNATURES.items() if data.startswith(sig)), None)


def _open(data: bytes, kind: str) -> Image.Image:
    found = _format(data)
    if found != kind:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Expected image ({kind.upper()}), got {found or 'unknown format'} "
            f"starting with {data[:8]!r}",
        )
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except Exception as e:
        raise errors.InvalidArgumentError(None, None, f"Invalid {kind.upper()} data: {e}") from None
    return image


def _pixels(image: Image.Image, channels: int) -> np.ndarray:
    """``image`` as uint8 [h, w, c] with TensorFlow's channel conversion."""
    if image.mode in ("P", "PA", "CMYK", "YCbCr", "1", "I", "I;16", "F", "RGBX"):
        has_alpha = image.mode == "PA" or "transparency" in image.info
        image = image.convert("RGBA" if has_alpha else "RGB")
    own = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}[image.mode]
    array = np.asarray(image, dtype=np.uint8).reshape(image.height, image.width, own)
    return _convert_channels(array, channels or own)


def _convert_channels(array: np.ndarray, channels: int) -> np.ndarray:
    """TensorFlow's channel conversion of [h, w, c] pixels (alpha dropped, gray repeated)."""
    own = array.shape[-1]
    if channels == own:
        return array
    color = array[..., :3] if own >= 3 else np.repeat(array[..., :1], 3, axis=-1)
    if channels == 3:
        return color
    if channels in (1, 2):
        if own <= 2:
            gray = array[..., :1]
        else:
            weights = np.asarray(_PNG_GRAY_WEIGHTS, np.uint32)
            gray = ((color.astype(np.uint32) @ weights) >> 15).astype(array.dtype)[..., None]
        if channels == 1:  # libpng truncates the weighted sum
            return gray
        color = gray
    if own in (2, 4):
        alpha = array[..., own - 1 :]
    else:
        alpha = np.full(array.shape[:-1] + (1,), np.iinfo(array.dtype).max, array.dtype)
    return np.concatenate([color, alpha], axis=-1)


def _check_channels(channels: int, allowed: tuple[int, ...]) -> None:
    if channels not in allowed:
        raise errors.InvalidArgumentError(
            None, None, f"channels must be one of {list(allowed)}, got {channels}"
        )


# --- 16-bit PNG, which Pillow reads and writes as 8-bit ------------------------------------------
def _png16_header(data: bytes) -> tuple[int, int, int, int, int]:
    """(width, height, bit depth, colour type, interlace) of a PNG's IHDR chunk."""
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", data[16:29])
    return width, height, depth, color, interlace


def _decode_png16(data: bytes) -> np.ndarray:
    """A 16-bit non-interlaced PNG as uint16 [h, w, c]: inflate, then undo each row's filter."""
    width, height, _, color, interlace = _png16_header(data)
    if interlace:
        raise errors.UnimplementedError(None, None, "Interlaced 16-bit PNG is not supported")
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color]
    pos, idat = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        if data[pos + 4 : pos + 8] == b"IDAT":
            idat.append(data[pos + 8 : pos + 8 + length])
        pos += 12 + length
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8)
    bpp, stride = 2 * channels, 2 * channels * width
    rows = raw.reshape(height, stride + 1)
    out = np.zeros((height, stride), np.uint8)
    previous = np.zeros(stride, np.int32)
    for y in range(height):
        kind, row = rows[y, 0], rows[y, 1:].astype(np.int32)
        if kind == 1:  # Sub: each byte adds the one bpp to its left
            row = np.cumsum(row.reshape(width, bpp), axis=0).reshape(-1)
        elif kind == 2:  # Up
            row = row + previous
        elif kind in (3, 4):  # Average, Paeth: sequential along the row
            for x in range(stride):
                left = row[x - bpp] if x >= bpp else 0
                up, corner = previous[x], previous[x - bpp] if x >= bpp else 0
                if kind == 3:
                    row[x] = (row[x] + (left + up) // 2) & 0xFF
                    continue
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                row[x] = (row[x] + pred) & 0xFF
        out[y] = previous = row & 0xFF
    return out.view(">u2").astype(np.uint16).reshape(height, width, channels)


def _encode_png16(array: np.ndarray, level: int) -> bytes:
    """uint16 [h, w, c] as a PNG (rows unfiltered, zlib at ``level``)."""
    height, width, channels = array.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = array.astype(">u2").reshape(height, -1).view(np.uint8)
    raw = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1).tobytes()

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 16, color, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, level))
        + chunk(b"IEND", b"")
    )


# --- decoders -----------------------------------------------------------------------------------
class _Decode(OpDef):
    abstract = True
    inputs = ("contents",)
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    kind = ""

    def infer(self, contents: TensorSpec, **attrs: Any) -> TensorSpec:
        contents.shape.assert_is_compatible_with(TensorShape([]))
        channels = attrs.get("channels", 0)
        dtype = attrs.get("dtype", dtypes.uint8)
        return TensorSpec([None, None, channels or None], dtype)

    def compute(self, ctx: KernelContext, contents: Any, channels: int = 0, **attrs: Any):
        _check_channels(channels, (0, 3, 4))  # TensorFlow's choice for BMP
        return _pixels(_open(_contents(contents), self.kind), channels)


def _sample_file(kind: str) -> np.ndarray:
    """A 1x2 RGB image encoded as ``kind``, for the op samples of the registry tests."""
    buffer = io.BytesIO()
    Image.fromarray(np.array([[[200, 30, 60], [10, 220, 90]]], np.uint8)).save(buffer, kind)
    return _scalar_string(buffer.getvalue())


def _scalar_string(data: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = data
    return out


class DecodeJpeg(_Decode):
    """A JPEG file's pixels, uint8 [h, w, channels]; ``ratio`` 2, 4 or 8 downscales."""

    attrs = {
        "channels": 0,
        "ratio": 1,
        "fancy_upscaling": True,
        "try_recover_truncated": False,
        "acceptable_fraction": 1.0,
        "dct_method": "",
    }
    kind = "jpeg"
    samples = [
        Sample(contents=_sample_file("JPEG")),
        Sample(contents=_sample_file("JPEG"), channels=1),
    ]

    def compute(self, ctx: KernelContext, contents: Any, channels: int = 0, **attrs: Any):
        _check_channels(channels, (0, 1, 3))
        data = _contents(contents)
        image = _open(data, "jpeg")
        ratio = attrs.get("ratio", 1)
        if ratio not in (1, 2, 4, 8):
            raise errors.InvalidArgumentError(
                None, None, f"ratio must be 1, 2, 4 or 8, got {ratio}"
            )
        if channels == 1 or ratio != 1:  # libjpeg's own luma channel, and its scaled decode
            image = Image.open(io.BytesIO(data))
            size = (-(-image.width // ratio), -(-image.height // ratio))
            image.draft("L" if channels == 1 else image.mode, size)
            image.load()
        return _pixels(image, channels)


class DecodePng(_Decode):
    """A PNG file's pixels, [h, w, channels] of ``dtype`` uint8 or uint16."""

    attrs = {"channels": 0, "dtype": dtypes.uint8}
    kind = "png"
    samples = [
        Sample(contents=_sample_file("PNG")),
        Sample(contents=_sample_file("PNG"), channels=4, dtype=dtypes.uint16),
    ]

    def compute(self, ctx: KernelContext, contents: Any, channels: int = 0, dtype: Any = None):
        _check_channels(channels, (0, 1, 3, 4))
        data = _contents(contents)
        image = _open(data, "png")
        wide = dtype == dtypes.uint16
        if _png16_header(data)[2] == 16 and image.mode not in ("I", "I;16") and wide:
            array = _decode_png16(data)
            return _convert_channels(array, channels or array.shape[-1])
        if image.mode in ("I", "I;16"):  # 16-bit gray
            array = np.asarray(image).astype(np.uint16)[..., None]
            array = _convert_channels(array, channels or 1)
            return array if wide else (array >> 8).astype(np.uint8)
        array = _pixels(image, channels)
        return array.astype(np.uint16) * 257 if wide else array


class DecodeGif(_Decode):
    """A GIF's frames, uint8 [frames, h, w, 3], each drawn over the ones before as shown."""

    attrs: ClassVar[dict[str, Any]] = {}
    kind = "gif"
    samples = [Sample(contents=_sample_file("GIF"))]

    def infer(self, contents: TensorSpec) -> TensorSpec:
        contents.shape.assert_is_compatible_with(TensorShape([]))
        return TensorSpec([None, None, None, 3], dtypes.uint8)

    def compute(self, ctx: KernelContext, contents: Any) -> np.ndarray:
        image = _open(_contents(contents), "gif")
        frames = [np.asarray(f.convert("RGB"), np.uint8) for f in ImageSequence.Iterator(image)]
        return np.stack(frames)


class DecodeBmp(_Decode):
    """A BMP file's pixels, uint8 [h, w, channels]."""

    attrs = {"channels": 0}
    kind = "bmp"
    samples = [Sample(contents=_sample_file("BMP"), channels=4)]


class DecodeImage(OpDef):
    """Any of JPEG, PNG, GIF or BMP, told apart by their first bytes; GIFs are 4-D unless
    ``expand_animations`` is False (then their first frame)."""

    inputs = ("contents",)
    attrs = {"channels": 0, "expand_animations": True}
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    samples = [
        Sample(contents=_sample_file("GIF")),
        Sample(contents=_sample_file("BMP"), channels=3),
    ]

    def infer(self, contents: TensorSpec, channels: int, expand_animations: bool) -> TensorSpec:
        if expand_animations:
            return TensorSpec(TensorShape(None), dtypes.uint8)
        return TensorSpec([None, None, channels or None], dtypes.uint8)

    def compute(self, ctx: KernelContext, contents: Any, channels: int, expand_animations: bool):
        kind = _format(_contents(contents))
        if kind is None:
            raise errors.InvalidArgumentError(
                None, None, "Unknown image file format. One of JPEG, PNG, GIF, BMP required."
            )
        if kind == "gif":
            _check_channels(channels, (0, 3))
            frames = _DECODERS["gif"].compute(ctx, contents)
            return frames if expand_animations else frames[0]
        return _DECODERS[kind].compute(ctx, contents, channels=channels)


class IsJpeg(OpDef):
    """Whether a string starts with JPEG's signature."""

    inputs = ("contents",)
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    samples = [Sample(contents=_sample_file("JPEG"))]

    def infer(self, contents: TensorSpec) -> TensorSpec:
        return TensorSpec([], dtypes.bool)

    def compute(self, ctx: KernelContext, contents: Any) -> np.ndarray:
        return np.asarray(_format(_contents(contents)) == "jpeg")


class ExtractJpegShape(OpDef):
    """A JPEG's [height, width, channels], read from its header without decoding."""

    inputs = ("contents",)
    attrs = {"output_type": dtypes.int32}
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    samples = [Sample(contents=_sample_file("JPEG"))]

    def infer(self, contents: TensorSpec, output_type: dtypes.DType) -> TensorSpec:
        return TensorSpec([3], output_type)

    def compute(self, ctx: KernelContext, contents: Any, output_type: dtypes.DType):
        data = _contents(contents)
        if _format(data) != "jpeg":
            raise errors.InvalidArgumentError(None, None, f"Not a JPEG: {data[:8]!r}")
        image = Image.open(io.BytesIO(data))
        channels = {"L": 1, "RGB": 3, "CMYK": 4}.get(image.mode, 3)
        return np.array([image.height, image.width, channels], dtype=output_type.np)


_DECODERS: dict[str, Any] = {
    "jpeg": DecodeJpeg(),
    "png": DecodePng(),
    "gif": DecodeGif(),
    "bmp": DecodeBmp(),
}


# --- encoders -----------------------------------------------------------------------------------
class EncodePng(OpDef):
    """uint8 or uint16 pixels [h, w, c] (c of 1 to 4) as a PNG file; ``compression`` -1..9."""

    inputs = ("image",)
    attrs = {"compression": -1}
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    samples = [Sample(image=np.arange(24, dtype=np.uint8).reshape(2, 4, 3))]

    def infer(self, image: TensorSpec, compression: int) -> TensorSpec:
        image.shape.with_rank(3)
        return TensorSpec([], dtypes.string)

    def compute(self, ctx: KernelContext, image: Any, compression: int) -> np.ndarray:
        array = np.asarray(image.get() if hasattr(image, "get") else image)
        if array.ndim != 3 or array.shape[-1] not in _MODES:
            raise errors.InvalidArgumentError(
                None, None, f"image must be 3-dimensional with 1 to 4 channels, got {array.shape}"
            )
        level = 6 if compression < 0 else compression
        if array.dtype == np.uint16:
            return _scalar_string(_encode_png16(array, level))
        if array.dtype != np.uint8:
            raise errors.InvalidArgumentError(
                None, None, f"image must be uint8 or uint16, got {array.dtype}"
            )
        buffer = io.BytesIO()
        mode = _MODES[array.shape[-1]]
        Image.fromarray(array[..., 0] if mode == "L" else array, mode).save(
            buffer, "PNG", compress_level=level
        )
        return _scalar_string(buffer.getvalue())


class EncodeJpeg(OpDef):
    """uint8 pixels [h, w, 1 or 3] as a JPEG file (``quality`` 0..100)."""

    inputs = ("image",)
    attrs = {
        "format": "",
        "quality": 95,
        "progressive": False,
        "optimize_size": False,
        "chroma_downsampling": True,
        "density_unit": "in",
        "x_density": 300,
        "y_density": 300,
        "xmp_metadata": "",
    }
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    samples = [Sample(image=np.arange(24, dtype=np.uint8).reshape(2, 4, 3), quality=80)]

    def infer(self, image: TensorSpec, **attrs: Any) -> TensorSpec:
        image.shape.with_rank(3)
        return TensorSpec([], dtypes.string)

    def compute(self, ctx: KernelContext, image: Any, **attrs: Any) -> np.ndarray:
        array = np.asarray(image.get() if hasattr(image, "get") else image)
        channels = {"grayscale": 1, "rgb": 3}.get(attrs["format"], array.shape[-1])
        if array.ndim != 3 or array.dtype != np.uint8 or array.shape[-1] != channels:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"image must be uint8 [height, width, {channels or '1 or 3'}], got "
                f"{array.dtype} {list(array.shape)}",
            )
        if channels not in (1, 3):
            raise errors.InvalidArgumentError(
                None, None, f"image must have 1 or 3 channels, got {channels}"
            )
        buffer = io.BytesIO()
        picture = Image.fromarray(array[..., 0] if channels == 1 else array)
        units = {"in": 1, "cm": 2}.get(attrs["density_unit"], 1)
        picture.save(
            buffer,
            "JPEG",
            quality=int(attrs["quality"]),
            progressive=bool(attrs["progressive"]),
            optimize=bool(attrs["optimize_size"]),
            subsampling=2 if attrs["chroma_downsampling"] else 0,
            dpi=(attrs["x_density"], attrs["y_density"]) if units == 1 else None,
        )
        return _scalar_string(buffer.getvalue())


class EncodeJpegVariableQuality(OpDef):
    """uint8 pixels [h, w, 1 or 3] as a JPEG at the ``quality`` a tensor gives (0-100)."""

    inputs = ("images", "quality")
    differentiable = False
    cpu_only = True  # host work: protobuf, Pillow, files
    samples = [Sample(images=np.arange(24, dtype=np.uint8).reshape(2, 4, 3), quality=np.int32(50))]

    def infer(self, images: TensorSpec, quality: TensorSpec) -> TensorSpec:
        images.shape.with_rank(3)
        return TensorSpec([], dtypes.string)

    def compute(self, ctx: KernelContext, images: Any, quality: Any) -> np.ndarray:
        attrs = dict(EncodeJpeg.attrs, quality=int(np.clip(int(quality), 0, 100)))
        return _ENCODE_JPEG.compute(ctx, images, **attrs)


_ENCODE_JPEG = EncodeJpeg()


# --- builders -----------------------------------------------------------------------------------
def encode_jpeg_variable_quality(images: Any, quality: Any, name: str | None = None) -> Tensor:
    """uint8 pixels as a JPEG at a quality given as a tensor."""
    inputs = [ops_lib.convert_to_tensor(images), ops_lib.convert_to_tensor(quality, dtypes.int32)]
    graph = ops_lib.get_default_graph()
    return graph.create_op("EncodeJpegVariableQuality", inputs, name=name).outputs[0]


def _decode(op_type: str, contents: Any, attrs: dict[str, Any], name: str | None) -> Tensor:
    contents = ops_lib.convert_to_tensor(contents, dtype=dtypes.string)
    graph = ops_lib.get_default_graph()
    return graph.create_op(op_type, [contents], attrs, name=name or op_type).outputs[0]


def decode_jpeg(
    contents: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1.0,
    dct_method: str = "",
    name: str | None = None,
) -> Tensor:
    """A JPEG's pixels as uint8 [height, width, channels] (channels 0: the file's own)."""
    attrs = {
        "channels": int(channels),
        "ratio": int(ratio),
        "fancy_upscaling": bool(fancy_upscaling),
        "try_recover_truncated": bool(try_recover_truncated),
        "acceptable_fraction": float(acceptable_fraction),
        "dct_method": dct_method,
    }
    return _decode("DecodeJpeg", contents, attrs, name)


def decode_png(contents: Any, channels: int = 0, dtype: Any = dtypes.uint8, name=None) -> Tensor:
    """A PNG's pixels as [height, width, channels] of uint8 or uint16.

    >>> import nbflow as tf
    >>> pixels = tf.constant([[[255, 0, 0]]], tf.uint8)
    >>> tf.Session().run(tf.image.decode_png(tf.image.encode_png(pixels))).tolist()
    [[[255, 0, 0]]]
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.uint8, dtypes.uint16):
        raise TypeError(f"decode_png dtype must be uint8 or uint16, got {dtype.name}")
    return _decode("DecodePng", contents, {"channels": int(channels), "dtype": dtype}, name)


def decode_gif(contents: Any, name: str | None = None) -> Tensor:
    """A GIF's frames as uint8 [num_frames, height, width, 3]."""
    return _decode("DecodeGif", contents, {}, name)


def decode_bmp(contents: Any, channels: int = 0, name: str | None = None) -> Tensor:
    """A BMP's pixels as uint8 [height, width, channels]."""
    return _decode("DecodeBmp", contents, {"channels": int(channels)}, name)


def decode_image_uint8(contents: Any, channels: int, expand_animations: bool, name=None):
    """``DecodeImage``: pixels of any supported format as uint8 (``image_ops.decode_image``
    converts them to the dtype asked for)."""
    attrs = {"channels": int(channels), "expand_animations": bool(expand_animations)}
    return _decode("DecodeImage", contents, attrs, name)


def is_jpeg(contents: Any, name: str | None = None) -> Tensor:
    """Whether the string ``contents`` starts as a JPEG file does (a bool scalar)."""
    return _decode("IsJpeg", contents, {}, name)


def extract_jpeg_shape(contents: Any, output_type: Any = dtypes.int32, name=None) -> Tensor:
    """A JPEG's [height, width, channels], from its header."""
    attrs = {"output_type": dtypes.as_dtype(output_type)}
    return _decode("ExtractJpegShape", contents, attrs, name)


def decode_and_crop_jpeg(
    contents: Any,
    crop_window: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1.0,
    dct_method: str = "",
    name: str | None = None,
) -> Tensor:
    """The window ``[y, x, height, width]`` of a JPEG's pixels (decoded whole, then cropped)."""
    with ops_lib.name_scope(name, "decode_and_crop_jpeg", [contents, crop_window]):
        image = decode_jpeg(
            contents,
            channels,
            ratio,
            fancy_upscaling,
            try_recover_truncated,
            acceptable_fraction,
            dct_method,
        )
        window = ops_lib.convert_to_tensor(crop_window, dtype=dtypes.int32)
        begin = array_ops.concat([window[:2], [0]], 0)
        size = array_ops.concat([window[2:], [-1]], 0)
        return array_ops.slice(image, begin, size)


def encode_png(image: Any, compression: int = -1, name: str | None = None) -> Tensor:
    """uint8 or uint16 pixels [height, width, channels] as a PNG string."""
    image = ops_lib.convert_to_tensor(image)
    graph = ops_lib.get_default_graph()
    op = graph.create_op("EncodePng", [image], {"compression": int(compression)}, name=name)
    return op.outputs[0]


def encode_jpeg(
    image: Any,
    format: str = "",  # noqa: A002 - TensorFlow's keyword
    quality: int = 95,
    progressive: bool = False,
    optimize_size: bool = False,
    chroma_downsampling: bool = True,
    density_unit: str = "in",
    x_density: int = 300,
    y_density: int = 300,
    xmp_metadata: str = "",
    name: str | None = None,
) -> Tensor:
    """uint8 pixels [height, width, 1 or 3] as a JPEG string."""
    attrs = {
        "format": format,
        "quality": int(quality),
        "progressive": bool(progressive),
        "optimize_size": bool(optimize_size),
        "chroma_downsampling": bool(chroma_downsampling),
        "density_unit": density_unit,
        "x_density": int(x_density),
        "y_density": int(y_density),
        "xmp_metadata": xmp_metadata,
    }
    image = ops_lib.convert_to_tensor(image)
    op = ops_lib.get_default_graph().create_op("EncodeJpeg", [image], attrs, name=name)
    return op.outputs[0]
