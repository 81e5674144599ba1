"""Reading checkpoints without a graph, fine-tuning from them, and keeping the best ones.

    tf.train.list_variables("/tmp/run")              # [("dense/w", [3, 4]), ...]
    tf.train.load_variable("/tmp/run", "dense/w")    # a NumPy array
    tf.train.init_from_checkpoint("/tmp/pre", {"encoder/": "encoder/"})  # fine-tuning

``BestCheckpointKeeper`` is the retention policy OSDI §4.3 mentions: it keeps the ``k``
checkpoints with the best value of a user metric (e.g. validation accuracy).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import numpy as np

from nbflow.framework import dtypes, tensor_bundle
from nbflow.framework import ops as ops_lib
from nbflow.ops import array_ops, io_ops, state_ops, variables
from nbflow.train import saver as saver_lib


def _checkpoint_prefix(ckpt_dir_or_file: str) -> str:
    if io_ops.is_checkpoint(ckpt_dir_or_file):
        return ckpt_dir_or_file
    if os.path.isdir(ckpt_dir_or_file):
        latest = saver_lib.latest_checkpoint(ckpt_dir_or_file)
        if latest is None:
            raise ValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in {ckpt_dir_or_file}"
            )
        return latest
    raise ValueError(f"Couldn't find a checkpoint at {ckpt_dir_or_file}")


class CheckpointReader:
    """Reads the tensors of one checkpoint (``tf.train.NewCheckpointReader``), CRC-checked."""

    def __init__(self, prefix: str):
        self._prefix = prefix
        self._bundle = tensor_bundle.BundleReader(prefix)

    def has_tensor(self, name: str) -> bool:
        return name in self._bundle.entries

    def get_tensor(self, name: str) -> np.ndarray:
        """The saved value; ``DataLossError`` names tensor and file if its bytes are damaged."""
        return self._bundle.tensor(name)

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {name: list(self._bundle.shape(name)) for name in self._bundle.entries}

    def get_variable_to_dtype_map(self) -> dict[str, dtypes.DType]:
        return {name: self._bundle.dtype(name) for name in self._bundle.entries}

    def debug_string(self) -> bytes:
        lines = [
            f"{n} ({self._bundle.dtype(n).name}) {list(self._bundle.shape(n))}"
            for n in sorted(self._bundle.entries)
        ]
        return ("\n".join(lines) + "\n").encode()


def NewCheckpointReader(filepattern: str) -> CheckpointReader:  # noqa: N802 - TF's name
    return CheckpointReader(filepattern)


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """A reader for the checkpoint, or the latest one in a directory."""
    return CheckpointReader(_checkpoint_prefix(ckpt_dir_or_file))


def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
    """The value of one saved tensor (a trailing ":0" is ignored)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """(name, shape) of every tensor in the checkpoint, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return sorted(shapes.items())


def checkpoint_to_dict(ckpt_dir_or_file: str) -> dict[str, np.ndarray]:
    """Every tensor of a checkpoint as NumPy arrays, by name: no graph, no session.

    Works on any TensorFlow V2 checkpoint (a prefix, or a directory with a ``checkpoint`` file);
    every tensor's CRC32C is checked.
    """
    reader = load_checkpoint(ckpt_dir_or_file)
    return {name: reader.get_tensor(name) for name, _ in list_variables(ckpt_dir_or_file)}


def print_tensors_in_checkpoint_file(
    file_name: str, tensor_name: str = "", all_tensors: bool = False, file: Any = None
) -> None:
    """Print a checkpoint's tensors as ``inspect_checkpoint`` does: names, dtypes and shapes, and
    the values of ``tensor_name`` (or of all tensors with ``all_tensors``)."""
    reader = load_checkpoint(file_name)
    if not tensor_name and not all_tensors:
        print(reader.debug_string().decode(), end="", file=file)
        return
    names = sorted(reader.get_variable_to_shape_map()) if all_tensors else [tensor_name]
    for name in names:
        print(f"tensor_name:  {name}", file=file)
        print(reader.get_tensor(name), file=file)


def _variables_by_name() -> dict[str, Any]:
    return {v.op.name: v for v in variables.global_variables()}


def init_from_checkpoint(ckpt_dir_or_file: str, assignment_map: dict[str, Any]) -> None:
    """Make the initializers of the mapped variables load their values from a checkpoint.

    ``assignment_map`` maps checkpoint names or scopes to variables, variable names or scopes:
    ``{"old/w": "new/w"}``, ``{"old/w": var}``, ``{"pre/": "model/"}``, ``{"/": "model/"}``.
    Running the variables' initializers (e.g. ``global_variables_initializer()`` built after
    this call) then restores them instead of using their initial values.
    """
    prefix = _checkpoint_prefix(ckpt_dir_or_file)
    reader = CheckpointReader(prefix)
    shapes = reader.get_variable_to_shape_map()
    current = _variables_by_name()
    pairs: list[tuple[str, Any]] = []
    for ckpt_name, target in assignment_map.items():
        if isinstance(target, variables.Variable):
            pairs.append((ckpt_name, target))
            continue
        if not ckpt_name.endswith("/"):
            if target not in current:
                raise ValueError(f"Variable {target} is not in the graph (assignment_map)")
            pairs.append((ckpt_name, current[target]))
            continue
        ckpt_scope = "" if ckpt_name == "/" else ckpt_name
        var_scope = target if target.endswith("/") or not target else target + "/"
        var_scope = "" if var_scope == "/" else var_scope
        for var_name, v in current.items():
            if not var_name.startswith(var_scope):
                continue
            full = ckpt_scope + var_name[len(var_scope) :]
            if full not in shapes:
                raise ValueError(f"Tensor {full} is not found in {prefix} checkpoint")
            pairs.append((full, v))
    for ckpt_name, v in pairs:
        if ckpt_name not in shapes:
            raise ValueError(f"Tensor {ckpt_name} is not found in {prefix} checkpoint")
        if not v.shape.is_compatible_with(shapes[ckpt_name]):
            raise ValueError(
                f"Shape of variable {v.op.name} ({v.shape}) doesn't match with shape of tensor "
                f"{ckpt_name} ({shapes[ckpt_name]}) from checkpoint reader."
            )
        _set_initializer_from_checkpoint(v, prefix, ckpt_name)


def _set_initializer_from_checkpoint(v: Any, prefix: str, ckpt_name: str) -> None:
    graph = v.graph
    with graph.as_default(), ops_lib.control_dependencies(None):
        with ops_lib.colocate_with(v.op), ops_lib.name_scope(f"{v.op.name}/checkpoint_initializer"):
            path = array_ops.constant(prefix, dtype=dtypes.string, name="prefix")
            (restored,) = io_ops.restore_v2(path, [ckpt_name], [v.dtype.base_dtype], [v.shape])
            v._initializer_op = state_ops.assign(v, restored, name="Assign").op
            v._initial_value = restored


# --- best-metric retention ----------------------------------------------------------------------
class BestCheckpointKeeper:
    """Keeps the ``num_to_keep`` checkpoints with the best ``metric`` in ``directory``.

        keeper = tf.train.BestCheckpointKeeper("/tmp/run/best", num_to_keep=2, mode="max")
        keeper.save(sess, metric=accuracy, global_step=step)   # kept only if among the best 2
        keeper.best_checkpoint                                 # the best prefix so far

    Its state file ``best_checkpoint`` (TensorFlow's text format, best first) works with
    ``tf.train.latest_checkpoint(directory, "best_checkpoint")``; ``best_checkpoints.json``
    records the metrics. Both are rewritten atomically after the checkpoint is complete.
    """

    STATE = "best_checkpoint"
    METRICS = "best_checkpoints.json"

    def __init__(
        self,
        directory: str,
        num_to_keep: int = 1,
        mode: str = "max",
        var_list: Any = None,
        basename: str = "best.ckpt",
        saver: saver_lib.Saver | None = None,
    ):
        if mode not in ("max", "min"):
            raise ValueError(f"mode must be 'max' or 'min', got {mode!r}")
        if num_to_keep < 1:
            raise ValueError(f"num_to_keep must be at least 1, got {num_to_keep}")
        os.makedirs(directory, exist_ok=True)
        self.directory = directory
        self.num_to_keep = num_to_keep
        self.mode = mode
        self._prefix = os.path.join(directory, basename)
        self._saver = saver or saver_lib.Saver(var_list, max_to_keep=None, name="best_saver")
        self._kept: list[tuple[float, str]] = self._load()

    def _load(self) -> list[tuple[float, str]]:
        try:
            with open(os.path.join(self.directory, self.METRICS)) as f:
                records = json.load(f)
        except FileNotFoundError:
            return []
        kept = [(float(r["metric"]), os.path.join(self.directory, r["path"])) for r in records]
        return [(m, p) for m, p in kept if io_ops.is_checkpoint(p)]

    def _better(self, a: float, b: float) -> bool:
        return a > b if self.mode == "max" else a < b

    def is_better(self, metric: float) -> bool:
        """Whether a checkpoint with this metric would be kept."""
        if np.isnan(metric):
            return False
        return len(self._kept) < self.num_to_keep or self._better(metric, self._kept[-1][0])

    @property
    def checkpoints(self) -> list[tuple[float, str]]:
        """(metric, prefix) of the kept checkpoints, best first."""
        return list(self._kept)

    @property
    def best_checkpoint(self) -> str | None:
        return self._kept[0][1] if self._kept else None

    def save(self, sess: Any, metric: float, global_step: Any = None) -> str | None:
        """Save if ``metric`` is among the best; returns the prefix saved, or None."""
        metric = float(np.asarray(metric))
        if not self.is_better(metric):
            return None
        path = self._saver.save(
            sess, self._prefix, global_step=global_step, write_state=False, write_meta_graph=True
        )
        assert path is not None
        kept = [(m, p) for m, p in self._kept if p != path] + [(metric, path)]
        kept.sort(key=lambda mp: -mp[0] if self.mode == "max" else mp[0])
        dropped, self._kept = kept[self.num_to_keep :], kept[: self.num_to_keep]
        self._write_state()
        for _, p in dropped:
            saver_lib.remove_checkpoint(p)
        return path if any(p == path for _, p in self._kept) else None

    def _write_state(self) -> None:
        paths = [p for _, p in self._kept]
        records = [{"metric": m, "path": os.path.basename(p)} for m, p in self._kept]
        saver_lib.write_atomically(os.path.join(self.directory, self.METRICS), json.dumps(records))
        # The state file lists the kept checkpoints worst first, ending with the best one,
        # which is its model_checkpoint_path.
        saver_lib.update_checkpoint_state(
            self.directory, paths[0], paths[::-1], latest_filename=self.STATE
        )

    def restore_best(self, sess: Any) -> str | None:
        path = self.best_checkpoint
        if path is not None:
            self._saver.restore(sess, path)
        return path


# --- waiting for checkpoints (evaluation loops) ---------------------------------------------------
def wait_for_new_checkpoint(
    checkpoint_dir: str,
    last_checkpoint: str | None = None,
    seconds_to_sleep: float = 1,
    timeout: float | None = None,
) -> str | None:
    """The newest checkpoint of ``checkpoint_dir`` once it differs from ``last_checkpoint``,
    polling every ``seconds_to_sleep``; None after ``timeout`` seconds without one."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        path = saver_lib.latest_checkpoint(checkpoint_dir)
        if path is not None and path != last_checkpoint:
            return path
        if deadline is not None and time.monotonic() + seconds_to_sleep > deadline:
            return None
        time.sleep(seconds_to_sleep)


def checkpoints_iterator(
    checkpoint_dir: str,
    min_interval_secs: float = 0,
    timeout: float | None = None,
    timeout_fn: Any = None,
) -> Any:
    """Yield each new checkpoint of ``checkpoint_dir`` as it appears, at most one per
    ``min_interval_secs``. After ``timeout`` seconds without a new one it stops, unless
    ``timeout_fn`` is given and returns False (then it keeps waiting)."""
    checkpoint_path = None
    while True:
        new_path = wait_for_new_checkpoint(checkpoint_dir, checkpoint_path, timeout=timeout)
        if new_path is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        start = time.monotonic()
        checkpoint_path = new_path
        yield checkpoint_path
        remaining = start + min_interval_secs - time.monotonic()
        if remaining > 0:
            time.sleep(remaining)
