"""The checkpoint state file and the files of checkpoints: what is current, what may go.

A directory of checkpoints has a text file ``checkpoint`` (TensorFlow's ``CheckpointState``
in text format): ``model_checkpoint_path`` names the current checkpoint prefix and
``all_model_checkpoint_paths`` those kept, oldest first, relative to the directory when they are
in it. ``latest_checkpoint`` reads it; ``update_checkpoint_state`` rewrites it with
``write_atomically`` (temporary file, fsync, rename, fsync the directory), so a reader sees the
old state or the new one, never half of one.

A checkpoint ``prefix`` is ``prefix.index`` plus ``prefix.data-NNNNN-of-NNNNN`` (and the meta
graph ``prefix.meta``); it exists once its index does. ``clean_leftovers`` removes what killed
saves and deletions left behind (temporary files, data without an index, re-save copies marked
``RESAVE_MARK``, checkpoints newer than the state file's newest) and never a checkpoint the state
file names. The Saver (saver.py) writes checkpoints in the order that keeps these rules.
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from nbflow.framework import tensor_bundle
from nbflow.ops import io_ops

_log = logging.getLogger("nbflow.train")


@dataclass
class CheckpointState:
    """What the ``checkpoint`` file records (TensorFlow's CheckpointState message)."""

    model_checkpoint_path: str = ""
    all_model_checkpoint_paths: list[str] = field(default_factory=list)
    all_model_checkpoint_timestamps: list[float] = field(default_factory=list)
    last_preserved_timestamp: float = 0.0


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def _state_text(state: CheckpointState) -> str:
    lines = [f"model_checkpoint_path: {_quote(state.model_checkpoint_path)}"]
    lines += [f"all_model_checkpoint_paths: {_quote(p)}" for p in state.all_model_checkpoint_paths]
    lines += [
        f"all_model_checkpoint_timestamps: {t!r}" for t in state.all_model_checkpoint_timestamps
    ]
    if state.last_preserved_timestamp:
        lines.append(f"last_preserved_timestamp: {state.last_preserved_timestamp!r}")
    return "\n".join(lines) + "\n"


def _parse_state(text: str) -> CheckpointState:
    state = CheckpointState()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not sep or not value:
            continue
        if key == "model_checkpoint_path":
            state.model_checkpoint_path = _unquote(value)
        elif key == "all_model_checkpoint_paths":
            state.all_model_checkpoint_paths.append(_unquote(value))
        elif key == "all_model_checkpoint_timestamps":
            state.all_model_checkpoint_timestamps.append(float(value))
        elif key == "last_preserved_timestamp":
            state.last_preserved_timestamp = float(value)
    return state


def write_atomically(path: str, data: str | bytes) -> None:
    """Replace ``path`` with ``data``: temporary file, fsync, rename, fsync the directory."""
    directory = os.path.dirname(os.path.abspath(path))
    temp = os.path.join(directory, f".{os.path.basename(path)}.tmp-{uuid.uuid4().hex[:8]}")
    with open(temp, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, path)
    io_ops._fsync_dir(directory)


def _relative_to(path: str, directory: str) -> str:
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(directory):
        return os.path.basename(path)
    return path


def update_checkpoint_state(
    save_dir: str,
    model_checkpoint_path: str,
    all_model_checkpoint_paths: Sequence[str] | None = None,
    latest_filename: str | None = None,
    all_model_checkpoint_timestamps: Sequence[float] | None = None,
    last_preserved_timestamp: float | None = None,
) -> None:
    """Atomically rewrite ``save_dir/checkpoint`` (paths inside ``save_dir`` kept relative)."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    state = CheckpointState(
        _relative_to(model_checkpoint_path, save_dir),
        [_relative_to(p, save_dir) for p in paths],
        list(all_model_checkpoint_timestamps or []),
        last_preserved_timestamp or 0.0,
    )
    write_atomically(os.path.join(save_dir, latest_filename or "checkpoint"), _state_text(state))


def generate_checkpoint_state_proto(
    save_dir: str,
    model_checkpoint_path: str,
    all_model_checkpoint_paths: Sequence[str] | None = None,
    all_model_checkpoint_timestamps: Sequence[float] | None = None,
    last_preserved_timestamp: float | None = None,
) -> CheckpointState:
    """The CheckpointState ``update_checkpoint_state`` would write, without writing it.

    ``model_checkpoint_path`` is appended to ``all_model_checkpoint_paths`` unless it is last
    already; with a relative ``save_dir``, relative paths become relative to it.
    """
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    timestamps = list(all_model_checkpoint_timestamps or [])
    if timestamps and len(timestamps) != len(paths):
        raise ValueError(
            f"Checkpoint timestamps, if provided, must match checkpoint paths "
            f"({len(timestamps)} vs {len(paths)})"
        )
    if not os.path.isabs(save_dir):
        if not os.path.isabs(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir)
        paths = [p if os.path.isabs(p) else os.path.relpath(p, save_dir) for p in paths]
    return CheckpointState(
        model_checkpoint_path, paths, timestamps, last_preserved_timestamp or 0.0
    )


def get_checkpoint_state(
    checkpoint_dir: str, latest_filename: str | None = None
) -> CheckpointState | None:
    """The state file of ``checkpoint_dir`` with paths joined to it, or None if there is none."""
    path = os.path.join(checkpoint_dir, latest_filename or "checkpoint")
    try:
        with open(path) as f:
            state = _parse_state(f.read())
    except FileNotFoundError:
        return None
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")

    def join(p: str) -> str:
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)

    state.model_checkpoint_path = join(state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [join(p) for p in state.all_model_checkpoint_paths]
    return state


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The prefix of the newest complete checkpoint the state file names, or None.

    >>> latest_checkpoint("/nonexistent") is None
    True
    """
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    candidates = [state.model_checkpoint_path] + state.all_model_checkpoint_paths[::-1]
    for path in candidates:
        if io_ops.is_checkpoint(path):
            return path
    _log.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def checkpoint_exists(checkpoint_prefix: str) -> bool:
    return io_ops.is_checkpoint(checkpoint_prefix)


def get_checkpoint_mtimes(checkpoint_prefixes: Sequence[str]) -> list[float]:
    """Modification times of the checkpoints' index files (missing checkpoints skipped)."""
    return [
        os.path.getmtime(tensor_bundle.index_file(p))
        for p in checkpoint_prefixes
        if io_ops.is_checkpoint(p)
    ]


def remove_checkpoint(checkpoint_prefix: str, meta_graph_suffix: str = "meta") -> None:
    """Delete a checkpoint (index first, then data) and its meta graph."""
    io_ops.remove_checkpoint_files(checkpoint_prefix)
    io_ops.remove_path(f"{checkpoint_prefix}.{meta_graph_suffix}")


RESAVE_MARK = ".resave-r"
_STEP = re.compile(r"-(\d+)$")


def _step_of(prefix: str) -> int | None:
    match = _STEP.search(prefix)
    return int(match.group(1)) if match else None


def clean_leftovers(save_path: str, latest_filename: str = "checkpoint") -> list[str]:
    """Remove what interrupted saves and deletions of ``save_path[-N]`` left; returns the paths.

    Never touches a checkpoint the state file names. Removes temporary files, data files and meta
    graphs without an index, re-save copies, and complete checkpoints newer than the state file's
    newest (their save was killed before it became current).
    """
    directory = os.path.dirname(os.path.abspath(save_path))
    base = os.path.basename(save_path)
    try:
        state = get_checkpoint_state(directory, latest_filename)
    except ValueError:
        state = None
    named = set()
    if state is not None:
        named = {os.path.abspath(p) for p in [state.model_checkpoint_path]}
        named |= {os.path.abspath(p) for p in state.all_model_checkpoint_paths}
    steps = [s for s in map(_step_of, named) if s is not None]
    newest = max(steps) if steps else None
    removed = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name.startswith((f".{base}", f".{latest_filename}.tmp-")) and ".tmp-" in name:
            removed.append(path)  # write_atomically's temporary file
            continue
        if not name.startswith(base):
            continue
        if io_ops._TEMP_MARK in name:
            removed.append(path)  # a save's temporary files never are a checkpoint
            continue
        prefix = _prefix_of(path)
        if prefix is None or os.path.abspath(prefix) in named:
            continue
        step = _step_of(prefix)
        if (
            RESAVE_MARK in prefix
            or not io_ops.is_checkpoint(prefix)
            or (state is not None and newest is not None and step is not None and step > newest)
        ):
            removed.append(path)
    for path in removed:
        io_ops.remove_path(path)
    return removed


def _prefix_of(path: str) -> str | None:
    """The checkpoint prefix a file belongs to (``p.index``, ``p.data-*``, ``p.meta``, temps)."""
    name = path
    for ending in (".index", ".meta"):
        if name.endswith(ending):
            return name[: -len(ending)]
    match = re.search(r"\.data-\d{5}-of-\d{5}$", name)
    return name[: match.start()] if match else None
