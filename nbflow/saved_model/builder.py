"""``SavedModelBuilder``: export a model for inference — meta graphs plus one set of variables.

The export directory is TensorFlow's SavedModel, which TensorFlow's loader and serving read:

    export_dir/
        saved_model.pb         a SavedModel proto: MetaGraphDefs (``nbflow.train.meta_graph``)
        variables/variables.index, variables.data-*    a V2 checkpoint
        assets/                files the graph refers to

Each MetaGraphDef carries its tags, its ``signature_def`` map and the saver subgraph TensorFlow
runs to restore the variables (``saved_model.pbtxt`` instead with ``save(as_text=True)``). The
directory is assembled under a temporary name and renamed on ``save()``, so a crash never leaves
a half-written export under ``export_dir``.
"""

from __future__ import annotations

import os
import shutil
import uuid
from typing import Any
from collections.abc import Sequence

from google.protobuf import text_format

from nbflow.framework import ops as ops_lib
from nbflow.framework import protos
from nbflow.framework.ops import GraphKeys
from nbflow.ops import io_ops
from nbflow.saved_model import signature_def_utils
from nbflow.saved_model.constants import (
    ASSETS_DIRECTORY,
    MAIN_OP_KEY,
    SAVED_MODEL_FILENAME_PB,
    SAVED_MODEL_FILENAME_PBTXT,
    VARIABLES_DIRECTORY,
    VARIABLES_FILENAME,
)
from nbflow.train import meta_graph
from nbflow.train import saver as saver_lib

SAVED_MODEL_FILENAME = "saved_model.json"  # nbflow's earlier format, still loaded
FORMAT = "nbflow.saved_model"


class SavedModelBuilder:
    """Builds a SavedModel: first ``add_meta_graph_and_variables``, then ``add_meta_graph``."""

    def __init__(self, export_dir: str):
        export_dir = str(export_dir)
        if os.path.exists(export_dir) and os.listdir(export_dir):
            raise AssertionError(
                f"Export directory already exists, and isn't empty. Please choose a different "
                f"export directory, or delete all the contents of the specified directory: "
                f"{export_dir}"
            )
        self._export_dir = export_dir
        self._temp_dir = f"{export_dir.rstrip(os.sep)}.tmp-{uuid.uuid4().hex[:8]}"
        os.makedirs(self._temp_dir)
        self._meta_graphs: list[Any] = []
        self._has_saved_variables = False

    def _add_meta_graph(
        self,
        graph: ops_lib.Graph,
        saver: saver_lib.Saver | None,
        tags: Sequence[str],
        signature_def_map: dict[str, Any] | None,
        main_op: Any,
        clear_devices: bool,
    ) -> None:
        """Add the MetaGraphDef of ``graph`` under ``tags``; ``main_op`` runs after a load."""
        for key, signature in (signature_def_map or {}).items():
            if not signature_def_utils.has_inputs_and_outputs(signature):
                raise ValueError(f"Signature {key!r} has no inputs or no outputs: {signature}")
        if main_op is not None:
            with graph.as_default():
                collection = graph.get_collection_ref(MAIN_OP_KEY)
                collection[:] = [main_op]
        var_list = None
        if saver is not None and saver._var_list is not None:
            var_list = saver_lib._var_list_to_dict(saver._var_list)
        meta = meta_graph.tensorflow_meta_graph_def(
            graph,
            var_list=var_list,
            saver_def=saver.saver_def if saver is not None else None,
            tags=tags,
            signature_def_map=signature_def_map,
            clear_devices=clear_devices,
        )
        self._meta_graphs.append(meta)

    def add_meta_graph_and_variables(
        self,
        sess: Any,
        tags: Sequence[str],
        signature_def_map: dict[str, Any] | None = None,
        assets_collection: Sequence[Any] | None = None,
        legacy_init_op: Any = None,
        clear_devices: bool = False,
        main_op: Any = None,
        strip_default_attrs: bool = False,
        saver: saver_lib.Saver | None = None,
    ) -> None:
        """Save the variables of ``sess`` and the meta graph of its graph under ``tags``."""
        if self._has_saved_variables:
            raise AssertionError(
                "Graph state including variables and assets has already been saved. Please "
                "invoke `add_meta_graph()` instead."
            )
        graph = sess.graph
        with graph.as_default():
            saver = saver or saver_lib.Saver(sharded=True, allow_empty=True)
        variables_dir = os.path.join(self._temp_dir, VARIABLES_DIRECTORY)
        os.makedirs(variables_dir)
        saver.save(
            sess,
            os.path.join(variables_dir, VARIABLES_FILENAME),
            write_meta_graph=False,
            write_state=False,
        )
        self._copy_assets(sess, assets_collection)
        self._add_meta_graph(
            graph, saver, tags, signature_def_map, main_op or legacy_init_op, clear_devices
        )
        self._has_saved_variables = True

    def add_meta_graph(
        self,
        tags: Sequence[str],
        signature_def_map: dict[str, Any] | None = None,
        assets_collection: Sequence[Any] | None = None,
        legacy_init_op: Any = None,
        clear_devices: bool = False,
        main_op: Any = None,
        strip_default_attrs: bool = False,
        saver: saver_lib.Saver | None = None,
    ) -> None:
        """Add the default graph's meta graph under ``tags`` (sharing the saved variables)."""
        if not self._has_saved_variables:
            raise AssertionError(
                "Graph state including variables and assets has not been saved yet. Please "
                "invoke `add_meta_graph_and_variables()` first."
            )
        graph = ops_lib.get_default_graph()
        if saver is None:
            savers = graph.get_collection(GraphKeys.SAVERS)
            saver = savers[0] if savers else saver_lib.Saver(sharded=True, allow_empty=True)
        self._add_meta_graph(
            graph, saver, tags, signature_def_map, main_op or legacy_init_op, clear_devices
        )

    def _copy_assets(self, sess: Any, assets: Sequence[Any] | None) -> None:
        if not assets:
            return
        target = os.path.join(self._temp_dir, ASSETS_DIRECTORY)
        os.makedirs(target, exist_ok=True)
        for asset in assets:
            path = asset if isinstance(asset, str) else io_ops._as_str(sess.run(asset))
            shutil.copy2(path, os.path.join(target, os.path.basename(path)))

    def save(self, as_text: bool = False) -> str:
        """Write saved_model.pb (.pbtxt) and move the export into place; returns ``export_dir``."""
        saved_model = protos.SavedModel(saved_model_schema_version=1, meta_graphs=self._meta_graphs)
        if as_text:
            name, data = SAVED_MODEL_FILENAME_PBTXT, text_format.MessageToString(saved_model)
        else:
            name, data = SAVED_MODEL_FILENAME_PB, saved_model.SerializeToString()
        saver_lib.write_atomically(os.path.join(self._temp_dir, name), data)
        if os.path.isdir(self._export_dir):
            os.rmdir(self._export_dir)  # empty (checked on construction)
        os.rename(self._temp_dir, self._export_dir)
        io_ops._fsync_dir(os.path.dirname(os.path.abspath(self._export_dir)))
        return self._export_dir


Builder = SavedModelBuilder
