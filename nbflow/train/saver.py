"""``tf.train.Saver``: checkpoints as Save/Restore operations in the graph (OSDI §4.3).

A Saver adds to the graph, under the ``save/`` scope:

    save/filename            the checkpoint prefix to write or read (fed by save() and restore())
    save/temp_prefix         a fresh temporary prefix for one save
    save/SaveV2[_k]          writes the variables (one op per device when ``sharded=True``)
    save/Merge               commits: merged index, fsync, data files then index renamed
    save/control_dependency  the prefix, once committed (SaverDef.save_tensor_name)
    save/RestoreV2[_k]       reads the saved tensors; save/Assign_* store them; save/restore_all

``save`` runs the save tensor, then writes the meta graph, then atomically rewrites the text state
file ``checkpoint`` (TensorFlow's CheckpointState format), then deletes checkpoints beyond
``max_to_keep``. The files are TensorFlow's V2 checkpoint (``nbflow.framework.tensor_bundle``).

No kill can hide the last good checkpoint:

- a checkpoint becomes visible only when its ``.index`` is renamed into place, after its data;
  deleting one removes the index first, so a half-deleted checkpoint is no checkpoint;
- re-saving a step that exists (a restarted run does) writes the new checkpoint under a fresh
  prefix, points the state file at it, then gives the old name the new files (hard links), points
  the state file back, and only then removes the fresh prefix: at every moment the state file
  names a complete checkpoint;
- old checkpoints are deleted only after the state file stopped naming them;
- the first save of a ``Saver`` into a directory removes what kills left behind: temporary
  files, data without an index, unreferenced re-save copies, and complete checkpoints newer than
  the state file's latest (a save that never became current).
"""

from __future__ import annotations

import json
import logging
import numbers
import os
import time
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from google.protobuf import text_format

from nbflow.framework import ops as ops_lib
from nbflow.framework import protos
from nbflow.framework.importer import import_graph_def
from nbflow.framework.ops import GraphKeys, Tensor
from nbflow.ops import array_ops, control_flow_ops, io_ops, state_ops, variables
from nbflow.ops.partitioned_variables import PartitionedVariable
from nbflow.train import meta_graph
from nbflow.train.checkpoint_management import (  # noqa: F401 - TF1's tf.train.saver names
    RESAVE_MARK,
    CheckpointState,
    checkpoint_exists,
    clean_leftovers,
    generate_checkpoint_state_proto,
    get_checkpoint_mtimes,
    get_checkpoint_state,
    latest_checkpoint,
    remove_checkpoint,
    update_checkpoint_state,
    write_atomically,
)

_log = logging.getLogger("nbflow.train")


# --- meta graphs ------------------------------------------------------------------------------
def export_meta_graph(
    filename: str | None = None,
    meta_info_def: dict[str, Any] | None = None,
    graph_def: Any = None,
    saver_def: dict[str, Any] | None = None,
    collection_list: Sequence[str] | None = None,
    as_text: bool = False,
    graph: ops_lib.Graph | None = None,
    clear_devices: bool = False,
    signature_def_map: dict[str, Any] | None = None,
    var_list: dict[str, Any] | None = None,
    **unused: Any,
) -> Any:
    """TensorFlow's ``MetaGraphDef`` of the graph (``nbflow.train.meta_graph``), written to
    ``filename`` when given (binary, or protobuf's text format with ``as_text``)."""
    graph = graph or ops_lib.get_default_graph()
    meta = meta_graph.tensorflow_meta_graph_def(
        graph,
        var_list=var_list,
        saver_def=saver_def,
        signature_def_map=signature_def_map,
        clear_devices=clear_devices,
        collection_list=collection_list,
        graph_def=graph_def,
    )
    for key, value in (meta_info_def or {}).items():
        setattr(meta.meta_info_def, key, value)
    if filename:
        write_atomically(filename, _meta_graph_bytes(meta, as_text))
    return meta


def _meta_graph_bytes(meta: Any, as_text: bool) -> bytes:
    return text_format.MessageToString(meta).encode() if as_text else meta.SerializeToString()


def _variable_from_proto(graph: ops_lib.Graph, proto: dict[str, Any], scope: str) -> Any:
    """Rebuild a ``tf.Variable`` object around imported ops (VariableDef semantics)."""
    with graph.as_default():
        return variables.Variable(variable_def=proto, import_scope=scope.rstrip("/") or None)


def read_meta_graph_file(filename: str) -> Any:
    """A ``.meta`` file: TensorFlow's binary or text ``MetaGraphDef``, or nbflow's JSON one."""
    with open(filename, "rb") as f:
        data = f.read()
    if data.lstrip().startswith(b"{"):
        return json.loads(data)
    meta = protos.MetaGraphDef()
    try:
        meta.ParseFromString(data)
    except Exception:  # not binary: protobuf's text format
        try:
            text_format.Parse(data.decode(), meta)
        except (UnicodeDecodeError, text_format.ParseError) as e:
            raise OSError(f"Cannot parse {filename} as a MetaGraphDef: {e}") from None
    return meta


def import_meta_graph(
    meta_graph_or_file: Any,
    clear_devices: bool = False,
    import_scope: str | None = None,
    **kwargs: Any,
) -> Saver | None:
    """Import a MetaGraphDef into the default graph; returns its Saver (None if it had none).

    Takes TensorFlow's ``MetaGraphDef`` (a ``.meta`` file TensorFlow wrote, or the proto) as well
    as nbflow's JSON one.
    """
    meta = meta_graph_or_file
    if isinstance(meta, str):
        meta = read_meta_graph_file(meta)
    if isinstance(meta, protos.MetaGraphDef):
        return _import_tensorflow_meta_graph(meta, clear_devices, import_scope)
    graph_def = meta["graph_def"]
    if clear_devices:
        graph_def = {**graph_def, "node": [{**n, "device": ""} for n in graph_def["node"]]}
    graph = ops_lib.get_default_graph()
    import_graph_def(graph_def, name=import_scope or "")
    scope = f"{import_scope}/" if import_scope else ""
    for key, entry in meta.get("collection_def", {}).items():
        if "variables" in entry:
            values: list[Any] = [_variable_from_proto(graph, p, scope) for p in entry["variables"]]
        elif "node_list" in entry:
            values = [graph.as_graph_element(scope + n) for n in entry["node_list"]]
        else:
            values = next(iter(entry.values()))
        existing = graph.get_collection_ref(key)
        existing.extend(v for v in values if v not in existing)
    saver_def = meta.get("saver_def")
    if not saver_def:
        return None
    return Saver(saver_def=_scoped_saver_def(saver_def, scope))


def _import_tensorflow_meta_graph(
    meta: Any, clear_devices: bool, import_scope: str | None
) -> Saver | None:
    """Import TensorFlow's MetaGraphDef: its graph without TensorFlow's saver subgraph, its
    variables (VariableDef protos in the collections) and collections; a new nbflow ``Saver``
    over those variables restores TensorFlow's checkpoints (the same format)."""
    saver_scope = ""
    if meta.HasField("saver_def") and "/" in meta.saver_def.restore_op_name:
        saver_scope = meta.saver_def.restore_op_name.rsplit("/", 1)[0] + "/"
    graph_def = protos.GraphDef()
    graph_def.CopyFrom(meta.graph_def)
    del graph_def.node[:]
    for node in meta.graph_def.node:
        if not (saver_scope and node.name.startswith(saver_scope)):
            graph_def.node.add().CopyFrom(node)
            if clear_devices:
                graph_def.node[-1].device = ""
    graph = ops_lib.get_default_graph()
    import_graph_def(graph_def, name=import_scope or "")
    scope = f"{import_scope}/" if import_scope else ""
    saved: dict[str, Any] = {}
    for key, entry in sorted(meta.collection_def.items()):
        kind = entry.WhichOneof("kind")
        if kind is None:
            continue
        values: list[Any] = list(getattr(entry, kind).value)
        if key in _VARIABLE_COLLECTIONS:
            values = [
                _wrap_variable(graph, protos.VariableDef.FromString(v), scope, saved)
                for v in values
            ]
        elif kind == "node_list":
            values = [
                graph.as_graph_element(scope + n)
                for n in values
                if not n.startswith(saver_scope or "\0")
            ]
        existing = graph.get_collection_ref(key)
        existing.extend(v for v in values if v not in existing)
    if not meta.HasField("saver_def") or not saved:
        return None
    return Saver(
        var_list=saved,
        max_to_keep=meta.saver_def.max_to_keep,
        keep_checkpoint_every_n_hours=meta.saver_def.keep_checkpoint_every_n_hours or 10000.0,
    )


_VARIABLE_COLLECTIONS = (
    GraphKeys.GLOBAL_VARIABLES,
    GraphKeys.TRAINABLE_VARIABLES,
    "local_variables",
    "model_variables",
    "moving_average_variables",
    GraphKeys.GLOBAL_STEP,
)


def _wrap_variable(graph: ops_lib.Graph, proto: Any, scope: str, saved: dict[str, Any]) -> Any:
    name = proto.variable_name.rsplit(":", 1)[0]
    if name in saved:
        return saved[name]
    variable_def = {
        "variable_name": proto.variable_name,
        "initializer_name": proto.initializer_name,
        "snapshot_name": proto.snapshot_name,
        "initial_value_name": proto.initial_value_name,
        "trainable": proto.trainable,
    }
    saved[name] = _variable_from_proto(graph, variable_def, scope)
    return saved[name]


def _scoped_saver_def(saver_def: dict[str, Any], scope: str) -> dict[str, Any]:
    out = dict(saver_def)
    for key in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
        out[key] = scope + saver_def[key]
    return out


# --- the Saver --------------------------------------------------------------------------------
def _var_list_to_dict(var_list: Any) -> dict[str, Any]:
    """Name -> Variable or Tensor; a PartitionedVariable contributes its shards (by op name)."""
    if isinstance(var_list, dict):
        items = list(var_list.items())
    else:
        items = []
        for v in var_list:
            if isinstance(v, PartitionedVariable):
                items += [(part.op.name, part) for part in v]
                continue
            if not isinstance(v, (variables.Variable, Tensor)):
                raise TypeError(f"Variable to save is not a Variable: {v!r}")
            items.append((v.op.name, v))
    names: dict[str, Any] = {}
    for name, v in items:
        parts = list(v) if isinstance(v, PartitionedVariable) else [v]
        for part in parts:
            key = part.op.name if len(parts) > 1 or part is not v else name
            if not isinstance(part, (variables.Variable, Tensor)):
                raise TypeError(f"Variable to save is not a Variable or Tensor: {part!r}")
            if key in names:
                raise ValueError(f"At least two variables have the same name: {key}")
            names[key] = part
    return names


def _checkpoint_key(name: str, v: Any) -> tuple[str, str]:
    """(tensor name in the checkpoint, slice spec): a shard of a partitioned variable is saved
    as its slice of the full variable, as TensorFlow saves it."""
    info = getattr(v, "_save_slice_info", None)
    if isinstance(info, tuple):
        return info[0], info[1]
    return name, ""


class Saver:
    """Saves and restores variables through Save/Restore ops in the graph.

    saver = tf.train.Saver(max_to_keep=3)
    saver.save(sess, "/tmp/run/model.ckpt", global_step=100)  # -> "/tmp/run/model.ckpt-100"
    saver.restore(sess, tf.train.latest_checkpoint("/tmp/run"))
    """

    def __init__(
        self,
        var_list: Any = None,
        reshape: bool = False,
        sharded: bool = False,
        max_to_keep: int | None = 5,
        keep_checkpoint_every_n_hours: float = 10000.0,
        name: str | None = None,
        restore_sequentially: bool = False,
        saver_def: dict[str, Any] | None = None,
        builder: Any = None,
        defer_build: bool = False,
        allow_empty: bool = False,
        write_version: int = 2,
        pad_step_number: bool = False,
        save_relative_paths: bool = False,
        filename: str | None = None,
        sync: bool = True,
    ):
        self._var_list = var_list
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._filename = filename
        self._sync = sync
        self.saver_def: dict[str, Any] | None = saver_def
        self._last_checkpoints: list[tuple[str, float]] = []
        self._checkpoints_to_be_deleted: list[tuple[str, float]] = []
        self._next_checkpoint_time = time.time() + keep_checkpoint_every_n_hours * 3600
        self._is_empty = False
        self._cleaned: set[tuple[str, str]] = set()  # directories whose leftovers are gone
        self._graph = ops_lib.get_default_graph()
        if saver_def is not None:
            self._max_to_keep = saver_def.get("max_to_keep", max_to_keep)
            self._keep_hours = saver_def.get("keep_checkpoint_every_n_hours", self._keep_hours)
        elif not defer_build:
            self.build()

    # --- graph construction ---------------------------------------------------------------------
    def build(self) -> None:
        if self.saver_def is not None or self._is_empty:
            return
        var_list = self._var_list
        if var_list is None:
            var_list = variables.global_variables() + ops_lib.get_collection(
                GraphKeys.SAVEABLE_OBJECTS
            )
        if not var_list:
            if self._allow_empty:
                self._is_empty = True
                return
            raise ValueError("No variables to save")
        entries = _var_list_to_dict(var_list)
        graph = self._graph
        with graph.as_default(), ops_lib.name_scope(self._name, "save") as scope:
            filename = array_ops.placeholder_with_default(
                array_ops.constant(self._filename or "model", dtype="string"),
                shape=[],
                name="filename",
            )
            groups = self._groups(entries)
            temp = io_ops.checkpoint_temp_prefix(filename)
            saves = []
            for k, (device, names) in enumerate(groups):
                with ops_lib.device(device or None):
                    saves.append(
                        io_ops.save_v2(
                            temp,
                            [_checkpoint_key(n, entries[n])[0] for n in names],
                            [entries[n] for n in names],
                            shape_and_slices=[_checkpoint_key(n, entries[n])[1] for n in names],
                            shard=k if self._sharded else -1,
                            sync=self._sync,
                            num_shards=len(groups),
                        )
                    )
            with ops_lib.control_dependencies(saves):
                merge = io_ops.merge_v2_checkpoints(
                    temp, filename, num_shards=len(groups), sync=self._sync
                )
            with ops_lib.control_dependencies([merge]):
                save_tensor = array_ops.identity(filename, name="control_dependency")
            shard_ops = []
            for device, names in groups:
                with ops_lib.device(device or None):
                    restorable = [n for n in names if isinstance(entries[n], variables.Variable)]
                    if not restorable:
                        continue
                    vs = [entries[n] for n in restorable]
                    keys = [_checkpoint_key(n, entries[n]) for n in restorable]
                    tensors = io_ops.restore_v2(
                        filename,
                        [k[0] for k in keys],
                        [v.dtype.base_dtype for v in vs],
                        [v.shape for v in vs],
                        shape_and_slices=[k[1] for k in keys],
                    )
                    assigns = [
                        state_ops.assign(v, t, validate_shape=v.shape.is_fully_defined())
                        for v, t in zip(vs, tensors)
                    ]
                    shard_ops.append(control_flow_ops.group(*assigns, name="restore_shard"))
            restore_op = control_flow_ops.group(*shard_ops, name="restore_all")
        self.saver_def = {
            "filename_tensor_name": filename.name,
            "save_tensor_name": save_tensor.name,
            "restore_op_name": restore_op.name,
            "max_to_keep": self._max_to_keep,
            "sharded": self._sharded,
            "keep_checkpoint_every_n_hours": self._keep_hours,
            "version": 2,
            "scope": scope,
        }
        if self not in graph.get_collection(GraphKeys.SAVERS):
            graph.add_to_collection(GraphKeys.SAVERS, self)

    def _groups(self, entries: dict[str, Any]) -> list[tuple[str, list[str]]]:
        """(device, tensor names) per Save op: one per device when sharded, else one in all."""
        if not self._sharded:
            return [("", list(entries))]
        by_device: dict[str, list[str]] = {}
        for name, v in entries.items():
            by_device.setdefault(v.device, []).append(name)
        return sorted(by_device.items())

    def as_saver_def(self) -> dict[str, Any] | None:
        return self.saver_def

    def to_proto(self, export_scope: str | None = None) -> dict[str, Any] | None:
        return self.saver_def

    @staticmethod
    def from_proto(saver_def: dict[str, Any], import_scope: str | None = None) -> Saver:
        scope = f"{import_scope}/" if import_scope else ""
        return Saver(saver_def=_scoped_saver_def(saver_def, scope))

    # --- the checkpoints this saver keeps -----------------------------------------------------
    @property
    def last_checkpoints(self) -> list[str]:
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints: list[str]) -> None:
        self._last_checkpoints = [(p, 0.0) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time: list) -> None:
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths: list[str]) -> None:
        """Adopt existing checkpoints (e.g. after a restart) so max_to_keep applies to them."""
        paths = [p for p in checkpoint_paths if io_ops.is_checkpoint(p)]
        mtimes = get_checkpoint_mtimes(paths)
        self.set_last_checkpoints_with_time(list(zip(paths, mtimes)))

    def _record_last_checkpoint(self, path: str) -> None:
        if not self._max_to_keep:
            return
        self._last_checkpoints = [c for c in self._last_checkpoints if c[0] != path]
        self._last_checkpoints.append((path, time.time()))
        while len(self._last_checkpoints) > self._max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix: str) -> None:
        while self._checkpoints_to_be_deleted:
            path, stamp = self._checkpoints_to_be_deleted.pop(0)
            if stamp > self._next_checkpoint_time:  # keep one every n hours
                self._next_checkpoint_time += self._keep_hours * 3600
                continue
            remove_checkpoint(path, meta_graph_suffix)

    # --- save and restore ---------------------------------------------------------------------
    def save(
        self,
        sess: Any,
        save_path: str,
        global_step: Any = None,
        latest_filename: str | None = None,
        meta_graph_suffix: str = "meta",
        write_meta_graph: bool = True,
        write_state: bool = True,
        strip_default_attrs: bool = False,
        save_debug_info: bool = False,
    ) -> str | None:
        """Save the variables to ``save_path[-global_step]``; returns that checkpoint prefix."""
        if self._is_empty:
            return None
        if self.saver_def is None:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        latest_filename = latest_filename or "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        if global_step is not None:
            if not isinstance(global_step, numbers.Number):
                global_step = sess.run(global_step)
            step = int(np.asarray(global_step))
            checkpoint_file = (
                f"{save_path}-{step:08d}" if self._pad_step_number else (f"{save_path}-{step}")
            )
        else:
            checkpoint_file = save_path
            if os.path.basename(save_path) == latest_filename:
                raise ValueError(
                    f"'latest_filename' collides with 'save_path': '{latest_filename}' and "
                    f"'{save_path}'"
                )
        save_dir = os.path.dirname(os.path.abspath(save_path))
        if not os.path.isdir(save_dir):
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        if write_state and (save_dir, latest_filename) not in self._cleaned:
            self._cleaned.add((save_dir, latest_filename))
            for path in clean_leftovers(save_path, latest_filename):
                _log.info("Removed leftover of an interrupted save: %s", path)
        sd = self.saver_def
        resave = write_state and io_ops.is_checkpoint(checkpoint_file)
        target = f"{checkpoint_file}{RESAVE_MARK}{uuid.uuid4().hex[:8]}" if resave else None
        result = sess.run(
            sd["save_tensor_name"], {sd["filename_tensor_name"]: target or checkpoint_file}
        )
        if target is not None:
            # The fresh copy is complete: make it current, then give the old name its files.
            model_checkpoint_path = checkpoint_file
            others = [p for p in self.last_checkpoints if p != checkpoint_file]
            update_checkpoint_state(save_dir, target, others + [target], latest_filename)
            io_ops.replace_checkpoint(target, checkpoint_file, sync=self._sync)
        else:
            model_checkpoint_path = io_ops._as_str(result)
        if write_meta_graph:
            self.export_meta_graph(f"{checkpoint_file}.{meta_graph_suffix}", graph=sess.graph)
        if write_state:
            self._record_last_checkpoint(model_checkpoint_path)
            update_checkpoint_state(
                save_dir,
                model_checkpoint_path,
                self.last_checkpoints,
                latest_filename,
                [t for _, t in self._last_checkpoints],
            )
            if target is not None:
                io_ops.remove_checkpoint_files(target)
            self._maybe_delete_old_checkpoints(meta_graph_suffix)
        return model_checkpoint_path

    def restore(self, sess: Any, save_path: str | None) -> None:
        """Run the restore ops: every saved variable gets the value stored in ``save_path``."""
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        if not io_ops.is_checkpoint(save_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        sd = self.saver_def
        if sd is None:
            raise RuntimeError("`build()` should be called before restore if defer_build==True")
        sess.run(sd["restore_op_name"], {sd["filename_tensor_name"]: save_path})

    def export_meta_graph(
        self,
        filename: str | None = None,
        collection_list: Sequence[str] | None = None,
        as_text: bool = False,
        export_scope: str | None = None,
        clear_devices: bool = False,
        clear_extraneous_savers: bool = False,
        strip_default_attrs: bool = False,
        save_debug_info: bool = False,
        graph: ops_lib.Graph | None = None,
    ) -> Any:
        graph = graph or self._graph
        keys = collection_list if collection_list is not None else graph.get_all_collection_keys()
        # Exporting a graph whose constants hold large arrays is costly; a training loop saves
        # the same graph again and again, so the serialised meta graph is reused until the
        # graph or its collections change.
        key = (
            id(graph),
            graph.version,
            graph._mutation_version,
            clear_devices,
            tuple((k, len(graph.get_collection(k))) for k in keys),
        )
        cached = getattr(self, "_meta_graph_cache", None)
        if cached is None or cached[0] != key:
            var_list = None if self._var_list is None else _var_list_to_dict(self._var_list)
            meta = export_meta_graph(
                saver_def=self.saver_def,
                collection_list=collection_list,
                graph=graph,
                clear_devices=clear_devices,
                var_list=var_list,
            )
            cached = self._meta_graph_cache = (key, meta, meta.SerializeToString())
        if filename:
            write_atomically(filename, _meta_graph_bytes(cached[1], True) if as_text else cached[2])
        return cached[1]
