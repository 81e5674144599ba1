"""String ops that change shape: split into a SparseTensor, join along axes, format a template.

``StringSplit`` (``tf.string_split``) splits each string of a vector at any of the delimiter's
characters (every character when the delimiter is empty), ``StringSplitV2``
(``tf.strings.split``) at a separator string (at runs of whitespace without one), both into a
SparseTensor of tokens ``[len(input), max tokens]`` as TensorFlow 1.15 returns them.
``ReduceJoin`` concatenates along axes in row-major order; ``StringFormat`` fills a template's
``{}`` with tensors written as ``tf.print`` writes them (strings quoted).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, Sample, TensorSpec
from nbflow.framework.sparse_tensor import SparseTensor
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops import array_ops
from nbflow.ops.script_ops import format_value
from nbflow.ops.string_ops import StringOp, _check_string, _string, strings

Tensor = ops_lib.Tensor

_LINES = strings("a b", " c  d", "", "e")


def _sparse_specs() -> list[TensorSpec]:
    return [
        TensorSpec(TensorShape([None, 2]), dtypes.int64),
        TensorSpec(TensorShape([None]), dtypes.string),
        TensorSpec(TensorShape([2]), dtypes.int64),
    ]


def _to_sparse(rows: list[list[bytes]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token lists as SparseTensor components: row-major indices, values, dense shape."""
    indices = [(i, j) for i, row in enumerate(rows) for j in range(len(row))]
    values = np.empty(len(indices), dtype=object)
    values[:] = [token for row in rows for token in row]
    width = max((len(row) for row in rows), default=0)
    return (
        np.array(indices, np.int64).reshape(-1, 2),
        values,
        np.array([len(rows), width], np.int64),
    )


class StringSplit(StringOp):
    """Each string of a vector split at any character of ``delimiter`` (every character when it
    is empty), as a SparseTensor's indices, values and dense shape."""

    inputs = ("input", "delimiter")
    attrs = {"skip_empty": True}
    num_outputs = 3
    samples = [
        Sample(input=_LINES, delimiter=np.array(b" ", object)),
        Sample(input=strings("a,b;c", ";;d"), delimiter=np.array(b",;", object), skip_empty=False),
        Sample(input=strings("ab", "c"), delimiter=np.array(b"", object)),
    ]

    def infer(self, input: TensorSpec, delimiter: TensorSpec, skip_empty: bool) -> list:
        _check_string(self.type, input)
        input.shape.with_rank(1)
        delimiter.shape.with_rank(0)
        return _sparse_specs()

    def compute(self, ctx: KernelContext, input: Any, delimiter: Any, skip_empty: bool) -> Any:
        delim = np.asarray(delimiter, dtype=object).item()
        rows = []
        for s in input:
            if not delim:
                tokens = [s[i : i + 1] for i in range(len(s))]
            else:
                tokens = re.split(b"[" + re.escape(delim) + b"]", s)
            rows.append([t for t in tokens if t or not skip_empty])
        return _to_sparse(rows)


class StringSplitV2(StringOp):
    """Each string of a vector split at ``sep`` (Python's ``str.split``: runs of whitespace
    when ``sep`` is empty), at most ``maxsplit`` times (-1: no limit), as a SparseTensor."""

    inputs = ("input", "sep")
    attrs = {"maxsplit": -1}
    num_outputs = 3
    samples = [
        Sample(input=strings("a  b ", " c"), sep=np.array(b"", object)),
        Sample(input=strings("a,,b", "c"), sep=np.array(b",", object)),
        Sample(input=strings("a,b,c", "d"), sep=np.array(b",", object), maxsplit=1),
    ]

    def infer(self, input: TensorSpec, sep: TensorSpec, maxsplit: int) -> list:
        _check_string(self.type, input)
        input.shape.with_rank(1)
        sep.shape.with_rank(0)
        return _sparse_specs()

    def compute(self, ctx: KernelContext, input: Any, sep: Any, maxsplit: int) -> Any:
        separator = np.asarray(sep, dtype=object).item() or None
        return _to_sparse([s.split(separator, maxsplit) for s in input])


class ReduceJoin(StringOp):
    """The strings of ``inputs`` concatenated along ``reduction_indices`` in row-major order,
    with ``separator`` between them."""

    inputs = ("inputs", "reduction_indices")
    attrs = {"keep_dims": False, "separator": ""}
    samples = [
        Sample(inputs=strings("a", "b", "c", "d").reshape(2, 2), reduction_indices=np.int32(1)),
        Sample(
            inputs=strings("a", "b", "c", "d").reshape(2, 2),
            reduction_indices=np.array([0], np.int32),
            keep_dims=True,
            separator="-",
        ),
        Sample(inputs=_LINES, reduction_indices=np.array([-1], np.int32)),
    ]

    def infer(self, inputs: TensorSpec, reduction_indices: TensorSpec, keep_dims, separator):
        _check_string(self.type, inputs, "inputs")
        axes = array_ops._value(reduction_indices)
        if axes is None or inputs.shape.dims is None:
            rank = inputs.shape.ndims if keep_dims else None
            return TensorSpec(TensorShape(None if rank is None else [None] * rank), dtypes.string)
        reduced = _normalize_axes(axes, len(inputs.shape.dims))
        dims = [1 if i in reduced else d for i, d in enumerate(inputs.shape.dims)]
        if not keep_dims:
            dims = [d for i, d in enumerate(inputs.shape.dims) if i not in reduced]
        return TensorSpec(TensorShape(dims), dtypes.string)

    def compute(self, ctx: KernelContext, inputs, reduction_indices, keep_dims, separator):
        array = np.asarray(inputs, dtype=object)
        reduced = _normalize_axes(reduction_indices, array.ndim)
        kept = [i for i in range(array.ndim) if i not in reduced]
        moved = np.transpose(array, kept + sorted(reduced))
        flat = moved.reshape(moved.shape[: len(kept)] + (-1,))
        sep = separator.encode() if isinstance(separator, str) else separator
        out = np.empty(flat.shape[:-1], dtype=object)
        for index in np.ndindex(out.shape):
            out[index] = sep.join(flat[index])
        if keep_dims:
            out = out.reshape([1 if i in reduced else n for i, n in enumerate(array.shape)])
        return out


def _normalize_axes(axes: Any, ndims: int) -> set[int]:
    result = set()
    for axis in np.asarray(axes).reshape(-1).tolist():
        if not -ndims <= axis < max(ndims, 1):
            raise ValueError(f"Invalid reduction dimension {axis} for input of rank {ndims}")
        result.add(axis % ndims if ndims else 0)
    return result


class StringFormat(StringOp):
    """``template`` with each ``placeholder`` replaced by the next tensor of ``inputs``, written
    as ``tf.print`` writes it (at most ``summarize`` elements at each end of an axis)."""

    inputs = ("inputs*",)
    attrs = {"template": REQUIRED, "placeholder": "{}", "summarize": 3}
    samples = [
        Sample(inputs=[np.arange(5), np.array(b"s", object)], template="a={} b={}"),
        Sample(inputs=[(2, 2)], template="{}", summarize=-1),
    ]

    def infer(self, inputs: list[TensorSpec], template: str, placeholder: str, summarize: int):
        slots = template.count(placeholder)
        if slots != len(inputs):
            raise ValueError(
                f"num placeholders in template and num inputs must match: {slots} vs "
                f"{len(inputs)} (template {template!r})"
            )
        return TensorSpec(TensorShape([]), dtypes.string)

    def compute(self, ctx: KernelContext, inputs, template: str, placeholder: str, summarize):
        pieces = template.split(placeholder)
        out = [pieces[0]]
        for value, piece in zip(inputs, pieces[1:]):
            out.append(_format_tensor(value, summarize))
            out.append(piece)
        return np.array("".join(out).encode("utf-8"), dtype=object)


def _format_tensor(value: Any, summarize: int) -> str:
    array = np.asarray(value)
    if array.dtype == object or array.dtype.kind == "S":
        quoted = np.empty(array.shape, dtype=object)
        for index in np.ndindex(array.shape):
            item = array[index]
            text = item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)
            quoted[index] = f'"{text}"'
        if array.ndim == 0:
            return str(quoted.item())
        threshold = np.iinfo(np.int64).max if summarize < 0 else 0
        return np.array2string(
            quoted,
            threshold=threshold,
            edgeitems=max(summarize, 1),
            separator=" ",
            formatter={"all": str},
        )
    return format_value(array, summarize)


# --- builders -------------------------------------------------------------------------------------
def _sparse_op(op_type: str, inputs: list[Any], attrs: dict[str, Any], name) -> SparseTensor:
    op = ops_lib.get_default_graph().create_op(op_type, inputs, attrs, name=name)
    return SparseTensor(*op.outputs)


def string_split(
    source: Any,
    delimiter: str = " ",
    skip_empty: bool = True,
    name: str | None = None,
    sep: str | None = None,
    result_type: str = "SparseTensor",
) -> SparseTensor:
    """The strings of a vector split at any character of ``delimiter``, as a SparseTensor.

    >>> import nbflow as tf
    >>> st = tf.string_split(["a b", "c"])
    >>> tf.Session().run(st.values).tolist()
    [b'a', b'b', b'c']
    """
    if result_type != "SparseTensor":
        raise ValueError("nbflow has no RaggedTensor: result_type must be 'SparseTensor'")
    delimiter = delimiter if sep is None else sep
    with ops_lib.name_scope(name, "StringSplit", [source]) as scope:
        inputs = [_string(source, "source"), _string(delimiter, "delimiter")]
        return _sparse_op("StringSplit", inputs, {"skip_empty": bool(skip_empty)}, scope)


def split(
    input: Any = None,
    sep: str | None = None,
    maxsplit: int = -1,
    result_type: str = "SparseTensor",
    source: Any = None,
    name: str | None = None,
) -> SparseTensor:
    """``tf.strings.split`` of TensorFlow 1.15: each string of a vector split at ``sep``
    (whitespace runs when None), as a SparseTensor.

    >>> import nbflow as tf
    >>> st = tf.strings.split(["a,,b"], sep=",")
    >>> tf.Session().run(st.values).tolist()
    [b'a', b'', b'b']
    """
    if result_type != "SparseTensor":
        raise ValueError("nbflow has no RaggedTensor: result_type must be 'SparseTensor'")
    if (input is None) == (source is None):
        raise ValueError("split: pass exactly one of input and source")
    value = input if source is None else source
    with ops_lib.name_scope(name, "StringSplit", [value]) as scope:
        inputs = [_string(value), _string(sep or "", "sep")]
        return _sparse_op("StringSplitV2", inputs, {"maxsplit": int(maxsplit)}, scope)


def reduce_join(
    inputs: Any,
    axis: Any = None,
    keep_dims: bool | None = None,
    separator: str = "",
    name: str | None = None,
    reduction_indices: Any = None,
    keepdims: bool | None = None,
) -> Tensor:
    """The strings of ``inputs`` joined along ``axis`` (all axes when None).

    >>> import nbflow as tf
    >>> tf.Session().run(tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1)).tolist()
    [b'ab', b'cd']
    """
    keep = bool(keepdims if keepdims is not None else keep_dims)
    axis = axis if reduction_indices is None else reduction_indices
    with ops_lib.name_scope(name, "ReduceJoin", [inputs]) as scope:
        x = _string(inputs, "inputs")
        if axis is None:
            if x.shape.ndims is not None:
                axis = list(range(x.shape.ndims))
            else:
                axis = array_ops.range(array_ops.rank(x))
        axes = ops_lib.convert_to_tensor(axis, dtype=dtypes.int32, name="reduction_indices")
        attrs = {"keep_dims": keep, "separator": separator}
        op = ops_lib.get_default_graph().create_op("ReduceJoin", [x, axes], attrs, name=scope)
        return op.outputs[0]


def format(  # noqa: A001 - TensorFlow's name
    template: str,
    inputs: Any,
    placeholder: str = "{}",
    summarize: int = 3,
    name: str | None = None,
) -> Tensor:
    """A scalar string: ``template`` with each ``placeholder`` filled by a tensor of ``inputs``.

    >>> import nbflow as tf
    >>> tf.Session().run(tf.strings.format("x={}", [tf.constant([1, 2])]))
    b'x=[1 2]'
    """
    if isinstance(inputs, (Tensor, np.ndarray)) or not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    tensors = [ops_lib.convert_to_tensor(v) for v in inputs]
    attrs = {"template": template, "placeholder": placeholder, "summarize": int(summarize)}
    op = ops_lib.get_default_graph().create_op("StringFormat", [tensors], attrs, name=name)
    return op.outputs[0]


__all__ = ["format", "reduce_join", "split", "string_split"]
