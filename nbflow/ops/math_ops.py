"""Elementwise math with NumPy broadcasting, reductions and matrix ops, with their gradients.

Binary ops share ``BinaryOp`` (one dtype on both sides, broadcast shape inference); unary ops
share ``UnaryOp``; reductions share ``ReductionOp`` (TensorFlow's ``reduction_indices`` input
and ``keep_dims`` attr). Builders convert Python values to the other operand's dtype, as
TensorFlow's operators do, and the Tensor operators (``+``, ``@``, ``<`` ...) are installed here.

Gradients are graph code written with the public builders. A broadcasting binary op sums its
gradient back to each input's shape (``_unbroadcast``): statically when the shapes allow it, else
TensorFlow's way, ``Reshape(Sum(grad, BroadcastGradientArgs(Shape(x), Shape(grad))), Shape(x))``.
Shape-moving array ops (Shape, Reshape, ExpandDims ...) live in ``array_ops``; gradient functions
import it lazily because it sits beside this module.
"""

from __future__ import annotations

import builtins
from typing import Any, ClassVar

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import Dimension, TensorShape, broadcast_shapes

Tensor = ops_lib.Tensor

__all__ = [
    "abs",
    "accumulate_n",
    "add",
    "add_n",
    "argmax",
    "argmin",
    "atan2",
    "cast",
    "conj",
    "ceil",
    "cos",
    "count_nonzero",
    "diag",
    "diag_part",
    "div",
    "divide",
    "equal",
    "exp",
    "expm1",
    "eye",
    "floor",
    "floor_div",
    "floordiv",
    "floormod",
    "greater",
    "greater_equal",
    "is_finite",
    "is_inf",
    "is_nan",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log_sigmoid",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "matmul",
    "matrix_determinant",
    "matrix_inverse",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "not_equal",
    "pow",
    "realdiv",
    "reciprocal",
    "reduce_all",
    "reduce_any",
    "reduce_logsumexp",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_sum",
    "round",
    "rsqrt",
    "scalar_mul",
    "sigmoid",
    "sign",
    "sin",
    "sqrt",
    "square",
    "squared_difference",
    "subtract",
    "tan",
    "tanh",
    "to_double",
    "to_float",
    "to_int32",
    "to_int64",
    "trace",
    "truediv",
]

_FLOATS = frozenset({dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64})
_COMPLEX = frozenset({dtypes.complex64, dtypes.complex128})
_INTS = frozenset(dtypes._INTEGERS)
_REAL = _FLOATS | _INTS
_NUMERIC = _REAL | _COMPLEX
_INEXACT = _FLOATS | _COMPLEX
_BOOL = frozenset({dtypes.bool})


def _create(op_type: str, inputs: list[Any], attrs: dict[str, Any] | None = None, name=None):
    return ops_lib.get_default_graph().create_op(op_type, inputs, attrs, name=name).outputs[0]


def _array_ops() -> Any:
    from nbflow.ops import array_ops  # the sibling family; imported when a gradient is built

    return array_ops


def _check_dtype(op_type: str, arg: str, spec: TensorSpec, allowed: frozenset | None) -> None:
    if allowed is not None and spec.dtype.base_dtype not in allowed:
        names = ", ".join(sorted(d.name for d in allowed))
        raise TypeError(
            f"Value passed to parameter '{arg}' of '{op_type}' has DataType "
            f"{spec.dtype.base_dtype.name} not in list of allowed values: {names}"
        )


def _copy_samples(cls: type) -> None:
    """Give a subclass its own Sample objects (a Sample records the one op it belongs to)."""
    if "samples" not in cls.__dict__:
        cls.samples = [Sample(s.input_dtype, **s.kwargs) for s in cls.samples]


_POSITIVE = np.linspace(0.5, 2.0, 6).reshape(2, 3)


# --- elementwise binary ops -----------------------------------------------------------------------
class BinaryOp(OpDef):
    """Base of elementwise binary ops: both inputs of one dtype, NumPy broadcasting."""

    abstract = True
    inputs = ("x", "y")
    # The dtype of the result: None keeps the inputs' dtype (comparisons give bool).
    result_dtype: ClassVar[dtypes.DType | None] = None
    allowed: ClassVar[frozenset | None] = _NUMERIC
    samples = [Sample(x=(2, 3), y=(2, 3)), Sample(x=(2, 1, 3), y=(4, 1)), Sample(x=(3,), y=())]

    def __init_subclass__(cls, **kwargs: Any):
        _copy_samples(cls)
        super().__init_subclass__(**kwargs)

    def infer(self, x: TensorSpec, y: TensorSpec) -> TensorSpec:
        if x.dtype.base_dtype is not y.dtype.base_dtype:
            raise TypeError(
                f"Input 'y' of '{self.type}' Op has type {y.dtype.base_dtype.name} that does not "
                f"match type {x.dtype.base_dtype.name} of argument 'x'"
            )
        _check_dtype(self.type, "x", x, self.allowed)
        return TensorSpec(
            broadcast_shapes(x.shape, y.shape), self.result_dtype or x.dtype.base_dtype
        )


class UnaryOp(OpDef):
    """Base of elementwise unary ops: same shape and dtype out as in."""

    abstract = True
    inputs = ("x",)
    allowed: ClassVar[frozenset | None] = _NUMERIC
    result_dtype: ClassVar[dtypes.DType | None] = None
    samples = [Sample(x=(2, 3)), Sample(x=())]

    def __init_subclass__(cls, **kwargs: Any):
        _copy_samples(cls)
        super().__init_subclass__(**kwargs)

    def infer(self, x: TensorSpec) -> TensorSpec:
        _check_dtype(self.type, "x", x, self.allowed)
        return TensorSpec(x.shape, self.result_dtype or x.dtype.base_dtype)


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


def _keeps_shape(x: TensorShape, other: TensorShape) -> bool:
    """Whether broadcasting ``x`` against ``other`` surely leaves x's shape unchanged."""
    if x.ndims is None or other.ndims is None or other.ndims > x.ndims:
        return False
    xd, od = x.dims, other.dims
    for a, b in zip(xd[x.ndims - other.ndims :], od):
        if a.value is not None and a.value != 1:
            continue
        if b.value == 1 or (a.value is not None and a.value == b.value):
            continue
        return False
    return True


def _unbroadcast(grad: Tensor, x: Tensor, other: TensorShape | None = None) -> Tensor:
    """``grad`` (of a broadcast result) summed down to the shape of the input ``x``.

    ``other`` is the static shape of the other operand, if known: when it shows that ``x`` was
    not broadcast, ``grad`` is returned as it is (no ops added).
    """
    xs, gs = x.shape, grad.shape
    if other is not None and _keeps_shape(xs, other):
        return grad
    if xs.is_fully_defined() and gs.ndims is not None and gs.ndims >= xs.ndims:
        if gs.is_fully_defined() and gs.as_list() == xs.as_list():
            return grad
        lead = gs.ndims - xs.ndims
        ones = [
            i
            for i, d in enumerate(xs.as_list())
            if d == 1 and gs.dims[lead + i].value != 1  # type: ignore[index]
        ]
        if lead:
            grad = reduce_sum(grad, list(builtins.range(lead)))
        if ones:
            grad = reduce_sum(grad, ones, keepdims=True)
        return grad
    array_ops = _array_ops()
    x_shape = array_ops.shape(x)
    axes, _ = broadcast_gradient_args(x_shape, array_ops.shape(grad))
    return array_ops.reshape(reduce_sum(grad, axes), x_shape)


reduce_to_shape = _unbroadcast


def _binary_grads(op: ops_lib.Operation, gx: Tensor | None, gy: Tensor | None) -> list:
    x, y = op.inputs
    return [
        None if gx is None else _unbroadcast(gx, x, y.shape),
        None if gy is None else _unbroadcast(gy, y, x.shape),
    ]


class Add(BinaryOp):
    """x + y."""

    allowed = _NUMERIC | {dtypes.string}

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x + y

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return _binary_grads(op, grad, grad)


class Sub(BinaryOp):
    """x - y."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x - y

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return _binary_grads(op, grad, negative(grad))


class Mul(BinaryOp):
    """x * y."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x * y

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        x, y = op.inputs
        return _binary_grads(op, multiply(grad, y), multiply(x, grad))


class RealDiv(BinaryOp):
    """x / y for real (floating) types."""

    allowed = _INEXACT
    samples = [
        Sample(x=(2, 3), y=_POSITIVE),
        Sample(x=(4, 2, 3), y=_POSITIVE),
        Sample(x=(2, 1), y=-_POSITIVE),
    ]

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x / y

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        x, y = op.inputs
        gx = realdiv(grad, y)
        gy = multiply(grad, realdiv(realdiv(negative(x), y), y))
        return _binary_grads(op, gx, gy)


class FloorDiv(BinaryOp):
    """x // y, rounding toward negative infinity (Python's semantics) for every type."""

    allowed = _REAL
    differentiable = False
    samples = [
        Sample(x=(2, 3), y=_POSITIVE),
        Sample(input_dtype=np.int32, x=np.array([7, -7, 7, -7]), y=np.array([2, 2, -2, -2])),
    ]

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x // y


class FloorMod(BinaryOp):
    """x mod y with the sign of y (Python's ``%``)."""

    allowed = _REAL
    samples = [
        Sample(x=(2, 3), y=_POSITIVE),
        Sample(x=(2, 1), y=-_POSITIVE),
        Sample(input_dtype=np.int32, x=np.array([7, -7, 7, -7]), y=np.array([3, 3, -3, -3])),
    ]

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x % y

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        x, y = op.inputs
        return _binary_grads(op, grad, multiply(negative(grad), floordiv(x, y)))


class Pow(BinaryOp):
    """x ** y; integers to negative integer powers are an error, as in TensorFlow."""

    samples = [
        Sample(x=_POSITIVE, y=(2, 3)),
        Sample(x=_POSITIVE, y=(3,)),
        Sample(x=_POSITIVE.T, y=np.array(2.0)),
        Sample(input_dtype=np.int32, x=np.array([1, 2, -3]), y=np.array([3, 0, 2])),
    ]

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x**y

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        x, y = op.inputs
        z = op.outputs[0]
        gx = multiply(grad, multiply(y, pow(x, subtract(y, 1))))
        # d/dy x**y = x**y log x, taken as 0 where x <= 0 (TensorFlow's convention)
        tiny = float(np.finfo(x.dtype.base_dtype.np).tiny) if x.dtype.is_floating else 1
        log_x = multiply(log(maximum(x, tiny)), cast(greater(x, 0), x.dtype.base_dtype))
        gy = multiply(grad, multiply(z, log_x))
        return _binary_grads(op, gx, gy)


class Maximum(BinaryOp):
    """The larger of x and y (ties send the gradient to x)."""

    allowed = _REAL

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return ctx.xp.maximum(x, y)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        x, y = op.inputs
        gx = multiply(grad, cast(greater_equal(x, y), grad.dtype.base_dtype))
        return _binary_grads(op, gx, subtract(grad, gx))


class Minimum(BinaryOp):
    """The smaller of x and y (ties send the gradient to x)."""

    allowed = _REAL

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return ctx.xp.minimum(x, y)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        x, y = op.inputs
        gx = multiply(grad, cast(less_equal(x, y), grad.dtype.base_dtype))
        return _binary_grads(op, gx, subtract(grad, gx))


class SquaredDifference(BinaryOp):
    """(x - y) ** 2."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        d = x - y
        return d * d

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        x, y = op.inputs
        gx = multiply(multiply(grad, 2), subtract(x, y))
        return _binary_grads(op, gx, negative(gx))


class Atan2(BinaryOp):
    """The angle of the point (x, y): atan2(y, x), inputs named as TensorFlow's (y first)."""

    inputs = ("y", "x")
    allowed = _FLOATS
    samples = [Sample(y=(2, 3), x=_POSITIVE), Sample(y=(2, 1), x=(3,))]

    def infer(self, y: TensorSpec, x: TensorSpec) -> TensorSpec:  # type: ignore[override]
        return super().infer(y, x)

    def compute(self, ctx: KernelContext, y: Any, x: Any) -> Any:
        return ctx.xp.arctan2(y, x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        y, x = op.inputs
        scale = realdiv(grad, add(square(x), square(y)))
        return _binary_grads(op, multiply(scale, x), multiply(negative(scale), y))


class _Comparison(BinaryOp):
    abstract = True
    samples = [Sample(x=(2, 3), y=(2, 3)), Sample(x=(2, 1, 3), y=(4, 1)), Sample(x=(0, 3), y=(3,))]
    result_dtype = dtypes.bool
    allowed = _REAL
    differentiable = False


class Equal(_Comparison):
    """x == y elementwise."""

    allowed = _NUMERIC | _BOOL | {dtypes.string}

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x == y


class NotEqual(_Comparison):
    """x != y elementwise."""

    allowed = _NUMERIC | _BOOL | {dtypes.string}

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x != y


class Less(_Comparison):
    """x < y elementwise."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x < y


class LessEqual(_Comparison):
    """x <= y elementwise."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x <= y


class Greater(_Comparison):
    """x > y elementwise."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x > y


class GreaterEqual(_Comparison):
    """x >= y elementwise."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x >= y


class _Logical(BinaryOp):
    abstract = True
    allowed = _BOOL
    differentiable = False
    samples = [
        Sample(input_dtype=np.bool_, x=(2, 3), y=(2, 3)),
        Sample(input_dtype=np.bool_, x=(2, 1, 3), y=(4, 1)),
    ]


class LogicalAnd(_Logical):
    """x AND y elementwise, on bools."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x & y


class LogicalOr(_Logical):
    """x OR y elementwise, on bools."""

    def compute(self, ctx: KernelContext, x: Any, y: Any) -> Any:
        return x | y


def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x + y with broadcasting.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.add([1, 2], 3)).tolist()
    [4, 5]
    """
    return binary("Add", x, y, name)


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Sub", x, y, name)


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Mul", x, y, name)


def realdiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("RealDiv", x, y, name)


def floordiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x // y rounding toward negative infinity, for integers and floats."""
    return binary("FloorDiv", x, y, name)


def floormod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x % y with the sign of y, as Python's ``%``."""
    return binary("FloorMod", x, y, name)


def div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """TF1's ``tf.div``: floor division for integers, true division for floats.

    >>> import nbflow as tf
    >>> int(tf.Session().run(tf.div(-7, 2)))
    -4
    """
    x, y = _convert_pair(x, y)
    op_type = "RealDiv" if x.dtype.base_dtype in _INEXACT else "FloorDiv"
    return _create(op_type, [x, y], name=name)


def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y; integers are converted first (int8/16 to float32, int32/64 to float64).

    >>> import nbflow as tf
    >>> tf.truediv(tf.constant(1), tf.constant(2)).dtype
    tf.float64
    """
    x, y = _convert_pair(x, y)
    if x.dtype.base_dtype is not y.dtype.base_dtype:
        raise TypeError(f"x and y must have the same dtype, got {x.dtype!r} != {y.dtype!r}")
    target = _TRUEDIV_TARGET.get(x.dtype.base_dtype)
    if target is not None:
        x, y = cast(x, target), cast(y, target)
    return _create("RealDiv", [x, y], name=name or "truediv")


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y with Python 3 semantics (``truediv``)."""
    return truediv(x, y, name=name)


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TensorFlow's name
    return binary("Pow", x, y, name)


def maximum(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Maximum", x, y, name)


def minimum(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Minimum", x, y, name)


def squared_difference(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("SquaredDifference", x, y, name)


def atan2(y: Any, x: Any, name: str | None = None) -> Tensor:
    return binary("Atan2", y, x, name)


def equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Equal", x, y, name)


def not_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("NotEqual", x, y, name)


def less(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Less", x, y, name)


def less_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("LessEqual", x, y, name)


def greater(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("Greater", x, y, name)


def greater_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("GreaterEqual", x, y, name)


def logical_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("LogicalAnd", x, y, name)


def logical_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    return binary("LogicalOr", x, y, name)


def logical_xor(x: Any, y: Any, name: str = "LogicalXor") -> Tensor:
    """x XOR y, built as TensorFlow builds it: (x OR y) AND NOT (x AND y)."""
    with ops_lib.name_scope(name, values=[x, y]):
        return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Tensor:
    return multiply(scalar, x, name=name)


sub = subtract
mul = multiply
floor_div = floordiv
mod = floormod


def _convert_pair(x: Any, y: Any) -> tuple[Tensor, Tensor]:
    if not isinstance(x, Tensor) and isinstance(y, Tensor):
        x = ops_lib.convert_to_tensor(x, dtype=y.dtype.base_dtype)
    else:
        x = ops_lib.convert_to_tensor(x)
    if not isinstance(y, Tensor):
        y = ops_lib.convert_to_tensor(y, dtype=x.dtype.base_dtype)
    return x, y


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


# --- broadcasting gradients -----------------------------------------------------------------------
class BroadcastGradientArgs(OpDef):
    """For shapes s0 and s1 that broadcast together, the axes each side's gradient sums over."""

    inputs = ("s0", "s1")
    num_outputs = 2
    differentiable = False
    samples = [
        Sample(
            input_dtype=np.int32, s0=np.array([2, 1, 3], np.int32), s1=np.array([4, 1], np.int32)
        ),
        Sample(input_dtype=np.int32, s0=np.array([], np.int32), s1=np.array([2, 3], np.int32)),
        Sample(input_dtype=np.int32, s0=np.array([2, 3], np.int32), s1=np.array([2, 3], np.int32)),
    ]

    def infer(self, s0: TensorSpec, s1: TensorSpec) -> list[TensorSpec]:
        for name, spec in (("s0", s0), ("s1", s1)):
            _check_dtype(self.type, name, spec, frozenset({dtypes.int32, dtypes.int64}))
            spec.shape.with_rank(1)
        out = TensorSpec(TensorShape([None]), s0.dtype.base_dtype)
        return [out, out]

    def compute(self, ctx: KernelContext, s0: Any, s1: Any) -> tuple[Any, Any]:
        a, b = [int(v) for v in s0.tolist()], [int(v) for v in s1.tolist()]
        n = builtins.max(len(a), len(b))
        a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
        r0, r1 = [], []
        for i, (p, q) in enumerate(zip(a, b)):
            if p != q and p != 1 and q != 1:
                raise ValueError(f"Incompatible shapes: {s0.tolist()} vs. {s1.tolist()}")
            if p == 1 and q != 1:
                r0.append(i)
            elif q == 1 and p != 1:
                r1.append(i)
            elif p == 1 and q == 1:
                r0.append(i)
                r1.append(i)
        xp = ctx.xp
        return xp.asarray(r0, dtype=s0.dtype), xp.asarray(r1, dtype=s0.dtype)


def broadcast_gradient_args(s0: Any, s1: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The reduction axes for the gradients of two inputs of shapes ``s0`` and ``s1``."""
    s0, s1 = ops_lib.convert_to_tensor(s0), ops_lib.convert_to_tensor(s1)
    op = ops_lib.get_default_graph().create_op("BroadcastGradientArgs", [s0, s1], name=name)
    return op.outputs[0], op.outputs[1]


# --- elementwise unary ops ------------------------------------------------------------------------
def _positive_samples() -> list[Sample]:
    return [Sample(x=_POSITIVE), Sample(x=np.array(1.5))]


class Neg(UnaryOp):
    """-x."""

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return -x

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [negative(grad)]


class Abs(UnaryOp):
    """|x|."""

    allowed = _REAL

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.abs(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [multiply(grad, sign(op.inputs[0]))]


class Sign(UnaryOp):
    """-1, 0 or 1 by the sign of x."""

    differentiable = False
    samples = [Sample(x=(2, 3)), Sample(x=(0,))]

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.sign(x)


class Exp(UnaryOp):
    """e ** x."""

    allowed = _INEXACT

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.exp(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [multiply(grad, op.outputs[0])]


class Expm1(UnaryOp):
    """e ** x - 1, accurate near 0."""

    allowed = _INEXACT

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.expm1(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [multiply(grad, exp(op.inputs[0]))]


class Log(UnaryOp):
    """Natural logarithm."""

    allowed = _INEXACT
    samples = _positive_samples()

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.log(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [multiply(grad, reciprocal(op.inputs[0]))]


class Log1p(UnaryOp):
    """log(1 + x), accurate near 0."""

    allowed = _INEXACT
    samples = _positive_samples()

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.log1p(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [realdiv(grad, add(op.inputs[0], 1))]


class Sqrt(UnaryOp):
    """Square root."""

    allowed = _INEXACT
    samples = _positive_samples()

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.sqrt(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [realdiv(grad, multiply(op.outputs[0], 2))]


class Rsqrt(UnaryOp):
    """1 / sqrt(x)."""

    allowed = _INEXACT
    samples = _positive_samples()

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return 1 / ctx.xp.sqrt(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        y = op.outputs[0]
        return [multiply(multiply(grad, -0.5), multiply(y, square(y)))]


class Square(UnaryOp):
    """x * x."""

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return x * x

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [multiply(grad, multiply(op.inputs[0], 2))]


class Reciprocal(UnaryOp):
    """1 / x (integer division for integers, as in TensorFlow)."""

    samples = _positive_samples()

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.reciprocal(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [multiply(negative(grad), square(op.outputs[0]))]


class Sin(UnaryOp):
    """Sine."""

    allowed = _INEXACT

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.sin(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [multiply(grad, cos(op.inputs[0]))]


class Cos(UnaryOp):
    """Cosine."""

    allowed = _INEXACT

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.cos(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [multiply(negative(grad), sin(op.inputs[0]))]


class Tan(UnaryOp):
    """Tangent."""

    allowed = _INEXACT

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.tan(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [realdiv(grad, square(cos(op.inputs[0])))]


class Tanh(UnaryOp):
    """Hyperbolic tangent; its gradient is the fused ``TanhGrad``."""

    allowed = _INEXACT

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.tanh(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [_create("TanhGrad", [op.outputs[0], grad])]


class Sigmoid(UnaryOp):
    """1 / (1 + exp(-x)), computed as (tanh(x/2) + 1) / 2: no overflow for large |x|."""

    allowed = _INEXACT

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        y = ctx.xp.tanh(x * 0.5)
        y += 1
        y *= 0.5
        return y

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [_create("SigmoidGrad", [op.outputs[0], grad])]


class SigmoidGrad(BinaryOp):
    """The gradient of y = sigmoid(x) given y and dy: dy * y * (1 - y), in one kernel."""

    inputs = ("y", "dy")
    allowed = _INEXACT
    samples = [Sample(y=(2, 3), dy=(2, 3)), Sample(y=(3,), dy=(3,))]

    def infer(self, y: TensorSpec, dy: TensorSpec) -> TensorSpec:  # type: ignore[override]
        return super().infer(y, dy)

    def compute(self, ctx: KernelContext, y: Any, dy: Any) -> Any:
        return dy * y * (1 - y)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        y, dy = op.inputs
        gb = multiply(grad, dy)
        return [subtract(gb, multiply(multiply(gb, 2), y)), _create("SigmoidGrad", [y, grad])]


class TanhGrad(BinaryOp):
    """The gradient of y = tanh(x) given y and dy: dy * (1 - y * y), in one kernel."""

    inputs = ("y", "dy")
    allowed = _INEXACT
    samples = [Sample(y=(2, 3), dy=(2, 3)), Sample(y=(3,), dy=(3,))]

    def infer(self, y: TensorSpec, dy: TensorSpec) -> TensorSpec:  # type: ignore[override]
        return super().infer(y, dy)

    def compute(self, ctx: KernelContext, y: Any, dy: Any) -> Any:
        return dy * (1 - y * y)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        y, dy = op.inputs
        return [multiply(multiply(grad, -2), multiply(dy, y)), _create("TanhGrad", [y, grad])]


class Floor(UnaryOp):
    """The largest integer not greater than x."""

    allowed = _FLOATS
    differentiable = False
    samples = [Sample(x=(2, 3)), Sample(x=(0,))]

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.floor(x)


class Ceil(UnaryOp):
    """The smallest integer not less than x."""

    allowed = _FLOATS
    differentiable = False
    samples = [Sample(x=(2, 3)), Sample(x=(0,))]

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.ceil(x)


class Round(UnaryOp):
    """x rounded to the nearest integer, halves to even (banker's rounding)."""

    allowed = _REAL
    differentiable = False
    samples = [Sample(x=np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4])), Sample(x=(0,))]

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.round(x)


class LogicalNot(UnaryOp):
    """NOT x, on bools."""

    allowed = _BOOL
    differentiable = False
    samples = [Sample(input_dtype=np.bool_, x=(2, 3)), Sample(input_dtype=np.bool_, x=(0,))]

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ~x


class IsNan(UnaryOp):
    """Whether x is NaN."""

    allowed = _FLOATS
    result_dtype = dtypes.bool
    differentiable = False
    samples = [Sample(x=np.array([1.0, np.nan, np.inf, -np.inf])), Sample(x=(0,))]

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.isnan(x)


class IsInf(UnaryOp):
    """Whether x is +inf or -inf."""

    allowed = _FLOATS
    result_dtype = dtypes.bool
    differentiable = False
    samples = [Sample(x=np.array([1.0, np.nan, np.inf, -np.inf])), Sample(x=(0,))]

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.isinf(x)


class IsFinite(UnaryOp):
    """Whether x is neither NaN nor infinite."""

    allowed = _FLOATS
    result_dtype = dtypes.bool
    differentiable = False
    samples = [Sample(x=np.array([1.0, np.nan, np.inf, -np.inf])), Sample(x=(0,))]

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.isfinite(x)


def negative(x: Any, name: str | None = None) -> Tensor:
    return unary("Neg", x, name)


def abs(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TensorFlow's name
    return unary("Abs", x, name)


def sign(x: Any, name: str | None = None) -> Tensor:
    return unary("Sign", x, name)


def exp(x: Any, name: str | None = None) -> Tensor:
    return unary("Exp", x, name)


def expm1(x: Any, name: str | None = None) -> Tensor:
    return unary("Expm1", x, name)


def log(x: Any, name: str | None = None) -> Tensor:
    return unary("Log", x, name)


def log1p(x: Any, name: str | None = None) -> Tensor:
    return unary("Log1p", x, name)


def sqrt(x: Any, name: str | None = None) -> Tensor:
    return unary("Sqrt", x, name)


def rsqrt(x: Any, name: str | None = None) -> Tensor:
    return unary("Rsqrt", x, name)


def square(x: Any, name: str | None = None) -> Tensor:
    return unary("Square", x, name)


def reciprocal(x: Any, name: str | None = None) -> Tensor:
    return unary("Reciprocal", x, name)


def sin(x: Any, name: str | None = None) -> Tensor:
    return unary("Sin", x, name)


def cos(x: Any, name: str | None = None) -> Tensor:
    return unary("Cos", x, name)


def tan(x: Any, name: str | None = None) -> Tensor:
    return unary("Tan", x, name)


def tanh(x: Any, name: str | None = None) -> Tensor:
    return unary("Tanh", x, name)


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    """1 / (1 + exp(-x)), elementwise."""
    return unary("Sigmoid", x, name)


def log_sigmoid(x: Any, name: str = "LogSigmoid") -> Tensor:
    """log(sigmoid(x)) computed stably as -softplus(-x) = min(x, 0) - log1p(exp(-|x|))."""
    with ops_lib.name_scope(name, values=[x]):
        x = ops_lib.convert_to_tensor(x)
        return subtract(minimum(x, 0), log1p(exp(negative(abs(x)))))


def floor(x: Any, name: str | None = None) -> Tensor:
    return unary("Floor", x, name)


def ceil(x: Any, name: str | None = None) -> Tensor:
    return unary("Ceil", x, name)


def round(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TensorFlow's name
    """Round halves to even, as TensorFlow does (``round(2.5) == 2``); integers pass through."""
    x = ops_lib.convert_to_tensor(x)
    if x.dtype.is_integer:
        return x
    return unary("Round", x, name)


def logical_not(x: Any, name: str | None = None) -> Tensor:
    return unary("LogicalNot", x, name)


def is_nan(x: Any, name: str | None = None) -> Tensor:
    return unary("IsNan", x, name)


def is_inf(x: Any, name: str | None = None) -> Tensor:
    return unary("IsInf", x, name)


def is_finite(x: Any, name: str | None = None) -> Tensor:
    return unary("IsFinite", x, name)


neg = negative


class Conj(UnaryOp):
    """The complex conjugate of x."""

    allowed = _COMPLEX
    samples = [Sample(input_dtype=np.complex128, x=(2, 3)), Sample(input_dtype=np.complex64, x=())]

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return ctx.xp.conj(x)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [conj(grad)]


def conj(x: Any, name: str | None = None) -> Tensor:
    """The complex conjugate of x; real tensors are returned as they are."""
    x = ops_lib.convert_to_tensor(x)
    if not x.dtype.is_complex:
        return x
    return unary("Conj", x, name)


# --- casts ----------------------------------------------------------------------------------------
class Cast(OpDef):
    """x converted to ``DstT``: floats to integers truncate toward zero, nonzero is True."""

    inputs = ("x",)
    attrs = {"DstT": dtypes.float32, "Truncate": False}
    samples = [
        Sample(x=(2, 3), DstT=dtypes.int32),
        Sample(x=(3,), DstT=dtypes.float64),
        Sample(x=(2, 2), DstT=dtypes.bool),
        Sample(input_dtype=np.int32, x=(4,), DstT=dtypes.float32),
        Sample(input_dtype=np.bool_, x=(2, 3), DstT=dtypes.int64),
    ]

    def infer(self, x: TensorSpec, DstT: dtypes.DType, Truncate: bool) -> TensorSpec:
        return TensorSpec(x.shape, DstT)

    def compute(self, ctx: KernelContext, x: Any, DstT: dtypes.DType, Truncate: bool) -> Any:
        if DstT is dtypes.bool:
            return x != 0
        return x.astype(DstT.np)

    def gradient(self, op: ops_lib.Operation, grad: Tensor | None) -> list:
        src = op.inputs[0].dtype.base_dtype
        if grad is None or src not in _INEXACT or op.get_attr("DstT") not in _INEXACT:
            return [None]
        return [cast(grad, src)]


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    """x as ``dtype``; no op is added when it already has it.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.cast([1.9, -1.9], tf.int32)).tolist()
    [1, -1]
    """
    dtype = dtypes.as_dtype(dtype).base_dtype
    x = ops_lib.convert_to_tensor(x) if isinstance(x, Tensor) else _to_tensor_for_cast(x, dtype)
    if x.dtype.base_dtype is dtype:
        return x
    return _create("Cast", [x], {"DstT": dtype}, name=name or "Cast")


def _to_tensor_for_cast(x: Any, dtype: dtypes.DType) -> Tensor:
    try:
        return ops_lib.convert_to_tensor(x, dtype=dtype)
    except (TypeError, ValueError):
        return ops_lib.convert_to_tensor(x)


def to_float(x: Any, name: str = "ToFloat") -> Tensor:
    return cast(x, dtypes.float32, name=name)


def to_double(x: Any, name: str = "ToDouble") -> Tensor:
    return cast(x, dtypes.float64, name=name)


def to_int32(x: Any, name: str = "ToInt32") -> Tensor:
    return cast(x, dtypes.int32, name=name)


def to_int64(x: Any, name: str = "ToInt64") -> Tensor:
    return cast(x, dtypes.int64, name=name)


# --- sums of lists --------------------------------------------------------------------------------
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

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [grad] * len(op.inputs)


def add_n(inputs: list[Any], name: str | None = None) -> Tensor:
    """The elementwise sum of a list of tensors of one shape and dtype."""
    if not inputs:
        raise ValueError("inputs must be a non-empty list of tensors")
    tensors = [ops_lib.convert_to_tensor(x) for x in inputs]
    return _create("AddN", [tensors], name=name)


def accumulate_n(
    inputs: list[Any], shape: Any = None, tensor_dtype: Any = None, name: str | None = None
) -> Tensor:
    """``add_n`` under TF1's other name (the sum is the same; no temporary variable is made)."""
    return add_n(inputs, name=name)


# --- reductions -----------------------------------------------------------------------------------
def _axis(a: Any) -> Any:
    """A kernel's reduction_indices value as NumPy's ``axis`` argument."""
    return tuple(a.tolist()) if a.ndim else int(a)


class ReductionOp(OpDef):
    """Base of reductions over ``reduction_indices`` (int32 axes, negative allowed)."""

    abstract = True
    inputs = ("input", "reduction_indices")
    attrs = {"keep_dims": False}
    allowed: ClassVar[frozenset | None] = _NUMERIC
    result_dtype: ClassVar[dtypes.DType | None] = None
    samples = [
        Sample(input=(2, 3, 4), reduction_indices=np.array([0, 2], np.int32)),
        Sample(input=(2, 3), reduction_indices=np.array(-1, np.int32), keep_dims=True),
        Sample(input=(2, 3), reduction_indices=np.array([0, 1], np.int32)),
        Sample(input=(3, 2), reduction_indices=np.array([], np.int32)),
        Sample(input=(4,), reduction_indices=np.array([0], np.int32), keep_dims=True),
    ]

    def __init_subclass__(cls, **kwargs: Any):
        _copy_samples(cls)
        super().__init_subclass__(**kwargs)

    def infer(self, input: TensorSpec, reduction_indices: TensorSpec, keep_dims: bool):
        _check_dtype(self.type, "input", input, self.allowed)
        _check_dtype(
            self.type,
            "reduction_indices",
            reduction_indices,
            frozenset({dtypes.int32, dtypes.int64}),
        )
        dtype = self.result_dtype or input.dtype.base_dtype
        return TensorSpec(_reduced_static_shape(input.shape, reduction_indices, keep_dims), dtype)

    def reduce(self, xp: Any, x: Any, axis: Any, keep_dims: bool) -> Any:
        raise TypeError(f"{self.type} declares no reduction")

    def compute(self, ctx: KernelContext, input: Any, reduction_indices: Any, keep_dims: bool):
        return self.reduce(ctx.xp, input, _axis(reduction_indices), keep_dims)

    def bind(self, op: Any, device_type: str = "CPU"):
        """Bake constant axes into the kernel: a repeated step does no axis conversion."""
        reduce, keep_dims = self.reduce, op.get_attr("keep_dims")
        axes_op = op.inputs[1].op
        if axes_op.type != "Const":
            return lambda ctx, x, a: reduce(ctx.xp, x, _axis(a), keep_dims)
        const = axes_op.get_attr("value")
        axis = _axis(const)

        def kernel(ctx: KernelContext, x: Any, a: Any) -> Any:
            return reduce(ctx.xp, x, axis if a is const else _axis(a), keep_dims)

        return kernel


def _reduced_static_shape(shape: TensorShape, axes: TensorSpec, keep_dims: bool) -> TensorShape:
    rank = shape.ndims
    if axes.value is None or rank is None:
        if keep_dims and rank is not None:
            return TensorShape([None] * rank)
        if axes.shape.ndims == 0 and rank is not None and rank > 0:
            return TensorShape([None] * (rank - 1))
        return TensorShape(None)
    reduced = set()
    for a in np.asarray(axes.value).reshape(-1).tolist():
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions")
        reduced.add(a % rank)
    dims = shape.dims or []
    if keep_dims:
        return TensorShape([Dimension(1) if i in reduced else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in reduced])


class Sum(ReductionOp):
    """The sum over the reduced axes (in the input's dtype)."""

    def reduce(self, xp: Any, x: Any, axis: Any, keep_dims: bool) -> Any:
        return xp.sum(x, axis=axis, dtype=x.dtype, keepdims=keep_dims)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [_broadcast_like(_grad_kept_dims(op, grad), op.inputs[0]), None]


class Mean(ReductionOp):
    """The mean over the reduced axes; for integers it truncates toward zero, as TensorFlow."""

    def reduce(self, xp: Any, x: Any, axis: Any, keep_dims: bool) -> Any:
        if x.dtype.kind not in "iu":
            return xp.mean(x, axis=axis, keepdims=keep_dims)
        total = xp.sum(x, axis=axis, dtype=x.dtype, keepdims=keep_dims)
        count = x.size // builtins.max(total.size, 1) if x.size else 1
        return (xp.abs(total) // count) * xp.sign(total)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        x, y = op.inputs[0], op.outputs[0]
        summed = _broadcast_like(_grad_kept_dims(op, grad), x)
        n_in, n_out = x.shape.num_elements(), y.shape.num_elements()
        if n_in is not None and n_out is not None:
            factor: Any = n_in // builtins.max(n_out, 1)
        else:
            array_ops = _array_ops()
            factor = floordiv(
                reduce_prod(array_ops.shape(x)), maximum(reduce_prod(array_ops.shape(y)), 1)
            )
            factor = cast(factor, grad.dtype.base_dtype)
        return [realdiv(summed, factor), None]


class Prod(ReductionOp):
    """The product over the reduced axes (in the input's dtype)."""

    def reduce(self, xp: Any, x: Any, axis: Any, keep_dims: bool) -> Any:
        return xp.prod(x, axis=axis, dtype=x.dtype, keepdims=keep_dims)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        # d prod / d x_i is the product of the other entries of its group. Counting zeros keeps
        # it exact without dividing by zero: no zero -> prod / x_i; one zero -> the product of
        # the nonzero entries, at the zero only; two or more -> 0.
        x, axes = op.inputs
        dtype = x.dtype.base_dtype
        g = _grad_kept_dims(op, grad)
        is_zero = cast(equal(x, 0), dtype)
        x_safe = add(x, is_zero)
        nonzero_prod = reduce_prod(x_safe, axes, keepdims=True)
        zeros = reduce_sum(is_zero, axes, keepdims=True)
        no_zero = multiply(realdiv(nonzero_prod, x_safe), cast(equal(zeros, 0), dtype))
        one_zero = multiply(multiply(nonzero_prod, is_zero), cast(equal(zeros, 1), dtype))
        return [multiply(g, add(no_zero, one_zero)), None]


class _MinOrMax(ReductionOp):
    abstract = True
    allowed = _REAL
    identity: ClassVar[str] = "min"

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        # The gradient goes to the entries equal to the result, split evenly among ties.
        x, axes = op.inputs
        y = _grad_kept_dims(op, op.outputs[0])
        g = _grad_kept_dims(op, grad)
        indicators = cast(equal(y, x), grad.dtype.base_dtype)
        selected = reduce_sum(indicators, axes, keepdims=True)
        return [multiply(realdiv(indicators, selected), g), None]


class Max(_MinOrMax):
    """The maximum over the reduced axes (the dtype's lowest value over an empty set)."""

    def reduce(self, xp: Any, x: Any, axis: Any, keep_dims: bool) -> Any:
        try:
            return xp.max(x, axis=axis, keepdims=keep_dims)
        except ValueError:
            if x.size:
                raise
            return _empty_reduction(xp, x, axis, keep_dims, _lowest(x.dtype))


class Min(_MinOrMax):
    """The minimum over the reduced axes (the dtype's highest value over an empty set)."""

    def reduce(self, xp: Any, x: Any, axis: Any, keep_dims: bool) -> Any:
        try:
            return xp.min(x, axis=axis, keepdims=keep_dims)
        except ValueError:
            if x.size:
                raise
            return _empty_reduction(xp, x, axis, keep_dims, _highest(x.dtype))


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype: np.dtype) -> Any:
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


def _empty_reduction(xp: Any, x: Any, axis: Any, keep_dims: bool, fill: Any) -> Any:
    shape = xp.sum(x, axis=axis, keepdims=keep_dims).shape
    return xp.full(shape, fill, dtype=x.dtype)


class Any_(ReductionOp):
    """Whether any entry over the reduced axes is True."""

    type = "Any"
    allowed = _BOOL
    differentiable = False
    samples = [
        Sample(input_dtype=np.bool_, input=(2, 3), reduction_indices=np.array([1], np.int32)),
        Sample(
            input_dtype=np.bool_,
            input=(2, 0),
            reduction_indices=np.array(-1, np.int32),
            keep_dims=True,
        ),
    ]

    def reduce(self, xp: Any, x: Any, axis: Any, keep_dims: bool) -> Any:
        return xp.any(x, axis=axis, keepdims=keep_dims)


class All(ReductionOp):
    """Whether every entry over the reduced axes is True."""

    allowed = _BOOL
    differentiable = False
    samples = [
        Sample(input_dtype=np.bool_, input=(2, 3), reduction_indices=np.array([1], np.int32)),
        Sample(input_dtype=np.bool_, input=(2, 0), reduction_indices=np.array([0, 1], np.int32)),
    ]

    def reduce(self, xp: Any, x: Any, axis: Any, keep_dims: bool) -> Any:
        return xp.all(x, axis=axis, keepdims=keep_dims)


def _grad_kept_dims(op: ops_lib.Operation, grad: Tensor) -> Tensor:
    """A reduction's gradient (or output) with the reduced axes put back as size-1 axes, so
    that it broadcasts against the input (leading reduced axes are left to broadcasting)."""
    if op.get_attr("keep_dims"):
        return grad
    x, axes = op.inputs
    rank = x.shape.ndims
    axes_value = ops_lib.constant_value(axes)
    array_ops = _array_ops()
    if axes_value is not None and rank is not None:
        reduced = sorted({a % rank for a in np.asarray(axes_value).reshape(-1).tolist()})
        # Leading reduced axes need no size-1 axis: broadcasting against x adds them.
        leading = 0
        while leading < len(reduced) and reduced[leading] == leading:
            leading += 1
        inner = [a - leading for a in reduced[leading:]]
        if not inner:
            return grad
        if x.shape.is_fully_defined():
            dims = x.shape.as_list()[leading:]
            return array_ops.reshape(grad, [1 if i in inner else d for i, d in enumerate(dims)])
        for a in inner:
            grad = array_ops.expand_dims(grad, a)
        return grad
    return array_ops.reshape(grad, _reduced_shape(x, axes))


def _reduced_shape(x: Tensor, axes: Tensor) -> Tensor:
    """Shape(x) with the reduced ``axes`` set to 1, built at run time (axes or rank unknown)."""
    array_ops = _array_ops()
    shape = array_ops.shape(x)
    rank = array_ops.size(shape)
    axes = floormod(array_ops.reshape(cast(axes, dtypes.int32), [1, -1]), rank)
    positions = array_ops.reshape(array_ops.range(rank), [-1, 1])
    mask = cast(reduce_any(equal(positions, axes), axis=1), dtypes.int32)
    return add(multiply(shape, subtract(1, mask)), mask)


def _broadcast_like(grad: Tensor, x: Tensor) -> Tensor:
    """``grad`` (broadcastable to x) expanded to the shape of x."""
    if grad.shape.is_fully_defined() and x.shape.is_fully_defined():
        if grad.shape.as_list() == x.shape.as_list():
            return grad
    array_ops = _array_ops()
    shape = x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)
    return array_ops.broadcast_to(grad, shape)


def _reduction_axes(x: Tensor, axis: Any) -> Tensor:
    if isinstance(axis, Tensor):
        return axis
    if axis is None:
        rank = x.shape.ndims
        if rank is not None:
            return ops_lib.convert_to_tensor(np.arange(rank, dtype=np.int32))
        array_ops = _array_ops()
        return array_ops.range(0, array_ops.rank(x))
    value = np.asarray(axis)
    if value.size == 0:
        value = value.astype(np.int32)
    if value.dtype.kind not in "iu":
        raise TypeError(f"axis must be an int or a list of ints, got {axis!r}")
    return ops_lib.convert_to_tensor(value.astype(np.int32))


def _reduce(
    op_type: str,
    input_tensor: Any,
    axis: Any,
    keepdims: Any,
    name: str | None,
    reduction_indices: Any,
    keep_dims: Any,
) -> Tensor:
    if axis is not None and reduction_indices is not None:
        raise ValueError("Can not specify both 'axis' and 'reduction_indices'.")
    if keepdims is not None and keep_dims is not None and bool(keepdims) != bool(keep_dims):
        raise ValueError("The `keep_dims` argument is deprecated; use `keepdims` alone.")
    keep = bool(keepdims if keepdims is not None else keep_dims)
    x = ops_lib.convert_to_tensor(input_tensor)
    axes = _reduction_axes(x, axis if axis is not None else reduction_indices)
    return _create(op_type, [x, axes], {"keep_dims": keep}, name)


def reduce_sum(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    """The sum over ``axis`` (an int, list, tensor, or None for all axes).

    >>> import nbflow as tf
    >>> tf.Session().run(tf.reduce_sum([[1, 2], [3, 4]], axis=0)).tolist()
    [4, 6]
    """
    return _reduce("Sum", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_mean(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    """The mean over ``axis``; integer means truncate toward zero.

    >>> import nbflow as tf
    >>> int(tf.Session().run(tf.reduce_mean([1, -4])))
    -1
    """
    return _reduce("Mean", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_prod(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    return _reduce("Prod", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_max(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    return _reduce("Max", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_min(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    return _reduce("Min", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_any(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    return _reduce("Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_all(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    return _reduce("All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_logsumexp(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    """log(sum(exp(x))) over ``axis``, shifted by the (finite) maximum so exp cannot overflow."""
    if axis is not None and reduction_indices is not None:
        raise ValueError("Can not specify both 'axis' and 'reduction_indices'.")
    axis = axis if axis is not None else reduction_indices
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with ops_lib.name_scope(name, "ReduceLogSumExp", [input_tensor]):
        x = ops_lib.convert_to_tensor(input_tensor)
        axes = _reduction_axes(x, axis)
        dtype = x.dtype.base_dtype
        lo, hi = float(np.finfo(dtype.np).min), float(np.finfo(dtype.np).max)
        stop = _array_ops().stop_gradient
        # The maximum clamped to finite values: an all -inf (or +inf) slice stays -inf (+inf).
        shift = stop(minimum(maximum(reduce_max(x, axes, keepdims=True), lo), hi))
        summed = reduce_sum(exp(subtract(x, shift)), axes, keepdims=keep)
        out_shift = shift if keep else stop(minimum(maximum(reduce_max(x, axes), lo), hi))
        return add(log(summed), out_shift)


def count_nonzero(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    dtype: Any = dtypes.int64,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    """The number of nonzero entries over ``axis``, as ``dtype`` (int64 by default)."""
    with ops_lib.name_scope(name, "count_nonzero", [input_tensor]):
        x = ops_lib.convert_to_tensor(input_tensor)
        nonzero = cast(not_equal(x, _zero_of(x.dtype.base_dtype)), dtypes.int64)
        total = reduce_sum(nonzero, axis, keepdims, None, reduction_indices, keep_dims)
        return cast(total, dtype)


def _zero_of(dtype: dtypes.DType) -> Any:
    if dtype is dtypes.string:
        return b""
    return np.zeros((), dtype.np)


class _ArgReduction(OpDef):
    abstract = True
    inputs = ("input", "dimension")
    attrs = {"output_type": dtypes.int64}
    differentiable = False
    samples = [
        Sample(input=(3, 4), dimension=np.array(1, np.int32)),
        Sample(input=(3, 4), dimension=np.array(0, np.int32), output_type=dtypes.int32),
        Sample(input=(2, 3, 4), dimension=np.array(-2, np.int32)),
    ]

    def __init_subclass__(cls, **kwargs: Any):
        _copy_samples(cls)
        super().__init_subclass__(**kwargs)

    def infer(self, input: TensorSpec, dimension: TensorSpec, output_type: dtypes.DType):
        _check_dtype(self.type, "input", input, _REAL)
        _check_dtype(
            self.type,
            "output_type",
            TensorSpec([], output_type),
            frozenset({dtypes.int32, dtypes.int64}),
        )
        return TensorSpec(_reduced_static_shape(input.shape, dimension, False), output_type)


class ArgMax(_ArgReduction):
    """The index of the largest entry along ``dimension`` (the first one among ties)."""

    def compute(self, ctx: KernelContext, input: Any, dimension: Any, output_type: dtypes.DType):
        return ctx.xp.argmax(input, axis=int(dimension)).astype(output_type.np, copy=False)


class ArgMin(_ArgReduction):
    """The index of the smallest entry along ``dimension`` (the first one among ties)."""

    def compute(self, ctx: KernelContext, input: Any, dimension: Any, output_type: dtypes.DType):
        return ctx.xp.argmin(input, axis=int(dimension)).astype(output_type.np, copy=False)


def _arg_reduction(op_type, input, axis, name, dimension, output_type) -> Tensor:
    if axis is not None and dimension is not None:
        raise ValueError("Cannot specify both 'axis' and 'dimension'")
    axis = axis if axis is not None else dimension
    axis = 0 if axis is None else axis
    x = ops_lib.convert_to_tensor(input)
    axis = axis if isinstance(axis, Tensor) else ops_lib.convert_to_tensor(np.int32(axis))
    attrs = {"output_type": dtypes.as_dtype(output_type).base_dtype}
    return _create(op_type, [x, axis], attrs, name)


def argmax(
    input: Any,
    axis: Any = None,
    name: str | None = None,
    dimension: Any = None,
    output_type: Any = dtypes.int64,
) -> Tensor:
    """The index of the largest entry along ``axis`` (default 0), as int64 by default."""
    return _arg_reduction("ArgMax", input, axis, name, dimension, output_type)


def argmin(
    input: Any,
    axis: Any = None,
    name: str | None = None,
    dimension: Any = None,
    output_type: Any = dtypes.int64,
) -> Tensor:
    """The index of the smallest entry along ``axis`` (default 0), as int64 by default."""
    return _arg_reduction("ArgMin", input, axis, name, dimension, output_type)


# --- matrices -------------------------------------------------------------------------------------
def _matmul_dtype(op_type: str, a: TensorSpec, b: TensorSpec) -> dtypes.DType:
    if a.dtype.base_dtype is not b.dtype.base_dtype:
        raise TypeError(
            f"Input 'b' of '{op_type}' Op has type {b.dtype.base_dtype.name} that does not "
            f"match type {a.dtype.base_dtype.name} of argument 'a'"
        )
    _check_dtype(op_type, "a", a, _NUMERIC)
    return a.dtype.base_dtype


class MatMul(OpDef):
    """Matrix product of two rank-2 tensors, optionally transposing either one."""

    inputs = ("a", "b")
    attrs = {"transpose_a": False, "transpose_b": False}
    cost = "expensive"
    samples = [
        Sample(a=(2, 3), b=(3, 4)),
        Sample(a=(3, 2), b=(3, 4), transpose_a=True),
        Sample(a=(2, 3), b=(4, 3), transpose_b=True),
        Sample(a=(3, 2), b=(4, 3), transpose_a=True, transpose_b=True),
    ]

    def infer(self, a: TensorSpec, b: TensorSpec, transpose_a: bool, transpose_b: bool):
        dtype = _matmul_dtype(self.type, a, b)
        da = a.shape.with_rank(2).dims
        db = b.shape.with_rank(2).dims
        assert da is not None and db is not None
        m, k = da[::-1] if transpose_a else da
        k2, n = db[::-1] if transpose_b else db
        if not k.is_compatible_with(k2):
            raise ValueError(f"Dimensions must be equal, but are {k} and {k2}")
        return TensorSpec(TensorShape([m, n]), dtype)

    def compute(self, ctx: KernelContext, a: Any, b: Any, transpose_a: bool, transpose_b: bool):
        return ctx.xp.matmul(a.T if transpose_a else a, b.T if transpose_b else b)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        a, b = op.inputs
        ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
        if not ta and not tb:
            return [matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)]
        if not ta and tb:
            return [matmul(grad, b), matmul(grad, a, transpose_a=True)]
        if ta and not tb:
            return [matmul(b, grad, transpose_b=True), matmul(a, grad)]
        return [
            matmul(b, grad, transpose_a=True, transpose_b=True),
            matmul(grad, a, transpose_a=True, transpose_b=True),
        ]


def _adjoint(xp: Any, x: Any) -> Any:
    t = xp.swapaxes(x, -1, -2)
    return t.conj() if t.dtype.kind == "c" else t


class BatchMatMulV2(OpDef):
    """Matrix products over the last two axes; the batch axes broadcast."""

    inputs = ("x", "y")
    attrs = {"adj_x": False, "adj_y": False}
    cost = "expensive"
    samples = [
        Sample(x=(2, 2, 3), y=(2, 3, 4)),
        Sample(x=(2, 1, 2, 3), y=(3, 3, 2)),
        Sample(x=(2, 3), y=(4, 3, 2)),
        Sample(x=(2, 3, 2), y=(2, 4, 3), adj_x=True, adj_y=True),
        Sample(x=(2, 2, 3), y=(4, 3), adj_y=True),
    ]

    def infer(self, x: TensorSpec, y: TensorSpec, adj_x: bool, adj_y: bool) -> TensorSpec:
        dtype = _matmul_dtype(self.type, x, y)
        xs, ys = x.shape.with_rank_at_least(2), y.shape.with_rank_at_least(2)
        if xs.dims is None or ys.dims is None:
            return TensorSpec(TensorShape(None), dtype)
        m, k = xs.dims[-2:][::-1] if adj_x else xs.dims[-2:]
        k2, n = ys.dims[-2:][::-1] if adj_y else ys.dims[-2:]
        if not k.is_compatible_with(k2):
            raise ValueError(f"Dimensions must be equal, but are {k} and {k2}")
        batch = broadcast_shapes(TensorShape(xs.dims[:-2]), TensorShape(ys.dims[:-2]))
        return TensorSpec(batch.concatenate([m, n]), dtype)

    def compute(self, ctx: KernelContext, x: Any, y: Any, adj_x: bool, adj_y: bool) -> Any:
        xp = ctx.xp
        return xp.matmul(_adjoint(xp, x) if adj_x else x, _adjoint(xp, y) if adj_y else y)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        x, y = op.inputs
        adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
        if not adj_x and not adj_y:
            gx, gy = _bmm(grad, y, False, True), _bmm(x, grad, True, False)
        elif not adj_x:
            gx, gy = _bmm(grad, y, False, False), _bmm(grad, x, True, False)
        elif not adj_y:
            gx, gy = _bmm(y, grad, False, True), _bmm(x, grad, False, False)
        else:
            gx, gy = _bmm(y, grad, True, True), _bmm(grad, x, True, True)
        return [
            _unbroadcast(gx, x, _batch_only(y.shape)),
            _unbroadcast(gy, y, _batch_only(x.shape)),
        ]


def _batch_only(shape: TensorShape) -> TensorShape | None:
    """A shape with its matrix axes replaced by 1s: what a batch product broadcasts over."""
    if shape.ndims is None:
        return None
    return TensorShape(shape.dims[:-2] + [1, 1])  # type: ignore[index, operator]


def _bmm(x: Tensor, y: Tensor, adj_x: bool, adj_y: bool) -> Tensor:
    return _create("BatchMatMulV2", [x, y], {"adj_x": adj_x, "adj_y": adj_y})


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
    """Matrix product ``a @ b``; inputs of rank > 2 use BatchMatMulV2 (batch axes broadcast).

    >>> import nbflow as tf
    >>> tf.matmul(tf.ones([2, 3]), tf.ones([3, 4])).shape
    TensorShape([2, 4])
    """
    a, b = _convert_pair(a, b)
    transpose_a = transpose_a or adjoint_a
    transpose_b = transpose_b or adjoint_b
    if (a.shape.ndims or 2) > 2 or (b.shape.ndims or 2) > 2:
        return _create("BatchMatMulV2", [a, b], {"adj_x": transpose_a, "adj_y": transpose_b}, name)
    return _create("MatMul", [a, b], {"transpose_a": transpose_a, "transpose_b": transpose_b}, name)


_WELL_CONDITIONED = np.array([[2.0, 0.5, 0.1], [0.3, 3.0, 0.2], [0.1, 0.4, 1.5]])
_BATCH_OF_MATRICES = np.stack([_WELL_CONDITIONED, _WELL_CONDITIONED.T + np.eye(3)])


def _square_matrices(op_type: str, x: TensorSpec) -> TensorShape:
    _check_dtype(op_type, "input", x, _INEXACT)
    shape = x.shape.with_rank_at_least(2)
    if shape.dims is not None and not shape.dims[-1].is_compatible_with(shape.dims[-2]):
        raise ValueError(f"Input matrices must be square, got shape {shape}")
    return shape


class MatrixInverse(OpDef):
    """The inverse of each square matrix in the last two axes (or of its adjoint)."""

    inputs = ("input",)
    attrs = {"adjoint": False}
    cost = "expensive"
    samples = [
        Sample(input=_WELL_CONDITIONED),
        Sample(input=_BATCH_OF_MATRICES),
        Sample(input=_WELL_CONDITIONED, adjoint=True),
    ]

    def infer(self, input: TensorSpec, adjoint: bool) -> TensorSpec:
        return TensorSpec(_square_matrices(self.type, input), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any, adjoint: bool) -> Any:
        xp = ctx.xp
        return xp.linalg.inv(_adjoint(xp, input) if adjoint else input)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        ainv = op.outputs[0]
        adjoint = op.get_attr("adjoint")
        inner = matmul(grad, ainv, adjoint_a=adjoint, adjoint_b=not adjoint)
        return [negative(matmul(ainv, inner, adjoint_a=not adjoint))]


def matrix_inverse(input: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    """The inverse of each square matrix in the last two axes of ``input``."""
    x = ops_lib.convert_to_tensor(input)
    return _create("MatrixInverse", [x], {"adjoint": adjoint}, name)


class MatrixDeterminant(OpDef):
    """The determinant of each square matrix in the last two axes."""

    inputs = ("input",)
    cost = "expensive"
    samples = [Sample(input=_WELL_CONDITIONED), Sample(input=_BATCH_OF_MATRICES)]

    def infer(self, input: TensorSpec) -> TensorSpec:
        shape = _square_matrices(self.type, input)
        batch = TensorShape(None) if shape.dims is None else TensorShape(shape.dims[:-2])
        return TensorSpec(batch, input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        return ctx.xp.linalg.det(input)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        a, det = op.inputs[0], op.outputs[0]
        multipliers = multiply(grad, det)
        if a.shape.ndims != 2:
            array_ops = _array_ops()
            multipliers = array_ops.expand_dims(array_ops.expand_dims(multipliers, -1), -1)
        return [multiply(multipliers, matrix_inverse(a, adjoint=True))]


def matrix_determinant(input: Any, name: str | None = None) -> Tensor:
    """The determinant of each square matrix in the last two axes of ``input``."""
    return _create("MatrixDeterminant", [ops_lib.convert_to_tensor(input)], name=name)


class Diag(OpDef):
    """A tensor of rank 2k with ``diagonal`` (rank k) on its diagonal and zeros elsewhere."""

    inputs = ("diagonal",)
    samples = [Sample(diagonal=(3,)), Sample(diagonal=(2, 3))]

    def infer(self, diagonal: TensorSpec) -> TensorSpec:
        shape = diagonal.shape
        if shape.ndims == 0:
            raise ValueError("Input must be at least rank 1")
        if shape.dims is None:
            return TensorSpec(TensorShape(None), diagonal.dtype.base_dtype)
        return TensorSpec(shape.concatenate(shape), diagonal.dtype.base_dtype)

    def compute(self, ctx: KernelContext, diagonal: Any) -> Any:
        return ctx.xp.diag(diagonal.reshape(-1)).reshape(diagonal.shape + diagonal.shape)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [diag_part(grad)]


class DiagPart(OpDef):
    """The diagonal of a tensor of shape s + s, as a tensor of shape s."""

    inputs = ("input",)
    samples = [Sample(input=(3, 3)), Sample(input=(2, 3, 2, 3))]

    def infer(self, input: TensorSpec) -> TensorSpec:
        dims = input.shape.dims
        if dims is None:
            return TensorSpec(TensorShape(None), input.dtype.base_dtype)
        if len(dims) == 0 or len(dims) % 2:
            raise ValueError(f"Input must have even rank >= 2, got shape {input.shape}")
        half = len(dims) // 2
        out = [a.merge_with(b) for a, b in zip(dims[:half], dims[half:])]
        return TensorSpec(TensorShape(out), input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any) -> Any:
        half = input.shape[: input.ndim // 2]
        n = int(np.prod(half))
        return ctx.xp.diagonal(input.reshape(n, n)).reshape(half)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [diag(grad)]


def diag(diagonal: Any, name: str | None = None) -> Tensor:
    """A tensor with ``diagonal`` on its diagonal: rank k in, rank 2k out."""
    return _create("Diag", [ops_lib.convert_to_tensor(diagonal)], name=name)


def diag_part(input: Any, name: str | None = None) -> Tensor:
    """The diagonal of a tensor of shape s + s."""
    return _create("DiagPart", [ops_lib.convert_to_tensor(input)], name=name)


def trace(x: Any, name: str | None = None) -> Tensor:
    """The sum of the diagonal of each matrix in the last two axes of ``x``."""
    with ops_lib.name_scope(name, "Trace", [x]):
        x = ops_lib.convert_to_tensor(x)
        dims = x.shape.dims
        if dims is not None and len(dims) >= 2 and dims[-1].value is not None:
            if dims[-2].value is not None:
                mask = np.eye(dims[-2].value, dims[-1].value, dtype=x.dtype.base_dtype.np)
                return reduce_sum(multiply(x, mask), [-2, -1])
        return reduce_sum(diag_part(x))


def eye(
    num_rows: Any,
    num_columns: Any = None,
    batch_shape: Any = None,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """An identity matrix (or a batch of them) of ``dtype``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.eye(2, dtype=tf.int32)).tolist()
    [[1, 0], [0, 1]]
    """
    dtype = dtypes.as_dtype(dtype).base_dtype
    num_columns = num_rows if num_columns is None else num_columns
    static = not any(isinstance(v, Tensor) for v in (num_rows, num_columns, batch_shape))
    if static:
        matrix = np.eye(int(num_rows), int(num_columns), dtype=dtype.np)
        if batch_shape is not None:
            shape = tuple(int(d) for d in batch_shape) + matrix.shape
            matrix = np.broadcast_to(matrix, shape)
        return ops_lib.convert_to_tensor(np.array(matrix), name=name or "eye")
    if batch_shape is not None:
        raise TypeError("eye: batch_shape must be static when given with tensor sizes")
    array_ops = _array_ops()
    with ops_lib.name_scope(name, "eye", [num_rows, num_columns]):
        rows = array_ops.reshape(array_ops.range(num_rows), [-1, 1])
        return cast(equal(rows, array_ops.range(num_columns)), dtype)


# --- TensorFlow's math_ops names for ops declared with the array ops ------------------------------
def range(  # noqa: A001 - TensorFlow's name
    start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range"
) -> Tensor:
    """``tf.range``: ``[start, start + delta, ...)`` below ``limit`` (declared in array_ops)."""
    return _array_ops().range(start, limit, delta, dtype=dtype, name=name)


def unsorted_segment_sum(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """Sums of the rows of ``data`` by segment id (declared in array_ops)."""
    return _array_ops().unsorted_segment_sum(data, segment_ids, num_segments, name=name)


# --- Tensor operators -----------------------------------------------------------------------------
def _operator(fn: Any, name: str, reflected: bool = False) -> Any:
    """A Tensor operator building ``fn``, named as TensorFlow 1.x names operator ops ("add")."""
    if reflected:
        return lambda y, x: fn(x, y, name=name)
    return lambda x, y: fn(x, y, name=name)


def _install_operators() -> None:
    table = {
        "add": (add, "add"),
        "sub": (subtract, "sub"),
        "mul": (multiply, "mul"),
        "truediv": (truediv, "truediv"),
        "floordiv": (floordiv, "floordiv"),
        "mod": (floormod, "mod"),
        "pow": (pow, "pow"),
        "matmul": (matmul, "matmul"),
        "and": (logical_and, "and"),
        "or": (logical_or, "or"),
        "xor": (logical_xor, "xor"),
    }
    for op_name, (fn, name) in table.items():
        Tensor._override_operator(f"__{op_name}__", _operator(fn, name))
        Tensor._override_operator(f"__r{op_name}__", _operator(fn, name, reflected=True))
    for op_name, fn in {"lt": less, "le": less_equal, "gt": greater, "ge": greater_equal}.items():
        Tensor._override_operator(f"__{op_name}__", _operator(fn, None))  # type: ignore[arg-type]
    Tensor._override_operator("__neg__", lambda x: negative(x))
    Tensor._override_operator("__abs__", lambda x: abs(x))
    Tensor._override_operator("__invert__", lambda x: logical_not(x))


_install_operators()
