"""Loading a SavedModel into a session: the tagged meta graph, its variables and main op.

meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
sig = meta["signature_def"]["serving_default"]
y = sess.run(sig["outputs"]["y"]["name"], {sig["inputs"]["x"]["name"]: x})
"""

from __future__ import annotations

import json
import os
from typing import Any
from collections.abc import Sequence

from nbflow.ops import io_ops
from nbflow.saved_model import builder
from nbflow.train import saver as saver_lib


def maybe_saved_model_directory(export_dir: str) -> bool:
    return os.path.isfile(os.path.join(export_dir, builder.SAVED_MODEL_FILENAME))


def _read(export_dir: str) -> dict[str, Any]:
    path = os.path.join(export_dir, builder.SAVED_MODEL_FILENAME)
    try:
        with open(path) as f:
            document = json.load(f)
    except FileNotFoundError:
        raise OSError(f"SavedModel file does not exist at: {export_dir}") from None
    if document.get("format") != builder.FORMAT:
        raise OSError(f"{path} is not an nbflow SavedModel")
    return document


def load(
    sess: Any,
    tags: Sequence[str],
    export_dir: str,
    import_scope: str | None = None,
    **saver_kwargs: Any,
) -> dict[str, Any]:
    """Import the meta graph tagged ``tags`` into ``sess.graph``, restore, run the main op.

    Returns the MetaGraphDef (a dict; ``["signature_def"]`` names the served tensors).
    """
    document = _read(export_dir)
    wanted = set(tags)
    for meta in document["meta_graphs"]:
        if set(meta["meta_info_def"].get("tags", [])) == wanted:
            break
    else:
        available = [m["meta_info_def"].get("tags", []) for m in document["meta_graphs"]]
        raise RuntimeError(
            f"MetaGraphDef associated with tags {sorted(wanted)} could not be found in "
            f"SavedModel. Available tag-sets: {available}"
        )
    with sess.graph.as_default():
        saver = saver_lib.import_meta_graph(meta, import_scope=import_scope, **saver_kwargs)
        variables = os.path.join(
            export_dir, builder.VARIABLES_DIRECTORY, builder.VARIABLES_FILENAME
        )
        if saver is not None and io_ops.is_checkpoint(variables):
            saver.restore(sess, variables)
        for key in (builder.MAIN_OP_KEY, builder.LEGACY_INIT_OP_KEY):
            ops = sess.graph.get_collection(key)
            if ops:
                sess.run(ops[0])
                break
    return meta
