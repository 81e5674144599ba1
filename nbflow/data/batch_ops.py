"""Batching transformations of ``tf.data.Dataset``: ``batch``, ``padded_batch`` and ``unbatch``.

``Batch`` stacks ``batch_size`` consecutive elements component by component (padding each to
the batch's largest shape, or to ``padded_shapes``, for ``padded_batch``); its static shapes get
a leading unknown dimension unless ``drop_remainder``. ``Unbatch`` splits each element along its
first dimension again.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator as PyIterator
from typing import Any

import numpy as np

from nbflow import errors
from nbflow.data import structure
from nbflow.data.dataset_ops import Dataset, Element, _Transformation
from nbflow.data.iterator_ops import PipelineRun
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import TensorSpec
from nbflow.framework.ops import Tensor
from nbflow.framework.tensor_shape import TensorShape, as_shape


def _unknown_batch(shape: TensorShape, size: int | None) -> TensorShape:
    return TensorShape([size]).concatenate(shape)


class Batch(_Transformation):
    def __init__(
        self,
        input_dataset: Dataset,
        batch_size: int,
        drop_remainder: bool,
        padded_shapes: Any = None,
        padding_values: Any = None,
    ):
        super().__init__(input_dataset)
        if int(batch_size) <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self._size = int(batch_size)
        self._drop_remainder = bool(drop_remainder)
        specs = self._flat_specs()
        self._padded: list[TensorShape] | None = None
        self._padding: list[Tensor] = []  # scalar padding values, captured
        if padded_shapes is not None:
            self._padded = [as_shape(s) for s in _leaves_like(specs, padded_shapes, "shapes")]
            for spec, shape in zip(specs, self._padded):
                if spec.shape.ndims is not None and shape.ndims != spec.shape.ndims:
                    raise ValueError(
                        f"padded_batch: padded shape {shape} has another rank than the "
                        f"component's shape {spec.shape}"
                    )
            if padding_values is None:
                values = [b"" if s.dtype is dtypes.string else 0 for s in specs]
            else:
                values = _leaves_like(specs, padding_values, "padding_values")
            self._padding = [
                ops_lib.convert_to_tensor(v, dtype=s.dtype) for v, s in zip(values, specs)
            ]
        size = self._size if self._drop_remainder else None
        shapes = self._padded or [s.shape for s in specs]
        batched = [
            TensorSpec(_unknown_batch(shape, size), s.dtype) for s, shape in zip(specs, shapes)
        ]
        self._element_specs = structure.pack_sequence_as(input_dataset._element_specs, batched)

    def _own_captures(self) -> list[Tensor]:
        return list(self._padding)

    def _iterate(self, run: PipelineRun) -> PyIterator[Element]:
        padding = [run.values[t.name] for t in self._padding]
        batch: list[Element] = []
        for element in self._input._iterate(run):
            batch.append(element)
            if len(batch) == self._size:
                yield self._stack(batch, padding)
                batch = []
        if batch and not self._drop_remainder:
            yield self._stack(batch, padding)

    def _stack(self, batch: list[Element], padding: list[Any]) -> Element:
        out = []
        for k in range(len(self._flat_specs())):
            parts = [np.asarray(e[k]) for e in batch]
            if self._padded is not None:
                out.append(self._pad(parts, self._padded[k], padding[k]))
                continue
            shape = parts[0].shape
            for i, p in enumerate(parts):
                if p.shape != shape:
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Cannot batch tensors with different shapes in component {k}. First "
                        f"element had shape {list(shape)} and element {i} had shape "
                        f"{list(p.shape)}; use padded_batch to pad them.",
                    )
            out.append(np.stack(parts))
        return tuple(out)

    @staticmethod
    def _pad(parts: list[np.ndarray], shape: TensorShape, value: Any) -> np.ndarray:
        target = [
            d if d is not None else max((p.shape[i] for p in parts), default=0)
            for i, d in enumerate(shape.as_list())
        ]
        out = np.full([len(parts)] + target, value, dtype=parts[0].dtype)
        for i, p in enumerate(parts):
            if any(n > t for n, t in zip(p.shape, target)):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"padded_batch: element of shape {list(p.shape)} exceeds the "
                    f"padded shape {target}",
                )
            out[(i,) + tuple(slice(0, n) for n in p.shape)] = p
        return out


def _leaves_like(specs: list[TensorSpec], value: Any, what: str) -> list[Any]:
    # Shapes ([None, 3]) and scalars are leaves; a single leaf serves one-component elements.
    flat = structure.flatten(value)
    if len(flat) != len(specs):
        raise ValueError(f"padded_batch: {len(flat)} padded {what} for {len(specs)} components")
    return flat


class Unbatch(_Transformation):
    def __init__(self, input_dataset: Dataset):
        super().__init__(input_dataset)
        specs = self._flat_specs()
        if any(s.shape.ndims == 0 for s in specs):
            raise ValueError("Cannot unbatch an input with scalar components.")
        rows = [
            TensorSpec(s.shape[1:] if s.shape.ndims is not None else None, s.dtype) for s in specs
        ]
        self._element_specs = structure.pack_sequence_as(input_dataset._element_specs, rows)

    def _iterate(self, run: PipelineRun) -> PyIterator[Element]:
        for element in self._input._iterate(run):
            sizes: set[Any] = {np.shape(c)[0] if np.ndim(c) else None for c in element}
            if len(sizes) != 1 or None in sizes:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    "unbatch needs components of rank at least 1 with the same first "
                    f"dimension, got shapes {[list(np.shape(c)) for c in element]}",
                )
            columns = [np.asarray(c) for c in element]
            for i in builtins.range(sizes.pop()):
                yield tuple(c[i : i + 1].reshape(c.shape[1:]) for c in columns)
