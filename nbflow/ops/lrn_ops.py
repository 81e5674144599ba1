"""Local response normalization (AlexNet's): ``tf.nn.lrn``.

Each activation of a 4-D ``[batch, height, width, depth]`` tensor is divided by a power of the
sum of squares of its neighbours along the depth axis::

    sqr_sum[b, y, x, d] = sum(input[b, y, x, d - r : d + r + 1] ** 2)
    output = input / (bias + alpha * sqr_sum) ** beta          (r = depth_radius)

With ``N = bias + alpha * sqr_sum`` the gradient is, since the window is symmetric,

    dx[d] = g[d] * N[d] ** -beta
            - 2 * alpha * beta * x[d] * sum over i in window(d) of g[i] * x[i] * N[i] ** (-beta - 1)

which ``LRNGrad`` computes from the incoming gradient, the input and the output, as TensorFlow's
op of that name does. Window sums are differences of a cumulative sum over the depth axis.
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec

Tensor = ops_lib.Tensor

__all__ = ["local_response_normalization", "lrn"]


def _window_sum(xp: Any, values: Any, radius: int) -> Any:
    """Sum over ``[d - radius, d + radius]`` along the last axis (zeros outside)."""
    depth = values.shape[-1]
    pad = [(0, 0)] * (values.ndim - 1) + [(radius + 1, radius)]
    totals = xp.cumsum(xp.pad(values, pad), axis=-1)
    return totals[..., 2 * radius + 1 : 2 * radius + 1 + depth] - totals[..., :depth]


def _norm(xp: Any, x: Any, depth_radius: int, bias: float, alpha: float) -> Any:
    return bias + alpha * _window_sum(xp, x * x, depth_radius)


class LRN(OpDef):
    """``input / (bias + alpha * sqr_sum) ** beta`` over depth windows (see module doc)."""

    inputs = ("input",)
    attrs = {"depth_radius": 5, "bias": 1.0, "alpha": 1.0, "beta": 0.5}
    samples = [
        Sample(input=(2, 3, 2, 7), depth_radius=2, bias=1.0, alpha=0.3, beta=0.75),
        Sample(input=(1, 2, 2, 3), depth_radius=5, bias=2.0, alpha=1e-2, beta=0.5),
    ]

    def infer(self, input: TensorSpec, **attrs: Any) -> TensorSpec:  # noqa: A002
        input.shape.with_rank(4)
        return input

    def compute(self, ctx: KernelContext, x: Any, depth_radius, bias, alpha, beta) -> Any:
        xp = ctx.xp
        return (x * _norm(xp, x, depth_radius, bias, alpha) ** -beta).astype(x.dtype)

    def gradient(self, op: Any, grad: Tensor) -> list[Tensor]:
        attrs = {k: op.get_attr(k) for k in self.attrs}
        inputs = [grad, op.inputs[0], op.outputs[0]]
        return [ops_lib.get_default_graph().create_op("LRNGrad", inputs, attrs).outputs[0]]


class LRNGrad(OpDef):
    """The gradient of ``LRN`` with respect to its input (see module doc)."""

    inputs = ("input_grads", "input_image", "output_image")
    attrs = {"depth_radius": 5, "bias": 1.0, "alpha": 1.0, "beta": 0.5}
    differentiable = False
    samples = [
        Sample(input_grads=(1, 2, 2, 4), input_image=(1, 2, 2, 4), output_image=(1, 2, 2, 4))
    ]

    def infer(self, input_grads: TensorSpec, input_image, output_image, **attrs) -> TensorSpec:
        return input_grads

    def compute(self, ctx: KernelContext, g, x, y, depth_radius, bias, alpha, beta) -> Any:
        xp = ctx.xp
        norm = _norm(xp, x, depth_radius, bias, alpha)
        scaled = g * x * norm ** (-beta - 1.0)
        dx = g * norm**-beta - 2.0 * alpha * beta * x * _window_sum(xp, scaled, depth_radius)
        return dx.astype(g.dtype)


def local_response_normalization(
    input: Any,  # noqa: A002 - TensorFlow's keyword
    depth_radius: int = 5,
    bias: float = 1.0,
    alpha: float = 1.0,
    beta: float = 0.5,
    name: str | None = None,
) -> Tensor:
    """Local response normalization of a 4-D tensor along its last axis (``tf.nn.lrn``).

    >>> import nbflow as tf
    >>> out = tf.nn.lrn(tf.ones([1, 1, 1, 3]), depth_radius=1, bias=0.0, alpha=1.0, beta=1.0)
    >>> [round(v, 4) for v in tf.Session().run(out).ravel().tolist()]
    [0.5, 0.3333, 0.5]
    """
    attrs = {
        "depth_radius": int(depth_radius),
        "bias": float(bias),
        "alpha": float(alpha),
        "beta": float(beta),
    }
    x = ops_lib.convert_to_tensor(input, name="input")
    return ops_lib.get_default_graph().create_op("LRN", [x], attrs, name=name or "LRN").outputs[0]


lrn = local_response_normalization
