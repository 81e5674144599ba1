"""Sparse in-place updates of variables: ``tf.scatter_update``/``add``/``sub``/``mul``/``div``/
``max``/``min`` (rows picked by ``indices``), ``tf.scatter_nd_update``/``add``/``sub`` (elements or
slices picked by index tuples) and ``tf.batch_scatter_update``.

Like ``AssignAdd`` they take the variable by reference, change its buffer in place and output the
reference, so reading the result reads the updated variable. A repeated index applies every
update for the accumulating kinds (NumPy's unbuffered ``ufunc.at``); for ``scatter_update`` the
last one wins, as on TensorFlow's CPU kernels. They have no gradient, as in TensorFlow.
"""

from __future__ import annotations

from typing import Any, ClassVar

from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, TensorSpec
from nbflow.framework.resources import VariableResource
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops.constant_ops import _int_tensor, ones_like
from nbflow.ops.join_ops import stack
from nbflow.ops.math_binary import multiply
from nbflow.ops.constant_ops import range as range_
from nbflow.ops.math_unary import cast
from nbflow.ops.shape_ops import reshape, shape
from nbflow.ops.gather_ops import gather

Tensor = ops_lib.Tensor


class _ScatterOp(OpDef):
    """Base of the row scatters: ``ref[indices[i]] <op>= updates[i]``, in place."""

    abstract = True
    inputs = ("ref&", "indices", "updates")
    attrs = {"use_locking": True}
    stateful = True
    differentiable = False
    ufunc: ClassVar[str] = ""  # the NumPy ufunc whose .at applies the updates; "" assigns

    def infer(self, ref: TensorSpec, indices: TensorSpec, updates: TensorSpec, use_locking: bool):
        if ref.dtype.base_dtype is not updates.dtype.base_dtype:
            raise TypeError(
                f"Input 'updates' of '{self.type}' Op has type {updates.dtype.base_dtype.name} "
                f"that does not match type {ref.dtype.base_dtype.name} of argument 'ref'"
            )
        expected = self.updates_shape(ref.shape, indices.shape)
        if updates.shape.ndims != 0 and not expected.is_compatible_with(updates.shape):
            raise ValueError(
                f"Shapes of updates {updates.shape} should be {expected} for ref {ref.shape} "
                f"and indices {indices.shape}"
            )
        return TensorSpec(ref.shape, ref.dtype)

    def updates_shape(self, ref: TensorShape, indices: TensorShape) -> TensorShape:
        if ref.ndims is None or indices.ndims is None:
            return TensorShape(None)
        return indices.concatenate(ref[1:])

    def positions(self, indices: Any) -> Any:
        return indices

    def compute(
        self,
        ctx: KernelContext,
        ref: VariableResource,
        indices: Any,
        updates: Any,
        use_locking: bool,
    ) -> Any:
        current = ref.read()
        where = self.positions(indices)
        if use_locking:
            with ref.lock:
                self.apply(ctx.xp, current, where, updates)
        else:
            self.apply(ctx.xp, current, where, updates)
        return ref

    def apply(self, xp: Any, current: Any, where: Any, updates: Any) -> None:
        if self.ufunc:
            getattr(xp, self.ufunc).at(current, where, updates)
        else:
            current[where] = updates


class ScatterUpdate(_ScatterOp):
    """ref[indices] = updates."""


class ScatterAdd(_ScatterOp):
    """ref[indices] += updates (repeated indices add up)."""

    ufunc = "add"


class ScatterSub(_ScatterOp):
    """ref[indices] -= updates."""

    ufunc = "subtract"


class ScatterMul(_ScatterOp):
    """ref[indices] *= updates."""

    ufunc = "multiply"


class ScatterDiv(_ScatterOp):
    """ref[indices] /= updates."""

    def apply(self, xp: Any, current: Any, where: Any, updates: Any) -> None:
        ufunc = xp.floor_divide if current.dtype.kind in "iu" else xp.true_divide
        ufunc.at(current, where, updates)


class ScatterMax(_ScatterOp):
    """ref[indices] = max(ref[indices], updates)."""

    ufunc = "maximum"


class ScatterMin(_ScatterOp):
    """ref[indices] = min(ref[indices], updates)."""

    ufunc = "minimum"


class _ScatterNdOp(_ScatterOp):
    """Base of the index-tuple scatters: ``indices[..., k]`` picks elements or slices of ref."""

    abstract = True

    def updates_shape(self, ref: TensorShape, indices: TensorShape) -> TensorShape:
        if ref.ndims is None or indices.ndims is None or indices[-1] is None:
            return TensorShape(None)
        k = indices[-1]
        return indices[:-1].concatenate(ref[k:])

    def positions(self, indices: Any) -> Any:
        return tuple(indices[..., i] for i in range(indices.shape[-1]))


class ScatterNdUpdate(_ScatterNdOp):
    """ref[indices[i]] = updates[i] for index tuples."""


class ScatterNdAdd(_ScatterNdOp):
    """ref[indices[i]] += updates[i] for index tuples."""

    ufunc = "add"


class ScatterNdSub(_ScatterNdOp):
    """ref[indices[i]] -= updates[i] for index tuples."""

    ufunc = "subtract"


def _scatter(op_type: str, ref: Any, indices: Any, updates: Any, use_locking: bool, name):
    ref_tensor = ref._ref() if hasattr(ref, "_ref") else ref
    updates = ops_lib.convert_to_tensor(updates, dtype=ref_tensor.dtype.base_dtype)
    inputs = [ref_tensor, _int_tensor(indices), updates]
    graph = ops_lib.get_default_graph()
    op = graph.create_op(op_type, inputs, {"use_locking": use_locking}, name=name or op_type)
    return op.outputs[0]


def scatter_update(ref: Any, indices: Any, updates: Any, use_locking: bool = True, name=None):
    """Set the rows ``indices`` of variable ``ref`` to ``updates``; returns the updated ref.

    >>> import nbflow as tf
    >>> v = tf.Variable([1, 2, 3, 4])
    >>> with tf.Session() as sess:
    ...     sess.run(v.initializer)
    ...     sess.run(tf.scatter_update(v, [0, 2], [9, 7])).tolist()
    [9, 2, 7, 4]
    """
    return _scatter("ScatterUpdate", ref, indices, updates, use_locking, name)


def scatter_add(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name=None):
    return _scatter("ScatterAdd", ref, indices, updates, use_locking, name)


def scatter_sub(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name=None):
    return _scatter("ScatterSub", ref, indices, updates, use_locking, name)


def scatter_mul(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name=None):
    return _scatter("ScatterMul", ref, indices, updates, use_locking, name)


def scatter_div(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name=None):
    return _scatter("ScatterDiv", ref, indices, updates, use_locking, name)


def scatter_max(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name=None):
    return _scatter("ScatterMax", ref, indices, updates, use_locking, name)


def scatter_min(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name=None):
    return _scatter("ScatterMin", ref, indices, updates, use_locking, name)


def scatter_nd_update(ref: Any, indices: Any, updates: Any, use_locking: bool = True, name=None):
    return _scatter("ScatterNdUpdate", ref, indices, updates, use_locking, name)


def scatter_nd_add(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name=None):
    return _scatter("ScatterNdAdd", ref, indices, updates, use_locking, name)


def scatter_nd_sub(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name=None):
    return _scatter("ScatterNdSub", ref, indices, updates, use_locking, name)


def batch_scatter_update(
    ref: Any, indices: Any, updates: Any, use_locking: bool = True, name: str | None = None
) -> Tensor:
    """``ref[b, indices[b, i]] = updates[b, i]`` for each batch row ``b`` (2-D indices)."""
    with ops_lib.name_scope(name, "BatchScatterUpdate", [indices, updates]):
        indices = _int_tensor(indices)
        rows = gather(shape(indices), 0)
        batch = multiply(reshape(cast(range_(rows), indices.dtype), [-1, 1]), ones_like(indices))
        pairs = stack([batch, indices], axis=-1)
        return scatter_nd_update(ref, pairs, updates, use_locking=use_locking)
