"""nbflow: TensorFlow 1.x's dataflow graphs, re-imagined for notebooks.

    import nbflow as tf
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.reduce_sum(x * 2.0)
    with tf.Session() as sess:
        print(sess.run(y, {x: [[1, 2, 3]]}))

This module re-exports the public TF1 surface; the code lives in the layered subpackages.
"""

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework.dtypes import *  # noqa: F403 - tf.float32 and friends
from nbflow.framework.dtypes import DType, as_dtype
from nbflow.framework.graph_def import import_graph_def
from nbflow.framework.op_def import OpDef, TensorSpec
from nbflow.framework.ops import (
    Graph,
    GraphKeys,
    Operation,
    Tensor,
    add_to_collection,
    add_to_collections,
    colocate_with,
    container,
    control_dependencies,
    convert_to_tensor,
    device,
    get_collection,
    get_collection_ref,
    get_default_graph,
    get_default_session,
    is_tensor,
    name_scope,
    register_tensor_conversion_function,
    reset_default_graph,
)
from nbflow.framework.tensor_shape import Dimension, TensorShape
from nbflow.devices.spec import DeviceSpec
from nbflow.ops.array_ops import *  # noqa: F403
from nbflow.ops.control_flow_ops import group, no_op, tuple  # noqa: A004
from nbflow.ops.math_ops import *  # noqa: F403
from nbflow.ops.state_ops import assign, assign_add, assign_sub
from nbflow.ops.variables import (
    Variable,
    all_variables,
    global_variables,
    global_variables_initializer,
    initialize_all_variables,
    initialize_local_variables,
    initialize_variables,
    is_variable_initialized,
    local_variables,
    local_variables_initializer,
    model_variables,
    moving_average_variables,
    report_uninitialized_variables,
    trainable_variables,
    variables_initializer,
)
from nbflow.runtime.config import (
    ConfigProto,
    GPUOptions,
    GraphOptions,
    OptimizerOptions,
    RunMetadata,
    RunOptions,
)
from nbflow.runtime.session import InteractiveSession, Session

newaxis = None
__version__ = "0.1.0"
