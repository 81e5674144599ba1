"""Device names, partial specs and merging as TensorFlow writes them; the devices of a session."""

import sys

import numpy as np
import pytest

import nbflow as tf
from nbflow.devices.device import Device, local_devices
from nbflow.devices.spec import DeviceSpec, merge_device


def test_full_and_legacy_names_parse_to_the_canonical_form():
    assert DeviceSpec.from_string("/job:worker/task:3/device:GPU:1").to_string() == (
        "/job:worker/task:3/device:GPU:1"
    )
    assert DeviceSpec.from_string("/gpu:0").to_string() == "/device:GPU:0"
    assert DeviceSpec.from_string("/device:cpu:*").to_string() == "/device:CPU:*"


def test_partial_specs_match_the_devices_they_leave_open():
    any_gpu = DeviceSpec.from_string("/device:GPU:*")
    ps_task = DeviceSpec.from_string("/job:ps/task:0")
    assert any_gpu.is_compatible_with("/job:worker/replica:0/task:1/device:GPU:3")
    assert not any_gpu.is_compatible_with("/job:worker/task:1/device:CPU:0")
    assert ps_task.is_compatible_with("/job:ps/replica:0/task:0/device:CPU:0")
    assert not ps_task.is_compatible_with("/job:ps/task:1/device:CPU:0")


def test_inner_scope_overrides_the_fields_it_sets():
    assert merge_device("/job:ps/task:0", "/device:GPU:1") == "/job:ps/task:0/device:GPU:1"
    assert merge_device("/job:ps/task:0/device:GPU:1", "/task:2") == ("/job:ps/task:2/device:GPU:1")
    with tf.device("/job:worker"), tf.device(DeviceSpec(device_type="CPU", device_index=1)):
        c = tf.constant(1.0)
    assert c.device == "/job:worker/device:CPU:1"


def test_device_function_decides_per_op():
    def by_type(op):
        return "/cpu:1" if op.type == "Const" else "/cpu:0"

    with tf.device(by_type):
        a = tf.constant(1.0)
        b = a + 1.0
    assert a.device.endswith("CPU:1") and b.device.endswith("CPU:0")


def test_config_device_count_gives_several_cpu_devices():
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 4})) as sess:
        names = [d.name for d in sess.list_devices()]
    assert names[:4] == [f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(4)]
    assert all(d.device_type == "CPU" for d in local_devices({"CPU": 2, "GPU": 0}))


def test_cpu_device_allocates_and_copies_through_host_memory():
    device = Device("/job:localhost/replica:0/task:0/device:CPU:0")
    buf = device.allocate((2, 3), np.float32)
    assert buf.shape == (2, 3) and buf.dtype == np.float32
    value = np.arange(3.0)
    other = Device("/job:localhost/replica:0/task:0/device:CPU:1")
    assert other.copy_from(value, device) is value  # host devices share memory
    assert device.to_host(value) is value and device.memory_bytes(value) == 24


def test_gpu_availability_is_a_plain_boolean():
    assert tf.test.is_gpu_available() in (True, False)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_a_session_keeps_freed_host_buffers_for_the_next_step():
    import resource

    tf.Session().close()  # a session asks malloc to keep freed buffers

    def page_faults_of_a_step() -> int:
        """Faults of allocating, touching and freeing 80 MB in three buffers, like a step."""
        before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
        buffers = [np.ones(mb << 18, np.float32) for mb in (16, 24, 40)]
        del buffers
        return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before

    page_faults_of_a_step()  # the first step grows the heap
    # The next reuses it; glibc's defaults map the 40 MB buffer afresh and trim the heap.
    assert page_faults_of_a_step() <= 2
