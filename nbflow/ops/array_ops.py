"""Array ops: constants, placeholders, identity and the ops that move or reshape data."""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape, as_shape


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
