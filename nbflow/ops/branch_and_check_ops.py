"""TensorFlow 1.15 functions over existing ops: ``switch_case`` (a branch chosen by index),
``assert_variables_initialized`` and ``broadcast_dynamic_shape``.

    >>> import nbflow as tf
    >>> r = tf.switch_case(tf.constant(1), [lambda: tf.constant(10), lambda: tf.constant(20)])
    >>> int(tf.Session().run(r))
    20
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.ops.check_ops import Assert
from nbflow.ops.constant_ops import _int_tensor, fill
from nbflow.ops.control_flow_ops import case
from nbflow.ops.join_ops import concat, stack
from nbflow.ops.math_binary import equal, maximum, subtract
from nbflow.ops.math_reductions import reduce_all
from nbflow.ops.select_ops import where_v2
from nbflow.ops.shape_ops import size
from nbflow.ops.state_ops import is_variable_initialized
from nbflow.ops.variables import global_variables, local_variables

Tensor = ops_lib.Tensor


def switch_case(
    branch_index: Any,
    branch_fns: Sequence[Callable[[], Any]] | dict[int, Callable[[], Any]],
    default: Callable[[], Any] | None = None,
    name: str = "switch_case",
) -> Any:
    """The result of ``branch_fns[branch_index]``; ``default`` (else the last branch) for an
    index out of range. Only the chosen branch runs."""
    pairs = sorted(branch_fns.items()) if isinstance(branch_fns, dict) else enumerate(branch_fns)
    fns = list(pairs)
    if not fns:
        raise ValueError("switch_case needs at least one branch function")
    with ops_lib.name_scope(name, values=[branch_index]):
        index = _int_tensor(branch_index)
        if default is None:
            default = fns[-1][1]
            fns = fns[:-1]
        conditions = [
            (equal(index, ops_lib.convert_to_tensor(i, index.dtype)), fn) for i, fn in fns
        ]
        return case(conditions, default=default, exclusive=True)


def assert_variables_initialized(var_list: Any = None) -> Any:
    """An op failing with InvalidArgumentError when a variable of ``var_list`` (default: all
    global and local variables) is not initialized; None without variables."""
    variables = list(var_list) if var_list is not None else global_variables() + local_variables()
    if not variables:
        return None
    with ops_lib.name_scope("assert_variables_initialized"):
        ready = reduce_all(stack([is_variable_initialized(v) for v in variables]))
        return Assert(ready, ["Not all variables are initialized"])


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> Tensor:
    """The shape (a 1-D tensor) two operands of compatible shapes ``shape_x`` and ``shape_y``
    broadcast to (the shapes are not checked against each other)."""
    with ops_lib.name_scope(None, "broadcast_dynamic_shape", [shape_x, shape_y]):
        sx, sy = _int_tensor(shape_x), _int_tensor(shape_y)
        sy = (
            ops_lib.convert_to_tensor(sy, dtype=sx.dtype.base_dtype) if sy.dtype != sx.dtype else sy
        )
        rank = maximum(size(sx, out_type=sx.dtype), size(sy, out_type=sx.dtype))
        one = ops_lib.convert_to_tensor(1, sx.dtype.base_dtype)

        def padded(s: Tensor) -> Tensor:
            return concat([fill(stack([subtract(rank, size(s, out_type=sx.dtype))]), one), s], 0)

        px, py = padded(sx), padded(sy)
        return where_v2(equal(px, one), py, px)
