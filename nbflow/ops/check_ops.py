"""Assertions (TensorFlow 1.x's ``check_ops``): the Assert op and the ``assert_*`` builders.

``Assert(condition, data)`` is a stateful op without outputs: when a step runs it and the
scalar bool ``condition`` is false, the step fails with InvalidArgumentError, "assertion
failed: " followed by each ``data`` item in brackets, summarized as ``tf.Print`` writes it.
The ``assert_*`` builders return such an op, to be run through ``tf.control_dependencies``:

    with tf.control_dependencies([tf.assert_positive(x)]):
        y = tf.identity(x)

As in TensorFlow, each builder also checks what is already known when the graph is built:
comparisons of two constants that fail, or a static rank or dtype that violates the check,
raise at once (InvalidArgumentError, ValueError or TypeError); a rank or dtype check that
statically holds returns a ``no_op``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, Sample, TensorSpec
from nbflow.ops.constant_ops import _create, identity
from nbflow.ops.control_flow_ops import group, no_op
from nbflow.ops.join_ops import concat
from nbflow.ops.math_binary import (
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_or,
    maximum,
    not_equal,
)
from nbflow.ops.math_reductions import reduce_all
from nbflow.ops.math_unary import abs as math_abs
from nbflow.ops.script_ops import summarize_value
from nbflow.ops.shape_ops import rank as rank_of
from nbflow.ops.shape_ops import reshape
from nbflow.ops.shape_ops import shape
from nbflow.ops.slicing_ops import slice as slice_

Tensor = ops_lib.Tensor
Operation = ops_lib.Operation


class AssertOp(OpDef):
    """Nothing while ``condition`` holds; InvalidArgumentError listing ``data`` when it does not."""

    type = "Assert"
    inputs = ("condition", "data*")
    attrs = {"summarize": 3}
    num_outputs = 0
    stateful = True
    differentiable = False
    cpu_only = True  # TensorFlow keeps Assert's inputs in host memory
    samples = [
        Sample(condition=np.array(True), data=[np.array(b"x must be positive"), (2, 3)]),
        Sample(condition=np.array(True), data=[(5,), np.array(7, np.int32)], summarize=-1),
        Sample(condition=np.array(True), data=[]),
    ]

    def infer(self, condition: TensorSpec, data: list[TensorSpec], summarize: int) -> list:
        if condition.dtype.base_dtype != dtypes.bool:
            raise TypeError(
                f"Input 'condition' of 'Assert' Op has type {condition.dtype.name} that does "
                "not match expected type of bool"
            )
        if condition.shape.ndims not in (None, 0):
            raise ValueError(
                f"Shape must be rank 0 but is rank {condition.shape.ndims}: Assert's condition "
                "is one bool; reduce it with tf.reduce_all"
            )
        return []

    def compute(self, ctx: KernelContext, condition: Any, data: Any, summarize: int) -> tuple:
        condition = np.asarray(condition)
        if condition.ndim != 0 and condition.shape != (1,):  # TensorFlow's "legacy scalar"
            raise errors.InvalidArgumentError(
                None, None, f"In[0] should be a scalar: {list(condition.shape)}"
            )
        if condition.reshape(-1)[0]:
            return ()
        items = " ".join(f"[{summarize_value(d, summarize)}]" for d in data)
        raise errors.InvalidArgumentError(None, None, f"assertion failed: {items}")


def Assert(  # noqa: N802 - TensorFlow's name
    condition: Any, data: Sequence[Any], summarize: int | None = None, name: str | None = None
) -> Operation:
    """An op that fails the step, printing ``data``, when the scalar bool ``condition`` is false.

    >>> import nbflow as tf
    >>> x = tf.placeholder(tf.int32, [3])
    >>> check = tf.Assert(tf.reduce_all(x > 0), ["x must be positive", x])
    >>> tf.Session().run(check, {x: [-1, 2, 3]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nbflow.errors.InvalidArgumentError: assertion failed: [x must be positive] [-1 2 3] ...
    """
    data = list(data)
    with ops_lib.name_scope(name, "Assert", [condition, *data]):
        tensors = [ops_lib.convert_to_tensor(d) for d in data]
        condition = ops_lib.convert_to_tensor(condition, name="Condition")
        attrs = {"summarize": 3 if summarize is None else int(summarize)}
        return _create("Assert", [condition, tensors], attrs, name="Assert")


def _assert_static(condition: bool, data: Sequence[Any]) -> None:
    """Raise now, with the data's constant values, when a check fails on constants."""
    if condition:
        return
    shown = []
    for item in data:
        value = ops_lib.constant_value(item) if isinstance(item, Tensor) else None
        shown.append(str(item if value is None else value))
    raise errors.InvalidArgumentError(None, None, "\n".join(shown))


# --- comparisons ----------------------------------------------------------------------------------
def _binary_assert(
    symbol: str,
    default_name: str,
    compare: Callable[[Any, Any], Tensor],
    static_compare: Callable[[Any, Any], Any],
    x: Any,
    y: Any,
    data: Sequence[Any] | None,
    summarize: int | None,
    message: str | None,
    name: str | None,
    holds: str = "element-wise",
) -> Operation:
    message = message or ""
    with ops_lib.name_scope(name, default_name, [x, y]):
        x = ops_lib.convert_to_tensor(x, name="x")
        y = ops_lib.convert_to_tensor(y, name="y")
        if data is None:
            data = [
                message,
                f"Condition x {symbol} y did not hold {holds}:",
                f"x ({x.name}) = ",
                x,
                f"y ({y.name}) = ",
                y,
            ]
        condition = reduce_all(compare(x, y))
        x_static, y_static = ops_lib.constant_value(x), ops_lib.constant_value(y)
        if x_static is not None and y_static is not None:
            _assert_static(bool(np.all(static_compare(x_static, y_static))), data)
        return Assert(condition, data, summarize=summarize)


def assert_equal(
    x: Any,
    y: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that ``x == y`` holds element-wise (with broadcasting).

    >>> import nbflow as tf
    >>> x = tf.placeholder(tf.int32, [2])
    >>> tf.Session().run(tf.assert_equal(x, [1, 2]), {x: [1, 2]})
    """
    return _binary_assert(
        "==", "assert_equal", equal, np.equal, x, y, data, summarize, message, name
    )


def assert_none_equal(
    x: Any,
    y: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that ``x != y`` holds for every element (with broadcasting)."""
    return _binary_assert(
        "!=",
        "assert_none_equal",
        not_equal,
        np.not_equal,
        x,
        y,
        data,
        summarize,
        message,
        name,
        holds="for every single element",
    )


def assert_less(
    x: Any,
    y: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that ``x < y`` holds element-wise (with broadcasting)."""
    return _binary_assert("<", "assert_less", less, np.less, x, y, data, summarize, message, name)


def assert_less_equal(
    x: Any,
    y: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that ``x <= y`` holds element-wise (with broadcasting)."""
    return _binary_assert(
        "<=", "assert_less_equal", less_equal, np.less_equal, x, y, data, summarize, message, name
    )


def assert_greater(
    x: Any,
    y: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that ``x > y`` holds element-wise (with broadcasting)."""
    return _binary_assert(
        ">", "assert_greater", greater, np.greater, x, y, data, summarize, message, name
    )


def assert_greater_equal(
    x: Any,
    y: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that ``x >= y`` holds element-wise (with broadcasting)."""
    return _binary_assert(
        ">=",
        "assert_greater_equal",
        greater_equal,
        np.greater_equal,
        x,
        y,
        data,
        summarize,
        message,
        name,
    )


# --- signs: a comparison with zero ----------------------------------------------------------------
def _sign_assert(
    condition_text: str,
    default_name: str,
    check: Callable[..., Operation],
    zero_first: bool,
    x: Any,
    data: Sequence[Any] | None,
    summarize: int | None,
    message: str | None,
    name: str | None,
) -> Operation:
    message = message or ""
    with ops_lib.name_scope(name, default_name, [x]):
        x = ops_lib.convert_to_tensor(x, name="x")
        if data is None:
            data = [message, f"Condition {condition_text} did not hold element-wise:"]
            data += [f"x ({x.name}) = ", x]
        zero = ops_lib.convert_to_tensor(0, dtype=x.dtype.base_dtype)
        pair = (zero, x) if zero_first else (x, zero)
        return check(*pair, data=data, summarize=summarize)


def assert_positive(
    x: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that every element of ``x`` is > 0.

    >>> import nbflow as tf
    >>> x = tf.placeholder(tf.float32, [2])
    >>> with tf.control_dependencies([tf.assert_positive(x)]):
    ...     y = tf.identity(x)
    >>> tf.Session().run(y, {x: [1.0, 2.0]}).tolist()
    [1.0, 2.0]
    """
    return _sign_assert(
        "x > 0", "assert_positive", assert_less, True, x, data, summarize, message, name
    )


def assert_negative(
    x: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that every element of ``x`` is < 0."""
    return _sign_assert(
        "x < 0", "assert_negative", assert_less, False, x, data, summarize, message, name
    )


def assert_non_negative(
    x: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that every element of ``x`` is >= 0."""
    return _sign_assert(
        "x >= 0", "assert_non_negative", assert_less_equal, True, x, data, summarize, message, name
    )


def assert_non_positive(
    x: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that every element of ``x`` is <= 0."""
    return _sign_assert(
        "x <= 0", "assert_non_positive", assert_less_equal, False, x, data, summarize, message, name
    )


# --- ranks ----------------------------------------------------------------------------------------
def _rank(x: Tensor) -> Tensor:
    """``x``'s rank, a constant when it is static (so x itself need not be computed or fed)."""
    if x.shape.ndims is None:
        return rank_of(x)
    return ops_lib.convert_to_tensor(x.shape.ndims, dtype=dtypes.int32)


def _shape(x: Tensor) -> Tensor:
    """``x``'s shape, a constant when it is fully defined, as TensorFlow's ``tf.shape`` folds it."""
    if not x.shape.is_fully_defined():
        return shape(x)
    return ops_lib.convert_to_tensor(x.shape.as_list(), dtype=dtypes.int32)


class _StaticRankError(ValueError):
    """The static rank already violates the check (reworded by the public builders)."""

    def __init__(self, actual: int, given: int):
        super().__init__("Static rank condition failed", actual, given)
        self.actual, self.given = actual, given


def _assert_rank_condition(
    x: Tensor,
    rank: Tensor,
    static_condition: Callable[[int, int], bool],
    dynamic_condition: Callable[[Any, Any], Tensor],
    data: Sequence[Any],
    summarize: int | None,
) -> Operation:
    """A no_op when the static rank decides the check, else an Assert on the run-time rank."""
    assert_type(rank, dtypes.int32)
    rank_static = ops_lib.constant_value(rank)
    if rank_static is not None:
        if np.ndim(rank_static) != 0:
            raise ValueError("Rank must be a scalar.")
        x_rank = x.shape.ndims
        if x_rank is not None:
            if not static_condition(x_rank, int(rank_static)):
                raise _StaticRankError(x_rank, int(rank_static))
            return no_op(name="static_checks_determined_all_ok")
    condition = dynamic_condition(_rank(x), rank)
    if rank_static is None:
        # Catches assert_rank(x, [n]) meant as assert_rank(x, n), when n is only known at run time.
        rank_check = assert_rank(rank, 0, data=["Rank must be a scalar. Received rank: ", rank])
        with ops_lib.control_dependencies([rank_check]):
            condition = identity(condition)
    return Assert(condition, data, summarize=summarize)


def _rank_assert(
    relation: str,
    default_name: str,
    static_condition: Callable[[int, int], bool],
    dynamic_condition: Callable[[Any, Any], Tensor],
    x: Any,
    rank: Any,
    data: Sequence[Any] | None,
    summarize: int | None,
    message: str | None,
    name: str | None,
) -> Operation:
    with ops_lib.name_scope(name, default_name, [x, rank, *(data or [])]):
        x = ops_lib.convert_to_tensor(x, name="x")
        rank = ops_lib.convert_to_tensor(rank, name="rank")
        message = message or ""
        if data is None:
            data = [message, f"Tensor {x.name} must have {relation}", rank]
            data += ["Received shape: ", _shape(x)]
        try:
            return _assert_rank_condition(
                x, rank, static_condition, dynamic_condition, data, summarize
            )
        except _StaticRankError as e:
            raise ValueError(
                f"{message}.  Tensor {x.name} must have {relation} {e.given}.  Received rank "
                f"{e.actual}, shape {x.shape}"
            ) from None


def assert_rank(
    x: Any,
    rank: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that ``x`` has rank ``rank``; ValueError now if its static rank is another.

    >>> import nbflow as tf
    >>> tf.assert_rank(tf.placeholder(tf.float32, [2, 3]), 2).type
    'NoOp'
    """
    return _rank_assert(
        "rank", "assert_rank", operator.eq, equal, x, rank, data, summarize, message, name
    )


def assert_rank_at_least(
    x: Any,
    rank: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that ``x`` has rank ``rank`` or more; ValueError now if its static rank is less."""
    return _rank_assert(
        "rank at least",
        "assert_rank_at_least",
        operator.ge,
        greater_equal,
        x,
        rank,
        data,
        summarize,
        message,
        name,
    )


# --- dtypes and static properties -----------------------------------------------------------------
def assert_integer(x: Any, message: str | None = None, name: str | None = None) -> Operation:
    """A no_op if ``x`` has an integer dtype; TypeError otherwise (a dtype is always static)."""
    message = message or ""
    with ops_lib.name_scope(name, "assert_integer", [x]):
        x = ops_lib.convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(
                f'{message}  Expected "x" to be integer type.  Found: {x.name} of dtype {x.dtype}'
            )
        return no_op("statically_determined_was_integer")


def assert_type(
    tensor: Any, tf_type: Any, message: str | None = None, name: str | None = None
) -> Operation:
    """A no_op if ``tensor``'s dtype is ``tf_type``; TypeError otherwise."""
    message = message or ""
    tf_type = dtypes.as_dtype(tf_type)
    with ops_lib.name_scope(name, "assert_type", [tensor]):
        tensor = ops_lib.convert_to_tensor(tensor, name="tensor")
        if tensor.dtype.base_dtype != tf_type.base_dtype:
            raise TypeError(f"{message}  {tensor.name} must be of type {tf_type}")
        return no_op("statically_determined_correct_type")


def assert_scalar(tensor: Any, name: str | None = None, message: str | None = None) -> Tensor:
    """``tensor`` itself, if its static shape is a scalar's; ValueError otherwise."""
    with ops_lib.name_scope(name, "assert_scalar", [tensor]) as scope:
        tensor = ops_lib.convert_to_tensor(tensor, name=scope)
        if tensor.shape.ndims != 0:
            raise ValueError(
                f"{message or ''}Expected scalar shape for {tensor.name}, saw shape: "
                f"{tensor.shape}."
            )
        return tensor


def assert_proper_iterable(values: Any) -> None:
    """TypeError unless ``values`` is an iterable of values (not a tensor, array or string)."""
    if isinstance(values, (Tensor, np.ndarray, str, bytes)):
        raise TypeError(
            f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}'
        )
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


# --- closeness, sets of ranks and symbolic shapes -------------------------------------------------
def assert_near(
    x: Any,
    y: Any,
    rtol: Any = None,
    atol: Any = None,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that ``x`` and ``y`` are close element-wise: ``|x - y| < atol + rtol * |y|``.

    Both tolerances default to 10 times the epsilon of ``x``'s dtype (of its real part for
    complex). As in TensorFlow 1.x the check is strict (``<``) and is only made when the step
    runs, even for constants.

    >>> import nbflow as tf
    >>> x = tf.placeholder(tf.float32, [2])
    >>> tf.Session().run(tf.assert_near(x, [1.0, 2.0], atol=1e-3), {x: [1.0001, 2.0]})
    """
    message = message or ""
    with ops_lib.name_scope(name, "assert_near", [x, y, rtol, atol, *(data or [])]):
        x = ops_lib.convert_to_tensor(x, name="x")
        y = ops_lib.convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        dtype = x.dtype.base_dtype
        if dtype.is_complex:
            dtype = dtype.real_dtype
        if not dtype.is_floating:
            raise ValueError(f"assert_near needs a floating or complex dtype, got {x.dtype.name}")
        eps = float(np.finfo(dtype.np).eps)
        rtol = ops_lib.convert_to_tensor(10 * eps if rtol is None else rtol, dtype, name="rtol")
        atol = ops_lib.convert_to_tensor(10 * eps if atol is None else atol, dtype, name="atol")
        if data is None:
            data = [
                message,
                f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}",
                f"x ({x.name}) = ",
                x,
                f"y ({y.name}) = ",
                y,
            ]
        tol = atol + rtol * math_abs(y)
        diff = math_abs(x - y)
        condition = reduce_all(less(diff, tol))
        return Assert(condition, data, summarize=summarize)


def assert_rank_in(
    x: Any,
    ranks: Sequence[Any],
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An Assert that ``x``'s rank is one of ``ranks``; ValueError now if its static rank is
    none of them (a no_op when it is one)."""
    ranks = list(ranks)
    with ops_lib.name_scope(name, "assert_rank_in", [x, *ranks, *(data or [])]):
        x = ops_lib.convert_to_tensor(x, name="x")
        rank_tensors = [ops_lib.convert_to_tensor(r, name="rank") for r in ranks]
        message = message or ""
        if data is None:
            data = [message, f"Tensor {x.name} must have rank in", *rank_tensors]
            data += ["Received shape: ", _shape(x)]
        for r in rank_tensors:
            assert_type(r, dtypes.int32)
        statics = [ops_lib.constant_value(r) for r in rank_tensors]
        if all(s is not None for s in statics):
            if any(np.ndim(s) != 0 for s in statics):
                raise ValueError("Rank must be a scalar.")
            given = tuple(int(s) for s in statics)
            x_rank = x.shape.ndims
            if x_rank is not None:
                if x_rank not in given:
                    raise ValueError(
                        f"{message}.  Tensor {x.name} must have rank in {given}.  Received rank "
                        f"{x_rank}, shape {x.shape}"
                    )
                return no_op(name="static_checks_determined_all_ok")
        actual = _rank(x)
        if rank_tensors:
            condition = equal(rank_tensors[0], actual)
            for r in rank_tensors[1:]:
                condition = logical_or(condition, equal(r, actual))
        else:
            condition = ops_lib.convert_to_tensor(False)
        for r, s in zip(rank_tensors, statics):
            if s is None:  # assert_rank_in(x, [[n]]) meant as assert_rank_in(x, [n])
                rank_check = assert_rank(r, 0, data=["Rank must be a scalar. Received rank: ", r])
                with ops_lib.control_dependencies([rank_check]):
                    condition = identity(condition)
        return Assert(condition, data, summarize=summarize)


def _dimension_sizes(x: Tensor) -> Any:
    """``x``'s dimension sizes, ints where static and scalar tensors where not; a scalar counts as
    a vector of one element, as TensorFlow's assert_shapes treats it."""
    rank = x.shape.ndims
    if rank == 0:
        return [1]
    if rank is not None:
        dynamic = None
        sizes: list[Any] = []
        size: Any
        for i, size in enumerate(x.shape.as_list()):
            if size is None:
                dynamic = shape(x) if dynamic is None else dynamic
                size = dynamic[i]
            sizes.append(size)
        return sizes
    return _UnknownRankShape(x)


class _UnknownRankShape:
    """The sizes of a tensor of unknown rank, taken from its run-time shape (a scalar's being
    [1]); indexed by the dimension a symbolic shape names."""

    def __init__(self, x: Tensor):
        padded = concat([shape(x), ops_lib.convert_to_tensor([1], dtypes.int32)], 0)
        self.sizes = slice_(padded, [0], reshape(maximum(rank_of(x), 1), [1]))

    def __getitem__(self, i: int) -> Tensor:
        return self.sizes[i]


def _has_known_value(size: Any) -> bool:
    if size is None or isinstance(size, Tensor):
        return False
    try:
        int(size)
    except (TypeError, ValueError):
        return False
    return True


def assert_shapes(
    shapes: Any,
    data: Sequence[Any] | None = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """An op asserting that tensors have the given symbolic shapes, as
    ``tf.debugging.assert_shapes``: ``shapes`` maps tensors (or is a list of pairs) to shapes
    whose entries are ints, names that must be the same size wherever they appear, or ``None``
    or ``"."`` for any size; a leading ``...`` or ``"*"`` stands for any further outer
    dimensions. A scalar counts as shape ``(1,)``. What the static shapes decide raises
    ValueError now; the rest is checked when the returned op runs.

    >>> import nbflow as tf
    >>> x, y = tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.float32, [None, 2])
    >>> check = tf.assert_shapes([(x, ("N", "Q")), (y, ("N", 2))])
    >>> tf.Session().run(check, {x: [[0, 1, 2]], y: [[0, 1]]})
    """
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    message = message or ""
    with ops_lib.name_scope(name, "assert_shapes", [*(data or [])]):
        constraints = [(ops_lib.convert_to_tensor(x), s) for x, s in pairs if s is not None]
        specs = []
        for tensor, symbolic in constraints:
            if not hasattr(symbolic, "__iter__") and not hasattr(symbolic, "__getitem__"):
                raise ValueError(
                    f"{message}.  Tensor {tensor.name}.  Specified shape must be an iterable.  "
                    "An iterable has the attribute `__iter__` or `__getitem__`.  Received "
                    f"specified shape: {symbolic}"
                )
            symbols = tuple(symbolic)
            innermost = False
            for i, symbol in enumerate(symbols):
                if not (symbol is Ellipsis or (isinstance(symbol, str) and symbol == "*")):
                    continue
                if i != 0:
                    raise ValueError(
                        f"{message}.  Tensor {tensor.name} specified shape index {i}.  Symbol "
                        "`...` or `*` for a variable number of unspecified dimensions is only "
                        "allowed as the first entry"
                    )
                innermost = True
            sizes = symbols[1:] if innermost else symbols
            specs.append((tensor, innermost, _dimension_sizes(tensor), sizes or (1,)))

        rank_assertions = []
        for tensor, innermost, _, sizes in specs:
            rank = len(sizes)
            if innermost:
                if rank in (0, 1):
                    continue
                check = assert_rank_at_least(tensor, rank, data, summarize, message)
            elif rank in (0, 1):  # a scalar passes for a vector of one element
                check = assert_rank_in(tensor, [0, 1], data, summarize, message)
            else:
                check = assert_rank(tensor, rank, data, summarize, message)
            rank_assertions.append(check)

        size_assertions = []
        named: dict[Any, tuple[Any, Tensor, int]] = {}
        for tensor, innermost, actual_sizes, sizes in specs:
            for i, symbol in enumerate(sizes):
                if symbol is None or (isinstance(symbol, str) and symbol == "."):
                    continue
                dim = i - len(sizes) if innermost else i
                if _has_known_value(symbol):
                    specified, how = int(symbol), "Specified explicitly"
                elif symbol in named:
                    specified, by, at = named[symbol]
                    how = f"Specified by tensor {by.name} dimension {at}"
                else:
                    named[symbol] = (actual_sizes[dim], tensor, dim)
                    continue
                actual = actual_sizes[dim]
                if _has_known_value(actual) and _has_known_value(specified):
                    if int(actual) != int(specified):
                        raise ValueError(
                            f"{message}.  {how}.  Tensor {tensor.name} dimension {dim} must "
                            f"have size {specified}.  Received size {actual}, shape "
                            f"{tensor.shape}"
                        )
                    continue
                condition = equal(
                    ops_lib.convert_to_tensor(actual), ops_lib.convert_to_tensor(specified)
                )
                item_data = data
                if item_data is None:
                    item_data = [message, how, f"Tensor {tensor.name} dimension", dim]
                    item_data += ["must have size", specified, "Received shape: ", shape(tensor)]
                size_assertions.append(Assert(condition, item_data, summarize=summarize))

        with ops_lib.control_dependencies(rank_assertions):
            return group(size_assertions)
