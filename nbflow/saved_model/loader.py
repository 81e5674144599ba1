"""Loading a SavedModel into a session: the tagged meta graph, its variables and main op.

meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
sig = meta["signature_def"]["serving_default"]
y = sess.run(sig["outputs"]["y"]["name"], {sig["inputs"]["x"]["name"]: x})

A SavedModel TensorFlow wrote (``saved_model.pb``, a ``SavedModel`` proto, with
``variables/variables.index``) loads the same way and returns TensorFlow's ``MetaGraphDef`` proto:
``meta.signature_def["serving_default"].outputs["y"].name``.
"""

from __future__ import annotations

import json
import os
from typing import Any
from collections.abc import Sequence

from google.protobuf import text_format

from nbflow.framework import protos
from nbflow.ops import io_ops
from nbflow.saved_model import builder, constants
from nbflow.train import saver as saver_lib


TF_SAVED_MODEL_FILENAME = "saved_model.pb"
TF_TEXT_FILENAME = "saved_model.pbtxt"


def maybe_saved_model_directory(export_dir: str) -> bool:
    return any(
        os.path.isfile(os.path.join(export_dir, name))
        for name in (builder.SAVED_MODEL_FILENAME, TF_SAVED_MODEL_FILENAME, TF_TEXT_FILENAME)
    )


def _load_tensorflow(
    sess: Any, tags: Sequence[str], export_dir: str, import_scope: str | None
) -> Any:
    path = os.path.join(export_dir, TF_SAVED_MODEL_FILENAME)
    saved_model = protos.SavedModel()
    try:
        if os.path.isfile(path):
            with open(path, "rb") as f:
                saved_model.ParseFromString(f.read())
        else:
            path = os.path.join(export_dir, TF_TEXT_FILENAME)
            with open(path) as f:
                text_format.Parse(f.read(), saved_model)
    except FileNotFoundError:
        raise OSError(f"SavedModel file does not exist at: {export_dir}") from None
    except Exception as e:
        raise OSError(f"Cannot parse {path} as a SavedModel: {e}") from None
    wanted = set(tags)
    metas = [m for m in saved_model.meta_graphs if set(m.meta_info_def.tags) == wanted]
    if not metas:
        available = [list(m.meta_info_def.tags) for m in saved_model.meta_graphs]
        raise RuntimeError(
            f"MetaGraphDef associated with tags {sorted(wanted)} could not be found in "
            f"SavedModel. Available tag-sets: {available}"
        )
    meta = metas[0]
    with sess.graph.as_default():
        saver = saver_lib.import_meta_graph(meta, import_scope=import_scope)
        variables = os.path.join(
            export_dir, constants.VARIABLES_DIRECTORY, constants.VARIABLES_FILENAME
        )
        if saver is not None and io_ops.is_checkpoint(variables):
            saver.restore(sess, variables)
        for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
            ops = sess.graph.get_collection(key)
            if ops:
                sess.run(ops[0])
                break
    return meta


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
) -> Any:
    """Import the meta graph tagged ``tags`` into ``sess.graph``, restore, run the main op.

    Returns the MetaGraphDef (a dict; ``["signature_def"]`` names the served tensors).
    """
    if not os.path.isfile(os.path.join(export_dir, builder.SAVED_MODEL_FILENAME)):
        return _load_tensorflow(sess, tags, export_dir, import_scope)
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
            export_dir, constants.VARIABLES_DIRECTORY, constants.VARIABLES_FILENAME
        )
        if saver is not None and io_ops.is_checkpoint(variables):
            saver.restore(sess, variables)
        for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
            ops = sess.graph.get_collection(key)
            if ops:
                sess.run(ops[0])
                break
    return meta
