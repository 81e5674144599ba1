"""Stateful variable ops: VariableV2 yields a reference to a resource; Assign* update it.

A variable's value lives in its device's ``ResourceManager`` (keyed by container and shared
name), not in the graph. The VariableV2 output has a reference dtype (``float32_ref``): ops that
declare a ``ref&`` input receive the resource; any other consumer receives its current value.
"""

from __future__ import annotations

from typing import Any

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, TensorSpec
from nbflow.framework.resources import VariableResource
from nbflow.framework.tensor_shape import TensorShape, as_shape


class VariableV2(OpDef):
    """A handle to a mutable tensor held in the device's resource manager."""

    attrs = {"shape": REQUIRED, "dtype": REQUIRED, "container": "", "shared_name": ""}
    stateful = True
    differentiable = False
    is_variable = True

    def infer(self, shape: TensorShape, dtype: dtypes.DType, container: str, shared_name: str):
        return TensorSpec(shape, dtype.base_dtype._as_ref())

    def bind(self, op: Any, device_type: str = "CPU"):
        container = op.get_attr("container")
        name = op.get_attr("shared_name") or op.name

        def variable(ctx: KernelContext) -> VariableResource:
            return ctx.resources.variable(container, name)

        return variable


class Assign(OpDef):
    """ref = value; outputs the reference (so reading it sees the new value)."""

    inputs = ("ref&", "value")
    attrs = {"validate_shape": True, "use_locking": True}
    type_attrs = {"T": 0}
    stateful = True
    differentiable = False

    def infer(self, ref: TensorSpec, value: TensorSpec, validate_shape: bool, use_locking: bool):
        _check_dtype(self.type, ref, value)
        if validate_shape and not ref.shape.is_compatible_with(value.shape):
            raise ValueError(f"Shapes {ref.shape} and {value.shape} are incompatible")
        shape = ref.shape.merge_with(value.shape) if validate_shape else value.shape
        return TensorSpec(shape, ref.dtype)

    def compute(
        self,
        ctx: KernelContext,
        ref: VariableResource,
        value: Any,
        validate_shape: bool,
        use_locking: bool,
    ) -> VariableResource:
        xp = ctx.xp
        current = ref.value
        if validate_shape and current is not None and current.shape != value.shape:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Assign requires shapes of both tensors to match. lhs shape= "
                f"{list(current.shape)} rhs shape= {list(value.shape)} (variable {ref.name})",
            )
        if (
            current is not None
            and current.shape == value.shape
            and current.dtype == value.dtype
            and current.flags.writeable
        ):
            # In place, as TensorFlow's ref variables do: a read forwarded through Identity
            # after this Assign (the control_dependencies idiom) sees the new value.
            current[...] = value
        else:
            ref.value = xp.array(value, copy=True)
        return ref


def _check_dtype(op_type: str, ref: TensorSpec, value: TensorSpec) -> None:
    if ref.dtype.base_dtype is not value.dtype.base_dtype:
        raise TypeError(
            f"Input 'value' of '{op_type}' Op has type {value.dtype.base_dtype.name} that does "
            f"not match type {ref.dtype.base_dtype.name} of argument 'ref'"
        )


class _UpdateOp(OpDef):
    abstract = True
    inputs = ("ref&", "value")
    attrs = {"use_locking": False}
    stateful = True
    differentiable = False

    def infer(self, ref: TensorSpec, value: TensorSpec, use_locking: bool) -> TensorSpec:
        _check_dtype(self.type, ref, value)
        if not ref.shape.is_compatible_with(value.shape) and value.shape.ndims != 0:
            raise ValueError(f"Shapes {ref.shape} and {value.shape} are incompatible")
        return TensorSpec(ref.shape, ref.dtype)


class AssignAdd(_UpdateOp):
    """ref += value, in place."""

    def compute(self, ctx: KernelContext, ref: VariableResource, value: Any, use_locking: bool):
        current = ref.read()
        if use_locking:
            with ref.lock:
                current += value
        else:
            current += value
        return ref


class AssignSub(_UpdateOp):
    """ref -= value, in place."""

    def compute(self, ctx: KernelContext, ref: VariableResource, value: Any, use_locking: bool):
        current = ref.read()
        if use_locking:
            with ref.lock:
                current -= value
        else:
            current -= value
        return ref


class IsVariableInitialized(OpDef):
    """Whether the variable has been assigned a value."""

    inputs = ("ref&",)
    differentiable = False

    def infer(self, ref: TensorSpec) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.bool)

    def compute(self, ctx: KernelContext, ref: VariableResource) -> Any:
        return ctx.xp.asarray(ref.is_initialized())


def variable_op_v2(
    shape: Any, dtype: Any, name: str = "Variable", container: str = "", shared_name: str = ""
) -> ops_lib.Tensor:
    return (
        ops_lib.get_default_graph()
        .create_op(
            "VariableV2",
            [],
            {
                "shape": as_shape(shape),
                "dtype": dtypes.as_dtype(dtype).base_dtype,
                "container": container,
                "shared_name": shared_name,
            },
            name=name,
        )
        .outputs[0]
    )


def _update(op_type: str, ref: Any, value: Any, attrs: dict[str, Any], name: str | None):
    ref_tensor = ref._ref() if hasattr(ref, "_ref") else ref
    value = ops_lib.convert_to_tensor(value, dtype=ref_tensor.dtype.base_dtype)
    return (
        ops_lib.get_default_graph()
        .create_op(op_type, [ref_tensor, value], attrs, name=name or op_type)
        .outputs[0]
    )


def assign(
    ref: Any,
    value: Any,
    validate_shape: bool = True,
    use_locking: bool = True,
    name: str | None = None,
) -> ops_lib.Tensor:
    return _update(
        "Assign", ref, value, {"validate_shape": validate_shape, "use_locking": use_locking}, name
    )


def assign_add(ref: Any, value: Any, use_locking: bool = False, name: str | None = None):
    return _update("AssignAdd", ref, value, {"use_locking": use_locking}, name)


def assign_sub(ref: Any, value: Any, use_locking: bool = False, name: str | None = None):
    return _update("AssignSub", ref, value, {"use_locking": use_locking}, name)


def is_variable_initialized(variable: Any) -> ops_lib.Tensor:
    ref = variable._ref() if hasattr(variable, "_ref") else variable
    return ops_lib.get_default_graph().create_op("IsVariableInitialized", [ref]).outputs[0]


class _CountUpTo(OpDef):
    """ref += 1 and return the old value; OutOfRangeError once it reached ``limit`` (epochs)."""

    inputs = ("ref&",)
    attrs = {"limit": REQUIRED}
    stateful = True
    differentiable = False

    def infer(self, ref: TensorSpec, limit: int) -> TensorSpec:
        return TensorSpec(ref.shape, ref.dtype.base_dtype)

    def compute(self, ctx: KernelContext, ref: Any, limit: int) -> Any:
        with ref.lock:
            value = ref.read()
            if int(value) >= limit:
                raise errors.OutOfRangeError(
                    None, None, f"Reached limit of {limit} ({ref.name}): input exhausted"
                )
            old = value.copy()
            ref.value = value + 1
            return old


def count_up_to(ref: Any, limit: int, name: str | None = None) -> ops_lib.Tensor:
    ref_tensor = ref._ref() if hasattr(ref, "_ref") else ref
    return (
        ops_lib.get_default_graph()
        .create_op("_CountUpTo", [ref_tensor], {"limit": limit}, name=name or "CountUpTo")
        .outputs[0]
    )
