"""Graph-mode gradient helpers of TensorFlow 1.15 built on ``tf.gradients``: ``custom_gradient``
(a function that supplies its own gradient), ``grad_pass_through`` and ``hessians``.

``custom_gradient`` works as TensorFlow's graph-mode version does: the forward results and the
inputs go through one ``IdentityN`` op whose gradient is overridden (``gradient_override_map``)
by a function calling the user's ``grad_fn``; the results get no gradient of their own, so
nothing flows back through the forward computation, and the inputs get what ``grad_fn`` says.

    >>> import nbflow as tf
    >>> @tf.custom_gradient
    ... def clip_gradient(x):
    ...     return tf.identity(x), lambda dy: tf.clip_by_value(dy, -0.1, 0.1)
    >>> x = tf.constant(2.0)
    >>> round(float(tf.Session().run(tf.gradients(clip_gradient(x) * 5.0, x)[0])), 4)
    0.1
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.gradients import RegisterGradient, gradient_override_map, gradients
from nbflow.ops.constant_ops import identity_n
from nbflow.ops.join_ops import stack
from nbflow.ops.shape_ops import reshape

Tensor = ops_lib.Tensor
_names = itertools.count()


def custom_gradient(f: Callable[..., tuple[Any, Callable[..., Any]]]) -> Callable[..., Any]:
    """Decorate ``f(*x) -> (y, grad_fn)``: ``y`` is computed by ``f``, and the gradient with
    respect to ``x`` is ``grad_fn(*dy)`` (one gradient per input, or one tensor for one input)."""

    @functools.wraps(f)
    def decorated(*args: Any) -> Any:
        inputs = [ops_lib.convert_to_tensor(a) for a in args]
        result, grad_fn = f(*inputs)
        results = list(result) if isinstance(result, (list, tuple)) else [result]
        results = [ops_lib.convert_to_tensor(r) for r in results]
        name = f"CustomGradient-{next(_names)}"

        @RegisterGradient(name)
        def _gradient(op: Any, *grads: Any) -> list[Any]:
            input_grads = grad_fn(*grads[: len(results)])
            if not isinstance(input_grads, (list, tuple)):
                input_grads = [input_grads]
            if len(input_grads) != len(inputs):
                raise ValueError(
                    f"custom_gradient's grad_fn of {f.__name__} returned {len(input_grads)} "
                    f"gradients for {len(inputs)} inputs"
                )
            return [None] * len(results) + list(input_grads)

        with gradient_override_map({"IdentityN": name}):
            outputs = identity_n(results + inputs)
        outputs = list(outputs[: len(results)])
        for out, r in zip(outputs, results):
            out.set_shape(r.shape)
        return type(result)(outputs) if isinstance(result, (list, tuple)) else outputs[0]

    return decorated


def grad_pass_through(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` forward, identity backward (the straight-through estimator), for one input."""

    @functools.wraps(f)
    def decorated(x: Any) -> Any:
        @custom_gradient
        def pass_through(x: Tensor) -> Any:
            return f(x), lambda dy: dy

        return pass_through(x)

    return decorated


def hessians(ys: Any, xs: Any, name: str = "hessians", **kwargs: Any) -> list[Tensor]:
    """For each x (of fully known shape), the Hessian of ``sum(ys)``: shape x.shape + x.shape."""
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    out = []
    with ops_lib.name_scope(name, values=xs):
        for x, g in zip(xs, gradients(ys, xs, **kwargs)):
            shape = x.shape.as_list()
            if None in shape:
                raise ValueError(f"hessians needs the full shape of {x.name}, got {x.shape}")
            flat = reshape(g, [-1])
            count = 1
            for d in shape:
                count *= d
            rows = [gradients(flat[i], x)[0] for i in range(count)]
            out.append(reshape(stack(rows), shape + shape))
    return out
