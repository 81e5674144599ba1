"""Numerics guards (whitepaper §6, lesson 5): CheckNumerics stops a step at the first NaN or Inf.

``check_numerics(t, message)`` passes t through and fails the step with InvalidArgumentError if
t holds a NaN or an infinity. ``add_check_numerics_ops()`` puts one after every floating-point
tensor of the graph, chained in creation order so the error names the first op that produced a
bad value.
"""

from __future__ import annotations

from typing import Any


from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, Sample, TensorSpec
from nbflow.ops import array_ops, control_flow_ops


class CheckNumerics(OpDef):
    """``tensor`` unchanged; InvalidArgumentError if it contains a NaN or an Inf."""

    inputs = ("tensor",)
    attrs = {"message": REQUIRED}
    forwards_input = True
    removed_for_inference = True
    samples = [Sample(tensor=(2, 3), message="sample")]

    def infer(self, tensor: TensorSpec, message: str) -> TensorSpec:
        return TensorSpec(tensor.shape, tensor.dtype.base_dtype)

    def compute(self, ctx: KernelContext, tensor: Any, message: str) -> Any:
        xp = ctx.xp
        if tensor.dtype.kind in "fc" and not xp.isfinite(tensor).all():
            kinds = []
            if xp.isnan(tensor).any():
                kinds.append("NaN")
            if xp.isinf(tensor).any():
                kinds.append("Inf")
            raise errors.InvalidArgumentError(
                None, None, f"{message} : Tensor had {' and '.join(kinds)} values"
            )
        return tensor

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        message = (
            "Not a number (NaN) or infinity (Inf) values detected in gradient. "
            + op.get_attr("message")
        )
        return [check_numerics(grad, message)]


def check_numerics(tensor: Any, message: str, name: str | None = None) -> ops_lib.Tensor:
    """``tensor``, checked for NaN and Inf values when the step runs.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.check_numerics(tf.constant([1.0]), "ok")).tolist()
    [1.0]
    """
    tensor = ops_lib.convert_to_tensor(tensor)
    return (
        ops_lib.get_default_graph()
        .create_op("CheckNumerics", [tensor], {"message": message}, name=name)
        .outputs[0]
    )


def verify_tensor_all_finite(t: Any, msg: str, name: str | None = None) -> ops_lib.Tensor:
    """``t`` with a CheckNumerics on it (TensorFlow's name for the same guard)."""
    graph = ops_lib.get_default_graph()
    with graph.name_scope(name or "VerifyFinite"):
        t = ops_lib.convert_to_tensor(t)
        with graph.colocate_with(t.op):
            verify = check_numerics(t, message=msg)
            with graph.control_dependencies([verify]):
                return array_ops.identity(t)


_CHECKED = (dtypes.float16, dtypes.float32, dtypes.float64)


def add_check_numerics_ops() -> ops_lib.Operation:
    """A group of CheckNumerics ops, one per float tensor of the default graph, run in order.

    Running the returned op with a training step fails at the first tensor (in creation order)
    holding a NaN or Inf, naming it in the message ("<op name>:<output index> : Tensor had NaN
    values").
    """
    graph = ops_lib.get_default_graph()
    check: list[Any] = []
    for op in graph.get_operations():
        if op.type == "CheckNumerics":
            continue
        for output in op.outputs:
            if output.dtype not in _CHECKED:
                continue
            message = f"{op.name}:{output.value_index}"
            with graph.control_dependencies(check), graph.colocate_with(op):
                check = [check_numerics(output, message=message)]
    return control_flow_ops.group(*check)
