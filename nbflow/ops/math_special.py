"""Special functions: Lgamma, Digamma, Polygamma, Erf, Erfc, Igamma, Betainc (``scipy.special``).

The kernels call ``scipy.special`` for NumPy arrays and ``cupyx.scipy.special`` for CuPy
arrays; the gradients are the textbook derivatives (lgamma' = digamma, digamma' = polygamma(1),
erf' = 2/sqrt(pi) exp(-x^2), dP(a, x)/dx = x^(a-1) e^-x / Gamma(a)).

(The distributions need these; the ``tf.math`` namespace work declares the same ops under the
same names with more of the family, and supersedes this module when the two meet.)
"""

from __future__ import annotations

import importlib
import math
from typing import Any, ClassVar

import numpy as np

from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import broadcast_shapes
from nbflow.ops.math_binary import (
    _FLOATS,
    _POSITIVE,
    BinaryOp,
    _binary_grads,
    _check_dtype,
    _create,
    _unbroadcast,
    multiply,
    subtract,
)
from nbflow.ops.math_unary import UnaryOp, exp, log, log1p, negative, square

Tensor = ops_lib.Tensor


def special_functions(xp: Any) -> Any:
    """``scipy.special`` for NumPy arrays, ``cupyx.scipy.special`` for CuPy arrays."""
    return importlib.import_module(
        "cupyx.scipy.special" if xp.__name__ == "cupy" else "scipy.special"
    )


class _SpecialUnary(UnaryOp):
    """Base of the unary special functions: ``function`` names the scipy.special ufunc."""

    abstract = True
    allowed = _FLOATS
    function: ClassVar[str] = ""
    samples = [Sample(x=_POSITIVE), Sample(x=np.array([-2.5, -0.5, 7.0]))]

    def compute(self, ctx: KernelContext, x: Any) -> Any:
        return getattr(special_functions(ctx.xp), self.function)(x).astype(x.dtype, copy=False)


class Lgamma(_SpecialUnary):
    """log |Gamma(x)|."""

    function = "gammaln"

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        return [multiply(grad, digamma(op.inputs[0]))]


class Digamma(_SpecialUnary):
    """psi(x), the derivative of lgamma."""

    function = "digamma"

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        x = op.inputs[0]
        return [multiply(grad, polygamma(ops_lib.convert_to_tensor(1.0, x.dtype.base_dtype), x))]


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class Erf(_SpecialUnary):
    """The error function."""

    samples = [Sample(x=(2, 3))]
    function = "erf"

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        x = op.inputs[0]
        return [multiply(grad, multiply(_TWO_OVER_SQRT_PI, exp(negative(square(x)))))]


class Erfc(_SpecialUnary):
    """1 - erf(x), accurate for large x."""

    samples = [Sample(x=(2, 3))]
    function = "erfc"

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        x = op.inputs[0]
        return [multiply(grad, multiply(-_TWO_OVER_SQRT_PI, exp(negative(square(x)))))]


class Polygamma(BinaryOp):
    """The ``a``-th derivative of digamma at ``x`` (``a`` a non-negative integer value)."""

    allowed = _FLOATS
    inputs = ("a", "x")
    samples = [Sample(a=np.array([1.0, 2.0, 1.0]), x=np.array([0.7, 1.5, 3.0]))]

    def compute(self, ctx: KernelContext, a: Any, x: Any) -> Any:
        out = special_functions(ctx.xp).polygamma(a.astype(np.int64), x)
        return out.astype(x.dtype, copy=False)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        a, x = op.inputs
        return _binary_grads(op, None, multiply(grad, polygamma(a + 1.0, x)))


class Igamma(BinaryOp):
    """P(a, x), the regularized lower incomplete gamma function (gradient in ``x`` only)."""

    allowed = _FLOATS
    inputs = ("a", "x")
    samples = [Sample(a=_POSITIVE, x=_POSITIVE[::-1])]

    def compute(self, ctx: KernelContext, a: Any, x: Any) -> Any:
        out = special_functions(ctx.xp).gammainc(a, x)
        return out.astype(np.result_type(a, x), copy=False)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        a, x = op.inputs
        log_density = subtract(subtract(multiply(a - 1.0, log(x)), x), lgamma(a))
        return _binary_grads(op, None, multiply(grad, exp(log_density)))


class Betainc(OpDef):
    """I_x(a, b), the regularized incomplete beta function (gradient in ``x`` only)."""

    inputs = ("a", "b", "x")
    samples = [Sample(a=_POSITIVE, b=_POSITIVE[::-1], x=np.linspace(0.1, 0.9, 6).reshape(2, 3))]

    def infer(self, a: TensorSpec, b: TensorSpec, x: TensorSpec) -> TensorSpec:
        for name, spec in (("a", a), ("b", b), ("x", x)):
            _check_dtype(self.type, name, spec, _FLOATS)
            if spec.dtype.base_dtype is not a.dtype.base_dtype:
                raise TypeError(f"Betainc: '{name}' is {spec.dtype.name}, 'a' is {a.dtype.name}")
        shape = broadcast_shapes(broadcast_shapes(a.shape, b.shape), x.shape)
        return TensorSpec(shape, a.dtype.base_dtype)

    def compute(self, ctx: KernelContext, a: Any, b: Any, x: Any) -> Any:
        return special_functions(ctx.xp).betainc(a, b, x).astype(x.dtype, copy=False)

    def gradient(self, op: ops_lib.Operation, grad: Tensor) -> list:
        a, b, x = op.inputs  # d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b)
        log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
        partial = exp((a - 1.0) * log(x) + (b - 1.0) * log1p(-x) - log_beta)
        return [None, None, _unbroadcast(multiply(grad, partial), x)]


def betainc(a: Any, b: Any, x: Any, name: str | None = None) -> Tensor:
    """I_x(a, b), the regularized incomplete beta function."""
    a = ops_lib.convert_to_tensor(a)
    b = ops_lib.convert_to_tensor(b, dtype=a.dtype.base_dtype)
    x = ops_lib.convert_to_tensor(x, dtype=a.dtype.base_dtype)
    return _create("Betainc", [a, b, x], name=name)


def lgamma(x: Any, name: str | None = None) -> Tensor:
    """log |Gamma(x)|, elementwise."""
    return _create("Lgamma", [ops_lib.convert_to_tensor(x)], name=name)


def digamma(x: Any, name: str | None = None) -> Tensor:
    """The digamma function psi(x), elementwise."""
    return _create("Digamma", [ops_lib.convert_to_tensor(x)], name=name)


def erf(x: Any, name: str | None = None) -> Tensor:
    """The Gauss error function, elementwise."""
    return _create("Erf", [ops_lib.convert_to_tensor(x)], name=name)


def erfc(x: Any, name: str | None = None) -> Tensor:
    """The complementary error function 1 - erf(x), elementwise."""
    return _create("Erfc", [ops_lib.convert_to_tensor(x)], name=name)


def polygamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The ``a``-th derivative of digamma at ``x``."""
    x = ops_lib.convert_to_tensor(x)
    a = ops_lib.convert_to_tensor(a, dtype=x.dtype.base_dtype)
    return _create("Polygamma", [a, x], name=name)


def igamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """P(a, x), the regularized lower incomplete gamma function."""
    a = ops_lib.convert_to_tensor(a)
    x = ops_lib.convert_to_tensor(x, dtype=a.dtype.base_dtype)
    return _create("Igamma", [a, x], name=name)


__all__ = ["betainc", "digamma", "erf", "erfc", "igamma", "lgamma", "polygamma"]
