"""``tf.layers.InputSpec``: what a layer accepts (dtype, rank bounds, sizes of given axes).

A layer sets ``self.input_spec`` in its constructor or ``build``; ``assert_input_compatibility``
checks an input against it and raises TensorFlow's ``ValueError`` naming the layer and the
mismatch.

    >>> import nbflow as tf
    >>> spec = tf.layers.InputSpec(min_ndim=2, axes={-1: 3})
    >>> assert_input_compatibility(spec, tf.zeros([4, 3]), "dense")
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.tensor_shape import TensorShape


class InputSpec:
    """Constraints on a layer's input: ``dtype``, ``shape`` (None for any size), ``ndim``,
    ``max_ndim``, ``min_ndim`` and ``axes`` (axis -> required size)."""

    def __init__(
        self,
        dtype: Any = None,
        shape: Any = None,
        ndim: int | None = None,
        max_ndim: int | None = None,
        min_ndim: int | None = None,
        axes: dict[int, int] | None = None,
    ):
        self.dtype = dtypes.as_dtype(dtype).name if dtype is not None else None
        self.shape = tuple(shape) if shape is not None else None
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.axes = dict(axes or {})

    def __repr__(self) -> str:
        fields = ("dtype", "shape", "ndim", "max_ndim", "min_ndim", "axes")
        shown = [f"{k}={getattr(self, k)}" for k in fields if getattr(self, k)]
        return f"InputSpec({', '.join(shown)})"


def assert_input_compatibility(spec: InputSpec | None, inputs: Any, layer_name: str) -> None:
    """Raises ValueError when ``inputs`` break ``spec``; unknown ranks and sizes pass."""
    if spec is None:
        return
    tensor = ops_lib.convert_to_tensor(inputs)
    shape: TensorShape = tensor.shape
    where = f"Input 0 of layer {layer_name} is incompatible with the layer"
    rank = shape.ndims
    if rank is not None:
        if spec.ndim is not None and rank != spec.ndim:
            raise ValueError(f"{where}: expected ndim={spec.ndim}, found ndim={rank}")
        if spec.max_ndim is not None and rank > spec.max_ndim:
            raise ValueError(f"{where}: expected max_ndim={spec.max_ndim}, found ndim={rank}")
        if spec.min_ndim is not None and rank < spec.min_ndim:
            raise ValueError(f"{where}: expected min_ndim={spec.min_ndim}, found ndim={rank}")
        dims = shape.as_list()
        for axis, size in spec.axes.items():
            actual = dims[axis] if -rank <= axis < rank else None
            if size is not None and actual is not None and actual != size:
                raise ValueError(f"{where}: expected axis {axis} of size {size}, found {dims}")
        if spec.shape is not None:
            for want, got in zip(spec.shape, dims, strict=False):
                if want is not None and got is not None and want != got:
                    raise ValueError(f"{where}: expected shape={spec.shape}, found {dims}")
    if spec.dtype is not None and tensor.dtype.base_dtype.name != spec.dtype:
        raise ValueError(f"{where}: expected dtype={spec.dtype}, found {tensor.dtype.name}")
