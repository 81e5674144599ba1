"""``tf.test``: helpers for tests of nbflow programs."""

from __future__ import annotations


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability: object = None) -> bool:
    """Whether a GPU device is available (CuPy imports and finds a CUDA device).

    >>> import nbflow as tf
    >>> tf.test.is_gpu_available() in (True, False)
    True
    """
    from nbflow.devices.gpu import is_gpu_available as available

    return available()


def gpu_device_name() -> str:
    """The name of the first GPU device, or "" when there is none."""
    return "/device:GPU:0" if is_gpu_available() else ""
