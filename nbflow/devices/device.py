"""A device: where kernels run. It names itself, exposes its array module ``xp`` (NumPy for
CPU, CuPy for GPU), holds its resources, and copies buffers to and from host memory."""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.devices.spec import DeviceSpec
from nbflow.framework.resources import ResourceManager


class Device:
    """One device of a task, e.g. ``/job:localhost/replica:0/task:0/device:CPU:0``."""

    def __init__(self, name: str, xp: Any = np, resources: ResourceManager | None = None):
        self.spec = DeviceSpec.from_string(name)
        self.name = self.spec.to_string()
        self.device_type = self.spec.device_type or "CPU"
        self.xp = xp
        self.resources = resources if resources is not None else ResourceManager()

    def to_host(self, value: Any) -> Any:
        """A host (NumPy) copy of a value that lives on this device."""
        return value

    def from_host(self, value: Any) -> Any:
        """A copy of a host value on this device."""
        return value

    def __repr__(self) -> str:
        return f"<Device {self.name}>"


def local_cpu_devices(count: int = 1, job: str = "localhost", task: int = 0) -> list[Device]:
    return [Device(f"/job:{job}/replica:0/task:{task}/device:CPU:{i}") for i in range(count)]
