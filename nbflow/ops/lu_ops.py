"""The LU factorization ``Lu``, in TensorFlow's packed form.

``Lu`` gives TensorFlow's packed form: ``lu`` holds ``U`` on and above the diagonal and the unit
lower triangular ``L`` below it, and ``p`` is the row permutation with ``input[p] = L U``
(partial pivoting, as LAPACK's getrf). It has no gradient (as in TensorFlow 1.15).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops.linalg_decompositions import _square

Tensor = ops_lib.Tensor

_PIVOTED = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]])
_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


class Lu(OpDef):
    """``(lu, p)``: the packed LU factors of each square matrix and its row permutation."""

    inputs = ("input",)
    attrs = {"output_idx_type": dtypes.int32}
    num_outputs = 2
    cost = "expensive"
    cpu_only = True
    differentiable = False
    samples = [Sample(input=_PIVOTED), Sample(input=np.stack([_PIVOTED, _SPD]))]

    def infer(self, input: TensorSpec, output_idx_type: dtypes.DType) -> list[TensorSpec]:
        shape = _square(self.type, input)
        p_shape = TensorShape(None) if shape.dims is None else TensorShape(shape.dims[:-1])
        return [TensorSpec(shape, input.dtype.base_dtype), TensorSpec(p_shape, output_idx_type)]

    def compute(self, ctx: KernelContext, input: Any, output_idx_type: dtypes.DType) -> Any:
        x = np.asarray(input)
        flat = x.reshape((-1,) + x.shape[-2:])
        packed = np.empty_like(flat)
        perms = np.empty(flat.shape[:2], output_idx_type.np)
        for i, matrix in enumerate(flat):
            permutation, lower, upper = scipy.linalg.lu(matrix)
            packed[i] = np.tril(lower, -1) + upper
            perms[i] = np.argmax(permutation, axis=0)  # input = P L U, so input[p] = L U
        return packed.reshape(x.shape), perms.reshape(x.shape[:-1])


def lu(input: Any, output_idx_type: Any = dtypes.int32, name: str | None = None):
    """``(lu, p)``: packed LU factors with ``input[p] = L U``.

    >>> import nbflow as tf
    >>> _, p = tf.linalg.lu([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.Session().run(p).tolist()
    [1, 0]
    """
    x = ops_lib.convert_to_tensor(input, name="input")
    attrs = {"output_idx_type": dtypes.as_dtype(output_idx_type)}
    op = ops_lib.get_default_graph().create_op("Lu", [x], attrs, name=name)
    return op.outputs[0], op.outputs[1]


__all__ = ["lu"]
