"""``tf.bitcast`` and ``tf.timestamp``: reinterpret a tensor's bytes; read the wall clock.

``bitcast(x, type)`` reads the same bytes as another dtype, without copying values: with equal
item sizes the shape is kept; a wider input gains a last dimension (one int32 becomes
``[4]`` uint8); a narrower one loses its last dimension, which must hold exactly one output
element's bytes. Byte order is the machine's (little-endian, as TensorFlow on x86 and GPUs).

``timestamp()`` is the time the op runs, in seconds since the epoch (float64), for measuring
inside a graph.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape

_BITCASTABLE = frozenset(
    [
        dtypes.float16,
        dtypes.float32,
        dtypes.float64,
        dtypes.int8,
        dtypes.int16,
        dtypes.int32,
        dtypes.int64,
        dtypes.uint8,
        dtypes.uint16,
        dtypes.uint32,
        dtypes.uint64,
        dtypes.complex64,
        dtypes.complex128,
    ]
)


def _bitcast_shape(shape: TensorShape, src: dtypes.DType, dst: dtypes.DType) -> TensorShape:
    if src.size == dst.size:
        return shape
    if src.size > dst.size:
        if src.size % dst.size:
            raise ValueError(f"Cannot bitcast {src.name} to {dst.name}: sizes do not divide")
        return shape.concatenate([src.size // dst.size])
    if shape.ndims == 0:
        raise ValueError(f"Cannot bitcast a scalar {src.name} to the wider {dst.name}")
    if shape.ndims is None:
        return TensorShape(None)
    last = shape.as_list()[-1]
    if last is not None and last * src.size != dst.size:
        raise ValueError(
            f"Cannot bitcast {src.name} to {dst.name}: the last dimension must be "
            f"{dst.size // src.size}, got {last} (shape {shape})"
        )
    return TensorShape(shape.as_list()[:-1])


class Bitcast(OpDef):
    """``input``'s bytes read as ``type``; see the module docstring for the shapes."""

    inputs = ("input",)
    attrs = {"type": REQUIRED}
    differentiable = False  # a reinterpretation of bits has no gradient (as TensorFlow)
    samples = [
        Sample(input=(2, 3), type=dtypes.int64),
        Sample(input_dtype=np.int32, input=(2, 3), type=dtypes.uint8),
        Sample(input_dtype=np.uint8, input=np.zeros((3, 4), np.uint8), type=dtypes.float32),
        Sample(input_dtype=np.float32, input=(4,), type=dtypes.int32),
    ]

    def infer(self, input: TensorSpec, type: dtypes.DType) -> TensorSpec:
        src = input.dtype.base_dtype
        for d in (src, type):
            if d not in _BITCASTABLE:
                raise TypeError(f"bitcast: {d.name} is not a numeric type it can reinterpret")
        return TensorSpec(_bitcast_shape(TensorShape(input.shape), src, type), type)

    def compute(self, ctx: KernelContext, input: Any, type: dtypes.DType) -> Any:
        size, new = input.dtype.itemsize, type.np.itemsize
        shape = tuple(input.shape)
        if size > new:
            shape += (size // new,)
        elif size < new:
            if not shape or shape[-1] * size != new:
                raise ValueError(
                    f"bitcast: the last dimension of shape {shape} must be {new // size} to "
                    f"make one {type.name}"
                )
            shape = shape[:-1]
        flat = ctx.xp.ascontiguousarray(input).reshape(-1)  # 1-D, so any item size may view
        return flat.view(type.np).reshape(shape)


def bitcast(input: Any, type: Any, name: str | None = None) -> ops_lib.Tensor:
    """``input``'s bytes as ``type`` (no values are converted).

    >>> import nbflow as tf
    >>> tf.Session().run(tf.bitcast(tf.constant(1.0), tf.int32)).item()
    1065353216
    """
    input = ops_lib.convert_to_tensor(input)
    return (
        ops_lib.get_default_graph()
        .create_op("Bitcast", [input], {"type": dtypes.as_dtype(type)}, name=name)
        .outputs[0]
    )


class Timestamp(OpDef):
    """The time the op runs, in seconds since the epoch."""

    inputs = ()
    stateful = True  # a new value every run: never constant-folded or cached
    differentiable = False
    samples = [Sample()]

    def infer(self) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.float64)

    def compute(self, ctx: KernelContext) -> Any:
        return ctx.xp.asarray(time.time(), dtype=np.float64)


def timestamp(name: str | None = None) -> ops_lib.Tensor:
    """A float64 scalar: the wall-clock time when the op runs (seconds since the epoch)."""
    return ops_lib.get_default_graph().create_op("Timestamp", [], {}, name=name).outputs[0]
