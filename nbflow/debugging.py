"""``tf.debugging``: TensorFlow 1.15's assertions and numeric checks in one namespace.

Every name is also top-level (``tf.debugging.assert_equal`` is ``tf.assert_equal``);
``assert_all_finite`` is ``tf.verify_tensor_all_finite``. The ops live in ``nbflow.ops``:
assertions in ``check_ops``, NaN/Inf checks in ``numerics`` and ``math_unary``.

    >>> import nbflow as tf
    >>> tf.debugging.check_numerics is tf.check_numerics
    True
"""

from nbflow.framework.tf1_helpers import assert_same_float_dtype, is_numeric_tensor  # noqa: F401
from nbflow.ops.check_ops import (  # noqa: F401
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
from nbflow.ops.math_composite import is_non_decreasing, is_strictly_increasing  # noqa: F401
from nbflow.ops.math_unary import is_finite, is_inf, is_nan  # noqa: F401
from nbflow.ops.numerics import check_numerics  # noqa: F401
from nbflow.ops.numerics import verify_tensor_all_finite as assert_all_finite  # noqa: F401
