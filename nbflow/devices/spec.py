"""Device names as TensorFlow writes them: ``/job:worker/replica:0/task:3/device:GPU:1``.

A ``DeviceSpec`` may be partial ("any GPU", "any device of /job:ps/task:0"); merging fills the
fields a spec leaves open from another, as nested ``tf.device`` scopes do.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class DeviceSpec:
    """A possibly partial device specification.

    >>> DeviceSpec.from_string("/job:ps/task:1/gpu:0").to_string()
    '/job:ps/task:1/device:GPU:0'
    """

    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None

    @classmethod
    def from_string(cls, spec: str | DeviceSpec | None) -> DeviceSpec:
        if isinstance(spec, DeviceSpec):
            return spec
        fields: dict[str, Any] = {}
        for part in (spec or "").strip("/").split("/"):
            if not part:
                continue
            key, _, value = part.partition(":")
            lowered = key.lower()
            if lowered in ("job", "replica", "task") and value:
                fields[lowered] = value if lowered == "job" else int(value)
            elif lowered == "device":
                kind, _, index = value.partition(":")
                fields["device_type"] = kind.upper() if kind and kind != "*" else None
                fields["device_index"] = int(index) if index and index != "*" else None
            elif lowered in ("cpu", "gpu") or (key.isupper() and value):
                fields["device_type"] = key.upper()
                fields["device_index"] = int(value) if value and value != "*" else None
            else:
                raise ValueError(f"Unknown attribute '{part}' in device specification '{spec}'")
        return cls(**fields)

    def to_string(self) -> str:
        out = ""
        if self.job is not None:
            out += f"/job:{self.job}"
        if self.replica is not None:
            out += f"/replica:{self.replica}"
        if self.task is not None:
            out += f"/task:{self.task}"
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            out += f"/device:{self.device_type}:{index}"
        return out

    def __str__(self) -> str:
        return self.to_string()

    def make_merged_spec(self, other: DeviceSpec | str) -> DeviceSpec:
        """This spec with fields that ``other`` sets overriding ours."""
        other = DeviceSpec.from_string(other)
        return replace(
            self,
            **{
                f: getattr(other, f)
                for f in ("job", "replica", "task", "device_type", "device_index")
                if getattr(other, f) is not None
            },
        )

    def merge_from(self, other: DeviceSpec | str) -> DeviceSpec:
        return self.make_merged_spec(other)

    @classmethod
    def parse_from_string(cls, spec: str) -> DeviceSpec:
        return cls.from_string(spec)

    def replace(self, **fields: Any) -> DeviceSpec:
        """This spec with some fields replaced (None clears a field)."""
        return replace(self, **fields)

    @property
    def is_empty(self) -> bool:
        return all(
            getattr(self, f) is None
            for f in ("job", "replica", "task", "device_type", "device_index")
        )

    def is_compatible_with(self, other: DeviceSpec | str) -> bool:
        other = DeviceSpec.from_string(other)
        for f in ("job", "replica", "task", "device_type", "device_index"):
            a, b = getattr(self, f), getattr(other, f)
            if a is not None and b is not None and a != b:
                return False
        return True


def canonical_name(spec: str | DeviceSpec | None) -> str:
    return DeviceSpec.from_string(spec).to_string()


def merge_device(outer: str, inner: str | DeviceSpec | None) -> str:
    """The device string of an op created in ``tf.device(inner)`` nested in ``outer``."""
    if inner is None:
        return outer
    return DeviceSpec.from_string(outer).make_merged_spec(inner).to_string()
