"""CuPy kernels against NumPy over the registry samples; sessions placing work on a GPU.

Skipped unless CuPy imports and finds a CUDA device.
"""

import numpy as np
import pytest

import nbflow as tf
from nbflow.devices import gpu
from nbflow.framework.op_def import KernelContext, all_samples, cpu_context, kernel_attrs

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu.is_gpu_available(), reason="needs CuPy and a CUDA device"),
]


def _gpu_context():
    device = gpu.local_gpu_devices(1)[0]
    return device, KernelContext(device.name, device.xp, device.resources)


def _host(value):
    if isinstance(value, (list, tuple)):
        return [_host(v) for v in value]
    return value.get() if hasattr(value, "get") and hasattr(value, "device") else value


def _gpu_samples():
    return [s for s in all_samples() if s.opdef.has_kernel_for("GPU") and not s.opdef.stateful]


@pytest.mark.parametrize("case", _gpu_samples(), ids=str)
def test_cupy_kernel_agrees_with_numpy(case):
    device, ctx = _gpu_context()
    args = case.make_inputs(np.random.default_rng(0))
    attrs = dict(case.attrs)
    if case.opdef.list_inputs:
        attrs["N"] = len(args[min(case.opdef.list_inputs)])
    host_args = [tuple(a) if isinstance(a, list) else a for a in args]
    expected = case.opdef.compute(cpu_context(), *host_args, **case.attrs)
    compute = case.opdef.compute_gpu or case.opdef.compute
    gpu_args = [
        tuple(device.from_host(np.asarray(x)) for x in a)
        if isinstance(a, list)
        else device.from_host(np.asarray(a))
        for a in args
    ]
    got = compute(ctx, *gpu_args, **kernel_attrs(case.attrs))
    for want, have in zip(
        expected if isinstance(expected, tuple) else [expected],
        _host(got) if isinstance(got, tuple) else [_host(got)],
    ):
        np.testing.assert_allclose(np.asarray(have), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_session_places_work_on_the_gpu_and_returns_host_arrays():
    x = tf.placeholder(tf.float32, [64, 64], name="x")
    with tf.device("/device:GPU:0"):
        y = tf.matmul(x, x) + 1.0
    with tf.device("/cpu:0"):
        z = tf.reduce_sum(y)
    value = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    with tf.Session() as sess:
        got_y, got_z = sess.run([y, z], {x: value})
    assert isinstance(got_y, np.ndarray)
    np.testing.assert_allclose(got_y, value @ value + 1.0, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_z, (value @ value + 1.0).sum(), rtol=1e-3)


def test_fused_add_n_matches_numpy():
    device, ctx = _gpu_context()
    arrays = [np.random.default_rng(i).standard_normal((5, 7)) for i in range(4)]
    from nbflow.framework.op_def import get_op_def

    got = get_op_def("AddN").compute_gpu(ctx, [device.from_host(a) for a in arrays])
    np.testing.assert_allclose(device.to_host(got), sum(arrays))
