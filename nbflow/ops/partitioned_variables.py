"""Partitioned variables: one logical variable stored as shards (OSDI §4.2).

A partitioner is a function ``(shape, dtype) -> partitions``: how many pieces each axis of a
variable is cut into (only one axis may be cut). ``get_variable(name, shape, partitioner=...)``
then makes one ``Variable`` per piece, named ``name/part_0``, ``name/part_1``..., each holding
a contiguous slice along the cut axis (the first ``size % n`` shards one row longer), and
returns a ``PartitionedVariable``: a list of its shards. Each shard is a separate variable op,
so ``replica_device_setter`` puts the shards on different parameter-server tasks, and
``embedding_lookup`` over the shards gathers next to each one.

>>> fixed_size_partitioner(3)([10, 4], None)
[3, 1]
>>> min_max_variable_partitioner(max_partitions=4, min_slice_size=64)([10, 4], _float32())
[2, 1]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.tensor_shape import TensorShape, as_shape
from nbflow.ops.variables import Variable
from nbflow.ops import array_ops, control_flow_ops, state_ops
import inspect

Partitioner = Callable[..., list[int]]


def _float32() -> dtypes.DType:
    return dtypes.float32


# --- partitioners -----------------------------------------------------------------------------
def fixed_size_partitioner(num_shards: int, axis: int = 0) -> Partitioner:
    """Cut ``axis`` into ``num_shards`` pieces (fewer when the axis is shorter)."""
    if num_shards < 1:
        raise ValueError(f"num_shards must be positive, got {num_shards}")

    def _partitioner(shape: Any, dtype: Any = None) -> list[int]:
        dims: list[Any] = as_shape(shape).as_list()  # partitioners get full shapes
        partitions = [1] * len(dims)
        partitions[axis] = min(num_shards, dims[axis]) if dims[axis] else num_shards
        return partitions

    return _partitioner


def _element_bytes(dtype: Any, bytes_per_string_element: int) -> int:
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype is dtypes.string:
        return bytes_per_string_element
    return int(np.dtype(dtype.np).itemsize)


def variable_axis_size_partitioner(
    max_shard_bytes: int,
    axis: int = 0,
    bytes_per_string_element: int = 16,
    max_shards: int | None = None,
) -> Partitioner:
    """Cut ``axis`` into as few pieces as keep each shard under ``max_shard_bytes``."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive.")
    if max_shards is not None and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape: Any, dtype: Any) -> list[int]:
        dims: list[Any] = as_shape(shape).as_list()  # partitioners get full shapes
        element = _element_bytes(dtype, bytes_per_string_element)
        slice_bytes = element * math.prod(d for i, d in enumerate(dims) if i != axis)
        slices_per_shard = max(1, max_shard_bytes // max(slice_bytes, 1))
        shards = int(math.ceil(dims[axis] / slices_per_shard))
        if max_shards is not None:
            shards = min(shards, max_shards)
        partitions = [1] * len(dims)
        partitions[axis] = max(1, min(shards, dims[axis]))
        return partitions

    return _partitioner


def min_max_variable_partitioner(
    max_partitions: int = 1,
    axis: int = 0,
    min_slice_size: int = 256 << 10,
    bytes_per_string_element: int = 16,
) -> Partitioner:
    """As many pieces as keep each at least ``min_slice_size`` bytes, at most
    ``max_partitions``."""

    def _partitioner(shape: Any, dtype: Any) -> list[int]:
        dims: list[Any] = as_shape(shape).as_list()  # partitioners get full shapes
        element = _element_bytes(dtype, bytes_per_string_element)
        total = element * math.prod(dims)
        shards = max(1, min(max_partitions, dims[axis], total // max(min_slice_size, 1)))
        partitions = [1] * len(dims)
        partitions[axis] = int(shards)
        return partitions

    return _partitioner


# --- the partitioned variable -----------------------------------------------------------------
@dataclass(frozen=True)
class PartitionInfo:
    """Where a shard sits in its full variable (what initializers get as ``partition_info``)."""

    full_shape: list[int]
    var_offset: list[int]

    def spec(self, shape: list[int]) -> str:
        """TensorFlow's slice spec of a shard of this ``shape`` here: ``"10 4 0,4:0,4"`` (full
        shape, then ``start,length`` per axis), how checkpoints name a saved slice."""
        extents = ":".join(f"{o},{n}" for o, n in zip(self.var_offset, shape))
        return " ".join(str(d) for d in self.full_shape) + " " + extents

    def single_offset(self, shape: list[int]) -> int:
        return self.var_offset[self.single_slice_dim(shape)]

    def single_slice_dim(self, shape: list[int]) -> int:
        cut = [i for i, (a, b) in enumerate(zip(shape, self.full_shape)) if a != b]
        return cut[0] if cut else 0


def shard_sizes(size: int, num_shards: int) -> list[int]:
    """Sizes of ``num_shards`` contiguous pieces of ``size``: the first ``size % n`` longer."""
    base, extra = divmod(size, num_shards)
    return [base + (1 if i < extra else 0) for i in range(num_shards)]


class PartitionedVariable:
    """A variable stored as shards along one axis; iterate it for the shard ``Variable``s."""

    def __init__(
        self,
        name: str,
        shape: Any,
        dtype: Any,
        variable_list: list[Variable],
        partitions: list[int],
    ):
        self._name = name
        self._shape = as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._variable_list = list(variable_list)
        self._partitions = list(partitions)
        self._as_tensor: ops_lib.Tensor | None = None

    def __iter__(self) -> Iterator[Variable]:
        return iter(self._variable_list)

    def __len__(self) -> int:
        return len(self._variable_list)

    def __getitem__(self, i: int) -> Variable:
        return self._variable_list[i]

    def __repr__(self) -> str:
        return f"<PartitionedVariable {self._name} shape={self._shape} shards={len(self)}>"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    @property
    def graph(self) -> ops_lib.Graph:
        return self._variable_list[0].graph

    @property
    def op(self) -> ops_lib.Operation:
        """The first shard's op (for colocation of whole-variable reads)."""
        return self._variable_list[0].op

    def _get_variable_list(self) -> list[Variable]:
        return list(self._variable_list)

    def _get_partitions(self) -> list[int]:
        return list(self._partitions)

    @property
    def _axis(self) -> int:
        return next((i for i, p in enumerate(self._partitions) if p > 1), 0)

    def as_tensor(self) -> ops_lib.Tensor:
        """The whole variable: the shards concatenated along the cut axis (one op per graph)."""
        if self._as_tensor is None or self._as_tensor.graph is not ops_lib.get_default_graph():
            with ops_lib.name_scope(None), ops_lib.name_scope(self._name + "/"):
                if len(self._variable_list) == 1:
                    value = array_ops.identity(self._variable_list[0], name="read")
                else:
                    value = array_ops.concat(
                        self._variable_list, self._axis, name="ConcatPartitions"
                    )
            self._as_tensor = value
        return self._as_tensor

    def assign(self, value: Any, use_locking: bool = False, name: str | None = None) -> Any:
        """Assign a full value: each shard gets its slice."""
        value = ops_lib.convert_to_tensor(value, dtype=self._dtype)
        axis = self._axis
        sizes = [v.shape[axis] for v in self._variable_list]
        pieces = array_ops.split(value, sizes, axis=axis) if len(sizes) > 1 else [value]
        return control_flow_ops.group(
            *(state_ops.assign(v, p, use_locking=use_locking) for v, p in zip(self, pieces)),
            name=name or "assign",
        )


def _to_tensor(value: PartitionedVariable, dtype: Any = None, name: str | None = None) -> Any:
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(
            f"Incompatible type conversion requested to type {dtypes.as_dtype(dtype).name} for "
            f"partitioned variable {value.name} of type {value.dtype.name}"
        )
    return value.as_tensor()


ops_lib.register_tensor_conversion_function(PartitionedVariable, _to_tensor)


def create_partitioned_variables(
    name: str,
    shape: TensorShape,
    dtype: dtypes.DType,
    partitions: list[int],
    make_shard: Callable[[str, list[int], Any], Variable],
    initializer: Any = None,
) -> PartitionedVariable:
    """Shards ``name/part_i`` of ``shape`` cut as ``partitions`` (one axis), each made by
    ``make_shard(shard_name, shard_shape, shard_initializer)``."""
    if not shape.is_fully_defined():
        raise ValueError(f"Partitioned variable {name} needs a fully defined shape, got {shape}")
    dims: list[Any] = shape.as_list()  # ints: the shape is fully defined (checked above)
    if len(partitions) != len(dims):
        raise ValueError(
            f"Partitioner returned {partitions} for variable {name} of rank {len(dims)}: need "
            "one entry per dimension"
        )
    cut = [i for i, p in enumerate(partitions) if p > 1]
    if len(cut) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: {name} {partitions}")
    axis = cut[0] if cut else 0
    num = partitions[axis] if cut else 1
    if num > max(dims[axis], 1):
        raise ValueError(f"Partitioner asks for {num} shards of {name} with {dims[axis]} rows")
    full_value = None
    if initializer is not None and not callable(initializer):
        if isinstance(initializer, ops_lib.Tensor):
            raise ValueError(
                f"A Tensor initializer cannot initialize partitioned variable {name}; pass a "
                "NumPy value or an initializer"
            )
        full_value = np.asarray(initializer, dtype=dtype.np)
        if full_value.shape != tuple(dims):
            full_value = np.broadcast_to(full_value, dims)
    shards = []
    offset = 0
    for i, size in enumerate(shard_sizes(dims[axis], num)):
        shard_shape = list(dims)
        shard_shape[axis] = size
        var_offset = [0] * len(dims)
        var_offset[axis] = offset
        info = PartitionInfo(list(dims), var_offset)
        if full_value is not None:
            index = [slice(None)] * len(dims)
            index[axis] = slice(offset, offset + size)
            shard_init: Any = np.ascontiguousarray(full_value[tuple(index)])
        elif initializer is None:
            shard_init = None
        else:
            shard_init = _bind_partition(initializer, info)
        shard = make_shard(f"{name}/part_{i}", shard_shape, shard_init)
        shard._save_slice_info = (name, info.spec(shard_shape))  # saved as a slice of ``name``
        shards.append(shard)
        offset += size
    return PartitionedVariable(name, shape, dtype, shards, partitions)


def _bind_partition(initializer: Any, info: PartitionInfo) -> Any:
    """The initializer, called with this shard's ``partition_info``."""
    if inspect.isclass(initializer):
        initializer = initializer()

    def shard_initializer(shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return initializer(shape, dtype=dtype, partition_info=info)

    return shard_initializer
