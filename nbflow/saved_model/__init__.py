"""The tf.saved_model namespace: export a model for inference and load it in a fresh process.

tf.saved_model.simple_save(sess, "/tmp/export", inputs={"x": x}, outputs={"y": y})
# elsewhere:
meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], "/tmp/export")
"""

from __future__ import annotations

from typing import Any

from nbflow.framework.ops import GraphKeys
from nbflow.saved_model import (
    builder,
    loader,
    signature_constants,
    signature_def_utils,
    tag_constants,
)
from nbflow.saved_model.builder import Builder, SavedModelBuilder
from nbflow.saved_model.loader import load, maybe_saved_model_directory
from nbflow.saved_model.signature_def_utils import (
    build_signature_def,
    build_tensor_info,
    get_tensor_from_tensor_info,
    predict_signature_def,
)

utils = signature_def_utils  # tf.saved_model.utils.build_tensor_info
SERVING = tag_constants.SERVING
DEFAULT_SERVING_SIGNATURE_DEF_KEY = signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY


def simple_save(
    session: Any,
    export_dir: str,
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    legacy_init_op: Any = None,
) -> str:
    """Export the session's model for serving: tag "serve", one "serving_default" signature."""
    signature_def_map = {
        signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: predict_signature_def(
            inputs, outputs
        )
    }
    b = SavedModelBuilder(export_dir)
    b.add_meta_graph_and_variables(
        session,
        tags=[tag_constants.SERVING],
        signature_def_map=signature_def_map,
        assets_collection=session.graph.get_collection(GraphKeys.ASSET_FILEPATHS),
        main_op=legacy_init_op,
        clear_devices=True,
    )
    return b.save()


__all__ = [
    "Builder",
    "DEFAULT_SERVING_SIGNATURE_DEF_KEY",
    "SERVING",
    "SavedModelBuilder",
    "build_signature_def",
    "build_tensor_info",
    "builder",
    "get_tensor_from_tensor_info",
    "load",
    "loader",
    "maybe_saved_model_directory",
    "predict_signature_def",
    "signature_constants",
    "signature_def_utils",
    "simple_save",
    "tag_constants",
    "utils",
]
