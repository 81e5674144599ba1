"""CuPy-specific kernels, installed as ``OpDef.compute_gpu`` when the first GPU device appears.

Most ops need none: their ``compute`` over ``ctx.xp`` runs on CuPy as written. A kernel is
added here only where it pays, which on a GPU means fusing what the generic kernel does in
several launches (and several passes over memory) into one ``ElementwiseKernel``: AddN of N
tensors, sigmoid and the activation gradients. Ops not registered (yet) are skipped, so this
module never forces an op family to exist. ``ops/`` stays free of CuPy.
"""

from __future__ import annotations

import functools
from typing import Any
from collections.abc import Callable

from nbflow.framework.op_def import KernelContext, registered_ops

_installed: set[str] = set()


@functools.cache
def _elementwise(params: str, out: str, body: str, name: str) -> Any:
    import cupy  # noqa: PLC0415 - only reached with a GPU device

    return cupy.ElementwiseKernel(params, out, body, name)


@functools.lru_cache(maxsize=64)
def _add_n_kernel(n: int) -> Any:
    params = ", ".join(f"T x{i}" for i in range(n))
    body = "y = " + " + ".join(f"x{i}" for i in range(n))
    return _elementwise(params, "T y", body, f"nbflow_add_n_{n}")


def add_n(ctx: KernelContext, inputs: Any, **attrs: Any) -> Any:
    """AddN in one pass over memory instead of N-1 additions."""
    xp = ctx.xp
    arrays = [xp.asarray(x) for x in inputs]
    if len(arrays) == 1:
        return arrays[0].copy()
    if len(arrays) > 16 or any(a.shape != arrays[0].shape for a in arrays):
        return functools.reduce(xp.add, arrays)
    return _add_n_kernel(len(arrays))(*arrays)


def relu(ctx: KernelContext, features: Any, **attrs: Any) -> Any:
    return _elementwise("T x", "T y", "y = x > 0 ? x : (T)0", "nbflow_relu")(features)


def sigmoid(ctx: KernelContext, x: Any, **attrs: Any) -> Any:
    return _elementwise("T x", "T y", "y = 1 / (1 + exp(-x))", "nbflow_sigmoid")(x)


def relu_grad(ctx: KernelContext, gradients: Any, features: Any, **attrs: Any) -> Any:
    return _elementwise("T dy, T x", "T z", "z = x > 0 ? dy : (T)0", "nbflow_relu_grad")(
        gradients, features
    )


def sigmoid_grad(ctx: KernelContext, y: Any, dy: Any, **attrs: Any) -> Any:
    return _elementwise("T y, T dy", "T z", "z = dy * y * (1 - y)", "nbflow_sigmoid_grad")(y, dy)


def tanh_grad(ctx: KernelContext, y: Any, dy: Any, **attrs: Any) -> Any:
    return _elementwise("T y, T dy", "T z", "z = dy * (1 - y * y)", "nbflow_tanh_grad")(y, dy)


GPU_KERNELS: dict[str, Callable[..., Any]] = {
    "AddN": add_n,
    "Relu": relu,
    "Sigmoid": sigmoid,
    "ReluGrad": relu_grad,
    "SigmoidGrad": sigmoid_grad,
    "TanhGrad": tanh_grad,
}


def install() -> list[str]:
    """Attach the kernels above to the registered ops that have no ``compute_gpu`` yet."""
    ops = registered_ops()
    for op_type, kernel in GPU_KERNELS.items():
        opdef = ops.get(op_type)
        if op_type in _installed or opdef is None or opdef.compute_gpu is not None:
            continue
        opdef.compute_gpu = kernel
        _installed.add(op_type)
    return sorted(_installed)
