"""Elementwise math with NumPy broadcasting, reductions and matrix products.

Binary ops share ``BinaryOp`` (same dtype on both sides, broadcast shape inference); unary ops
share ``UnaryOp``. Builders convert Python values to the other operand's dtype, as TensorFlow's
operators do, and the Tensor operators (``+``, ``@``, ``<`` ...) are installed from here.
"""

from __future__ import annotations

from typing import Any, ClassVar


from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape, broadcast_shapes

Tensor = ops_lib.Tensor


def _create(op_type: str, inputs: list[Any], attrs: dict[str, Any] | None = None, name=None):
    return ops_lib.get_default_graph().create_op(op_type, inputs, attrs, name=name).outputs[0]


class BinaryOp(OpDef):
    """Base of elementwise binary ops: both inputs of one dtype, NumPy broadcasting."""

    abstract = True
    inputs = ("x", "y")
    # The dtype of the result: None keeps the inputs' dtype (comparisons give bool).
    result_dtype: ClassVar[dtypes.DType | None] = None
    samples = [Sample(x=(2, 3), y=(2, 3)), Sample(x=(2, 1, 3), y=(4, 1)), Sample(x=(0, 3), y=(3,))]

    def infer(self, x: TensorSpec, y: TensorSpec) -> TensorSpec:
        if x.dtype.base_dtype is not y.dtype.base_dtype:
            raise TypeError(
                f"Input 'y' of '{self.type}' Op has type {y.dtype.base_dtype.name} that does not "
                f"match type {x.dtype.base_dtype.name} of argument 'x'"
            )
        return TensorSpec(
            broadcast_shapes(x.shape, y.shape), self.result_dtype or x.dtype.base_dtype
        )


class UnaryOp(OpDef):
    """Base of elementwise unary ops: same shape and dtype out as in."""

    abstract = True
    inputs = ("x",)
    samples = [Sample(x=(2, 3)), Sample(x=()), Sample(x=(0,))]

    def infer(self, x: TensorSpec) -> TensorSpec:
        return TensorSpec(x.shape, x.dtype.base_dtype)


def binary(op_type: str, x: Any, y: Any, name: str | None = None) -> Tensor:
    """Build a binary op, converting Python values to the dtype of the tensor operand."""
    if not isinstance(x, Tensor) and isinstance(y, Tensor):
        x = ops_lib.convert_to_tensor(x, dtype=y.dtype.base_dtype)
    else:
        x = ops_lib.convert_to_tensor(x)
    if not isinstance(y, Tensor):
        y = ops_lib.convert_to_tensor(y, dtype=x.dtype.base_dtype)
    return _create(op_type, [x, y], name=name)


def unary(op_type: str, x: Any, name: str | None = None) -> Tensor:
    return _create(op_type, [ops_lib.convert_to_tensor(x)], name=name)


class Add(BinaryOp):
    """x + y."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x + y


class Sub(BinaryOp):
    """x - y."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x - y


class Mul(BinaryOp):
    """x * y."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x * y


class RealDiv(BinaryOp):
    """x / y for real (floating) types."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x / y


class Neg(UnaryOp):
    """-x."""

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return -x


def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Add", x, y, name)


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Sub", x, y, name)


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Mul", x, y, name)


def realdiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("RealDiv", x, y, name)


def negative(x: Any, name: str | None = None) -> Tensor:
    return unary("Neg", x, name)


sub = subtract
mul = multiply
neg = negative


class Cast(OpDef):
    """x converted to ``DstT``."""

    inputs = ("x",)
    attrs = {"DstT": dtypes.float32, "Truncate": False}
    samples = [Sample(x=(2, 3), DstT=dtypes.int32), Sample(x=(3,), DstT=dtypes.float32)]

    def infer(self, x: TensorSpec, DstT: dtypes.DType, Truncate: bool) -> TensorSpec:
        return TensorSpec(x.shape, DstT)

    def compute(self, ctx: KernelContext, x: Any, DstT: dtypes.DType, Truncate: bool) -> Any:
        xp = ctx.xp
        if DstT.is_bool:
            return x != 0
        return xp.asarray(x).astype(DstT.np)


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    x = ops_lib.convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype).base_dtype
    if x.dtype.base_dtype is dtype:
        return x
    return _create("Cast", [x], {"DstT": dtype}, name=name or "Cast")


class MatMul(OpDef):
    """Matrix product of two rank-2 tensors, optionally transposing either one."""

    inputs = ("a", "b")
    attrs = {"transpose_a": False, "transpose_b": False}
    cost = "expensive"
    samples = [
        Sample(a=(2, 3), b=(3, 4)),
        Sample(a=(3, 2), b=(3, 4), transpose_a=True),
        Sample(a=(2, 3), b=(4, 3), transpose_b=True),
    ]

    def infer(self, a: TensorSpec, b: TensorSpec, transpose_a: bool, transpose_b: bool):
        if a.dtype.base_dtype is not b.dtype.base_dtype:
            raise TypeError(
                f"Input 'b' of 'MatMul' Op has type {b.dtype.base_dtype.name} that does not "
                f"match type {a.dtype.base_dtype.name} of argument 'a'"
            )
        da = a.shape.with_rank(2).dims
        db = b.shape.with_rank(2).dims
        assert da is not None and db is not None
        m, k = da[::-1] if transpose_a else da
        k2, n = db[::-1] if transpose_b else db
        if not k.is_compatible_with(k2):
            raise ValueError(f"Dimensions must be equal, but are {k} and {k2}")
        return TensorSpec(TensorShape([m, n]), a.dtype.base_dtype)

    def compute(self, ctx: KernelContext, a: Any, b: Any, transpose_a: bool, transpose_b: bool):
        return ctx.xp.matmul(a.T if transpose_a else a, b.T if transpose_b else b)


def matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """Matrix product ``a @ b``; rank > 2 inputs use BatchMatMul."""
    a = ops_lib.convert_to_tensor(a)
    b = ops_lib.convert_to_tensor(b, dtype=a.dtype.base_dtype) if not isinstance(b, Tensor) else b
    transpose_a = transpose_a or adjoint_a
    transpose_b = transpose_b or adjoint_b
    if (a.shape.ndims or 2) > 2 or (b.shape.ndims or 2) > 2:
        return _create("BatchMatMulV2", [a, b], {"adj_x": transpose_a, "adj_y": transpose_b}, name)
    return _create("MatMul", [a, b], {"transpose_a": transpose_a, "transpose_b": transpose_b}, name)


class AddN(OpDef):
    """The sum of a list of tensors of one shape and dtype."""

    inputs = ("inputs*",)
    samples = [Sample(inputs=[(2, 3), (2, 3), (2, 3)]), Sample(inputs=[(4,)])]

    def infer(self, inputs: list[TensorSpec]) -> TensorSpec:
        shape = TensorShape(None)
        for spec in inputs:
            if spec.dtype.base_dtype is not inputs[0].dtype.base_dtype:
                raise TypeError("AddN inputs must all have the same dtype")
            shape = shape.merge_with(spec.shape)
        return TensorSpec(shape, inputs[0].dtype.base_dtype)

    def compute(self, ctx: KernelContext, inputs: Any) -> Any:
        if len(inputs) == 1:
            return inputs[0]
        total = inputs[0] + inputs[1]
        for x in inputs[2:]:
            total += x
        return total


def add_n(inputs: list[Any], name: str | None = None) -> Tensor:
    if not inputs:
        raise ValueError("inputs must be a non-empty list of tensors")
    tensors = [ops_lib.convert_to_tensor(x) for x in inputs]
    return _create("AddN", [tensors], name=name)


def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y; integers are converted first (int8/16 to float32, int32/64 to float64)."""
    x = (
        ops_lib.convert_to_tensor(x)
        if isinstance(x, Tensor) or not isinstance(y, Tensor)
        else (ops_lib.convert_to_tensor(x, dtype=y.dtype.base_dtype))
    )
    y = y if isinstance(y, Tensor) else ops_lib.convert_to_tensor(y, dtype=x.dtype.base_dtype)
    if x.dtype.base_dtype is not y.dtype.base_dtype:
        raise TypeError(f"x and y must have the same dtype, got {x.dtype!r} != {y.dtype!r}")
    target = _TRUEDIV_TARGET.get(x.dtype.base_dtype)
    if target is not None:
        x, y = cast(x, target), cast(y, target)
    return _create("RealDiv", [x, y], name=name or "truediv")


_TRUEDIV_TARGET = {
    dtypes.int8: dtypes.float32,
    dtypes.uint8: dtypes.float32,
    dtypes.int16: dtypes.float32,
    dtypes.uint16: dtypes.float32,
    dtypes.int32: dtypes.float64,
    dtypes.uint32: dtypes.float64,
    dtypes.int64: dtypes.float64,
    dtypes.uint64: dtypes.float64,
}


def _install_operators() -> None:
    def rev(fn):
        return lambda y, x: fn(x, y)

    table = {
        "__add__": add,
        "__sub__": subtract,
        "__mul__": multiply,
        "__truediv__": truediv,
        "__matmul__": matmul,
    }
    for name, fn in table.items():
        Tensor._override_operator(name, fn)
        Tensor._override_operator("__r" + name[2:], rev(fn))
    Tensor._override_operator("__neg__", negative)


_install_operators()
