"""The data plane: tensors between tasks as raw frames on connections Dask opened (TLS here)."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading

import numpy as np
import pytest
from tornado.iostream import IOStream

import nbflow as tf
from nbflow.distributed import shared_ring
from nbflow.distributed.wire import PREFIX, is_raw, read_tensor, tensor_frames


def _through_a_socket(writes: list[list], reads: int) -> list:
    """Write frame lists on one end of a real socket pair, read ``reads`` tensors at the other."""

    async def go() -> list:
        a, b = socket.socketpair()
        sender, receiver = IOStream(a), IOStream(b)
        for frames in writes:
            for frame in frames:
                sender.write(frame)
        got = [await read_tensor(receiver) for _ in range(reads)]
        sender.close()
        receiver.close()
        return got

    return asyncio.run(go())


def test_tensors_come_back_with_dtype_shape_scalar_kind_and_key():
    rng = np.random.default_rng(0)
    values = [
        rng.normal(size=(300, 100)).astype(np.float32),  # header and the buffer itself
        np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::2],  # not contiguous
        np.array(7, np.int32),  # rank 0
        np.float64(2.5),  # a NumPy scalar stays a scalar
        np.zeros((0, 3), bool),
        (np.arange(4) + 1j).astype(np.complex64),
        None,  # a control edge's Send
    ]
    assert all(is_raw(v) for v in values)
    assert not is_raw(np.array([b"a"])) and not is_raw(np.zeros(2, ">f4"))
    writes = [tensor_frames("/job:ps/task:0", 7 + i, f"key{i}", v) for i, v in enumerate(values)]
    assert len(writes[0]) == 2 and len(writes[1]) == 1  # big: the buffer goes as it is
    got = _through_a_socket(writes, len(values))
    for i, (value, (task, step_id, key, back)) in enumerate(zip(values, got)):
        assert (task, step_id, key) == ("/job:ps/task:0", 7 + i, f"key{i}")
        assert type(back) is type(value) and getattr(back, "dtype", None) == getattr(
            value, "dtype", None
        )
        np.testing.assert_array_equal(back, value)
    assert got[0][3].flags.writeable  # a fresh array the receiver owns


def test_a_header_naming_a_non_numeric_dtype_is_refused():
    frames = tensor_frames("/job:ps/task:0", 1, "k", np.zeros(2, np.float32))
    head = frames[0]
    header_size, nbytes = PREFIX.unpack(head[: PREFIX.size])
    header = head[PREFIX.size : PREFIX.size + header_size].replace(b"<f4", b"|O8")
    with pytest.raises(ValueError, match="not numeric"):
        _through_a_socket([[PREFIX.pack(len(header), nbytes) + header + b"\0" * nbytes]], 1)


def _data_planes(dask_worker) -> dict[str, str]:
    """A worker's data-plane connections: peer address -> the kind of connection (and whether
    it has a shared ring for large payloads)."""
    return {
        a: type(c).__name__ + (" with a ring" if getattr(c.stream, "ring", None) else "")
        for a, c in dask_worker._nbflow_host._plane_comms.items()
    }


def _use_local_planes(dask_worker, on: bool) -> None:
    """Switch a worker's data plane between Unix sockets and Dask's connections, closing the
    connections it has (the next tensor opens one of the chosen kind)."""
    host = dask_worker._nbflow_host
    type(host).local_plane = on
    for address, comm in list(host._plane_comms.items()):
        host._drop_plane(address, comm)


def _train_across_tasks(cluster, name: str) -> None:
    """Three steps of a 480 KB weight on ps/task:0 trained from worker/task:1, checked
    against NumPy: the weights and the gradients cross the data plane each step."""
    rng = np.random.default_rng(1)
    w0 = rng.normal(size=(400, 300)).astype(np.float32)  # 480 KB: a variable's buffer, no copy
    xs = rng.normal(size=(8, 400)).astype(np.float32) / 20
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(w0, name=name)
    with tf.device("/job:worker/task:1"):
        x = tf.placeholder(tf.float32, [8, 400])
        y = tf.matmul(x, w)
        loss = 0.5 * tf.reduce_sum(tf.square(y))  # its gradient x^T y needs the weights sent
    with tf.device("/job:ps/task:0"):
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session(cluster.target) as sess:
        sess.run(w.initializer)
        got = [sess.run([y, train], {x: xs})[0] for _ in range(3)]
        w_last = sess.run(w)
    weights = w0.astype(np.float64)
    for y_got in got:
        y_want = xs @ weights
        np.testing.assert_allclose(y_got, y_want, rtol=1e-4, atol=1e-4)
        weights = weights - 0.5 * xs.T @ y_want
    np.testing.assert_allclose(w_last, weights, rtol=1e-4, atol=1e-4)


def test_weights_and_gradients_cross_tasks_on_unix_sockets_between_local_workers(cluster):
    _train_across_tasks(cluster, "plane_w")
    planes = {a: kind for found in cluster.client.run(_data_planes).values() for a, kind in
              found.items()}  # fmt: skip
    assert len(planes) >= 2 and all(a.startswith("tls://") for a in planes)  # both ways
    ring = " with a ring" if shared_ring.available() else ""
    assert set(planes.values()) == {"LocalPlane" + ring}, planes


def test_without_unix_sockets_steps_and_tensors_stay_on_dask_tls_connections(cluster):
    """Workers that offer no Unix socket (as on another machine): the client's step messages
    and the tasks' tensors go on Dask's TLS connections. The steps run on a thread of their
    own, whose connections (``Channels``, per thread) start afresh."""
    cluster.client.run(_use_local_planes, on=False)
    seen: dict = {}

    def steps() -> None:
        try:
            _train_across_tasks(cluster, "plane_w_tls")
            state = cluster.channels._state()
            seen.update(local=dict(state.local), free=dict(state.free))
        except BaseException as exc:  # noqa: BLE001 - raised in the test's thread
            seen["error"] = exc

    try:
        thread = threading.Thread(target=steps)
        thread.start()
        thread.join(120)
        assert not thread.is_alive()
        if "error" in seen:
            raise seen["error"]
        planes = {a: kind for found in cluster.client.run(_data_planes).values() for a, kind in
                  found.items()}  # fmt: skip
        assert len(planes) >= 2 and set(planes.values()) == {"TLS"}, planes
        assert seen["local"] and not any(seen["local"].values())  # asked, none offered
        assert all(type(c).__name__ == "TLS" for cs in seen["free"].values() for c in cs)
    finally:
        cluster.client.run(_use_local_planes, on=True)


def _loop_driven(dask_worker) -> dict[str, bool]:
    host = dask_worker._nbflow_host
    return {
        f"{task} {handle}": registered.loop_drivers is not None
        for task, server in host.tasks.items()
        for handle, registered in server.graphs.items()
    }


def test_a_backward_pass_with_independent_matmuls_is_driven_on_the_message_loop(cluster):
    rng = np.random.default_rng(2)
    w1_0 = rng.normal(size=(20, 16)).astype(np.float32) / 4
    w2_0 = rng.normal(size=(16, 4)).astype(np.float32) / 4
    xs = rng.normal(size=(8, 20)).astype(np.float32)
    with tf.device("/job:ps/task:1"):
        w1, w2 = tf.Variable(w1_0, name="loop_w1"), tf.Variable(w2_0, name="loop_w2")
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32, [8, 20])
        h = tf.nn.relu(tf.matmul(x, w1))
        loss = 0.5 * tf.reduce_sum(tf.square(tf.matmul(h, w2)))  # d/dh and d/dw2: independent
        grads = tf.gradients(loss, [w1, w2])
    with tf.device("/job:ps/task:1"):
        train = tf.train.GradientDescentOptimizer(0.1).apply_gradients(zip(grads, [w1, w2]))
    with tf.Session(cluster.target) as sess:
        sess.run([w1.initializer, w2.initializer])
        for _ in range(2):
            sess.run(train, {x: xs})
        got1, got2 = sess.run([w1, w2])
    a, b = w1_0.astype(np.float64), w2_0.astype(np.float64)
    for _ in range(2):
        pre = xs @ a
        hidden = np.maximum(pre, 0)
        dy = hidden @ b
        da = xs.T @ ((dy @ b.T) * (pre > 0))
        a, b = a - 0.1 * da, b - 0.1 * hidden.T @ dy
    np.testing.assert_allclose(got1, a, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got2, b, rtol=1e-4, atol=1e-5)
    driven = {}
    for found in cluster.client.run(_loop_driven).values():
        driven.update(found)
    assert driven and all(driven.values()), driven


def _where_a_step_sized_array_lives() -> tuple[str, str]:
    """In a worker process: Dask's MALLOC_TRIM_THRESHOLD_ setting, and whether a fresh 1 MiB
    array (a step's tensor) lies in the process's heap or in a mapping of its own."""
    import os

    array = np.empty(1 << 18, np.float32)  # held while the maps are read
    data = array.ctypes.data
    with open("/proc/self/maps") as maps:
        for line in maps:
            low, high = (int(a, 16) for a in line.split()[0].split("-"))
            if low <= data < high:
                place = "heap" if line.rstrip().endswith("[heap]") else "mapping"
                break
        else:
            place = "unknown"
    del array
    return os.environ.get("MALLOC_TRIM_THRESHOLD_", ""), place


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_a_task_process_serves_step_sized_arrays_from_its_heap(cluster):
    """Dask starts workers with MALLOC_TRIM_THRESHOLD_ set, which leaves glibc mapping every
    array over 128 KiB afresh; the nbflow plugin raises the thresholds (devices.device.retain_freed_host_memory)."""
    found = cluster.client.run(_where_a_step_sized_array_lives)
    for trim, place in found.values():
        assert trim == "65536"  # Dask's setting is there...
        assert place == "heap"  # ...yet a step's 1 MiB tensor is not a fresh mapping


def test_a_large_feed_goes_to_a_local_task_on_the_clients_unix_socket(cluster):
    """A training batch (and a strided and an int64 one) reaches the task as raw frames beside
    the run message; a small feed and a string feed still travel inside it."""
    rng = np.random.default_rng(3)
    batch = rng.normal(size=(100, 784)).astype(np.float32)  # 313 KB: Figure 1's batch
    ids = rng.integers(0, 1 << 40, size=(128, 128))  # int64, 128 KB
    wide = rng.normal(size=(300, 600)).astype(np.float32)[:, ::2]  # not contiguous
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32, [100, 784])
        i = tf.placeholder(tf.int64, [128, 128])
        v = tf.placeholder(tf.float32, [300, 300])
        s = tf.placeholder(tf.float32, [3])
        name = tf.placeholder(tf.string, [])
        out = [
            tf.reduce_sum(x, 0),
            tf.reduce_max(i),
            tf.matmul(v, v)[:2, :2],
            s * 2,
            tf.strings.length(name),
        ]
    with tf.Session(cluster.target) as sess:
        for step in range(3):
            got = sess.run(out, {x: batch + step, i: ids, v: wide, s: [1, 2, 3], name: "abcd"})
            np.testing.assert_allclose(got[0], (batch + step).sum(0), rtol=1e-4, atol=1e-3)
            assert got[1] == ids.max()
            np.testing.assert_allclose(got[2], (wide @ wide)[:2, :2], rtol=1e-4, atol=1e-3)
            np.testing.assert_array_equal(got[3], [2, 4, 6])
            assert got[4] == 4
    (address,) = {a for task, a in cluster.routes().items() if task.startswith("/job:worker")
                  and task.endswith("task:0")}  # fmt: skip
    state = cluster.channels._state()  # this thread's connections
    plane = state.planes.get(address)
    assert type(plane).__name__ == "LocalPlane" and not plane.closed()
    if shared_ring.available():  # the batches went in its shared ring
        assert plane.stream.ring.produced >= 3 * (batch.nbytes + wide.nbytes // 2)
    assert state.local[address] and state.free_local[address]  # the step messages, too


def test_a_step_failing_elsewhere_while_a_task_waits_for_its_socket_feed_fails_cleanly(cluster):
    """The worker task waits for its batch on the socket; the ps task fails at once. The step
    raises the ps task's error (not a hang), and the session goes on."""
    batch = np.ones((100, 784), np.float32)
    with tf.device("/job:worker/task:1"):
        x = tf.placeholder(tf.float32, [100, 784])
        total = tf.reduce_sum(x)
    with tf.device("/job:ps/task:1"):
        bad = tf.placeholder(tf.float32, [])
        checked = tf.debugging.check_numerics(bad, "bad value")
    with tf.Session(cluster.target) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad value"):
            sess.run([total, checked], {x: batch, bad: np.nan})
        got = sess.run([total, checked], {x: batch * 2, bad: 1.0})
    assert got == [2.0 * 100 * 784, 1.0]
