"""Checkpoint I/O as graph operations (OSDI §4.3): SaveV2 writes tensors, RestoreV2 reads them.

The on-disk format is a directory per checkpoint, readable with NumPy alone:

    model.ckpt-100/
        index.json            {"format": "nbflow.checkpoint", "version": 1,
                               "tensors": {"dense/w": {"file": "dense/w.npy",
                                                       "dtype": "float32", "shape": [3, 4]}}}
        dense/w.npy           one standard .npy file per tensor (strings live in index.json)

A save is atomic. ``CheckpointTempPrefix`` names a fresh temporary directory beside the target;
each ``SaveV2`` (one per device when sharded) writes its tensors there, fsyncs them and records a
shard index; ``MergeV2Checkpoints`` runs after all shards, writes ``index.json``, fsyncs, and
renames the directory to its final name. A kill at any moment leaves either the previous
directory or the complete new one, never a half-written checkpoint under the final name.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from collections.abc import Sequence

import numpy as np

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.graph_def import decode_array, encode_array
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, TensorSpec
from nbflow.framework.tensor_shape import TensorShape

FORMAT = "nbflow.checkpoint"
INDEX = "index.json"
_TEMP_MARK = "_temp_"
_MMAP_BYTES = 1 << 20  # tensors at least this large restore through a memory map
_pool: ThreadPoolExecutor | None = None


def _io_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="nbflow-ckpt-io")
    return _pool


# --- the format -----------------------------------------------------------------------------
def _as_str(value: Any) -> str:
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _file_name(name: str, taken: set[str]) -> str:
    """A relative .npy path for a tensor name: its scopes become folders; unsafe chars '_'."""
    parts = [re.sub(r"[^A-Za-z0-9_.\-]", "_", p) or "_" for p in name.split("/")]
    parts = [p if p not in (".", "..") else p.replace(".", "_") for p in parts]
    base = "/".join(parts)
    path, k = f"{base}.npy", 1
    while path.lower() in taken:
        path, k = f"{base}_{k}.npy", k + 1
    taken.add(path.lower())
    return path


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_npy(path: str, array: np.ndarray, sync: bool) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        np.lib.format.write_array(f, array, allow_pickle=False)
        f.flush()
        if sync:
            os.fsync(f.fileno())


def write_shard(
    directory: str, names: Sequence[str], arrays: Sequence[Any], shard: int, sync: bool = True
) -> dict[str, Any]:
    """Write one shard's tensors into ``directory`` and its shard index; returns the entries."""
    os.makedirs(directory, exist_ok=True)
    folder = "" if shard < 0 else f"shard-{shard:05d}/"
    taken: set[str] = set()
    entries: dict[str, Any] = {}
    jobs = []
    for name, value in zip(names, arrays):
        value = np.asarray(value) if not hasattr(value, "get") else value.get()  # CuPy -> host
        dtype = dtypes.as_dtype(value.dtype)
        entry: dict[str, Any] = {"dtype": dtype.name, "shape": list(value.shape)}
        if dtype is dtypes.string:
            entry["value"] = encode_array(value)
        else:
            entry["file"] = folder + _file_name(name, taken)
            stored = value.view(np.uint16) if dtype is dtypes.bfloat16 else value
            jobs.append((os.path.join(directory, entry["file"]), stored))
        entries[name] = entry
    if len(jobs) > 1:
        futures = [_io_pool().submit(_write_npy, p, a, sync) for p, a in jobs]
        for future in futures:
            future.result()
    for p, a in jobs if len(jobs) == 1 else ():
        _write_npy(p, a, sync)
    shard_index = os.path.join(directory, f"shard-{max(shard, 0):05d}.json")
    with open(shard_index, "w") as f:
        json.dump(entries, f)
        f.flush()
        if sync:
            os.fsync(f.fileno())
    return entries


def commit_checkpoint(temp_dir: str, prefix: str, num_shards: int, sync: bool = True) -> None:
    """Merge the shard indices of ``temp_dir`` into index.json and rename it to ``prefix``."""
    tensors: dict[str, Any] = {}
    for shard in range(num_shards):
        path = os.path.join(temp_dir, f"shard-{shard:05d}.json")
        try:
            with open(path) as f:
                part = json.load(f)
        except FileNotFoundError:
            raise errors.NotFoundError(
                None, None, f"Checkpoint shard {shard} of {num_shards} missing in {temp_dir}"
            ) from None
        duplicate = set(part) & set(tensors)
        if duplicate:
            raise errors.InvalidArgumentError(
                None, None, f"Tensors saved by two shards of {prefix}: {sorted(duplicate)}"
            )
        tensors.update(part)
        os.remove(path)
    index = {"format": FORMAT, "version": 1, "num_shards": num_shards, "tensors": tensors}
    with open(os.path.join(temp_dir, INDEX), "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
        f.flush()
        if sync:
            os.fsync(f.fileno())
    if sync:
        for root, _, _ in os.walk(temp_dir):
            _fsync_dir(root)
    parent = os.path.dirname(os.path.abspath(prefix))
    old = None
    if os.path.lexists(prefix):  # re-saving the same step: move the old one aside first
        old = f"{prefix}.old-{uuid.uuid4().hex[:8]}"
        os.rename(prefix, old)
    os.rename(temp_dir, prefix)
    if sync:
        _fsync_dir(parent)
    if old is not None:
        remove_path(old)


def remove_path(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def is_checkpoint(prefix: str) -> bool:
    """Whether ``prefix`` names a complete checkpoint (its index was committed)."""
    return os.path.isfile(os.path.join(prefix, INDEX))


def read_index(prefix: str) -> dict[str, Any]:
    """The tensors of a checkpoint: name -> {"dtype", "shape", "file" or "value"}."""
    try:
        with open(os.path.join(prefix, INDEX)) as f:
            index = json.load(f)
    except FileNotFoundError:
        raise errors.NotFoundError(
            None,
            None,
            f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files for "
            f"{prefix} (no checkpoint directory with an {INDEX} there)",
        ) from None
    if index.get("format") != FORMAT:
        raise errors.DataLossError(None, None, f"{prefix}/{INDEX} is not an nbflow checkpoint")
    return index["tensors"]


def load_tensor(prefix: str, name: str, entry: dict[str, Any], mmap: bool = False) -> np.ndarray:
    """One tensor of a checkpoint; large ones as a read-only memory map when ``mmap``."""
    dtype = dtypes.as_dtype(entry["dtype"])
    if "value" in entry:
        return decode_array(entry["value"])
    path = os.path.join(prefix, entry["file"])
    try:
        size = int(np.prod(entry["shape"])) * np.dtype(dtype.np).itemsize
        mode = "r" if mmap and size >= _MMAP_BYTES else None
        array = np.load(path, mmap_mode=mode, allow_pickle=False)
    except FileNotFoundError:
        raise errors.DataLossError(
            None, None, f"Checkpoint {prefix} lists {name!r} but {path} is missing"
        ) from None
    if dtype is dtypes.bfloat16:
        array = array.view(dtype.np)
    return array


def cleanup_temp_dirs(prefix: str, keep: str | None = None) -> None:
    """Remove temporary directories that interrupted saves of ``prefix...`` left behind."""
    directory = os.path.dirname(os.path.abspath(prefix)) or "."
    base = os.path.basename(prefix)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return
    for name in names:
        if name.startswith(base) and (_TEMP_MARK in name or ".old-" in name):
            path = os.path.join(directory, name)
            if path != keep:
                remove_path(path)


# --- ops --------------------------------------------------------------------------------------
def _strings(values: Any) -> list[str]:
    return [_as_str(v) for v in np.asarray(values, dtype=object).ravel()]


class CheckpointTempPrefix(OpDef):
    """A fresh temporary directory name beside ``prefix`` for one save (all shards share it)."""

    inputs = ("prefix",)
    stateful = True
    differentiable = False

    def infer(self, prefix: TensorSpec) -> TensorSpec:
        return TensorSpec(TensorShape([]), dtypes.string)

    def compute(self, ctx: KernelContext, prefix: Any) -> np.ndarray:
        name = f"{_as_str(prefix)}{_TEMP_MARK}{uuid.uuid4().hex}"
        return np.array(name.encode(), dtype=object)


class SaveV2(OpDef):
    """Write ``tensors`` under ``tensor_names`` into the (temporary) checkpoint ``prefix``.

    ``shard`` is this op's shard number (-1: the only shard, files directly in the directory).
    """

    inputs = ("prefix", "tensor_names", "tensors*")
    attrs = {"shard": -1, "sync": True}
    stateful = True
    differentiable = False

    def infer(self, prefix: TensorSpec, tensor_names: TensorSpec, tensors: list, shard, sync):
        if prefix.shape.ndims not in (None, 0):
            raise ValueError(f"prefix must be a scalar, got shape {prefix.shape}")
        return []

    num_outputs = 0

    def compute(self, ctx: KernelContext, prefix, tensor_names, tensors, shard: int, sync: bool):
        names = _strings(tensor_names)
        if len(names) != len(tensors):
            raise errors.InvalidArgumentError(
                None, None, f"SaveV2 got {len(names)} tensor names for {len(tensors)} tensors"
            )
        write_shard(_as_str(prefix), names, tensors, shard, sync)


class MergeV2Checkpoints(OpDef):
    """Commit a save: merge shard indices, fsync, rename the temporary directory to its name."""

    inputs = ("checkpoint_prefix", "destination_prefix")
    attrs = {"num_shards": 1, "sync": True}
    stateful = True
    differentiable = False

    def infer(self, checkpoint_prefix, destination_prefix, num_shards: int, sync: bool):
        return []

    num_outputs = 0

    def compute(self, ctx, checkpoint_prefix, destination_prefix, num_shards: int, sync: bool):
        commit_checkpoint(_as_str(checkpoint_prefix), _as_str(destination_prefix), num_shards, sync)


class RestoreV2(OpDef):
    """Read the tensors named ``tensor_names`` from checkpoint ``prefix`` (attr ``dtypes``)."""

    inputs = ("prefix", "tensor_names")
    attrs = {"dtypes": REQUIRED, "shapes": None}
    stateful = True
    differentiable = False

    def output_count(self, attrs: dict[str, Any]) -> int:
        return len(attrs["dtypes"])

    def infer(self, prefix: TensorSpec, tensor_names: TensorSpec, dtypes: list, shapes: Any):
        shapes = shapes or [TensorShape(None)] * len(dtypes)
        return [TensorSpec(s, d) for s, d in zip(shapes, dtypes)]

    def compute(self, ctx: KernelContext, prefix, tensor_names, dtypes: list, shapes: Any):
        path = _as_str(prefix)
        index = read_index(path)
        out = []
        for name, dtype in zip(_strings(tensor_names), dtypes):
            entry = index.get(name)
            if entry is None:
                raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint {path}")
            if entry["dtype"] != dtype.base_dtype.name:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"tensor_name = {name}; expected dtype {dtype.base_dtype.name} does not "
                    f"equal original dtype {entry['dtype']} (checkpoint {path})",
                )
            # A memory map: the Assign that consumes it copies it once, straight from the file.
            out.append(load_tensor(path, name, entry, mmap=ctx.xp is np))
        return out[0] if len(out) == 1 else out  # a one-output op yields its value itself


# --- builders -----------------------------------------------------------------------------------
def _string_const(values: Any, name: str) -> ops_lib.Tensor:
    from nbflow.ops.array_ops import constant

    return constant(values, dtype=dtypes.string, name=name)


def checkpoint_temp_prefix(prefix: Any, name: str = "temp_prefix") -> ops_lib.Tensor:
    return (
        ops_lib.get_default_graph()
        .create_op("CheckpointTempPrefix", [ops_lib.convert_to_tensor(prefix)], name=name)
        .outputs[0]
    )


def save_v2(
    prefix: Any,
    tensor_names: Sequence[str],
    tensors: Sequence[Any],
    shard: int = -1,
    sync: bool = True,
    name: str = "SaveV2",
) -> ops_lib.Operation:
    """An op saving ``tensors`` (variables are read when it runs) under ``tensor_names``."""
    names = _string_const(list(tensor_names), "tensor_names")
    values = [t._ref() if hasattr(t, "_ref") else ops_lib.convert_to_tensor(t) for t in tensors]
    return ops_lib.get_default_graph().create_op(
        "SaveV2", [prefix, names, values], {"shard": shard, "sync": sync}, name=name
    )


def merge_v2_checkpoints(
    temp_prefix: Any, destination: Any, num_shards: int, sync: bool = True, name: str = "Merge"
) -> ops_lib.Operation:
    return ops_lib.get_default_graph().create_op(
        "MergeV2Checkpoints",
        [temp_prefix, destination],
        {"num_shards": num_shards, "sync": sync},
        name=name,
    )


def restore_v2(
    prefix: Any,
    tensor_names: Sequence[str],
    dtypes_: Sequence[Any],
    shapes: Sequence[Any] | None = None,
    name: str = "RestoreV2",
) -> list[ops_lib.Tensor]:
    names = _string_const(list(tensor_names), "tensor_names")
    attrs: dict[str, Any] = {"dtypes": [dtypes.as_dtype(d).base_dtype for d in dtypes_]}
    if shapes is not None:
        attrs["shapes"] = [TensorShape(s) if not isinstance(s, TensorShape) else s for s in shapes]
    op = ops_lib.get_default_graph().create_op("RestoreV2", [prefix, names], attrs, name=name)
    return op.outputs
