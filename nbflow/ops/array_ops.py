"""Array ops: constants, placeholders, identity and the ops that move or reshape data.

Shape, reshape and transpose; concat, split, stack and tile; slicing (``Slice``,
``StridedSlice`` and ``Tensor.__getitem__``); gather, one_hot and the segment/partition ops;
fill, zeros, ones and range; where/select. Index-like inputs (shapes, axes, permutations) are
int32 constants when given as Python values, so shape functions can read them.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import Dimension, TensorShape, as_shape, broadcast_shapes


def _to_numpy(value: Any, dtype: dtypes.DType | None) -> np.ndarray:
    """Convert a Python/NumPy value to an array with TensorFlow's default dtypes."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype is dtypes.string:
            return _string_array(value)
        array = np.asarray(value)
        if array.dtype.kind in ("U", "S", "O") and array.size:
            raise TypeError(
                f"Expected {dtype.name}, got {value!r} of type '{type(value).__name__}'"
            )
        if (
            dtype.is_integer
            and array.dtype.kind == "f"
            and not np.all(np.equal(np.mod(array, 1), 0))
        ):
            raise TypeError(
                f"Expected {dtype.name}, got {value!r} of type '{type(value).__name__}'"
            )
        if dtype.is_bool and array.dtype.kind not in ("b",) and array.size:
            raise TypeError(f"Expected bool, got {value!r} of type '{type(value).__name__}'")
        if dtype.is_integer and array.size and array.dtype.kind in "iu":
            info = np.iinfo(dtype.np)
            if array.min() < info.min or array.max() > info.max:
                raise ValueError(f"Value {value!r} is out of range for {dtype.name}")
        return array.astype(dtype.np, copy=False)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in ("U", "S"):
            return _string_array(value)
        return value
    array = np.asarray(value)
    if array.dtype == np.float64 and not isinstance(value, np.generic):
        return array.astype(np.float32)  # Python floats become float32, as in TensorFlow
    if array.dtype == np.int64 and not isinstance(value, np.generic):
        info = np.iinfo(np.int32)
        if array.size == 0 or (array.min() >= info.min and array.max() <= info.max):
            return array.astype(np.int32)  # Python ints become int32 when they fit
    if array.dtype.kind in ("U", "S"):
        return _string_array(value)
    if array.dtype == object:
        raise TypeError(f"Failed to convert object of type {type(value).__name__} to Tensor.")
    return array


def _string_array(value: Any) -> np.ndarray:
    array = np.asarray(value, dtype=object)
    flat = array.ravel()
    for i, v in enumerate(flat):
        flat[i] = v.encode() if isinstance(v, str) else bytes(v)
    return flat.reshape(array.shape)


class Const(OpDef):
    """A constant tensor; its value lives in the graph (attr ``value``)."""

    attrs = {"value": REQUIRED, "dtype": REQUIRED}
    differentiable = False
    samples = [Sample(value=np.arange(6.0).reshape(2, 3), dtype=dtypes.float64)]

    def infer(self, value: np.ndarray, dtype: dtypes.DType) -> TensorSpec:
        return TensorSpec(TensorShape(value.shape), dtype, value)

    def bind(self, op: Any, device_type: str = "CPU"):
        value = op.get_attr("value")
        value.flags.writeable = False  # consumers must never write into the graph's constant

        def const(ctx: KernelContext) -> np.ndarray:
            return value

        return const

    def compute(self, ctx: KernelContext, value: np.ndarray, dtype: dtypes.DType) -> np.ndarray:
        return value


def constant(
    value: Any,
    dtype: Any = None,
    shape: Any = None,
    name: str = "Const",
    verify_shape: bool = False,
) -> ops_lib.Tensor:
    """A constant tensor from a Python or NumPy value.

    >>> import nbflow as tf
    >>> tf.constant([1, 2]).dtype
    tf.int32
    """
    array = _to_numpy(value, dtype)
    if shape is not None:
        shape = tuple(as_shape(shape).as_list())
        if array.shape != shape:
            if verify_shape:
                raise TypeError(f"Expected Tensor's shape: {shape}, got {array.shape}.")
            if array.size == 1:
                array = np.full(shape, array.reshape(()), dtype=array.dtype)
            elif array.size == int(np.prod(shape)):
                array = array.reshape(shape)
            else:
                raise TypeError(
                    f"Eager execution of tf.constant with unsupported shape (value has "
                    f"{array.size} elements, shape is {shape} with {int(np.prod(shape))} elements)."
                )
    array = np.array(array, copy=True)
    graph = ops_lib.get_default_graph()
    return graph.create_op(
        "Const", [], {"value": array, "dtype": dtypes.as_dtype(array.dtype)}, name=name
    ).outputs[0]


ops_lib._register_constant_fn(constant)


class Placeholder(OpDef):
    """A value that must be fed: running it unfed is an InvalidArgumentError."""

    attrs = {"dtype": REQUIRED, "shape": TensorShape(None)}
    differentiable = False

    def infer(self, dtype: dtypes.DType, shape: TensorShape) -> TensorSpec:
        return TensorSpec(shape, dtype)

    def bind(self, op: Any, device_type: str = "CPU"):
        dtype, shape, name = op.get_attr("dtype"), op.get_attr("shape"), op.name

        def placeholder(ctx: KernelContext) -> Any:
            dims = (
                "<unknown>"
                if shape.ndims is None
                else str([-1 if d is None else d for d in shape.as_list()])
            )
            raise errors.InvalidArgumentError(
                None,
                None,
                f"You must feed a value for placeholder tensor '{name}' with dtype "
                f"{dtype.name} and shape {dims}",
            )

        return placeholder


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> ops_lib.Tensor:
    """A tensor whose value is fed to ``Session.run``."""
    return (
        ops_lib.get_default_graph()
        .create_op(
            "Placeholder",
            [],
            {"dtype": dtypes.as_dtype(dtype), "shape": as_shape(shape)},
            name=name or "Placeholder",
        )
        .outputs[0]
    )


class PlaceholderWithDefault(OpDef):
    """The fed value if fed, else ``input``."""

    inputs = ("input",)
    attrs = {"shape": TensorShape(None)}
    samples = [Sample(input=(2, 3), shape=TensorShape([None, 3]))]

    def infer(self, input: TensorSpec, shape: TensorShape) -> TensorSpec:
        if not input.shape.is_compatible_with(shape):
            raise ValueError(f"default value shape {input.shape} is incompatible with {shape}")
        return TensorSpec(shape, input.dtype)

    def compute(self, ctx: KernelContext, input: Any, shape: TensorShape) -> Any:
        return input

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [grad]


def placeholder_with_default(input: Any, shape: Any, name: str | None = None) -> ops_lib.Tensor:
    input = ops_lib.convert_to_tensor(input)
    return (
        ops_lib.get_default_graph()
        .create_op("PlaceholderWithDefault", [input], {"shape": as_shape(shape)}, name=name)
        .outputs[0]
    )


class Identity(OpDef):
    """Its input, unchanged (reading a variable through Identity yields its current value)."""

    inputs = ("input",)
    forwards_input = True
    samples = [Sample(input=(2, 3)), Sample(input=())]

    def infer(self, input: TensorSpec) -> TensorSpec:
        return TensorSpec(input.shape, input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        return input

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [grad]


def identity(input: Any, name: str | None = None) -> ops_lib.Tensor:
    input = ops_lib.convert_to_tensor(input)
    return ops_lib.get_default_graph().create_op("Identity", [input], name=name).outputs[0]


class StopGradient(OpDef):
    """Identity in the forward pass; gradients do not flow through it."""

    inputs = ("input",)
    differentiable = False
    forwards_input = True
    samples = [Sample(input=(3,))]

    def infer(self, input: TensorSpec) -> TensorSpec:
        return TensorSpec(input.shape, input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        return input


def stop_gradient(input: Any, name: str | None = None) -> ops_lib.Tensor:
    input = ops_lib.convert_to_tensor(input)
    return ops_lib.get_default_graph().create_op("StopGradient", [input], name=name).outputs[0]


# --- helpers shared by the ops below --------------------------------------------------------------
Tensor = ops_lib.Tensor
_range = builtins.range  # this module defines tf.range and tf.slice
_slice = builtins.slice
_INDEX_DTYPES = (dtypes.int32, dtypes.int64)


def _create(op_type: str, inputs: list[Any], attrs: dict[str, Any] | None = None, name=None):
    return ops_lib.get_default_graph().create_op(op_type, inputs, attrs, name=name)


def _create1(op_type: str, inputs: list[Any], attrs: dict[str, Any] | None = None, name=None):
    return _create(op_type, inputs, attrs, name).outputs[0]


def _int_tensor(value: Any, name: str | None = None) -> Tensor:
    """An index-like input (axis, shape, perm): Python values become int32 constants."""
    if isinstance(value, Tensor) or ops_lib._contains_tensor(value):
        return ops_lib.convert_to_tensor(value, name=name)
    return ops_lib.convert_to_tensor(value, dtype=dtypes.int32, name=name)


def _value(spec: TensorSpec) -> np.ndarray | None:
    return None if spec.value is None else np.asarray(spec.value)


def _shape_from_spec(spec: TensorSpec) -> TensorShape:
    """The shape a 1-D shape tensor describes: exact if constant (-1 unknown), else its rank."""
    value = _value(spec)
    if value is not None:
        return TensorShape([None if d < 0 else int(d) for d in value.reshape(-1)])
    n = spec.shape.with_rank(1)[0] if spec.shape.ndims is not None else None
    return TensorShape(None) if n is None else TensorShape([None] * n)


def _check_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"{what} {axis} is out of range for a tensor of rank {rank}")
    return axis % rank


def _zeros_for(grads: tuple[Any, ...], outputs: list[Tensor]) -> list[Any]:
    """Replace missing output gradients with zeros (multi-output gradient functions)."""
    return [zeros_like(o) if g is None else g for g, o in zip(grads, outputs)]


def _reduce_to(grad: Tensor, x: Tensor) -> Tensor:
    """Sum ``grad`` over the axes along which ``x`` was broadcast to grad's shape."""
    from nbflow.ops import math_ops

    xs, gs = x.shape, grad.shape
    if xs.is_fully_defined() and gs.is_fully_defined():
        xd, gd = xs.as_list(), gs.as_list()
        if xd == gd:
            return grad
        lead = len(gd) - len(xd)
        axes = list(_range(lead)) + [lead + i for i, d in enumerate(xd) if d == 1 != gd[lead + i]]
        return reshape(math_ops.reduce_sum(grad, axes), xd) if axes else reshape(grad, xd)
    rx, _ = math_ops.broadcast_gradient_args(shape(x), shape(grad))
    return reshape(math_ops.reduce_sum(grad, rx), shape(x))


# --- reshaping ----------------------------------------------------------------------------------
class Reshape(OpDef):
    """``tensor`` with the elements in the same order and a new shape (one dim may be -1)."""

    inputs = ("tensor", "shape")
    samples = [
        Sample(tensor=(2, 3), shape=np.array([3, 2], np.int32)),
        Sample(tensor=(2, 3, 4), shape=np.array([-1, 4], np.int32)),
        Sample(tensor=(0, 3), shape=np.array([3, -1], np.int32), input_dtype=np.int32),
        Sample(tensor=(1,), shape=np.array([], np.int32)),
    ]

    def infer(self, tensor: TensorSpec, shape: TensorSpec) -> TensorSpec:
        target = _shape_from_spec(shape)
        values = _value(shape)
        n = tensor.shape.num_elements()
        if values is not None:
            dims = [int(d) for d in values.reshape(-1)]
            if sum(d == -1 for d in dims) > 1:
                raise ValueError(f"Cannot infer shape {dims}: only one input size may be -1")
            known = int(np.prod([d for d in dims if d != -1]))
            if -1 in dims and n is not None:
                if known == 0 or n % known:
                    if known != 0:
                        raise ValueError(
                            f"Cannot reshape a tensor with {n} elements to shape {dims}"
                        )
                else:
                    dims[dims.index(-1)] = n // known
                target = TensorShape([None if d == -1 else d for d in dims])
            elif -1 not in dims and n is not None and known != n:
                raise ValueError(
                    f"Cannot reshape a tensor with {n} elements to shape {dims} ({known} elements)"
                )
        return TensorSpec(target, tensor.dtype.base_dtype)

    def compute(self, ctx: KernelContext, tensor: Any, shape: Any) -> Any:
        return tensor.reshape(shape.tolist())

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [reshape(grad, shape(op.inputs[0])), None]


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    """``tensor`` with a new shape; one entry of ``shape`` may be -1 (inferred).

    >>> import nbflow as tf
    >>> tf.reshape(tf.zeros([2, 3]), [-1]).shape
    TensorShape([6])
    """
    return _create1("Reshape", [ops_lib.convert_to_tensor(tensor), _int_tensor(shape)], name=name)


class ExpandDims(OpDef):
    """``input`` with a dimension of size 1 inserted at ``dim``."""

    inputs = ("input", "dim")
    samples = [
        Sample(input=(2, 3), dim=np.array(0, np.int32)),
        Sample(input=(2, 3), dim=np.array(-1, np.int32)),
        Sample(input=(), dim=np.array(0, np.int32)),
    ]

    def infer(self, input: TensorSpec, dim: TensorSpec) -> TensorSpec:
        axis, dims = _value(dim), input.shape.dims
        if axis is None or dims is None:
            rank = input.shape.ndims
            return TensorSpec(
                TensorShape(None if rank is None else [None] * (rank + 1)), input.dtype
            )
        a = _check_axis(int(axis.reshape(-1)[0]), len(dims) + 1, "dim")
        return TensorSpec(TensorShape(dims[:a] + [Dimension(1)] + dims[a:]), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, dim: Any) -> Any:
        return ctx.xp.expand_dims(input, int(dim.reshape(-1)[0]))

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [reshape(grad, shape(op.inputs[0])), None]


def expand_dims(input: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Tensor:
    """``input`` with a new dimension of size 1 at ``axis``."""
    if axis is None:
        if dim is None:
            raise ValueError("Must specify an axis argument to tf.expand_dims()")
        axis = dim
    elif dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    return _create1("ExpandDims", [ops_lib.convert_to_tensor(input), _int_tensor(axis)], name=name)


class Squeeze(OpDef):
    """``input`` without its dimensions of size 1 (only those in ``squeeze_dims`` if given)."""

    inputs = ("input",)
    attrs = {"squeeze_dims": ()}
    samples = [
        Sample(input=(1, 2, 1, 3)),
        Sample(input=(1, 2, 1, 3), squeeze_dims=(2,)),
        Sample(input=(1, 1), squeeze_dims=(-1,)),
    ]

    def infer(self, input: TensorSpec, squeeze_dims: tuple[int, ...]) -> TensorSpec:
        dims = input.shape.dims
        if dims is None:
            return TensorSpec(TensorShape(None), input.dtype.base_dtype)
        axes = {_check_axis(a, len(dims)) for a in squeeze_dims}
        out = []
        for i, d in enumerate(dims):
            if i in axes:
                if d.value not in (None, 1):
                    raise ValueError(
                        f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}"
                    )
            elif not axes and d.value is None:
                return TensorSpec(TensorShape(None), input.dtype.base_dtype)
            elif axes or d.value != 1:
                out.append(d)
        return TensorSpec(TensorShape(out), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, squeeze_dims: tuple[int, ...]) -> Any:
        return ctx.xp.squeeze(input, axis=tuple(squeeze_dims) if squeeze_dims else None)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [reshape(grad, shape(op.inputs[0]))]


def squeeze(
    input: Any, axis: Any = None, name: str | None = None, squeeze_dims: Any = None
) -> Tensor:
    """``input`` without size-1 dimensions (all of them, or those in ``axis``)."""
    if squeeze_dims is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'squeeze_dims' and 'axis'")
        axis = squeeze_dims
    if isinstance(axis, int):
        axis = [axis]
    attrs = {"squeeze_dims": tuple(int(a) for a in axis or ())}
    return _create1("Squeeze", [ops_lib.convert_to_tensor(input)], attrs, name=name)


class Transpose(OpDef):
    """``x`` with its dimensions permuted: output dim i is input dim ``perm[i]``."""

    inputs = ("x", "perm")
    samples = [
        Sample(x=(2, 3), perm=np.array([1, 0], np.int32)),
        Sample(x=(2, 3, 4), perm=np.array([2, 0, 1], np.int32)),
        Sample(x=(0, 3), perm=np.array([1, 0], np.int32), input_dtype=np.int32),
    ]

    def infer(self, x: TensorSpec, perm: TensorSpec) -> TensorSpec:
        p = _value(perm)
        rank = x.shape.ndims if x.shape.ndims is not None else _shape_from_spec(perm).ndims
        if p is None or x.shape.dims is None:
            return TensorSpec(TensorShape(None if rank is None else [None] * rank), x.dtype)
        dims = x.shape.dims
        if sorted(int(i) % max(len(dims), 1) for i in p) != list(_range(len(dims))):
            raise ValueError(f"{p.tolist()} is not a valid permutation of rank {len(dims)}")
        return TensorSpec(TensorShape([dims[int(i)] for i in p]), x.dtype.base_dtype)

    def compute(self, ctx: KernelContext, x: Any, perm: Any) -> Any:
        return ctx.xp.transpose(x, perm.tolist())

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [transpose(grad, invert_permutation(op.inputs[1])), None]


def transpose(a: Any, perm: Any = None, name: str = "transpose", conjugate: bool = False):
    """``a`` with dimensions permuted by ``perm`` (default: reversed)."""
    with ops_lib.name_scope(name, "transpose", [a]) as scope:
        a = ops_lib.convert_to_tensor(a, name="a")
        if perm is None:
            if a.shape.ndims is not None:
                perm = list(_range(a.shape.ndims - 1, -1, -1))
            else:
                perm = reverse_v2(range(rank(a)), [0])
        out = _create1("Transpose", [a, _int_tensor(perm, name="perm")], name=scope)
        if conjugate and a.dtype.is_complex:
            from nbflow.ops import math_ops

            out = math_ops.conj(out)
        return out


class InvertPermutation(OpDef):
    """The inverse of a permutation vector: ``y[x[i]] = i``."""

    inputs = ("x",)
    differentiable = False
    samples = [Sample(x=np.array([2, 0, 1], np.int32)), Sample(x=np.array([], np.int32))]

    def infer(self, x: TensorSpec) -> TensorSpec:
        return TensorSpec(x.shape.with_rank(1), x.dtype.base_dtype)

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.argsort(x).astype(x.dtype)


def invert_permutation(x: Any, name: str | None = None) -> Tensor:
    return _create1("InvertPermutation", [_int_tensor(x)], name=name)


class ReverseV2(OpDef):
    """``tensor`` with the dimensions in ``axis`` reversed."""

    inputs = ("tensor", "axis")
    samples = [
        Sample(tensor=(2, 3), axis=np.array([1], np.int32)),
        Sample(tensor=(2, 3, 4), axis=np.array([0, -1], np.int32)),
        Sample(tensor=(3,), axis=np.array([], np.int32)),
    ]

    def infer(self, tensor: TensorSpec, axis: TensorSpec) -> TensorSpec:
        return TensorSpec(tensor.shape, tensor.dtype.base_dtype)

    def compute(self, ctx: KernelContext, tensor: Any, axis: Any) -> Any:
        return ctx.xp.flip(tensor, tuple(axis.tolist())) if axis.size else tensor

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [reverse_v2(grad, op.inputs[1]), None]


def reverse_v2(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """``tensor`` reversed along each dimension in ``axis``."""
    return _create1("ReverseV2", [ops_lib.convert_to_tensor(tensor), _int_tensor(axis)], name=name)


reverse = reverse_v2


# --- shapes -------------------------------------------------------------------------------------
class Shape(OpDef):
    """The shape of ``input`` as a 1-D integer tensor."""

    inputs = ("input",)
    attrs = {"out_type": dtypes.int32}
    differentiable = False
    samples = [Sample(input=(2, 3)), Sample(input=(), out_type=dtypes.int64)]

    def infer(self, input: TensorSpec, out_type: dtypes.DType) -> TensorSpec:
        value = None
        if input.shape.is_fully_defined():
            value = np.array(input.shape.as_list(), dtype=out_type.np)
        return TensorSpec(TensorShape([input.shape.ndims]), out_type, value)

    def compute(self, ctx: KernelContext, input: Any, out_type: dtypes.DType) -> Any:
        return np.array(input.shape, dtype=out_type.np)


def shape(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:
    """The dynamic shape of ``input``.

    >>> import nbflow as tf
    >>> tf.shape(tf.zeros([2, 3])).name
    'Shape:0'
    """
    input = ops_lib.convert_to_tensor(input)
    return _create1("Shape", [input], {"out_type": dtypes.as_dtype(out_type)}, name=name)


class ShapeN(OpDef):
    """The shapes of several tensors."""

    inputs = ("input*",)
    attrs = {"out_type": dtypes.int32}
    differentiable = False
    samples = [Sample(input=[(2, 3), (4,)])]

    def output_count(self, attrs: dict[str, Any]) -> int:
        return attrs["N"]

    def infer(self, input: list[TensorSpec], out_type: dtypes.DType) -> list[TensorSpec]:
        return [Shape.infer(self, x, out_type) for x in input]  # type: ignore[arg-type]

    def compute(self, ctx: KernelContext, input: Any, out_type: dtypes.DType) -> Any:
        out = [np.array(x.shape, dtype=out_type.np) for x in input]
        return out[0] if len(out) == 1 else out


def shape_n(input: list[Any], out_type: Any = dtypes.int32, name: str | None = None):
    tensors = [ops_lib.convert_to_tensor(x) for x in input]
    return _create("ShapeN", [tensors], {"out_type": dtypes.as_dtype(out_type)}, name).outputs


class Rank(OpDef):
    """The number of dimensions of ``input``, as an int32 scalar."""

    inputs = ("input",)
    differentiable = False
    samples = [Sample(input=(2, 3)), Sample(input=())]

    def infer(self, input: TensorSpec) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.int32)

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        return np.int32(input.ndim)


def rank(input: Any, name: str | None = None) -> Tensor:
    return _create1("Rank", [ops_lib.convert_to_tensor(input)], name=name)


class Size(OpDef):
    """The number of elements of ``input``."""

    inputs = ("input",)
    attrs = {"out_type": dtypes.int32}
    differentiable = False
    samples = [Sample(input=(2, 3)), Sample(input=(0, 4), out_type=dtypes.int64)]

    def infer(self, input: TensorSpec, out_type: dtypes.DType) -> TensorSpec:
        return TensorSpec(TensorShape([]), out_type)

    def compute(self, ctx: KernelContext, input: Any, out_type: dtypes.DType) -> Any:
        return out_type.np.type(input.size)


def size(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:
    input = ops_lib.convert_to_tensor(input)
    return _create1("Size", [input], {"out_type": dtypes.as_dtype(out_type)}, name=name)


class BroadcastTo(OpDef):
    """``input`` broadcast to ``shape`` (NumPy rules)."""

    inputs = ("input", "shape")
    samples = [
        Sample(input=(3,), shape=np.array([2, 3], np.int32)),
        Sample(input=(2, 1), shape=np.array([2, 4], np.int32)),
        Sample(input=(1,), shape=np.array([0, 1], np.int32)),
    ]

    def infer(self, input: TensorSpec, shape: TensorSpec) -> TensorSpec:
        target = _shape_from_spec(shape)
        return TensorSpec(broadcast_shapes(input.shape, target), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, shape: Any) -> Any:
        return ctx.xp.broadcast_to(input, shape.tolist())

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [_reduce_to(grad, op.inputs[0]), None]


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:
    return _create1(
        "BroadcastTo", [ops_lib.convert_to_tensor(input), _int_tensor(shape)], name=name
    )


# --- joining and splitting ----------------------------------------------------------------------
class ConcatV2(OpDef):
    """The ``values`` joined along dimension ``axis``."""

    inputs = ("values*", "axis")
    samples = [
        Sample(values=[(2, 3), (2, 1)], axis=np.array(1, np.int32)),
        Sample(values=[(2, 3), (0, 3), (1, 3)], axis=np.array(0, np.int32), input_dtype=np.int32),
        Sample(values=[(2,), (3,)], axis=np.array(-1, np.int32)),
    ]

    def infer(self, values: list[TensorSpec], axis: TensorSpec) -> TensorSpec:
        dtype = values[0].dtype.base_dtype
        for v in values:
            if v.dtype.base_dtype is not dtype:
                raise TypeError(
                    f"ConcatV2 inputs must have one dtype, got {dtype.name} and "
                    f"{v.dtype.base_dtype.name}"
                )
        rank = next((v.shape.ndims for v in values if v.shape.ndims is not None), None)
        a = _value(axis)
        if rank is None:
            return TensorSpec(TensorShape(None), dtype)
        if a is None:
            return TensorSpec(TensorShape([None] * rank), dtype)
        a = _check_axis(int(a), rank, "ConcatOp : Expected concatenating dimensions in range; axis")
        out: list[Dimension] = [Dimension(None)] * rank
        total = Dimension(0)
        for v in values:
            dims = v.shape.with_rank(rank).dims
            assert dims is not None
            for i, d in enumerate(dims):
                if i == a:
                    total = total + d
                elif not out[i].is_compatible_with(d):
                    raise ValueError(
                        f"Dimension {i} in both shapes must be equal, but are {out[i]} and {d}"
                    )
                else:
                    out[i] = out[i].merge_with(d)
        out[a] = total
        return TensorSpec(TensorShape(out), dtype)

    def compute(self, ctx: KernelContext, values: Any, axis: Any) -> Any:
        return ctx.xp.concatenate(values, int(axis))

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        values, axis = op.inputs[:-1], op.inputs[-1]
        if len(values) == 1:
            return [grad, None]
        a = ops_lib.constant_value(axis)
        static = [v.shape for v in values]
        if a is not None and all(s.ndims is not None for s in static):
            a = int(a) % static[0].ndims
            sizes = [s[a] for s in static]
            if all(n is not None for n in sizes):
                return [*split(grad, sizes, axis=a), None]
            sizes_t = stack([gather(shape(v), a) for v in values])
        else:
            sizes_t = stack([shape(v)[axis] for v in values])
        return [*split(grad, sizes_t, axis=axis, num=len(values)), None]


def concat(values: Any, axis: Any, name: str = "concat") -> Tensor:
    """The tensors in ``values`` joined along ``axis``."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        with ops_lib.name_scope(name) as scope:
            _int_tensor(axis, name="concat_dim")
            return identity(values[0], name=scope)
    tensors = [ops_lib.convert_to_tensor(v) for v in values]
    return _create1("ConcatV2", [tensors, _int_tensor(axis)], name=name)


class Split(OpDef):
    """``value`` cut into ``num_split`` equal pieces along dimension ``split_dim``."""

    inputs = ("split_dim", "value")
    attrs = {"num_split": REQUIRED}
    samples = [
        Sample(split_dim=np.array(1, np.int32), value=(2, 6), num_split=3),
        Sample(split_dim=np.array(-2, np.int32), value=(4, 3), num_split=2),
        Sample(split_dim=np.array(0, np.int32), value=(0, 3), num_split=2, input_dtype=np.int32),
    ]

    def output_count(self, attrs: dict[str, Any]) -> int:
        return attrs["num_split"]

    def infer(self, split_dim: TensorSpec, value: TensorSpec, num_split: int) -> list[TensorSpec]:
        dtype, dims, a = value.dtype.base_dtype, value.shape.dims, _value(split_dim)
        if dims is None or a is None:
            rank = value.shape.ndims
            piece = TensorShape(None if rank is None else [None] * rank)
            return [TensorSpec(piece, dtype)] * num_split
        a = _check_axis(int(a), len(dims), "split_dim")
        if dims[a].value is not None and dims[a].value % num_split:
            raise ValueError(
                f"Dimension size must be evenly divisible by {num_split} but is {dims[a].value}"
            )
        out = list(dims)
        out[a] = dims[a] // num_split
        return [TensorSpec(TensorShape(out), dtype)] * num_split

    def compute(self, ctx: KernelContext, split_dim: Any, value: Any, num_split: int) -> Any:
        out = ctx.xp.split(value, num_split, int(split_dim))
        return out[0] if num_split == 1 else out

    def gradient(self, op: Any, *grads: Any) -> list[Any]:
        return [None, concat(_zeros_for(grads, op.outputs), op.inputs[0])]


class SplitV(OpDef):
    """``value`` cut along ``split_dim`` into pieces of ``size_splits`` (one may be -1)."""

    inputs = ("value", "size_splits", "split_dim")
    attrs = {"num_split": REQUIRED}
    samples = [
        Sample(
            value=(2, 6),
            size_splits=np.array([1, 5], np.int32),
            split_dim=np.array(1, np.int32),
            num_split=2,
        ),
        Sample(
            value=(5, 2),
            size_splits=np.array([2, -1, 0], np.int32),
            split_dim=np.array(0, np.int32),
            num_split=3,
        ),
    ]

    def output_count(self, attrs: dict[str, Any]) -> int:
        return attrs["num_split"]

    def infer(
        self, value: TensorSpec, size_splits: TensorSpec, split_dim: TensorSpec, num_split: int
    ) -> list[TensorSpec]:
        dtype, dims, a = value.dtype.base_dtype, value.shape.dims, _value(split_dim)
        sizes = _value(size_splits)
        if dims is None or a is None:
            rank = value.shape.ndims
            piece = TensorShape(None if rank is None else [None] * rank)
            return [TensorSpec(piece, dtype)] * num_split
        a = _check_axis(int(a), len(dims), "split_dim")
        if sizes is None:
            return [TensorSpec(TensorShape(dims[:a] + [None] + dims[a + 1 :]), dtype)] * num_split
        sizes_list = _split_sizes(sizes, dims[a].value)
        return [TensorSpec(TensorShape(dims[:a] + [n] + dims[a + 1 :]), dtype) for n in sizes_list]

    def compute(
        self, ctx: KernelContext, value: Any, size_splits: Any, split_dim: Any, num_split: int
    ) -> Any:
        axis = int(split_dim)
        sizes = _split_sizes(size_splits, value.shape[axis])
        cuts = np.cumsum(sizes[:-1]).tolist()
        out = ctx.xp.split(value, cuts, axis)
        return out[0] if num_split == 1 else out

    def gradient(self, op: Any, *grads: Any) -> list[Any]:
        return [concat(_zeros_for(grads, op.outputs), op.inputs[2]), None, None]


def _split_sizes(sizes: Any, total: int | None) -> list[int | None]:
    sizes = [int(s) for s in np.asarray(sizes).reshape(-1)]
    if sizes.count(-1) > 1:
        raise ValueError(f"Only one dimension of size_splits may be -1, got {sizes}")
    if -1 in sizes:
        if total is None:
            return [None if s == -1 else s for s in sizes]
        sizes[sizes.index(-1)] = total - (sum(sizes) + 1)
    if total is not None and (sum(sizes) != total or min(sizes) < 0):
        raise ValueError(
            f"Determined shape must either match input shape along split_dim exactly if fully "
            f"specified, or be less than the size of the input along split_dim if not fully "
            f"specified. Got: {sum(sizes)} vs. {total}"
        )
    return sizes


def split(
    value: Any, num_or_size_splits: Any, axis: Any = 0, num: int | None = None, name="split"
) -> list[Tensor]:
    """``value`` cut along ``axis``: into that many equal pieces (an int) or pieces of the sizes
    given (a list or 1-D tensor; ``num`` tells how many when it cannot be inferred)."""
    value = ops_lib.convert_to_tensor(value)
    if isinstance(num_or_size_splits, (int, np.integer)) and not isinstance(
        num_or_size_splits, bool
    ):
        n = int(num_or_size_splits)
        return _create("Split", [_int_tensor(axis), value], {"num_split": n}, name).outputs
    sizes = _int_tensor(num_or_size_splits)
    if num is None:
        num = sizes.shape.with_rank(1)[0]
        if num is None:
            raise ValueError(f"Cannot infer num from shape {sizes.shape}")
    attrs = {"num_split": int(num)}
    return _create("SplitV", [value, sizes, _int_tensor(axis)], attrs, name).outputs


class Pack(OpDef):
    """The N rank-R ``values`` stacked into one rank-(R+1) tensor along ``axis``."""

    inputs = ("values*",)
    attrs = {"axis": 0}
    samples = [
        Sample(values=[(2, 3), (2, 3)]),
        Sample(values=[(2, 3), (2, 3), (2, 3)], axis=-1),
        Sample(values=[(), ()]),
        Sample(values=[(0, 2)], axis=1, input_dtype=np.int32),
    ]

    def infer(self, values: list[TensorSpec], axis: int) -> TensorSpec:
        dtype = values[0].dtype.base_dtype
        merged = TensorShape(None)
        for v in values:
            if v.dtype.base_dtype is not dtype:
                raise TypeError(
                    f"Pack inputs must have one dtype, got {dtype.name} and "
                    f"{v.dtype.base_dtype.name}"
                )
            if not merged.is_compatible_with(v.shape):
                raise ValueError(
                    f"Shapes of all inputs must match: values[0].shape = {values[0].shape} != "
                    f"values[i].shape = {v.shape}"
                )
            merged = merged.merge_with(v.shape)
        dims = merged.dims
        if dims is None:
            return TensorSpec(TensorShape(None), dtype)
        a = _check_axis(axis, len(dims) + 1)
        return TensorSpec(TensorShape(dims[:a] + [Dimension(len(values))] + dims[a:]), dtype)

    def compute(self, ctx: KernelContext, values: Any, axis: int) -> Any:
        return ctx.xp.stack(values, axis)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return unstack(grad, num=op.get_attr("N"), axis=op.get_attr("axis"))


def stack(values: Any, axis: int = 0, name: str = "stack") -> Tensor:
    """The tensors in ``values`` stacked along a new dimension ``axis``.

    >>> import nbflow as tf
    >>> tf.stack([tf.zeros([2]), tf.ones([2])], axis=1).shape
    TensorShape([2, 2])
    """
    if axis == 0 and not ops_lib._contains_tensor(values):
        return ops_lib.convert_to_tensor(values, name=name)
    tensors = _convert_for_pack(values)
    return _create1("Pack", [tensors], {"axis": axis}, name=name)


def _convert_for_pack(values: Any) -> list[Tensor]:
    """Tensors for the items of ``values``; Python items take the dtype of the tensor items."""
    dtype = None
    for v in values:
        if not isinstance(v, (list, tuple)) and ops_lib._contains_tensor(v):
            dtype = ops_lib.convert_to_tensor(v).dtype.base_dtype
            break
    out = []
    for v in values:
        if isinstance(v, (list, tuple)) and ops_lib._contains_tensor(v):
            out.append(_autopack(v, name="packed"))
        elif ops_lib._contains_tensor(v):
            out.append(ops_lib.convert_to_tensor(v))
        else:
            out.append(ops_lib.convert_to_tensor(v, dtype=dtype))
    return out


def _autopack(values: list[Any], name: str | None = None) -> Tensor:
    """``convert_to_tensor`` of a (nested) list holding tensors: Pack its items."""
    return _create1("Pack", [_convert_for_pack(values)], {"axis": 0}, name=name or "packed")


ops_lib._pack_fn[:] = [_autopack]


class Unpack(OpDef):
    """The ``num`` slices of ``value`` along dimension ``axis``, each of rank R-1."""

    inputs = ("value",)
    attrs = {"num": REQUIRED, "axis": 0}
    samples = [Sample(value=(3, 2), num=3), Sample(value=(2, 4), num=4, axis=-1)]

    def output_count(self, attrs: dict[str, Any]) -> int:
        return attrs["num"]

    def infer(self, value: TensorSpec, num: int, axis: int) -> list[TensorSpec]:
        dims, dtype = value.shape.dims, value.dtype.base_dtype
        if dims is None:
            return [TensorSpec(TensorShape(None), dtype)] * num
        a = _check_axis(axis, len(dims))
        if dims[a].value not in (None, num):
            raise ValueError(f"Cannot unpack dimension {a} of size {dims[a]} into {num} tensors")
        return [TensorSpec(TensorShape(dims[:a] + dims[a + 1 :]), dtype)] * num

    def compute(self, ctx: KernelContext, value: Any, num: int, axis: int) -> Any:
        if value.shape[axis] != num:
            raise ValueError(f"Input shape axis {axis} must equal {num}, got shape {value.shape}")
        out = [ctx.xp.squeeze(p, axis) for p in ctx.xp.split(value, num, axis)]
        return out[0] if num == 1 else out

    def gradient(self, op: Any, *grads: Any) -> list[Any]:
        return [stack(_zeros_for(grads, op.outputs), axis=op.get_attr("axis"))]


def unstack(value: Any, num: int | None = None, axis: int = 0, name: str = "unstack"):
    """The slices of ``value`` along ``axis`` (their number must be known statically or given)."""
    value = ops_lib.convert_to_tensor(value)
    if num is None:
        dims = value.shape.dims
        if dims is None:
            raise ValueError(f"Cannot infer num from shape {value.shape}")
        num = dims[_check_axis(axis, len(dims))].value
        if num is None:
            raise ValueError(f"Cannot infer num from shape {value.shape}")
    return _create("Unpack", [value], {"num": num, "axis": axis}, name).outputs


class Tile(OpDef):
    """``input`` repeated ``multiples[i]`` times along each dimension i."""

    inputs = ("input", "multiples")
    samples = [
        Sample(input=(2, 3), multiples=np.array([2, 1], np.int32)),
        Sample(input=(2,), multiples=np.array([3], np.int32)),
        Sample(input=(2, 1), multiples=np.array([0, 2], np.int32)),
    ]

    def infer(self, input: TensorSpec, multiples: TensorSpec) -> TensorSpec:
        m = _value(multiples)
        rank = (
            input.shape.ndims
            if input.shape.ndims is not None
            else _shape_from_spec(multiples).ndims
        )
        if m is None or input.shape.dims is None:
            return TensorSpec(TensorShape(None if rank is None else [None] * rank), input.dtype)
        if len(m) != len(input.shape.dims):
            raise ValueError(f"Shape must be rank {len(m)} but is rank {len(input.shape.dims)}")
        return TensorSpec(
            TensorShape([d * int(k) for d, k in zip(input.shape.dims, m)]), input.dtype.base_dtype
        )

    def compute(self, ctx: KernelContext, input: Any, multiples: Any) -> Any:
        return ctx.xp.tile(input, multiples.tolist())

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        from nbflow.ops import math_ops

        x, multiples = op.inputs
        # grad viewed as [m0, d0, m1, d1, ...], summed over the multiples' axes
        split_shape = reshape(
            transpose(stack([multiples, shape(x, out_type=multiples.dtype)])), [-1]
        )
        axes = range(0, size(split_shape), 2)
        return [math_ops.reduce_sum(reshape(grad, split_shape), axes), None]


def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:
    return _create1("Tile", [ops_lib.convert_to_tensor(input), _int_tensor(multiples)], name=name)


class Pad(OpDef):
    """``input`` padded with zeros: ``paddings[i] = [before, after]`` for dimension i."""

    inputs = ("input", "paddings")
    samples = [
        Sample(input=(2, 3), paddings=np.array([[1, 0], [2, 1]], np.int32)),
        Sample(input=(0, 2), paddings=np.array([[1, 1], [0, 0]], np.int32), input_dtype=np.int32),
    ]

    def infer(self, input: TensorSpec, paddings: TensorSpec) -> TensorSpec:
        return TensorSpec(_padded_shape(input, paddings), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, paddings: Any) -> Any:
        return ctx.xp.pad(input, paddings.tolist())

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        x, paddings = op.inputs[:2]
        begin = reshape(slice(paddings, [0, 0], stack([rank(x), 1])), [-1])
        return [slice(grad, begin, shape(x)), None]


class PadV2(Pad):
    """``input`` padded with ``constant_values``."""

    inputs = ("input", "paddings", "constant_values")
    samples = [
        Sample(
            input=(2, 3),
            paddings=np.array([[1, 0], [0, 2]], np.int32),
            constant_values=np.float64(2.5),
        )
    ]

    def infer(self, input: TensorSpec, paddings: TensorSpec, constant_values: TensorSpec):
        return TensorSpec(_padded_shape(input, paddings), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, paddings: Any, constant_values: Any) -> Any:
        return ctx.xp.pad(input, paddings.tolist(), constant_values=constant_values)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [*Pad.gradient(self, op, grad), None]


def _padded_shape(input: TensorSpec, paddings: TensorSpec) -> TensorShape:
    p = _value(paddings)
    if p is None or input.shape.dims is None:
        rank = input.shape.ndims
        if rank is None and paddings.shape.ndims is not None:
            rank = paddings.shape.with_rank(2)[0]
        return TensorShape(None if rank is None else [None] * rank)
    if p.shape != (len(input.shape.dims), 2):
        raise ValueError(
            f"paddings must be a matrix with 2 columns and a row per input dimension, got {p.shape}"
        )
    if (p < 0).any():
        raise ValueError(f"paddings must be non-negative: {p.tolist()}")
    return TensorShape([d + int(a) + int(b) for d, (a, b) in zip(input.shape.dims, p)])


class MirrorPad(OpDef):
    """``input`` padded with its own mirror image (``mode`` REFLECT or SYMMETRIC)."""

    inputs = ("input", "paddings")
    attrs = {"mode": REQUIRED}
    samples = [
        Sample(input=(3, 4), paddings=np.array([[1, 2], [2, 1]], np.int32), mode="REFLECT"),
        Sample(input=(3, 4), paddings=np.array([[2, 3], [0, 1]], np.int32), mode="SYMMETRIC"),
    ]

    def infer(self, input: TensorSpec, paddings: TensorSpec, mode: str) -> TensorSpec:
        p, dims = _value(paddings), input.shape.dims
        if p is not None and dims is not None:
            limit = 1 if mode == "REFLECT" else 0
            for d, (a, b) in zip(dims, p):
                if d.value is not None and max(a, b) > d.value - limit:
                    raise ValueError(
                        f"paddings must be no greater than the dimension size minus {limit}: "
                        f"{int(a)}, {int(b)} greater than {d.value - limit}"
                    )
        return TensorSpec(_padded_shape(input, paddings), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, paddings: Any, mode: str) -> Any:
        return ctx.xp.pad(input, paddings.tolist(), mode=mode.lower())

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        attrs = {"mode": op.get_attr("mode")}
        return [_create1("MirrorPadGrad", [grad, op.inputs[1]], attrs), None]


class MirrorPadGrad(OpDef):
    """The gradient of MirrorPad: the padded regions folded back onto the input."""

    inputs = ("input", "paddings")
    attrs = {"mode": REQUIRED}
    samples = [
        Sample(input=(6, 7), paddings=np.array([[1, 2], [2, 1]], np.int32), mode="REFLECT"),
        Sample(input=(8, 5), paddings=np.array([[2, 3], [0, 1]], np.int32), mode="SYMMETRIC"),
    ]

    def infer(self, input: TensorSpec, paddings: TensorSpec, mode: str) -> TensorSpec:
        p, dims = _value(paddings), input.shape.dims
        if p is None or dims is None:
            return TensorSpec(TensorShape(None), input.dtype.base_dtype)
        return TensorSpec(
            TensorShape([d - int(a) - int(b) for d, (a, b) in zip(dims, p)]), input.dtype.base_dtype
        )

    def compute(self, ctx: KernelContext, input: Any, paddings: Any, mode: str) -> Any:
        xp, offset = ctx.xp, 1 if mode == "REFLECT" else 0
        out = input
        for axis, (before, after) in enumerate(paddings.tolist()):
            n = out.shape[axis] - before - after
            index = [_slice(None)] * out.ndim
            index[axis] = _slice(before, before + n)
            core = out[tuple(index)].copy()
            if before:
                index[axis] = _slice(0, before)
                core_index = list(index)
                core_index[axis] = _slice(offset, offset + before)
                core[tuple(core_index)] += xp.flip(out[tuple(index)], axis)
            if after:
                index[axis] = _slice(before + n, None)
                core_index = list(index)
                core_index[axis] = _slice(n - after - offset, n - offset)
                core[tuple(core_index)] += xp.flip(out[tuple(index)], axis)
            out = core
        return out

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        attrs = {"mode": op.get_attr("mode")}
        return [_create1("MirrorPad", [grad, op.inputs[1]], attrs), None]


def pad(
    tensor: Any, paddings: Any, mode: str = "CONSTANT", name: str | None = None, constant_values=0
) -> Tensor:
    """``tensor`` padded by ``paddings`` ([rank, 2]); ``mode`` CONSTANT, REFLECT or SYMMETRIC."""
    tensor = ops_lib.convert_to_tensor(tensor)
    paddings = _int_tensor(paddings)
    mode = mode.upper()
    if mode == "CONSTANT":
        if not isinstance(constant_values, Tensor) and np.all(np.asarray(constant_values) == 0):
            return _create1("Pad", [tensor, paddings], name=name)
        value = ops_lib.convert_to_tensor(constant_values, dtype=tensor.dtype.base_dtype)
        return _create1("PadV2", [tensor, paddings, value], name=name)
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"Unknown padding mode: {mode}")
    return _create1("MirrorPad", [tensor, paddings], {"mode": mode}, name=name)


# --- slicing ------------------------------------------------------------------------------------
class Slice(OpDef):
    """The block of ``input`` starting at ``begin`` with extent ``size`` (-1: to the end)."""

    inputs = ("input", "begin", "size")
    samples = [
        Sample(input=(3, 4), begin=np.array([1, 0], np.int32), size=np.array([2, 3], np.int32)),
        Sample(input=(3, 4), begin=np.array([1, 2], np.int32), size=np.array([-1, -1], np.int32)),
        Sample(input=(3, 4), begin=np.array([1, 1], np.int32), size=np.array([0, 2], np.int32)),
    ]

    def infer(self, input: TensorSpec, begin: TensorSpec, size: TensorSpec) -> TensorSpec:
        b, s, dims = _value(begin), _value(size), input.shape.dims
        dtype = input.dtype.base_dtype
        if dims is None or b is None or s is None:
            rank = input.shape.ndims
            if s is not None:
                known = [None if int(k) < 0 else int(k) for k in s]
                if rank is None or len(known) == rank:
                    return TensorSpec(TensorShape(known), dtype)
            return TensorSpec(TensorShape(None if rank is None else [None] * rank), dtype)
        if len(b) != len(dims) or len(s) != len(dims):
            raise ValueError(
                f"Expected begin and size arguments to be 1-D tensors of size {len(dims)}, "
                f"but got shapes {list(b.shape)} and {list(s.shape)} instead."
            )
        out = []
        for d, start, n in zip(dims, b.tolist(), s.tolist()):
            if d.value is not None and (
                start < 0 or start > d.value or start + max(n, 0) > d.value
            ):
                raise ValueError(
                    f"Expected begin[i] in [0, {d.value}] and size[i] in [-1, {d.value - start}], "
                    f"got begin {start} and size {n}"
                )
            out.append(d - start if n == -1 else Dimension(n))
        return TensorSpec(TensorShape(out), dtype)

    def compute(self, ctx: KernelContext, input: Any, begin: Any, size: Any) -> Any:
        index = []
        for start, n, d in zip(begin.tolist(), size.tolist(), input.shape):
            end = d if n == -1 else start + n
            if start < 0 or end > d or end < start:
                raise ValueError(
                    f"Expected begin[i] in [0, {d}] and size[i] in [-1, {d - start}], "
                    f"got begin {start} and size {n}"
                )
            index.append(_slice(start, end))
        return input[tuple(index)]

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        x, begin, _ = op.inputs
        begin = _cast(begin, dtypes.int32)
        after = shape(x) - begin - shape(grad)
        return [pad(grad, stack([begin, after], axis=1)), None, None]


def _cast(x: Tensor, dtype: dtypes.DType) -> Tensor:
    from nbflow.ops import math_ops

    return math_ops.cast(x, dtype)


def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """The block of ``input_`` at ``begin`` of extent ``size`` (-1 means all remaining)."""
    inputs = [ops_lib.convert_to_tensor(input_), _int_tensor(begin), _int_tensor(size)]
    return _create1("Slice", inputs, name=name)


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _strided_index(begin: Any, end: Any, strides: Any, masks: tuple[int, ...]) -> tuple:
    """The NumPy index that a StridedSlice's begin/end/strides and masks spell."""
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask = masks
    index: list[Any] = []
    for i, (b, e, s) in enumerate(zip(begin.tolist(), end.tolist(), strides.tolist())):
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
        elif new_axis_mask & bit:
            index.append(None)
        elif shrink_axis_mask & bit:
            index.append(b)
        else:
            if s == 0:
                raise ValueError(f"strides[{i}] must be non-zero")
            index.append(_slice(None if begin_mask & bit else b, None if end_mask & bit else e, s))
    return tuple(index)


class _Unknown:
    """An index entry whose bounds are not known at graph construction."""


def _indexed_shape(shape_: TensorShape, index: tuple) -> TensorShape:
    """The static shape of ``x[index]`` for a NumPy basic index (entries may be _Unknown)."""
    dims = shape_.dims
    if dims is None:
        return TensorShape(None)
    consumed = sum(1 for item in index if item is not None and item is not Ellipsis)
    if consumed > len(dims):
        raise ValueError(
            f"Index out of range using input dim {len(dims)}; input has only {len(dims)} dims"
        )
    out: list[Any] = []
    d = 0
    for item in index:
        if item is Ellipsis:
            n = len(dims) - consumed
            out.extend(dims[d : d + n])
            d += n
            consumed = len(dims)  # a second ellipsis is empty
        elif item is None:
            out.append(1)
        elif isinstance(item, int):
            size_ = dims[d].value
            if size_ is not None and not -size_ <= item < size_:
                raise ValueError(f"slice index {item} of dimension {d} out of bounds.")
            d += 1
        elif isinstance(item, _slice):
            size_ = dims[d].value
            if size_ is not None:
                out.append(len(_range(*item.indices(size_))))
            elif item.start is None and item.stop is None and item.step in (None, 1, -1):
                out.append(None)
            else:
                out.append(None)
            d += 1
        else:  # _Unknown: a slice with bounds unknown, or a shrunk dimension
            if item is not _SHRINK:
                out.append(None)
            d += 1
    return TensorShape(out + dims[d:])


_UNKNOWN_SLICE, _SHRINK = _Unknown(), _Unknown()


class StridedSlice(OpDef):
    """``input[begin:end:strides]`` per dimension, NumPy-style, with TF's bit masks:
    ``begin_mask``/``end_mask`` ignore a bound, ``ellipsis_mask`` marks ``...``,
    ``new_axis_mask`` inserts a dimension, ``shrink_axis_mask`` takes one index."""

    inputs = ("input", "begin", "end", "strides")
    attrs = {m: 0 for m in _MASKS}
    samples = [
        Sample(
            input=(4, 5),
            begin=np.array([1, 0], np.int32),
            end=np.array([3, 5], np.int32),
            strides=np.array([1, 2], np.int32),
        ),
        Sample(
            input=(4, 5, 3),
            begin=np.array([-1, 0, 0], np.int32),
            end=np.array([0, 0, 2], np.int32),
            strides=np.array([1, 1, 1], np.int32),
            shrink_axis_mask=1,
            ellipsis_mask=2,
        ),
        Sample(
            input=(4, 5),
            begin=np.array([0, 3, 0], np.int32),
            end=np.array([0, 0, 0], np.int32),
            strides=np.array([1, -1, 1], np.int32),
            new_axis_mask=1,
            end_mask=6,
            begin_mask=4,
        ),
        Sample(
            input=(0, 3),
            input_dtype=np.int32,
            begin=np.array([0], np.int32),
            end=np.array([2], np.int32),
            strides=np.array([1], np.int32),
        ),
    ]

    def infer(
        self,
        input: TensorSpec,
        begin: TensorSpec,
        end: TensorSpec,
        strides: TensorSpec,
        **masks: int,
    ):
        return TensorSpec(
            _strided_shape(input.shape, begin, end, strides, masks), input.dtype.base_dtype
        )

    def compute(
        self, ctx: KernelContext, input: Any, begin: Any, end: Any, strides: Any, **masks: int
    ):
        return input[_strided_index(begin, end, strides, tuple(masks[m] for m in _MASKS))]

    def bind(self, op: Any, device_type: str = "CPU"):
        known = [ops_lib.constant_value(t) for t in op.inputs[1:]]
        if any(k is None for k in known):
            return super().bind(op, device_type)
        index = _strided_index(*known, tuple(op.get_attr(m) for m in _MASKS))

        def strided_slice_const(ctx: KernelContext, input: Any, begin: Any, end: Any, strides: Any):
            return input[index]

        return strided_slice_const

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        x, begin, end, strides = op.inputs
        attrs = {m: op.get_attr(m) for m in _MASKS}
        dx = _create1(
            "StridedSliceGrad", [shape(x, out_type=begin.dtype), begin, end, strides, grad], attrs
        )
        return [dx, None, None, None]


def _strided_shape(
    input_shape: TensorShape, begin: TensorSpec, end: TensorSpec, strides: TensorSpec, masks: dict
) -> TensorShape:
    values = [_value(begin), _value(end), _value(strides)]
    mask_values = tuple(masks[m] for m in _MASKS)
    if all(v is not None for v in values):
        return _indexed_shape(input_shape, _strided_index(*values, mask_values))
    n = begin.shape.with_rank(1)[0]
    if n is None:
        return TensorShape(None)
    index: list[Any] = []
    for i in _range(n):
        bit = 1 << i
        if mask_values[2] & bit:
            index.append(Ellipsis)
        elif mask_values[3] & bit:
            index.append(None)
        elif mask_values[4] & bit:
            index.append(_SHRINK)
        elif (
            mask_values[0] & mask_values[1] & bit
            and values[2] is not None
            and abs(int(values[2][i])) == 1
        ):
            index.append(_slice(None))
        else:
            index.append(_UNKNOWN_SLICE)
    return _indexed_shape(input_shape, tuple(index))


class StridedSliceGrad(OpDef):
    """The gradient of StridedSlice: ``dy`` scattered into zeros of the input's ``shape``."""

    inputs = ("shape", "begin", "end", "strides", "dy")
    attrs = {m: 0 for m in _MASKS}
    samples = [
        Sample(
            shape=np.array([4, 5], np.int32),
            begin=np.array([1, 0], np.int32),
            end=np.array([3, 5], np.int32),
            strides=np.array([1, 2], np.int32),
            dy=(2, 3),
        ),
        Sample(
            shape=np.array([4, 5], np.int32),
            begin=np.array([0, 2], np.int32),
            end=np.array([0, 0], np.int32),
            strides=np.array([1, -1], np.int32),
            dy=(1, 3, 5),
            new_axis_mask=1,
            end_mask=2,
        ),
    ]

    def infer(self, shape: TensorSpec, begin, end, strides, dy: TensorSpec, **masks: int):
        return TensorSpec(_shape_from_spec(shape), dy.dtype.base_dtype)

    def compute(
        self,
        ctx: KernelContext,
        shape: Any,
        begin: Any,
        end: Any,
        strides: Any,
        dy: Any,
        **masks: int,
    ):
        out = ctx.xp.zeros(shape.tolist(), dtype=dy.dtype)
        out[_strided_index(begin, end, strides, tuple(masks[m] for m in _MASKS))] = dy
        return out

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        _, begin, end, strides, _ = op.inputs
        attrs = {m: op.get_attr(m) for m in _MASKS}
        return [
            None,
            None,
            None,
            None,
            _create1("StridedSlice", [grad, begin, end, strides], attrs),
        ]


def strided_slice(
    input_: Any,
    begin: Any,
    end: Any,
    strides: Any = None,
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
    var: Any = None,
    name: str | None = None,
) -> Tensor:
    """``input_[begin:end:strides]`` with TensorFlow's bit masks (see StridedSlice)."""
    begin, end = _int_tensor(begin), _int_tensor(end)
    if strides is None:
        strides = ones_like(begin)
    attrs = dict(
        zip(_MASKS, (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask))
    )
    inputs = [ops_lib.convert_to_tensor(input_), begin, end, _int_tensor(strides)]
    return _create1("StridedSlice", inputs, attrs, name=name)


def _is_index_tensor(s: Any) -> bool:
    return (
        isinstance(s, Tensor) and s.dtype.base_dtype in _INDEX_DTYPES and s.shape.ndims in (0, None)
    )


def _slice_helper(tensor: Any, slice_spec: Any, var: Any = None) -> Tensor:
    """``tensor[slice_spec]``: ints, slices, ``...``, ``tf.newaxis`` and scalar int tensors."""
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    for i, s in enumerate(slice_spec):
        bit = 1 << i
        if isinstance(s, _slice):
            for bound, key, out in ((s.start, "begin_mask", begin), (s.stop, "end_mask", end)):
                if bound is None:
                    out.append(0)
                    masks[key] |= bit
                else:
                    out.append(_check_index(bound))
            strides.append(1 if s.step is None else _check_index(s.step))
        elif s is Ellipsis:
            if masks["ellipsis_mask"]:
                raise ValueError("Multiple ellipses in slice spec not allowed")
            begin.append(0), end.append(0), strides.append(1)
            masks["ellipsis_mask"] |= bit
        elif s is None:
            begin.append(0), end.append(0), strides.append(1)
            masks["new_axis_mask"] |= bit
        else:
            s = _check_index(s)
            begin.append(s), end.append(s + 1), strides.append(1)
            masks["shrink_axis_mask"] |= bit
    with ops_lib.name_scope(None, "strided_slice", [tensor]) as name:
        if begin:
            packed = [stack(begin), stack(end), stack(strides)]
            if any(p.dtype.base_dtype is dtypes.int64 for p in packed):
                packed = [_cast(p, dtypes.int64) for p in packed]
        else:
            packed = [constant([], dtype=dtypes.int32)] * 3
        return strided_slice(tensor, *packed, **masks, var=var, name=name)


def _check_index(s: Any) -> Any:
    if _is_index_tensor(s):
        return s
    if isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)):
        return int(s)
    raise TypeError(
        "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
        f"tf.int32/tf.int64 tensors are valid indices, got {s!r}"
    )


Tensor._override_operator("__getitem__", _slice_helper)


# --- gathering and scattering ---------------------------------------------------------------------
class GatherV2(OpDef):
    """The slices of ``params`` along ``axis`` at ``indices``:
    ``out.shape = params.shape[:axis] + indices.shape + params.shape[axis + 1:]``."""

    inputs = ("params", "indices", "axis")
    attrs = {"batch_dims": 0}
    samples = [
        Sample(params=(5, 3), indices=np.array([2, 0, 2], np.int32), axis=np.array(0, np.int32)),
        Sample(
            params=(3, 4), indices=np.array([[3, 1], [0, 0]], np.int64), axis=np.array(1, np.int32)
        ),
        Sample(params=(2, 3, 2), indices=np.array([], np.int32), axis=np.array(-2, np.int32)),
        Sample(params=(4,), indices=np.array(1, np.int32), axis=np.array(0, np.int32)),
    ]

    def infer(self, params: TensorSpec, indices: TensorSpec, axis: TensorSpec, batch_dims: int):
        a, dims, idx = _value(axis), params.shape.dims, indices.shape.dims
        dtype = params.dtype.base_dtype
        if batch_dims:
            raise ValueError("batch_dims other than 0 are not supported by GatherV2")
        if a is None or dims is None or idx is None:
            return TensorSpec(TensorShape(None), dtype)
        a = _check_axis(int(a), len(dims))
        return TensorSpec(TensorShape(dims[:a] + idx + dims[a + 1 :]), dtype)

    def compute(self, ctx: KernelContext, params: Any, indices: Any, axis: Any, batch_dims: int):
        axis = int(axis)
        n = params.shape[axis]
        if indices.size and (indices.min() < 0 or indices.max() >= n):
            bad = indices[(indices < 0) | (indices >= n)].reshape(-1)[0]
            raise ValueError(f"indices = {bad} is not in [0, {n})")
        return ctx.xp.take(params, indices, axis)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        params, indices, axis = op.inputs
        params_shape = shape(params, out_type=dtypes.int64)
        flat_indices = reshape(indices, [-1])
        n = stack([size(indices, out_type=dtypes.int64)])
        a = ops_lib.constant_value(axis)
        if a is not None and params.shape.ndims is not None:
            a = int(a) % params.shape.ndims
        if a == 0:
            from nbflow.framework.indexed_slices import IndexedSlices

            values = reshape(grad, concat([n, params_shape[1:]], 0))
            return [IndexedSlices(values, flat_indices, params_shape), None, None]
        # Dense: bring the gathered axis to the front, segment-sum, move it back (as TF does).
        if a is None:
            a = axis
        outer, inner = params_shape[:a], params_shape[a:][1:]
        grad = reshape(grad, concat([outer, n, inner], 0))
        outer_dims = size(outer)
        inner_axes = range(outer_dims + 1, rank(grad))
        perm = concat([stack([outer_dims]), range(outer_dims), inner_axes], 0)
        summed = unsorted_segment_sum(transpose(grad, perm), flat_indices, params_shape[a])
        back = concat([range(outer_dims) + 1, [0], inner_axes], 0)
        return [transpose(summed, back), None, None]


def gather(
    params: Any,
    indices: Any,
    validate_indices: Any = None,
    name: str | None = None,
    axis: Any = 0,
    batch_dims: int = 0,
) -> Tensor:
    """The slices of ``params`` along ``axis`` at ``indices``.

    >>> import nbflow as tf
    >>> tf.gather(tf.zeros([5, 3]), [0, 2]).shape
    TensorShape([2, 3])
    """
    from nbflow.ops.variables import Variable

    if isinstance(params, Variable):
        params = params.value()
    inputs = [ops_lib.convert_to_tensor(params), _int_tensor(indices), _int_tensor(axis)]
    return _create1("GatherV2", inputs, {"batch_dims": batch_dims}, name=name)


class UnsortedSegmentSum(OpDef):
    """Sums of the rows of ``data`` by ``segment_ids`` into ``num_segments`` rows
    (negative ids are dropped)."""

    inputs = ("data", "segment_ids", "num_segments")
    samples = [
        Sample(
            data=(5, 2),
            segment_ids=np.array([0, 2, 0, 1, 2], np.int32),
            num_segments=np.array(4, np.int32),
        ),
        Sample(
            data=(2, 3),
            segment_ids=np.array([[1, 0, 1], [0, 0, 2]], np.int32),
            num_segments=np.array(3, np.int32),
        ),
        Sample(
            data=(0, 3),
            segment_ids=np.array([], np.int32),
            num_segments=np.array(2, np.int64),
            input_dtype=np.int32,
        ),
    ]

    def infer(self, data: TensorSpec, segment_ids: TensorSpec, num_segments: TensorSpec):
        n = _value(num_segments)
        dims, ids = data.shape.dims, segment_ids.shape.ndims
        dtype = data.dtype.base_dtype
        if dims is None or ids is None:
            return TensorSpec(TensorShape(None), dtype)
        if not data.shape[:ids].is_compatible_with(segment_ids.shape):
            raise ValueError(
                f"data.shape = {data.shape} does not start with segment_ids.shape = "
                f"{segment_ids.shape}"
            )
        return TensorSpec(TensorShape([None if n is None else int(n)] + dims[ids:]), dtype)

    def compute(self, ctx: KernelContext, data: Any, segment_ids: Any, num_segments: Any) -> Any:
        xp = ctx.xp
        n = int(num_segments)
        out = xp.zeros((n,) + data.shape[segment_ids.ndim :], dtype=data.dtype)
        ids = segment_ids.reshape(-1)
        rows = data.reshape((ids.size,) + out.shape[1:])
        if ids.size and ids.max() >= n:
            raise ValueError(
                f"segment_ids[{int(ids.argmax())}] = {int(ids.max())} is out of range [0, {n})"
            )
        keep = ids >= 0
        if not keep.all():
            ids, rows = ids[keep], rows[keep]
        xp.add.at(out, ids, rows)
        return out

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        from nbflow.ops import math_ops

        ids = op.inputs[1]
        is_positive = math_ops.greater_equal(ids, zeros_like(ids))
        gathered = gather(grad, math_ops.maximum(ids, zeros_like(ids)))
        mask = broadcast_to(
            reshape(
                is_positive,
                concat([shape(is_positive), ones_like(shape(gathered)[rank(ids) :])], 0),
            ),
            shape(gathered),
        )
        return [where(mask, gathered, zeros_like(gathered)), None, None]


def unsorted_segment_sum(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """Row sums of ``data`` grouped by ``segment_ids`` into ``num_segments`` rows."""
    inputs = [ops_lib.convert_to_tensor(data), _int_tensor(segment_ids), _int_tensor(num_segments)]
    return _create1("UnsortedSegmentSum", inputs, name=name)


class DynamicPartition(OpDef):
    """``data`` split into ``num_partitions`` parts by the partition index of each row."""

    inputs = ("data", "partitions")
    attrs = {"num_partitions": REQUIRED}
    samples = [
        Sample(data=(5, 2), partitions=np.array([0, 1, 0, 2, 1], np.int32), num_partitions=3),
        Sample(
            data=(2, 3), partitions=np.array([[1, 0, 1], [0, 0, 1]], np.int32), num_partitions=2
        ),
    ]

    def output_count(self, attrs: dict[str, Any]) -> int:
        return attrs["num_partitions"]

    def infer(self, data: TensorSpec, partitions: TensorSpec, num_partitions: int):
        dims, p = data.shape.dims, partitions.shape.ndims
        dtype = data.dtype.base_dtype
        if dims is None or p is None:
            return [TensorSpec(TensorShape(None), dtype)] * num_partitions
        if not data.shape[:p].is_compatible_with(partitions.shape):
            raise ValueError(
                f"data.shape = {data.shape} does not start with partitions.shape = "
                f"{partitions.shape}"
            )
        return [TensorSpec(TensorShape([None] + dims[p:]), dtype)] * num_partitions

    def compute(self, ctx: KernelContext, data: Any, partitions: Any, num_partitions: int) -> Any:
        p = partitions.reshape(-1)
        if p.size and (p.min() < 0 or p.max() >= num_partitions):
            raise ValueError(f"partitions must be in [0, {num_partitions}), got {p.tolist()}")
        rows = data.reshape((p.size,) + data.shape[partitions.ndim :])
        out = [rows[p == i] for i in _range(num_partitions)]
        return out[0] if num_partitions == 1 else out

    def gradient(self, op: Any, *grads: Any) -> list[Any]:
        data, partitions = op.inputs
        n = op.get_attr("num_partitions")
        original = reshape(range(size(partitions)), shape(partitions))
        parts = dynamic_partition(original, partitions, n)
        stitched = dynamic_stitch(parts, _zeros_for(grads, op.outputs))
        return [reshape(stitched, shape(data)), None]


def dynamic_partition(data: Any, partitions: Any, num_partitions: int, name: str | None = None):
    """The rows of ``data`` in ``num_partitions`` lists, by ``partitions``."""
    inputs = [ops_lib.convert_to_tensor(data), _int_tensor(partitions)]
    return _create("DynamicPartition", inputs, {"num_partitions": num_partitions}, name).outputs


class DynamicStitch(OpDef):
    """Interleave ``data`` into one tensor: ``out[indices[m][i]] = data[m][i]``."""

    inputs = ("indices*", "data*")
    samples = [
        Sample(
            indices=[np.array([0, 2], np.int32), np.array([[1], [3]], np.int32)],
            data=[(2, 3), (2, 1, 3)],
        ),
        Sample(
            indices=[np.array([1, 0], np.int32), np.array([], np.int32)],
            data=[(2,), (0,)],
            input_dtype=np.int32,
        ),
    ]

    def infer(self, indices: list[TensorSpec], data: list[TensorSpec]) -> TensorSpec:
        dtype = data[0].dtype.base_dtype
        rest: TensorShape | None = TensorShape(None)
        for idx, d in zip(indices, data):
            if idx.shape.ndims is None or d.shape.ndims is None:
                continue
            rest = rest.merge_with(d.shape[idx.shape.ndims :])
        values = [_value(i) for i in indices]
        n = None
        if all(v is not None for v in values):
            n = max((int(v.max()) + 1 for v in values if v.size), default=0)
        return TensorSpec(TensorShape([n]).concatenate(rest), dtype)

    def compute(self, ctx: KernelContext, indices: Any, data: Any) -> Any:
        n = max((int(i.max()) + 1 for i in indices if i.size), default=0)
        d0 = data[0]
        rest = d0.shape[indices[0].ndim :]
        out = ctx.xp.zeros((n,) + rest, dtype=d0.dtype)
        for idx, d in zip(indices, data):
            out[idx.reshape(-1)] = d.reshape((idx.size,) + rest)
        return out

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        n = op.get_attr("N")
        indices = op.inputs[:n]
        return [None] * n + [gather(grad, i) for i in indices]


def dynamic_stitch(indices: list[Any], data: list[Any], name: str | None = None) -> Tensor:
    """One tensor built from ``data`` with ``out[indices[m][i]] = data[m][i]``."""
    indices = [_int_tensor(i) for i in indices]
    data = [ops_lib.convert_to_tensor(d) for d in data]
    return _create1("DynamicStitch", [indices, data], name=name)


parallel_dynamic_stitch = dynamic_stitch


class OneHot(OpDef):
    """One-hot vectors for ``indices``: ``on_value`` at the index, ``off_value`` elsewhere."""

    inputs = ("indices", "depth", "on_value", "off_value")
    attrs = {"axis": -1}
    samples = [
        Sample(
            indices=np.array([0, 2, 5, -1], np.int32),
            depth=np.array(3, np.int32),
            on_value=np.float64(1.0),
            off_value=np.float64(0.0),
        ),
        Sample(
            indices=np.array([[0, 1], [1, 0]], np.int64),
            depth=np.array(2, np.int32),
            on_value=np.float64(5.0),
            off_value=np.float64(-1.0),
            axis=0,
        ),
    ]

    def infer(self, indices, depth, on_value, off_value, axis: int) -> TensorSpec:
        d, dims = _value(depth), indices.shape.dims
        dtype = on_value.dtype.base_dtype
        if dims is None:
            return TensorSpec(TensorShape(None), dtype)
        a = len(dims) if axis == -1 else axis
        if not 0 <= a <= len(dims):
            raise ValueError(
                f"Expected axis to be -1 or between [0, {len(dims)}).  But received: {axis}"
            )
        return TensorSpec(TensorShape(dims[:a] + [None if d is None else int(d)] + dims[a:]), dtype)

    def compute(self, ctx: KernelContext, indices, depth, on_value, off_value, axis: int):
        xp = ctx.xp
        a = indices.ndim if axis == -1 else axis
        classes = xp.arange(int(depth)).reshape((-1,) + (1,) * (indices.ndim - a))
        hot = xp.expand_dims(indices, a) == classes
        return xp.where(hot, on_value, off_value).astype(on_value.dtype, copy=False)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [None, None, None, None]


def one_hot(
    indices: Any,
    depth: Any,
    on_value: Any = None,
    off_value: Any = None,
    axis: int | None = None,
    dtype: Any = None,
    name: str | None = None,
) -> Tensor:
    """One-hot vectors of length ``depth`` for ``indices`` (default float32 1/0)."""
    with ops_lib.name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        on_known = on_value is not None
        off_known = off_value is not None
        if dtype is None:
            for v in (on_value, off_value):
                if isinstance(v, Tensor):
                    dtype = v.dtype.base_dtype
                    break
            else:
                dtype = (
                    ops_lib.convert_to_tensor(on_value if on_known else off_value).dtype
                    if on_known or off_known
                    else dtypes.float32
                )
        dtype = dtypes.as_dtype(dtype)
        on = ops_lib.convert_to_tensor(on_value if on_known else 1, dtype=dtype, name="on_value")
        off = ops_lib.convert_to_tensor(
            off_value if off_known else 0, dtype=dtype, name="off_value"
        )
        if on.dtype.base_dtype is not off.dtype.base_dtype:
            raise TypeError(
                f"dtype {on.dtype} of on_value does not match dtype {off.dtype} of off_value"
            )
        inputs = [_int_tensor(indices), _int_tensor(depth), on, off]
        return _create1("OneHot", inputs, {"axis": -1 if axis is None else axis}, name=scope)


# --- making tensors -------------------------------------------------------------------------------
class Fill(OpDef):
    """A tensor of shape ``dims`` filled with the scalar ``value``."""

    inputs = ("dims", "value")
    samples = [
        Sample(dims=np.array([2, 3], np.int32), value=np.float64(1.5)),
        Sample(dims=np.array([0], np.int64), value=np.float64(2.0)),
    ]

    def infer(self, dims: TensorSpec, value: TensorSpec) -> TensorSpec:
        value.shape.with_rank(0)
        return TensorSpec(_shape_from_spec(dims), value.dtype.base_dtype)

    def compute(self, ctx: KernelContext, dims: Any, value: Any) -> Any:
        return ctx.xp.full(dims.tolist(), value, dtype=value.dtype)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        from nbflow.ops import math_ops

        return [None, math_ops.reduce_sum(grad)]


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    """A tensor of shape ``dims`` whose elements are all ``value``."""
    return _create1("Fill", [_int_tensor(dims), ops_lib.convert_to_tensor(value)], name=name)


_SMALL = 1000  # constant-shape zeros/ones up to this many elements become Const ops, as in TF


def _filled(shape_: Any, dtype: Any, value: int, name: str) -> Tensor:
    dtype = dtypes.as_dtype(dtype).base_dtype
    with ops_lib.name_scope(name, values=[shape_]) as scope:
        if not ops_lib._contains_tensor(shape_):
            dims = [int(d) for d in as_shape(shape_)]
            if int(np.prod(dims)) < _SMALL:
                return constant(np.full(dims, value, dtype=dtype.np), dtype=dtype, name=scope)
        scalar = ops_lib.convert_to_tensor(value, dtype=dtype)
        return fill(_int_tensor(shape_, name="shape"), scalar, name=scope)


def zeros(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """A tensor of ``shape`` with all elements zero.

    >>> import nbflow as tf
    >>> tf.zeros([2, 3]).shape
    TensorShape([2, 3])
    """
    return _filled(shape, dtype, 0, name or "zeros")


def ones(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """A tensor of ``shape`` with all elements one."""
    return _filled(shape, dtype, 1, name or "ones")


class ZerosLike(OpDef):
    """Zeros of the shape and dtype of ``x``."""

    inputs = ("x",)
    differentiable = False
    samples = [Sample(x=(2, 3)), Sample(x=(0,))]

    def infer(self, x: TensorSpec) -> TensorSpec:
        return TensorSpec(x.shape, x.dtype.base_dtype)

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.zeros_like(x)


class OnesLike(ZerosLike):
    """Ones of the shape and dtype of ``x``."""

    samples = [Sample(x=(2, 3)), Sample(x=(), input_dtype=np.int32)]

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.ones_like(x)


def _like(op_type: str, tensor: Any, dtype: Any, name: str | None, value: int) -> Tensor:
    tensor = ops_lib.convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype).base_dtype is not tensor.dtype.base_dtype:
        return _filled(
            shape(tensor), dtype, value, name or op_type.lower().replace("like", "_like")
        )
    return _create1(op_type, [tensor], name=name)


def zeros_like(tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True):
    """Zeros shaped like ``tensor`` (of ``dtype`` if given)."""
    return _like("ZerosLike", tensor, dtype, name, 0)


def ones_like(tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True):
    """Ones shaped like ``tensor`` (of ``dtype`` if given)."""
    return _like("OnesLike", tensor, dtype, name, 1)


class Range(OpDef):
    """``[start, start + delta, ...)`` up to but excluding ``limit``."""

    inputs = ("start", "limit", "delta")
    attrs = {"Tidx": dtypes.int32}
    differentiable = False
    samples = [
        Sample(start=np.int32(1), limit=np.int32(10), delta=np.int32(3)),
        Sample(
            start=np.float32(0.5),
            limit=np.float32(-1.0),
            delta=np.float32(-0.5),
            Tidx=dtypes.float32,
        ),
        Sample(start=np.int64(3), limit=np.int64(3), delta=np.int64(1), Tidx=dtypes.int64),
    ]

    def infer(self, start: TensorSpec, limit: TensorSpec, delta: TensorSpec, Tidx: dtypes.DType):
        values = [_value(v) for v in (start, limit, delta)]
        for v in (start, limit, delta):
            v.shape.with_rank(0)
        if any(v is None for v in values):
            return TensorSpec(TensorShape([None]), Tidx)
        s, lim, d = (v.item() for v in values)
        _check_range(s, lim, d)
        return TensorSpec(TensorShape([len(np.arange(s, lim, d))]), Tidx)

    def compute(self, ctx: KernelContext, start: Any, limit: Any, delta: Any, Tidx: dtypes.DType):
        s, lim, d = start.item(), limit.item(), delta.item()
        _check_range(s, lim, d)
        return ctx.xp.arange(s, lim, d, dtype=Tidx.np)


def _check_range(start: Any, limit: Any, delta: Any) -> None:
    if delta == 0:
        raise ValueError(f"Requires delta != 0: {delta}")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {start}/{limit}")


_RANGE_DTYPES = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]


def range(  # noqa: A001
    start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range"
) -> Tensor:
    """``[start, start + delta, ...)`` below ``limit``; ``range(n)`` counts from 0.

    >>> import nbflow as tf
    >>> tf.range(5).dtype
    tf.int32
    """
    from nbflow.ops import math_ops

    if limit is None:
        start, limit = 0, start
    with ops_lib.name_scope(name, "Range", [start, limit, delta]) as scope:
        values = (start, limit, delta)
        if dtype is not None:
            target = dtypes.as_dtype(dtype).base_dtype
        else:
            kinds = [
                v.dtype.base_dtype
                if isinstance(v, Tensor)
                else dtypes.as_dtype(_to_numpy(v, None).dtype)
                for v in values
            ]
            for kind in kinds:
                if kind not in _RANGE_DTYPES:
                    raise TypeError(f"range arguments must be int32/int64/float32/float64: {kind}")
            target = max(kinds, key=_RANGE_DTYPES.index)
        args = []
        for v, n in zip(values, ("start", "limit", "delta")):
            if isinstance(v, Tensor):
                args.append(math_ops.cast(v, target))
            else:
                args.append(ops_lib.convert_to_tensor(v, dtype=target, name=n))
        return _create1("Range", args, {"Tidx": target}, name=scope)


# --- selecting ----------------------------------------------------------------------------------
class Where(OpDef):
    """The coordinates of the true (non-zero) elements of ``input``: an int64 [n, rank] matrix."""

    inputs = ("input",)
    differentiable = False
    samples = [
        Sample(input=(3, 4), input_dtype=np.bool_),
        Sample(input=(5,), input_dtype=np.int32),
        Sample(input=(0, 2), input_dtype=np.bool_),
    ]

    def infer(self, input: TensorSpec) -> TensorSpec:
        return TensorSpec(TensorShape([None, input.shape.ndims]), dtypes.int64)

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        return ctx.xp.argwhere(input).astype(np.int64, copy=False)


class Select(OpDef):
    """``t`` where ``condition`` else ``e``; a vector condition picks whole rows."""

    inputs = ("condition", "t", "e")
    samples = [
        Sample(condition=np.array([[True, False, True], [False, False, True]]), t=(2, 3), e=(2, 3)),
        Sample(condition=np.array([True, False]), t=(2, 3), e=(2, 3)),
        Sample(condition=np.array(True), t=(2,), e=(2,)),
    ]

    def infer(self, condition: TensorSpec, t: TensorSpec, e: TensorSpec) -> TensorSpec:
        _check_select_dtypes(condition, t, e)
        out = t.shape.merge_with(e.shape)
        c = condition.shape
        if c.ndims is not None and out.ndims is not None and c.ndims not in (0, out.ndims):
            if c.ndims != 1 or not c.is_compatible_with(out[:1]):
                raise ValueError(f"Shapes must be equal rank, but are {c.ndims} and {out.ndims}")
        elif not c.is_compatible_with(out) and c.ndims != 0:
            raise ValueError(f"Shapes {c} and {out} are not compatible")
        return TensorSpec(out, t.dtype.base_dtype)

    def compute(self, ctx: KernelContext, condition: Any, t: Any, e: Any) -> Any:
        if condition.ndim == 1 and t.ndim > 1:
            condition = condition.reshape(condition.shape + (1,) * (t.ndim - 1))
        return ctx.xp.where(condition, t, e)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        c = op.inputs[0]
        zeros_ = zeros_like(grad)
        return [None, where(c, grad, zeros_), where(c, zeros_, grad)]


class SelectV2(OpDef):
    """``t`` where ``condition`` else ``e``, all three broadcast together."""

    inputs = ("condition", "t", "e")
    samples = [
        Sample(condition=np.array([True, False, True]), t=(2, 3), e=(1,)),
        Sample(condition=np.array([[True], [False]]), t=(2, 3), e=(2, 3)),
    ]

    def infer(self, condition: TensorSpec, t: TensorSpec, e: TensorSpec) -> TensorSpec:
        _check_select_dtypes(condition, t, e)
        out = broadcast_shapes(broadcast_shapes(condition.shape, t.shape), e.shape)
        return TensorSpec(out, t.dtype.base_dtype)

    def compute(self, ctx: KernelContext, condition: Any, t: Any, e: Any) -> Any:
        return ctx.xp.where(condition, t, e)

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        c, t, e = op.inputs
        zeros_ = zeros_like(grad)
        return [
            None,
            _reduce_to(where_v2(c, grad, zeros_), t),
            _reduce_to(where_v2(c, zeros_, grad), e),
        ]


def _check_select_dtypes(condition: TensorSpec, t: TensorSpec, e: TensorSpec) -> None:
    if condition.dtype.base_dtype is not dtypes.bool:
        raise TypeError(f"condition must be bool, got {condition.dtype.base_dtype.name}")
    if t.dtype.base_dtype is not e.dtype.base_dtype:
        raise TypeError(
            f"Input 'e' has type {e.dtype.base_dtype.name} that does not match type "
            f"{t.dtype.base_dtype.name} of argument 't'"
        )


def _select_inputs(condition: Any, x: Any, y: Any) -> list[Tensor]:
    if isinstance(y, Tensor) and not isinstance(x, Tensor):
        x = ops_lib.convert_to_tensor(x, dtype=y.dtype.base_dtype)
    x = ops_lib.convert_to_tensor(x)
    y = ops_lib.convert_to_tensor(y, dtype=x.dtype.base_dtype)
    return [ops_lib.convert_to_tensor(condition, dtype=dtypes.bool), x, y]


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """With one argument, the coordinates of the true elements (int64 [n, rank]); with three,
    the elements of ``x`` where ``condition`` else of ``y`` (a vector condition picks rows)."""
    if x is None and y is None:
        condition = ops_lib.convert_to_tensor(condition, preferred_dtype=dtypes.bool)
        return _create1("Where", [condition], name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return _create1("Select", _select_inputs(condition, x, y), name=name)


def where_v2(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """Like ``where``, but ``condition``, ``x`` and ``y`` broadcast together."""
    if x is None and y is None:
        return where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return _create1("SelectV2", _select_inputs(condition, x, y), name=name)


def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask", axis: Any = None):
    """The elements (rows, for a lower-rank mask) of ``tensor`` where ``mask`` is true."""
    with ops_lib.name_scope(name, values=[tensor, mask]):
        tensor = ops_lib.convert_to_tensor(tensor, name="tensor")
        mask = ops_lib.convert_to_tensor(mask, name="mask")
        k = mask.shape.ndims
        if k is None:
            raise ValueError(
                "Number of mask dimensions must be specified, even if some dimensions are None"
            )
        if k == 0:
            raise ValueError("mask cannot be scalar.")
        a = 0 if axis is None else int(axis)
        if tensor.shape.ndims is not None:
            tensor.shape[a : a + k].assert_is_compatible_with(mask.shape)
        dims = shape(tensor)
        leading = reshape(_prod(dims[a : a + k]), [1])
        flat = reshape(tensor, concat([dims[:a], leading, dims[a + k :]], 0))
        indices = squeeze(where(reshape(mask, [-1])), axis=[1])
        return gather(flat, indices, axis=a)


def _prod(x: Tensor) -> Tensor:
    from nbflow.ops import math_ops

    return math_ops.reduce_prod(x)


class IdentityN(OpDef):
    """Each of its inputs, unchanged."""

    inputs = ("input*",)
    samples = [Sample(input=[(2, 3), (4,)])]

    def output_count(self, attrs: dict[str, Any]) -> int:
        return attrs["N"]

    def infer(self, input: list[TensorSpec]) -> list[TensorSpec]:
        return [TensorSpec(x.shape, x.dtype.base_dtype) for x in input]

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        return input[0] if len(input) == 1 else list(input)

    def gradient(self, op: Any, *grads: Any) -> list[Any]:
        return list(grads)


def identity_n(input: list[Any], name: str | None = None) -> list[Tensor]:
    tensors = [ops_lib.convert_to_tensor(x) for x in input]
    return _create("IdentityN", [tensors], name=name).outputs


newaxis = None

__all__ = [
    "boolean_mask",
    "broadcast_to",
    "concat",
    "constant",
    "dynamic_partition",
    "dynamic_stitch",
    "expand_dims",
    "fill",
    "gather",
    "identity",
    "identity_n",
    "invert_permutation",
    "newaxis",
    "one_hot",
    "ones",
    "ones_like",
    "pad",
    "parallel_dynamic_stitch",
    "placeholder",
    "placeholder_with_default",
    "range",
    "rank",
    "reshape",
    "reverse",
    "reverse_v2",
    "shape",
    "shape_n",
    "size",
    "slice",
    "split",
    "squeeze",
    "stack",
    "stop_gradient",
    "strided_slice",
    "tile",
    "transpose",
    "unsorted_segment_sum",
    "unstack",
    "where",
    "where_v2",
    "zeros",
    "zeros_like",
]
