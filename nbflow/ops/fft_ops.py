"""Fast Fourier transforms over the innermost 1, 2 or 3 dimensions (``tf.fft``, ``tf.spectral``).

    >>> import numpy as np, nbflow as tf
    >>> x = tf.constant(np.array([1, 0, 0, 0], np.complex64))
    >>> tf.Session().run(tf.fft(x)).tolist()
    [(1+0j), (1+0j), (1+0j), (1+0j)]

``fft``/``fft2d``/``fft3d`` transform the last 1/2/3 dimensions of a complex64 or complex128
tensor (the others are a batch); ``ifft*`` invert them, scaled by 1/n as NumPy and TensorFlow
do. The gradient of a forward transform over n points is n times the inverse transform of the
incoming gradient, and that of an inverse transform the forward one divided by n.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.ops.math_binary import divide, multiply
from nbflow.ops.math_reductions import reduce_prod
from nbflow.ops.math_unary import cast
from nbflow.ops.shape_ops import shape

_COMPLEX = (dtypes.complex64, dtypes.complex128)


class _FFTBase(OpDef):
    """A transform over the innermost ``rank`` dimensions (``inverse``: the inverse one)."""

    abstract = True
    inputs = ("input",)
    rank = 1
    inverse = False

    def infer(self, input: TensorSpec) -> TensorSpec:  # noqa: A002
        if input.dtype.base_dtype not in _COMPLEX:
            raise TypeError(
                f"{self.type}: input must be complex64 or complex128, got {input.dtype.name}"
            )
        ndims = input.shape.ndims
        if ndims is not None and ndims < self.rank:
            raise ValueError(
                f"{self.type}: input must have at least {self.rank} dimensions, got shape "
                f"{input.shape}"
            )
        return TensorSpec(input.shape, input.dtype.base_dtype)

    def compute(self, ctx: KernelContext, input: Any) -> Any:  # noqa: A002
        axes = tuple(range(-self.rank, 0))
        transform = ctx.xp.fft.ifftn if self.inverse else ctx.xp.fft.fftn
        return transform(input, axes=axes).astype(input.dtype, copy=False)

    def gradient(self, op: ops_lib.Operation, grad: Any) -> list[Any]:
        dims = shape(grad)[-self.rank :]
        n = cast(reduce_prod(dims), grad.dtype)
        if self.inverse:
            return [divide(_FORWARD[self.rank](grad), n)]
        return [multiply(_INVERSE[self.rank](grad), n)]


def _samples(rank: int) -> list[Sample]:
    rng = np.random.default_rng(rank)
    shape = (2,) + (3,) * rank
    value = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return [
        Sample(input_dtype=np.complex128, input=value),
        Sample(input_dtype=np.complex64, input=value.astype(np.complex64)[0]),
    ]


class FFT(_FFTBase):
    """The discrete Fourier transform of the innermost dimension."""

    samples = _samples(1)


class IFFT(_FFTBase):
    """The inverse discrete Fourier transform of the innermost dimension."""

    inverse = True
    samples = _samples(1)


class FFT2D(_FFTBase):
    """The 2-D discrete Fourier transform of the innermost two dimensions."""

    rank = 2
    samples = _samples(2)


class IFFT2D(_FFTBase):
    """The inverse 2-D discrete Fourier transform of the innermost two dimensions."""

    rank = 2
    inverse = True
    samples = _samples(2)


class FFT3D(_FFTBase):
    """The 3-D discrete Fourier transform of the innermost three dimensions."""

    rank = 3
    samples = _samples(3)


class IFFT3D(_FFTBase):
    """The inverse 3-D discrete Fourier transform of the innermost three dimensions."""

    rank = 3
    inverse = True
    samples = _samples(3)


def _op(op_type: str) -> Any:
    def transform(input: Any, name: str | None = None) -> ops_lib.Tensor:  # noqa: A002
        input = ops_lib.convert_to_tensor(input)
        return ops_lib.get_default_graph().create_op(op_type, [input], {}, name=name).outputs[0]

    transform.__name__ = op_type.lower()
    transform.__doc__ = f"The {op_type} of ``input``'s innermost dimensions (see fft_ops)."
    return transform


fft = _op("FFT")
ifft = _op("IFFT")
fft2d = _op("FFT2D")
ifft2d = _op("IFFT2D")
fft3d = _op("FFT3D")
ifft3d = _op("IFFT3D")
_FORWARD = {1: fft, 2: fft2d, 3: fft3d}
_INVERSE = {1: ifft, 2: ifft2d, 3: ifft3d}
