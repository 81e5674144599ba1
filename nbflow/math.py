"""``tf.math``: TensorFlow 1.15's math namespace, re-exported from the op families.

Most of its names are also top-level (``tf.math.log`` is ``tf.log``); the nn ones are
``tf.nn``'s (``tf.math.softplus`` is ``tf.nn.softplus``). The ops live in ``nbflow.ops``:
elementwise in ``math_unary``/``math_binary``/``math_special``, reductions in ``math_reductions``,
segments in ``segment_ops``/``segment_reductions``, graph-built ones in ``math_composite``.

    >>> import nbflow as tf
    >>> tf.math.log is tf.log
    True
"""

from nbflow.nn import (  # noqa: F401
    in_top_k,
    l2_normalize,
    log_softmax,
    softmax,
    softplus,
    softsign,
    top_k,
    zero_fraction,
)
from nbflow.ops.gather_ops import unsorted_segment_sum  # noqa: F401
from nbflow.ops.math_binary import (  # noqa: F401
    add,
    atan2,
    divide,
    equal,
    floordiv,
    floormod,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    not_equal,
    pow,
    scalar_mul,
    squared_difference,
    subtract,
    truediv,
)
from nbflow.ops.math_composite import (  # noqa: F401
    confusion_matrix,
    cumulative_logsumexp,
    is_non_decreasing,
    is_strictly_increasing,
    polyval,
    reduce_euclidean_norm,
    reduce_std,
    reduce_variance,
)
from nbflow.ops.math_reductions import (  # noqa: F401
    accumulate_n,
    add_n,
    argmax,
    argmin,
    count_nonzero,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
)
from nbflow.ops.math_special import (  # noqa: F401
    acos,
    acosh,
    angle,
    asin,
    asinh,
    atan,
    atanh,
    bessel_i0,
    bessel_i0e,
    bessel_i1,
    bessel_i1e,
    betainc,
    cosh,
    digamma,
    erf,
    erfc,
    igamma,
    igammac,
    imag,
    lbeta,
    lgamma,
    nextafter,
    polygamma,
    real,
    reciprocal_no_nan,
    rint,
    sinh,
    xdivy,
    xlogy,
    zeta,
)
from nbflow.ops.math_special import div_no_nan as divide_no_nan  # noqa: F401
from nbflow.ops.math_special import mul_no_nan as multiply_no_nan  # noqa: F401
from nbflow.ops.math_unary import (  # noqa: F401
    abs,
    ceil,
    conj,
    cos,
    exp,
    expm1,
    floor,
    is_finite,
    is_inf,
    is_nan,
    log,
    log1p,
    log_sigmoid,
    logical_not,
    negative,
    reciprocal,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    tan,
    tanh,
)
from nbflow.ops.scan_ops import cumprod, cumsum  # noqa: F401
from nbflow.ops.segment_ops import segment_sum  # noqa: F401
from nbflow.ops.segment_reductions import (  # noqa: F401
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    unsorted_segment_max,
    unsorted_segment_mean,
    unsorted_segment_min,
    unsorted_segment_prod,
    unsorted_segment_sqrt_n,
)
from nbflow.ops.shape_ops import invert_permutation  # noqa: F401
from nbflow.ops.sort_ops import bincount  # noqa: F401
