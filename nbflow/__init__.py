"""nbflow: TensorFlow 1.x's dataflow graphs, re-imagined for notebooks.

    import nbflow as tf
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.reduce_sum(x * 2.0)
    with tf.Session() as sess:
        print(sess.run(y, {x: [[1, 2, 3]]}))

This module re-exports the public TF1 surface; the code lives in the layered subpackages.
"""

from nbflow import errors, gfile
from nbflow.framework import dtypes
from nbflow.framework.dtypes import *  # noqa: F403 - tf.float32 and friends
from nbflow.framework.dtypes import DType, as_dtype
from nbflow.framework.graph_def import import_graph_def
from nbflow.framework.protos import AttrValue, GraphDef, MetaGraphDef, NodeDef  # TF's protos
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
from nbflow.ops.control_flow_ops import case, cond, group, no_op, tuple, while_loop  # noqa: A004
from nbflow.ops.data_flow_ops import (
    FIFOQueue,
    PaddingFIFOQueue,
    PriorityQueue,
    QueueBase,
    RandomShuffleQueue,
)
from nbflow.ops.functional_ops import foldl, foldr, map_fn, scan
from nbflow.ops.parsing_ops import decode_csv
from nbflow.ops.tensor_array_ops import TensorArray
from nbflow.ops.reader_ops import (
    FixedLengthRecordReader,
    ReaderBase,
    TextLineReader,
    TFRecordReader,
)
from nbflow.ops.data_flow_ops import (
    ConditionalAccumulator,
    SparseConditionalAccumulator,
)
from nbflow.framework.resources import reset_containers
from nbflow.ops import reader_ops as _reader_ops
import types as _types

# tf.python_io / tf.io: TFRecord files (TFRecordWriter, tf_record_iterator).
python_io = _types.SimpleNamespace(
    TFRecordWriter=_reader_ops.TFRecordWriter, tf_record_iterator=_reader_ops.tf_record_iterator
)
io = python_io
from nbflow.ops.math_ops import *  # noqa: F403
from nbflow.ops.state_ops import assign, assign_add, assign_sub
from nbflow.ops import init_ops as initializers
from nbflow.ops.init_ops import (
    constant_initializer,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    ones_initializer,
    orthogonal_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    truncated_normal_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from nbflow.ops.random_ops import (
    get_seed,
    multinomial,
    random_normal,
    random_shuffle,
    random_uniform,
    set_random_seed,
    truncated_normal,
)
from nbflow.ops.variable_scope import (
    AUTO_REUSE,
    VariableScope,
    get_local_variable,
    get_variable,
    get_variable_scope,
    variable_op_scope,
    variable_scope,
)
from nbflow.ops.partitioned_variables import (
    PartitionedVariable,
    fixed_size_partitioner,
    min_max_variable_partitioner,
    variable_axis_size_partitioner,
)
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
from nbflow.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from nbflow.framework.sparse_tensor import (
    SparseTensor,
    SparseTensorValue,
    convert_to_tensor_or_sparse_tensor,
)
from nbflow.ops.sparse_ops import (
    sparse_concat,
    sparse_fill_empty_rows,
    sparse_placeholder,
    sparse_reorder,
    sparse_reshape,
    sparse_retain,
    sparse_tensor_to_dense,
    sparse_to_dense,
)
from nbflow.ops.sparse_math_ops import (
    sparse_add,
    sparse_reduce_sum,
    sparse_reduce_sum_sparse,
    sparse_softmax,
    sparse_tensor_dense_matmul,
)
from nbflow.gradients import (
    AggregationMethod,
    NotDifferentiable,
    RegisterGradient,
    gradient_override_map,
    gradients,
    no_gradient,
)
from nbflow.ops.clip_ops import clip_by_global_norm, clip_by_norm, clip_by_value, global_norm
from nbflow.ops.numerics import add_check_numerics_ops, check_numerics, verify_tensor_all_finite
from nbflow.ops.check_ops import (
    Assert,
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_near,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_proper_iterable,
    assert_rank,
    assert_rank_at_least,
    assert_rank_in,
    assert_scalar,
    assert_shapes,
    assert_type,
)
from nbflow.ops.scan_ops import cumprod, cumsum
from nbflow.ops.gather_nd_ops import gather_nd, scatter_nd
from nbflow.ops.segment_ops import segment_sum
from nbflow.ops.sequence_ops import reverse_sequence, sequence_mask
from nbflow.ops.einsum_ops import einsum, tensordot
from nbflow.ops.sort_ops import argsort, bincount, histogram_fixed_width, sort, unique
from nbflow.ops.script_ops import Print, numpy_function, py_func
from nbflow.ops.script_ops import print_v2 as print  # noqa: A004 - TensorFlow's tf.print
from nbflow import compat
from nbflow.compat import disable_eager_execution, disable_v2_behavior, executing_eagerly
from nbflow import data, nn, train
from nbflow import layers, losses, metrics  # tf.layers, tf.losses, tf.metrics
from nbflow import estimator  # tf.estimator (above train and data)
from nbflow.ops import image_ops as image  # tf.image
from nbflow import saved_model, summary  # checkpoints, event logs, export
from nbflow import sparse  # tf.sparse
from nbflow.framework import graph_util

from nbflow import test  # noqa: E402 - tf.test.is_gpu_available

newaxis = None
__version__ = "0.1.0"


def load_ipython_extension(ipython):
    """``%load_ext nbflow``: register the %%dataflow magics (see nbflow.notebook)."""
    from nbflow.notebook import load_ipython_extension as load

    load(ipython)


def _register_in_ipython():
    import sys

    if "IPython" in sys.modules:  # only inside IPython; the notebook layer loads lazily
        from nbflow.notebook import register_if_in_ipython

        register_if_in_ipython()


_register_in_ipython()
