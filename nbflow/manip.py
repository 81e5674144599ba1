"""``tf.manip``: TensorFlow 1.15's tensor manipulation namespace, every name also top-level
(``tf.manip.roll`` is ``tf.roll``)."""

from nbflow.nn_tf1_names import batch_to_space_nd, space_to_batch_nd  # noqa: F401
from nbflow.ops.gather_nd_ops import gather_nd, scatter_nd  # noqa: F401
from nbflow.ops.join_ops import tile  # noqa: F401
from nbflow.ops.rearrange_ops import roll  # noqa: F401
from nbflow.ops.shape_ops import reshape, reverse  # noqa: F401
