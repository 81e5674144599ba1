"""File names and collection keys of TensorFlow's SavedModel (``tf.saved_model.constants``).

    export_dir/SAVED_MODEL_FILENAME_PB                      the SavedModel proto
    export_dir/VARIABLES_DIRECTORY/VARIABLES_FILENAME.*     the checkpoint
    export_dir/ASSETS_DIRECTORY/                            the assets

The values are TensorFlow's, byte for byte, so directories and collections interoperate.
"""

SAVED_MODEL_SCHEMA_VERSION = 1
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"
MAIN_OP_KEY = "saved_model_main_op"
LEGACY_INIT_OP_KEY = "legacy_init_op"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
