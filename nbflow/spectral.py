"""``tf.spectral``: TensorFlow 1.15's Fourier transforms (also top-level, ``tf.spectral.fft`` is
``tf.fft``); they live in ``nbflow.ops.fft_ops``. The real-input transforms (``rfft*``) are not
implemented."""

from nbflow.ops.fft_ops import fft, fft2d, fft3d, ifft, ifft2d, ifft3d  # noqa: F401
