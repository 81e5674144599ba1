"""TensorFlow 1.15's remaining array functions: rearranging (``roll``, ``repeat``, ``meshgrid``,
``space_to_depth``/``depth_to_space``, ``batch_gather``), building (``linspace``), searching
(``searchsorted``, ``setdiff1d``, ``unique_with_counts``, ``unravel_index``,
``histogram_fixed_width_bins``) and non-destructive scatters (``tensor_scatter_nd_*``).

Most are graph code over gather, reshape, transpose and scatter_nd, so they inherit those ops'
kernels and gradients. Three need kernels of their own, declared here as TensorFlow declares
them: ``LowerBound``/``UpperBound`` (searchsorted), ``ListDiff`` (setdiff1d) and ``EnsureShape``.
"""

from __future__ import annotations

import builtins
import collections
from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape, as_shape
from nbflow.ops.clip_ops import clip_by_value
from nbflow.ops.constant_ops import _create1, _int_tensor, fill, identity, ones_like, range
from nbflow.ops.gather_nd_ops import gather_nd, scatter_nd
from nbflow.ops.gather_ops import gather, unsorted_segment_sum
from nbflow.ops.join_ops import concat, stack
from nbflow.ops.math_binary import add, floordiv, floormod, maximum, minimum, multiply, realdiv
from nbflow.ops.math_binary import subtract
from nbflow.ops.math_reductions import reduce_sum
from nbflow.ops.math_unary import cast, floor, rsqrt
from nbflow.ops.scan_ops import cumprod, cumsum
from nbflow.ops.shape_ops import expand_dims, reshape, shape, size, transpose
from nbflow.ops.sort_ops import unique

Tensor = ops_lib.Tensor


# --- searching ------------------------------------------------------------------------------------
class LowerBound(OpDef):
    """For each row, where each value would be inserted into the sorted row of
    ``sorted_inputs`` to keep it sorted: before equal entries (``side="left"``)."""

    inputs = ("sorted_inputs", "values")
    attrs = {"out_type": dtypes.int32}
    differentiable = False
    side = "left"
    samples = [
        Sample(sorted_inputs=np.array([[1.0, 3.0, 3.0, 7.0]]), values=np.array([[3.0, 0.0, 8.0]])),
        Sample(
            sorted_inputs=np.array([[0, 2], [1, 5]], np.int32),
            values=np.array([[2, 3], [0, 5]], np.int32),
            out_type=dtypes.int64,
        ),
    ]

    def infer(self, sorted_inputs: TensorSpec, values: TensorSpec, out_type: Any) -> TensorSpec:
        return TensorSpec(values.shape, out_type)

    def compute(self, ctx: KernelContext, sorted_inputs: Any, values: Any, out_type: Any) -> Any:
        xp = ctx.xp
        if sorted_inputs.shape[:-1] != values.shape[:-1]:
            raise ValueError(
                f"sorted_inputs {list(sorted_inputs.shape)} and values {list(values.shape)} "
                "must have the same leading (batch) dimensions"
            )
        rows = [
            xp.searchsorted(s, v, side=self.side)
            for s, v in zip(
                sorted_inputs.reshape(-1, sorted_inputs.shape[-1]),
                values.reshape(-1, values.shape[-1]),
            )
        ]
        out = xp.stack(rows) if rows else xp.zeros((0, values.shape[-1]), np.int64)
        return out.reshape(values.shape).astype(out_type.np)


class UpperBound(LowerBound):
    """Like LowerBound, but after equal entries (``side="right"``)."""

    side = "right"


def searchsorted(
    sorted_sequence: Any,
    values: Any,
    side: str = "left",
    out_type: Any = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """Insertion points of ``values`` into the sorted innermost rows of ``sorted_sequence``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.searchsorted([[1, 3, 3, 7]], [[3, 8]], side="right")).tolist()
    [[3, 4]]
    """
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    sorted_sequence = ops_lib.convert_to_tensor(sorted_sequence)
    values = ops_lib.convert_to_tensor(values, dtype=sorted_sequence.dtype.base_dtype)
    op_type = "LowerBound" if side == "left" else "UpperBound"
    attrs = {"out_type": dtypes.as_dtype(out_type)}
    return _create1(op_type, [sorted_sequence, values], attrs, name=name)


class ListDiff(OpDef):
    """The values of 1-D ``x`` not in ``y``, in ``x``'s order, and their positions in ``x``."""

    inputs = ("x", "y")
    attrs = {"out_idx": dtypes.int32}
    num_outputs = 2
    differentiable = False
    samples = [
        Sample(x=np.array([1, 2, 3, 4, 5, 6], np.int32), y=np.array([1, 3, 5], np.int32)),
        Sample(x=np.array([0.5, 1.5]), y=np.array([], np.float64), out_idx=dtypes.int64),
    ]

    def infer(self, x: TensorSpec, y: TensorSpec, out_idx: Any) -> list[TensorSpec]:
        x.shape.with_rank(1)
        y.shape.with_rank(1)
        unknown = TensorShape([None])
        return [TensorSpec(unknown, x.dtype.base_dtype), TensorSpec(unknown, out_idx)]

    def compute(self, ctx: KernelContext, x: Any, y: Any, out_idx: Any) -> tuple[Any, Any]:
        xp = ctx.xp
        keep = ~xp.isin(x, y)
        return x[keep], xp.nonzero(keep)[0].astype(out_idx.np)


ListDiffResult = collections.namedtuple("ListDiffResult", ["out", "idx"])


def setdiff1d(x: Any, y: Any, index_dtype: Any = dtypes.int32, name: str | None = None) -> Any:
    """The values of ``x`` not in ``y`` (``out``) and where they are in ``x`` (``idx``)."""
    x = ops_lib.convert_to_tensor(x)
    y = ops_lib.convert_to_tensor(y, dtype=x.dtype.base_dtype)
    attrs = {"out_idx": dtypes.as_dtype(index_dtype)}
    op = ops_lib.get_default_graph().create_op("ListDiff", [x, y], attrs, name=name)
    return ListDiffResult(*op.outputs)


UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def unique_with_counts(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> Any:
    """``tf.unique`` plus how often each distinct value occurs (``count``)."""
    with ops_lib.name_scope(name, "UniqueWithCounts", [x]):
        y, idx = unique(x, out_idx)
        count = unsorted_segment_sum(ones_like(idx), idx, size(y, out_type=idx.dtype))
        return UniqueWithCounts(y, idx, count)


def unravel_index(indices: Any, dims: Any, name: str | None = None) -> Tensor:
    """The coordinates in an array of shape ``dims`` of flat ``indices``: shape [len(dims)] +
    indices.shape (as ``np.unravel_index`` stacked)."""
    with ops_lib.name_scope(name, "UnravelIndex", [indices, dims]):
        indices = _int_tensor(indices)
        dims = cast(_int_tensor(dims), indices.dtype)
        strides = cumprod(dims, exclusive=True, reverse=True)
        extra = indices.shape.ndims if indices.shape.ndims is not None else 1
        for _ in builtins.range(extra):
            strides, dims = expand_dims(strides, -1), expand_dims(dims, -1)
        return floormod(floordiv(expand_dims(indices, 0), strides), dims)


def histogram_fixed_width_bins(
    values: Any,
    value_range: Any,
    nbins: int = 100,
    dtype: Any = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """The bin (0 .. nbins-1) of each value in ``nbins`` equal bins over ``value_range``;
    values outside go to the first or last bin."""
    with ops_lib.name_scope(name, "histogram_fixed_width_bins", [values, value_range]):
        values = ops_lib.convert_to_tensor(values)
        value_range = ops_lib.convert_to_tensor(value_range, dtype=values.dtype.base_dtype)
        low, high = gather(value_range, 0), gather(value_range, 1)
        scaled = realdiv(subtract(values, low), subtract(high, low))
        bins = floor(multiply(scaled, cast(nbins, values.dtype.base_dtype)))
        return cast(clip_by_value(cast(bins, dtypes.int64), 0, nbins - 1), dtype)


# --- rearranging ----------------------------------------------------------------------------------
def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Elements shifted by ``shift`` along ``axis`` (int or list, as ``np.roll``), wrapping."""
    with ops_lib.name_scope(name, "Roll", [input]):
        x = ops_lib.convert_to_tensor(input)
        shifts = shift if isinstance(shift, (list, tuple)) else [shift]
        axes = axis if isinstance(axis, (list, tuple)) else [axis]
        if len(shifts) != len(axes):
            raise ValueError(f"shift {shift} and axis {axis} must have the same length")
        for s, a in zip(shifts, axes):
            n = gather(shape(x), a % x.shape.ndims if x.shape.ndims else a)
            positions = floormod(subtract(range(n), cast(_int_tensor(s), dtypes.int32)), n)
            x = gather(x, positions, axis=a)
        return x


def repeat(input: Any, repeats: Any, axis: Any = None, name: str | None = None) -> Tensor:  # noqa: A002
    """Each element repeated ``repeats`` times along ``axis`` (flattened when None), as
    ``np.repeat``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.repeat([1, 2, 3], [1, 0, 2])).tolist()
    [1, 3, 3]
    """
    with ops_lib.name_scope(name, "Repeat", [input, repeats]):
        x = ops_lib.convert_to_tensor(input)
        if axis is None:
            x, axis = reshape(x, [-1]), 0
        n = gather(shape(x), axis)
        repeats = _int_tensor(repeats)
        if repeats.shape.ndims == 0:
            repeats = multiply(ones_like(range(n)), repeats)
        ends = cumsum(cast(repeats, dtypes.int32))
        total = gather(concat([[0], ends], 0), n)
        positions = searchsorted(expand_dims(ends, 0), expand_dims(range(total), 0), "right")
        return gather(x, reshape(positions, [-1]), axis=axis)


def meshgrid(*args: Any, **kwargs: Any) -> list[Tensor]:
    """N-D coordinate grids from 1-D vectors; ``indexing="xy"`` (default) swaps the first two
    axes, as ``np.meshgrid``."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"meshgrid got unexpected keyword arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    with ops_lib.name_scope(name, values=list(args)):
        vectors = [reshape(ops_lib.convert_to_tensor(a), [-1]) for a in args]
        rank = len(vectors)
        full = stack([size(v) for v in vectors])
        grids = []
        for i, v in enumerate(vectors):
            axis_i = reshape(v, [-1 if j == i else 1 for j in builtins.range(rank)])
            grids.append(multiply(axis_i, fill(full, ops_lib.convert_to_tensor(1, v.dtype))))
        if indexing == "xy" and rank >= 2:
            perm = [1, 0, *builtins.range(2, rank)]
            grids = [transpose(g, perm) for g in grids]
        return grids


def space_to_depth(
    input: Any, block_size: int, name: str | None = None, data_format: str = "NHWC"
) -> Tensor:  # noqa: A002
    """NHWC blocks of ``block_size`` x ``block_size`` pixels moved into the channels."""
    if data_format != "NHWC":
        raise ValueError(f"space_to_depth supports data_format='NHWC' only, got {data_format!r}")
    with ops_lib.name_scope(name, "SpaceToDepth", [input]):
        x = ops_lib.convert_to_tensor(input)
        b, h, w, c = (gather(shape(x), i) for i in builtins.range(4))
        bs = block_size
        x = reshape(x, stack([b, floordiv(h, bs), bs, floordiv(w, bs), bs, c]))
        x = transpose(x, [0, 1, 3, 2, 4, 5])
        return reshape(x, stack([b, floordiv(h, bs), floordiv(w, bs), c * bs * bs]))


def depth_to_space(
    input: Any, block_size: int, name: str | None = None, data_format: str = "NHWC"
) -> Tensor:  # noqa: A002
    """The inverse of ``space_to_depth``: channels spread into ``block_size`` blocks."""
    if data_format != "NHWC":
        raise ValueError(f"depth_to_space supports data_format='NHWC' only, got {data_format!r}")
    with ops_lib.name_scope(name, "DepthToSpace", [input]):
        x = ops_lib.convert_to_tensor(input)
        b, h, w, c = (gather(shape(x), i) for i in builtins.range(4))
        bs = block_size
        x = reshape(x, stack([b, h, w, bs, bs, floordiv(c, bs * bs)]))
        x = transpose(x, [0, 1, 3, 2, 4, 5])
        return reshape(x, stack([b, h * bs, w * bs, floordiv(c, bs * bs)]))


def batch_gather(params: Any, indices: Any, name: str | None = None) -> Tensor:
    """``params[b, ..., indices[b, ...]]``: a gather per batch row (``gather_nd`` with batch
    dims)."""
    with ops_lib.name_scope(name, "BatchGather", [params, indices]):
        indices = _int_tensor(indices)
        rank = indices.shape.ndims
        coordinates = []
        for i in builtins.range(rank - 1):  # the batch position along each leading axis
            along = reshape(
                range(gather(shape(indices), i)),
                [-1 if j == i else 1 for j in builtins.range(rank)],
            )
            coordinates.append(multiply(cast(along, indices.dtype), ones_like(indices)))
        return gather_nd(params, stack([*coordinates, indices], axis=-1))


def linspace(start: Any, stop: Any, num: Any, name: str | None = None) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.linspace(0.0, 1.0, 5)).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    with ops_lib.name_scope(name, "LinSpace", [start, stop, num]):
        start = ops_lib.convert_to_tensor(start)
        stop = ops_lib.convert_to_tensor(stop, dtype=start.dtype.base_dtype)
        num = _int_tensor(num)
        steps = cast(range(num), start.dtype.base_dtype)
        denominator = cast(add(num, -1), start.dtype.base_dtype)
        delta = realdiv(subtract(stop, start), _at_least_one(denominator))
        return add(start, multiply(steps, delta))


def _at_least_one(x: Tensor) -> Tensor:
    return maximum(x, ops_lib.convert_to_tensor(1, x.dtype.base_dtype))


lin_space = linspace


def parallel_stack(values: list[Any], name: str = "parallel_stack") -> Tensor:
    """``tf.stack`` (TensorFlow's variant copies the inputs in parallel; nbflow's stack does)."""
    return stack(values, name=name)


# --- non-destructive scatters ---------------------------------------------------------------------
def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any, name: str | None = None):
    """``tensor`` with ``updates`` added at ``indices`` (a new tensor; duplicates add up)."""
    with ops_lib.name_scope(name, "TensorScatterAdd", [tensor, indices, updates]):
        tensor = ops_lib.convert_to_tensor(tensor)
        updates = ops_lib.convert_to_tensor(updates, dtype=tensor.dtype.base_dtype)
        return add(tensor, scatter_nd(indices, updates, shape(tensor)))


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any, name: str | None = None):
    """``tensor`` with ``updates`` subtracted at ``indices`` (a new tensor)."""
    with ops_lib.name_scope(name, "TensorScatterSub", [tensor, indices, updates]):
        tensor = ops_lib.convert_to_tensor(tensor)
        updates = ops_lib.convert_to_tensor(updates, dtype=tensor.dtype.base_dtype)
        return subtract(tensor, scatter_nd(indices, updates, shape(tensor)))


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any, name: str | None = None):
    """``tensor`` with the slices at ``indices`` replaced by ``updates`` (a new tensor)."""
    with ops_lib.name_scope(name, "TensorScatterUpdate", [tensor, indices, updates]):
        tensor = ops_lib.convert_to_tensor(tensor)
        updates = ops_lib.convert_to_tensor(updates, dtype=tensor.dtype.base_dtype)
        hit = scatter_nd(indices, ones_like(updates), shape(tensor))
        kept = multiply(tensor, subtract(ones_like(hit), minimum(hit, ones_like(hit))))
        return add(kept, scatter_nd(indices, updates, shape(tensor)))


tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub
tensor_scatter_update = tensor_scatter_nd_update


# --- checks ---------------------------------------------------------------------------------------
class EnsureShape(OpDef):
    """``input`` unchanged, after checking at run time that its shape fits ``shape``."""

    inputs = ("input",)
    attrs = {"shape": TensorShape(None)}
    samples = [
        Sample(input=(2, 3), shape=TensorShape([None, 3])),
        Sample(input=(), shape=TensorShape([])),
    ]

    def infer(self, input: TensorSpec, shape: TensorShape) -> TensorSpec:  # noqa: A002
        return TensorSpec(input.shape.merge_with(as_shape(shape)), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, shape: TensorShape) -> Any:  # noqa: A002
        if not as_shape(shape).is_compatible_with(TensorShape(list(input.shape))):
            raise ValueError(
                f"Shape of tensor {list(input.shape)} is not compatible with expected shape {shape}"
            )
        return input

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [grad]


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Tensor:
    """``x``, whose static shape now includes ``shape``, checked again when the graph runs."""
    attrs = {"shape": as_shape(shape)}
    return _create1("EnsureShape", [ops_lib.convert_to_tensor(x)], attrs, name=name)


def guarantee_const(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """``input`` (TensorFlow's promise to its optimizer that it is constant; nbflow needs none)."""
    return identity(input, name=name)


def clip_by_average_norm(t: Any, clip_norm: Any, name: str | None = None) -> Tensor:
    """``t`` scaled so its L2 norm divided by its number of elements is at most ``clip_norm``."""
    with ops_lib.name_scope(name, "clip_by_average_norm", [t, clip_norm]):
        t = ops_lib.convert_to_tensor(t)
        n = cast(size(t), t.dtype.base_dtype)
        inverse_norm = rsqrt(reduce_sum(multiply(t, t)))
        clip_norm = ops_lib.convert_to_tensor(clip_norm, dtype=t.dtype.base_dtype)
        scale = minimum(multiply(inverse_norm, n), realdiv(1.0, clip_norm))
        return identity(multiply(multiply(t, clip_norm), scale))
