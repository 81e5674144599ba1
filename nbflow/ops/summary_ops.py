"""Summary ops (whitepaper §9.1): each yields a serialized ``Summary`` protocol buffer.

    loss_summary = tf.summary.scalar("loss", loss)     # a string tensor
    merged = tf.summary.merge_all()                   # every summary in the collection
    writer.add_summary(sess.run(merged), step)

Tags follow TensorFlow 1.x: the op's name scope prefixes the name (``layer1/loss``), a repeated
name is made unique (``loss_1``), and ``family`` adds a display group. Images are encoded as PNG
and audio as WAV inside the kernels, so nothing but bytes leaves the step. The histogram
(TensorFlow's buckets, counted without sorting) is ``histogram.py``'s; the scalar and histogram
``Summary`` bytes are protobuf's.

Histograms off the critical path. Counting a histogram of a layer's weights takes longer than
the rest of a small training step's kernels, and nothing in the step but the summary's readers
(``MergeSummary``, the fetch) needs it. So ``HistogramSummary`` is an asynchronous kernel
(``OpDef.is_async``) that only works in the background (``runs_in_background``):

1. if ``histograms_in_background``, on the step's thread it takes a *snapshot*, a private flat
   copy of the values (one memcpy: the values may be a variable that an update op of the same
   step changes in place next), and hands (snapshot, tag, ``done``) to ``_BackgroundWorker``,
   one daemon thread shared by all sessions, which buckets and encodes the snapshots in the
   order they come and calls ``done(bytes)`` or ``done(error=...)`` (NaN:
   ``InvalidArgumentError`` "Nan in summary histogram for: <tag>", which the runner turns into
   the step's error naming the node);
2. the step goes on. The straight-line runner starts background kernels (and what they read)
   first and waits for each at its first reader (runtime/executor.py); the dataflow executor
   runs the readers when ``done`` is called. A cancelled step (``Session.close``) stops waiting
   at once; the worker finishes the snapshot and its ``done`` is ignored.

The counting is two compiled loops that release the GIL (``histogram.py``: ~80 µs for the
78,400 weights of the Figure 1 MLP, ~110 µs with the min, max and framing), and the ``Summary``
bytes are written directly. Even so the worker does not pay on a 2-core machine: the step's
matmuls keep OpenBLAS's second thread busy on the other core, so the worker's loop runs beside
it at half speed, and the step waits at the join longer than counting in line takes (measured,
three alternating runs: a scalar + histogram summary step cost +515 µs with the worker, +425 µs
in line). So step 1 is switched by ``histograms_in_background`` (off by default): off, the
kernel counts the values themselves at once (nothing can change them before it returns, so
there is no copy) and calls ``done`` before returning, and the step waits for nothing.

Merging and writing cost next to nothing: ``MergeSummary`` reads only its inputs' tags, from
the wire, and ``FileWriter.add_summary`` puts the Event's few key bytes in front of the merged
bytes (framework/wire_format.py), where parsing and re-serializing through protobuf cost more
than the histogram itself.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import queue
import re
import struct
import threading
import wave
import zlib
from typing import Any
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework import protos
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.ops import GraphKeys
from nbflow.framework.tensor_shape import TensorShape
from nbflow.framework.wire_format import WireError, summary_tags, varint
from nbflow.ops.histogram import histogram_summary_bytes, snapshot
from nbflow.ops.array_ops import constant


def _bytes_scalar(data: bytes) -> np.ndarray:
    return np.array(data, dtype=object)


def _text(value: Any) -> str:
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _floats(values: np.ndarray) -> list[float]:
    """``static_cast<float>`` of each value, as TensorFlow: out of float32's range is inf."""
    with np.errstate(over="ignore"):
        return values.astype(np.float32).ravel().tolist()


def _scalar_value_bytes(tag: str, value: float) -> bytes:
    """``Summary(value=[Value(tag=tag, simple_value=value)])`` serialized, written directly
    (a tenth of protobuf's cost on a step's critical path): field 1 (``value``, a message) holding
    field 1 (``tag``, a string, left out when empty as proto3 does) and field 2 (``simple_value``,
    a float in a oneof, so always written), in field order as protobuf writes them."""
    name = tag.encode()
    try:
        packed = _FLOAT.pack(value)
    except OverflowError:  # static_cast<float>: beyond float32's range is inf
        packed = _FLOAT.pack(math.copysign(math.inf, value))
    inner = (b"\n" + varint(len(name)) + name if name else b"") + b"\x15" + packed
    return b"\n" + varint(len(inner)) + inner


_FLOAT = struct.Struct("<f")


def _string_spec() -> TensorSpec:
    return TensorSpec(TensorShape([]), dtypes.string)


# --- encoders ---------------------------------------------------------------------------------
def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes of a uint8 image [height, width, channels] (1, 2, 3 or 4 channels)."""
    height, width, channels = image.shape
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = np.ascontiguousarray(image, dtype=np.uint8).reshape(height, width * channels)
    raw = np.hstack([np.zeros((height, 1), np.uint8), rows]).tobytes()  # filter byte 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


def _to_uint8(images: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """TensorFlow's image normalisation: non-negative images scale to [0, 255]; others put 0
    at 128 and scale by the largest magnitude; non-finite pixels get ``bad_color``."""
    if images.dtype == np.uint8:
        return images
    images = images.astype(np.float64)
    out = np.empty(images.shape, np.uint8)
    for k, image in enumerate(images):
        finite = np.isfinite(image)
        good = image[finite]
        lo = good.min() if good.size else 0.0
        hi = good.max() if good.size else 0.0
        if lo < 0:
            scale = 127.0 / max(-lo, hi) if max(-lo, hi) > 0 else 0.0
            offset = 128.0
        else:
            scale = 255.0 / hi if hi > 0 else 0.0
            offset = 0.0
        scaled = np.clip(np.where(finite, image, 0.0) * scale + offset, 0, 255)
        out[k] = (scaled + 0.5).astype(np.uint8)
        bad = ~finite.all(axis=-1)
        if bad.any():
            out[k][bad] = bad_color[: images.shape[-1]]
    return out


def encode_wav(audio: np.ndarray, sample_rate: float) -> bytes:
    """16-bit PCM WAV of float audio [frames, channels] in [-1, 1]."""
    pcm = (np.clip(audio, -1.0, 1.0) * 32767.0).round().astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(audio.shape[1])
        w.setsampwidth(2)
        w.setframerate(int(sample_rate))
        w.writeframes(pcm.tobytes())
    return buffer.getvalue()


# --- ops ----------------------------------------------------------------------------------------
class _SummaryOp(OpDef):
    abstract = True
    differentiable = False
    stateful = True  # never folded or deduplicated: a summary is an observation of a step


class ScalarSummary(_SummaryOp):
    """A ``simple_value`` per (tag, value) pair; ``tags`` and ``values`` have one shape."""

    inputs = ("tags", "values")
    samples = [Sample(tags=np.array(b"loss", dtype=object), values=())]

    def infer(self, tags: TensorSpec, values: TensorSpec) -> TensorSpec:
        if not tags.shape.is_compatible_with(values.shape):
            raise ValueError(
                f"tags and values must have the same shape: {tags.shape} vs {values.shape}"
            )
        return _string_spec()

    def compute(self, ctx: KernelContext, tags: Any, values: Any) -> np.ndarray:
        tags, values = np.asarray(tags, dtype=object), np.asarray(values)
        if tags.shape != values.shape:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"tags and values must have the same shape: {list(tags.shape)} vs "
                f"{list(values.shape)}",
            )
        if not values.ndim:  # one loss, one accuracy: the common case, without lists
            return _bytes_scalar(_scalar_value_bytes(_text(tags.item()), float(values)))
        return _bytes_scalar(
            b"".join(
                _scalar_value_bytes(_text(tag), value)
                for tag, value in zip(tags.ravel(), _floats(values))
            )
        )


class _BackgroundWorker:
    """One daemon thread running jobs in the order submitted; each job's result or error goes to
    its ``done``. Started on first use, and again in a forked child (threads do not fork)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._pid = -1  # the process whose thread serves ``_jobs``

    def submit(self, job: Callable[[], Any], done: Callable[..., None]) -> None:
        if self._pid != os.getpid():
            with self._lock:
                if self._pid != os.getpid():
                    self._jobs = queue.SimpleQueue()
                    threading.Thread(
                        target=self._serve, args=(self._jobs,), name="nbflow-summaries", daemon=True
                    ).start()
                    self._pid = os.getpid()
        self._jobs.put((job, done))

    @staticmethod
    def _serve(jobs: queue.SimpleQueue) -> None:
        while True:
            job, done = jobs.get()
            try:
                result, error = job(), None
            except BaseException as exc:  # noqa: BLE001 - the step's error, through ``done``
                result, error = None, exc
            try:
                done(result, error)
            except BaseException:  # noqa: BLE001, S110 - a runner's continuation must not
                pass  # stop the worker: it fails its own step
            del job, done, result, error  # drop the snapshot before waiting for the next job


_worker = _BackgroundWorker()


# Whether ``HistogramSummary`` counts on the background worker (True) or in its kernel's own
# thread, completing at once (False). Off by default: on a 2-core machine the worker's compiled
# loop shares the second core with OpenBLAS's threads, so a step waits for its histogram about as
# long as counting it in line takes (module docstring). Worth turning on where cores are spare.
histograms_in_background = False


class HistogramSummary(_SummaryOp):
    """A histogram of ``values`` (any shape) with TensorFlow's default buckets, counted from a
    snapshot of the values, on the background worker if ``histograms_in_background`` (see the
    module docstring)."""

    inputs = ("tag", "values")
    samples = [Sample(tag=np.array(b"w", dtype=object), values=(3, 4))]
    is_async = True
    runs_in_background = True

    def infer(self, tag: TensorSpec, values: TensorSpec) -> TensorSpec:
        return _string_spec()

    def compute(self, ctx: KernelContext, tag: Any, values: Any, done: Callable[..., None]) -> None:
        values = np.asarray(values.get() if hasattr(values, "get") else values)
        name = _text(tag)
        if histograms_in_background:  # the worker counts a copy: the step may update the values
            values = snapshot(values)
            _worker.submit(lambda: _bytes_scalar(histogram_summary_bytes(values, name)), done)
        else:  # counted before this returns: no copy
            done(_bytes_scalar(histogram_summary_bytes(values, name)))


class ImageSummary(_SummaryOp):
    """PNG images from a [batch, height, width, channels] tensor, up to ``max_images``."""

    inputs = ("tag", "tensor")
    attrs = {"max_images": 3, "bad_color": [255, 0, 0, 255]}
    samples = [Sample(tag=np.array(b"img", dtype=object), tensor=(2, 4, 5, 3))]

    def infer(self, tag: TensorSpec, tensor: TensorSpec, max_images: int, bad_color: Any):
        shape = tensor.shape.with_rank(4)
        channels = shape[3]
        if channels is not None and channels not in (1, 3, 4):
            raise ValueError(f"Tensor must have 1, 3, or 4 channels, got {channels}")
        return _string_spec()

    def compute(self, ctx: KernelContext, tag: Any, tensor: Any, max_images: int, bad_color):
        images = np.asarray(tensor)[:max_images]
        pixels = _to_uint8(images, np.asarray(bad_color, np.uint8))
        base = _text(tag)
        summary = protos.Summary()
        for k, image in enumerate(pixels):
            height, width, channels = image.shape
            summary.value.add(
                tag=f"{base}/image" if max_images == 1 else f"{base}/image/{k}",
                image=protos.Summary.Image(
                    height=height,
                    width=width,
                    colorspace=channels,
                    encoded_image_string=encode_png(image),
                ),
            )
        return _bytes_scalar(summary.SerializeToString())


class AudioSummaryV2(_SummaryOp):
    """WAV clips from float audio [batch, frames(, channels)] in [-1, 1]."""

    inputs = ("tag", "tensor", "sample_rate")
    attrs = {"max_outputs": 3}
    samples = [
        Sample(tag=np.array(b"a", dtype=object), tensor=(2, 10, 1), sample_rate=np.float32(8000))
    ]

    def infer(self, tag: TensorSpec, tensor: TensorSpec, sample_rate: TensorSpec, max_outputs: int):
        if tensor.shape.ndims not in (None, 2, 3):
            raise ValueError(
                f"audio must be [batch, frames] or [batch, frames, channels]: {tensor.shape}"
            )
        return _string_spec()

    def compute(self, ctx, tag: Any, tensor: Any, sample_rate: Any, max_outputs: int):
        clips = np.asarray(tensor, dtype=np.float64)[:max_outputs]
        if clips.ndim == 2:
            clips = clips[:, :, None]
        rate = float(np.asarray(sample_rate))
        base = _text(tag)
        summary = protos.Summary()
        for k, clip in enumerate(clips):
            summary.value.add(
                tag=f"{base}/audio" if max_outputs == 1 else f"{base}/audio/{k}",
                audio=protos.Summary.Audio(
                    sample_rate=rate,
                    num_channels=clip.shape[1],
                    length_frames=clip.shape[0],
                    encoded_audio_string=encode_wav(clip, rate),
                    content_type="audio/wav",
                ),
            )
        return _bytes_scalar(summary.SerializeToString())


def is_tf1_tensor_summary(node_def: Any) -> bool:
    """Whether ``node_def`` is TensorFlow 1's ``TensorSummary``, which keeps a JSON
    ``SummaryDescription`` in its ``description`` attr (nbflow writes ``TensorSummaryV2``)."""
    return node_def.op == "TensorSummary"


class TensorSummaryV2(_SummaryOp):
    """A whole tensor as a ``TensorProto``, with plugin metadata (text summaries use this)."""

    inputs = ("tag", "tensor", "serialized_summary_metadata")
    samples = [
        Sample(
            tag=np.array(b"t", dtype=object),
            tensor=(2, 3),
            serialized_summary_metadata=np.array(b"", dtype=object),
        )
    ]

    def infer(self, tag: TensorSpec, tensor: TensorSpec, serialized_summary_metadata: TensorSpec):
        return _string_spec()

    def compute(self, ctx: KernelContext, tag: Any, tensor: Any, serialized_summary_metadata: Any):
        value = np.asarray(tensor.get() if hasattr(tensor, "get") else tensor)
        metadata = protos.SummaryMetadata.FromString(
            np.asarray(serialized_summary_metadata, dtype=object).item() or b""
        )
        summary = protos.Summary()
        summary.value.add(tag=_text(tag), metadata=metadata, tensor=protos.make_tensor_proto(value))
        return _bytes_scalar(summary.SerializeToString())


class MergeSummary(_SummaryOp):
    """One Summary holding the values of all ``inputs``; a tag may appear only once."""

    inputs = ("inputs*",)
    samples = [
        Sample(
            inputs=[
                np.array(
                    protos.Summary(value=[protos.Summary.Value(tag="a")]).SerializeToString(),
                    dtype=object,
                ),
                np.array(
                    protos.Summary(value=[protos.Summary.Value(tag="b")]).SerializeToString(),
                    dtype=object,
                ),
            ]
        )
    ]

    def infer(self, inputs: list[TensorSpec]) -> TensorSpec:
        return _string_spec()

    def compute(self, ctx: KernelContext, inputs: Sequence[Any]) -> np.ndarray:
        # A Summary is one repeated field, so concatenated Summaries are their merge; only the
        # inputs' tags are read, from the wire (framework/wire_format.py)
        parts = []
        seen: set[str] = set()
        for serialized in inputs:
            for data in np.asarray(serialized, dtype=object).ravel():
                try:
                    tags = summary_tags(data)
                except (WireError, TypeError) as e:
                    raise errors.InvalidArgumentError(
                        None, None, f"Could not parse one of the summary inputs: {e}"
                    ) from None
                for tag in tags:
                    if tag in seen:
                        raise errors.InvalidArgumentError(
                            None, None, f"Duplicate tag {tag} found in summary inputs"
                        )
                    seen.add(tag)
                parts.append(data)
        return _bytes_scalar(b"".join(parts))


# --- tf.summary builders ----------------------------------------------------------------------
def clean_tag(name: str | None) -> str | None:
    """Replace characters TensorBoard does not allow in tags with '_' (as TensorFlow does)."""
    if name is None:
        return None
    cleaned = re.sub(r"[^-/\w\.]", "_", name)
    return cleaned.lstrip("/")


@contextlib.contextmanager
def summary_scope(
    name: str, family: str | None = None, default_name: str | None = None, values: Any = None
) -> Iterator[tuple[str, str]]:
    """Open the summary's name scope; yields (tag, scope): the tag is the scope's full name."""
    name = clean_tag(name) or ""
    family = clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with ops_lib.name_scope(base or None, default_name, values) as scope:
        tag = scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}"
        yield tag, scope


def _collect(value: ops_lib.Tensor, collections: Sequence[str] | None) -> None:
    for key in [GraphKeys.SUMMARIES] if collections is None else collections:
        ops_lib.add_to_collection(key, value)


def _summary(op_type: str, inputs: list[Any], attrs: dict[str, Any], scope: str) -> ops_lib.Tensor:
    graph = ops_lib.get_default_graph()
    return graph.create_op(op_type, inputs, attrs, name=scope).outputs[0]


def _tag_const(tag: str) -> ops_lib.Tensor:
    return constant(tag, dtype=dtypes.string, name="tag")


def scalar(
    name: str, tensor: Any, collections: Sequence[str] | None = None, family: str | None = None
) -> ops_lib.Tensor:
    """A summary of one real number; its tag is the scoped ``name``."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tensor = ops_lib.convert_to_tensor(tensor)
        if tensor.shape.ndims not in (None, 0):
            raise ValueError(f"Tensor {tensor.name} must be a scalar, has shape {tensor.shape}")
        value = _summary("ScalarSummary", [_tag_const(tag), tensor], {}, scope)
    _collect(value, collections)
    return value


def histogram(
    name: str, values: Any, collections: Sequence[str] | None = None, family: str | None = None
) -> ops_lib.Tensor:
    """A histogram of all elements of ``values``."""
    with summary_scope(name, family, values=[values]) as (tag, scope):
        values = ops_lib.convert_to_tensor(values)
        value = _summary("HistogramSummary", [_tag_const(tag), values], {}, scope)
    _collect(value, collections)
    return value


def image(
    name: str,
    tensor: Any,
    max_outputs: int = 3,
    collections: Sequence[str] | None = None,
    family: str | None = None,
) -> ops_lib.Tensor:
    """PNG images of a [batch, height, width, 1|3|4] tensor (tags ``name/image/k``)."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tensor = ops_lib.convert_to_tensor(tensor)
        value = _summary(
            "ImageSummary", [_tag_const(tag), tensor], {"max_images": max_outputs}, scope
        )
    _collect(value, collections)
    return value


def audio(
    name: str,
    tensor: Any,
    sample_rate: Any,
    max_outputs: int = 3,
    collections: Sequence[str] | None = None,
    family: str | None = None,
) -> ops_lib.Tensor:
    """WAV clips of float audio [batch, frames(, channels)] (tags ``name/audio/k``)."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tensor = ops_lib.convert_to_tensor(tensor, dtype=dtypes.float32)
        rate = ops_lib.convert_to_tensor(sample_rate, dtype=dtypes.float32, name="sample_rate")
        value = _summary(
            "AudioSummaryV2", [_tag_const(tag), tensor, rate], {"max_outputs": max_outputs}, scope
        )
    _collect(value, collections)
    return value


def tensor_summary(
    name: str,
    tensor: Any,
    summary_description: str | None = None,
    collections: Sequence[str] | None = None,
    summary_metadata: Any = None,
    family: str | None = None,
    display_name: str | None = None,
) -> ops_lib.Tensor:
    """A summary holding the whole tensor (a ``TensorProto``) and optional plugin metadata."""
    metadata = protos.SummaryMetadata()
    if summary_metadata is not None:
        metadata.CopyFrom(summary_metadata)
    if display_name:
        metadata.display_name = display_name
    if summary_description:
        metadata.summary_description = summary_description
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tensor = ops_lib.convert_to_tensor(tensor)
        serialized = constant(metadata.SerializeToString(), dtype=dtypes.string, name="metadata")
        value = _summary("TensorSummaryV2", [_tag_const(tag), tensor, serialized], {}, scope)
    _collect(value, collections)
    return value


def text(name: str, tensor: Any, collections: Sequence[str] | None = None) -> ops_lib.Tensor:
    """A string tensor shown by TensorBoard's text dashboard (markdown)."""
    tensor = ops_lib.convert_to_tensor(tensor)
    if tensor.dtype.base_dtype is not dtypes.string:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got {tensor.dtype}")
    metadata = protos.SummaryMetadata(
        plugin_data=protos.SummaryMetadata.PluginData(plugin_name="text")
    )
    return tensor_summary(name, tensor, collections=collections, summary_metadata=metadata)


def merge(
    inputs: Sequence[Any], collections: Sequence[str] | None = None, name: str | None = None
) -> ops_lib.Tensor:
    """One summary with the values of all ``inputs`` (serialized Summary string tensors)."""
    graph = ops_lib.get_default_graph()
    with ops_lib.name_scope(name, "Merge", inputs):
        value = graph.create_op("MergeSummary", [list(inputs)], name="MergeSummary").outputs[0]
    for key in collections or []:
        ops_lib.add_to_collection(key, value)
    return value


def merge_all(
    key: str = GraphKeys.SUMMARIES, scope: str | None = None, name: str | None = None
) -> ops_lib.Tensor | None:
    """Merge every summary in collection ``key`` (None when it is empty)."""
    summaries = ops_lib.get_collection(key, scope=scope)
    if not summaries:
        return None
    return merge(summaries, name=name)
