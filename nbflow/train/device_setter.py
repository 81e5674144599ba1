"""``tf.train.replica_device_setter``: variables on parameter-server tasks, the rest on the
worker (OSDI §4.2, whitepaper §7).

The setter is a device function for ``tf.device``: an op whose type stores state (``ps_ops``,
by default the variable ops) goes to a ps task chosen by ``ps_strategy``; every other op to
``worker_device``. A device the op already asked for keeps the fields it set. Strategies:

- round-robin (the default): the k-th variable on ps task ``k % num_tasks``;
- ``GreedyLoadBalancingStrategy``: each variable on the ps task with the least bytes so far
  (``byte_size_load_fn`` sizes a variable from its static shape and dtype).

>>> setter = replica_device_setter(ps_tasks=2)
>>> setter.__name__
'replica_device_setter'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbflow.devices.spec import DeviceSpec
from nbflow.train.server_lib import ClusterSpec

STANDARD_PS_OPS = (
    "Variable",
    "VariableV2",
    "AutoReloadVariable",
    "VarHandleOp",
    "MutableHashTable",
    "MutableHashTableV2",
    "MutableHashTableOfTensors",
    "MutableDenseHashTable",
)


class _RoundRobinStrategy:
    """Assigns ps tasks in turn."""

    def __init__(self, num_tasks: int):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, op: Any) -> int:
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


def byte_size_load_fn(op: Any) -> int:
    """Bytes of the variable ``op`` creates (0 when its shape is not fully known)."""
    shape = op.get_attr("shape") if "shape" in op.attrs else None
    if shape is None and op.outputs:
        shape = op.outputs[0].shape
    if shape is None or not shape.is_fully_defined():
        return 0
    dtype = op.get_attr("dtype") if "dtype" in op.attrs else op.outputs[0].dtype
    size = getattr(dtype.base_dtype, "size", 4) or 4
    n = 1
    for d in shape.as_list():
        n *= d
    return n * size


class GreedyLoadBalancingStrategy:
    """Puts each variable on the ps task with the least load (bytes by default)."""

    def __init__(self, num_tasks: int, load_fn: Callable[[Any], float] = byte_size_load_fn):
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = [0.0] * num_tasks

    def __call__(self, op: Any) -> int:
        task = min(range(self._num_tasks), key=lambda i: (self._ps_loads[i], i))
        self._ps_loads[task] += self._load_fn(op)
        return task


class _ReplicaDeviceChooser:
    def __init__(
        self,
        ps_tasks: int,
        ps_device: str,
        worker_device: str,
        merge_devices: bool,
        ps_ops: tuple[str, ...],
        ps_strategy: Callable[[Any], int],
    ):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = ps_ops
        self._ps_strategy = ps_strategy

    def device_function(self, op: Any) -> str:
        current = DeviceSpec.from_string(op.device or "")
        if not self._merge_devices and op.device:
            return op.device
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps = DeviceSpec.from_string(self._ps_device)
            if ps.job is not None and (current.job is None or current.job == ps.job):
                ps = ps.replace(task=self._ps_strategy(op))
            return ps.make_merged_spec(current).to_string()
        worker = DeviceSpec.from_string(self._worker_device or "")
        return worker.make_merged_spec(current).to_string()


def replica_device_setter(
    ps_tasks: int = 0,
    ps_device: str = "/job:ps",
    worker_device: str = "/job:worker",
    merge_devices: bool = True,
    cluster: Any = None,
    ps_ops: Any = None,
    ps_strategy: Callable[[Any], int] | None = None,
) -> Callable[[Any], str] | None:
    """A device function placing variables on ps tasks and other ops on ``worker_device``."""
    if cluster is not None:
        spec = ClusterSpec(cluster)
        ps_job = DeviceSpec.from_string(ps_device).job or "ps"
        ps_tasks = spec.num_tasks(ps_job) if ps_job in spec.jobs else 0
    if ps_tasks == 0:
        return None
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(
        ps_tasks,
        ps_device,
        worker_device,
        merge_devices,
        tuple(ps_ops or STANDARD_PS_OPS),
        ps_strategy,
    )

    def device_function(op: Any) -> str:
        return chooser.device_function(op)

    device_function.__name__ = "replica_device_setter"
    return device_function
