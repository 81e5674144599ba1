"""Small TF 1.15 top-level names: the API version, ``sparse_matmul``, ``make_template`` and
``recompute_grad``.

``make_template`` wraps a function so that every call shares the variables the first call
created: the first call runs inside a fresh ``variable_scope``, later calls re-enter that scope
with ``reuse=True``.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> scale = lambda x: x * tf.get_variable("w", [], initializer=tf.ones_initializer())
    >>> dense = tf.make_template("dense", scale)
    >>> a, b = dense(tf.constant(2.0)), dense(tf.constant(3.0))
    >>> len(tf.trainable_variables())
    1
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from nbflow.framework.ops import Tensor
from nbflow.ops import variable_scope as vs
from nbflow.ops.linalg_ops import matmul

__all__ = ["VERSION", "make_template", "recompute_grad", "sparse_matmul"]

# The TensorFlow API nbflow implements (programs test ``tf.VERSION.startswith("1.")``).
VERSION = "1.15.0"


def sparse_matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """``matmul``; TensorFlow's sparsity hints change only which kernel runs, not the value."""
    return matmul(
        a,
        b,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
        a_is_sparse=a_is_sparse,
        b_is_sparse=b_is_sparse,
        name=name,
    )


def make_template(
    name_: str,
    func_: Callable[..., Any],
    create_scope_now_: bool = False,
    unique_name_: str | None = None,
    custom_getter_: Any = None,
    **kwargs: Any,
) -> Callable[..., Any]:
    """``func_`` (with ``kwargs`` bound) whose calls all share the first call's variables."""
    scope: list[Any] = []
    calls = [0]

    def enter() -> Any:
        if scope:
            return vs.variable_scope(scope[0], reuse=True if calls[0] else None)
        return vs.variable_scope(unique_name_, default_name=name_, custom_getter=custom_getter_)

    if create_scope_now_:
        with enter() as created:
            scope.append(created)

    @functools.wraps(func_)
    def template(*args: Any, **more: Any) -> Any:
        with enter() as current:
            if not scope:
                scope.append(current)
            result = func_(*args, **{**kwargs, **more})
        calls[0] += 1
        return result

    return template


def recompute_grad(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` itself: TensorFlow recomputes ``f``'s activations in the backward pass to save
    memory; the values and gradients are the same, which is what nbflow gives."""
    return f
